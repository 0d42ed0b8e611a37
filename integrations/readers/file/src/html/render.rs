//! `HTMLReader`'s text: a page's tags and text turned into lines as they are
//! read, over a stack of the open elements, never a tree.

use super::tokens::{Handler, MAX_OPEN, OpenNames};

const SKIPPED: [&str; 10] = [
    "head", "script", "style", "noscript", "template", "title", "iframe", "object", "svg", "canvas",
];
const PARAGRAPHS: [&str; 23] = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "figure",
    "form",
    "hr",
];
const LINES: [&str; 14] = [
    "div",
    "li",
    "tr",
    "dt",
    "dd",
    "caption",
    "summary",
    "details",
    "figcaption",
    "address",
    "fieldset",
    "option",
    "body",
    "html",
];
/// What may stay inside `<head>`; any other start tag ends it, as it ends
/// the head in a browser, so a page that never closes its head has a body.
const HEAD_CONTENT: [&str; 9] = [
    "title", "meta", "link", "style", "script", "base", "noscript", "template", "basefont",
];

/// Start tags that end an open `<p>`, as they do in a browser.
const CLOSES_P: [&str; 31] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
];
/// Elements a `<p>` inside stays open across (the HTML spec's "button scope").
const P_SCOPE: [&str; 9] = [
    "button", "table", "td", "th", "caption", "object", "template", "marquee", "applet",
];

/// How far down the stack an implied end looks for the element it ends.
const IMPLIED_REACH: usize = 64;

/// An open element.
struct Open {
    name: String,
    /// Given to the renderer (not inside a skipped element).
    rendered: bool,
    /// Began a skipped stretch (`<head>`, `<script>`...).
    skips: bool,
}

/// The page being read: its open elements, its title and its text.
#[derive(Default)]
pub(crate) struct Page {
    open: Vec<Open>,
    names: OpenNames,
    /// Open skipped elements: while any is, nothing is rendered.
    skipping: usize,
    /// The first `<title>`'s text while it is read, then its final form.
    title: Option<String>,
    reading_title: bool,
    title_done: bool,
    r: Renderer,
}

impl Page {
    /// The title (whitespace collapsed, `None` when absent or empty) and text.
    pub(crate) fn finish(mut self) -> (Option<String>, String) {
        while !self.open.is_empty() {
            self.pop();
        }
        self.r.flush();
        let title = self
            .title
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|t| !t.is_empty());
        (title, self.r.out)
    }

    fn pop(&mut self) {
        let Some(open) = self.open.pop() else {
            return;
        };
        self.names.closed(&open.name);
        if open.rendered {
            self.r.exit(&open.name);
        }
        if open.skips {
            self.skipping = self.skipping.saturating_sub(1);
        }
        if open.name == "title" && self.reading_title {
            self.reading_title = false;
            self.title_done = true;
        }
    }

    /// Pops up to and including the innermost open `name`, unless one of
    /// `stop` is open inside it. An implied end (`stop` not empty) looks at
    /// the innermost [`IMPLIED_REACH`] elements only, so that a start tag
    /// under thousands of open ones stays cheap.
    fn close(&mut self, name: &str, stop: &[&str]) {
        if !self.names.is_open(name) {
            return;
        }
        let reach = if stop.is_empty() {
            self.open.len()
        } else {
            IMPLIED_REACH
        };
        let from = self.open.len().saturating_sub(reach);
        let found = self.open[from..].iter().rposition(|o| o.name == name);
        let Some(at) = found.map(|i| from + i) else {
            return;
        };
        if self.open[at + 1..]
            .iter()
            .any(|o| stop.contains(&o.name.as_str()))
        {
            return;
        }
        while self.open.len() > at {
            self.pop();
        }
    }

    /// The end tags a browser implies before this start tag.
    fn implied_ends(&mut self, name: &str) {
        if name == "body" || !HEAD_CONTENT.contains(&name) {
            self.close("head", &[]);
        }
        if CLOSES_P.contains(&name)
            || matches!(name, "summary" | "ul" | "li" | "dd" | "dt" | "table")
        {
            self.close("p", &P_SCOPE);
        }
        match name {
            "li" => self.close("li", &["ul", "ol"]),
            "dt" | "dd" => {
                self.close("dt", &["dl"]);
                self.close("dd", &["dl"]);
            }
            "tr" => self.close("tr", &["table"]),
            "td" | "th" => {
                self.close("td", &["tr", "table"]);
                self.close("th", &["tr", "table"]);
            }
            "option" => self.close("option", &["select"]),
            _ => {}
        }
    }
}

impl Handler for Page {
    fn start(&mut self, name: &str, _id: Option<&str>, empty: bool) {
        self.implied_ends(name);
        let empty = empty || self.open.len() >= MAX_OPEN;
        let skipped = self.skipping > 0;
        // The first `<title>` is the title, wherever it is.
        if name == "title" && !self.title_done && !empty {
            self.reading_title = true;
            self.title = Some(String::new());
        }
        let skips = SKIPPED.contains(&name);
        let rendered = !skipped && !skips;
        if rendered {
            self.r.enter(name);
            if empty {
                self.r.exit(name);
            }
        }
        if !empty {
            if skips {
                self.skipping += 1;
            }
            self.names.opened(name);
            self.open.push(Open {
                name: name.to_string(),
                rendered,
                skips,
            });
        }
    }

    fn end(&mut self, name: &str) {
        self.close(name, &[]);
    }

    fn text(&mut self, text: &str) {
        if self.reading_title {
            if let Some(title) = &mut self.title {
                title.push_str(text);
            }
        } else if self.skipping == 0 {
            self.r.text(text);
        }
    }
}

/// Turns elements and text into lines.
#[derive(Default)]
struct Renderer {
    out: String,
    line: String,
    /// Line breaks owed before the next text (1: new line, 2: blank line).
    pending: usize,
    space: bool,
    /// Written before the first text of the next line (a list marker).
    prefix: Option<String>,
    /// Open lists: `None` for `<ul>`, `Some(next number)` for `<ol>`.
    lists: Vec<Option<usize>>,
    pre: usize,
    cells_in_row: usize,
}

impl Renderer {
    fn flush(&mut self) {
        let line = self.line.trim_end();
        if !line.is_empty() {
            if !self.out.is_empty() {
                self.out.push_str(&"\n".repeat(self.pending.max(1)));
            }
            self.out.push_str(line);
            self.pending = 0;
        }
        self.line.clear();
        self.space = false;
    }

    fn block(&mut self, gap: usize) {
        self.flush();
        self.pending = self.pending.max(gap);
    }

    fn start_line(&mut self) {
        if self.line.is_empty() {
            if let Some(prefix) = self.prefix.take() {
                self.line.push_str(&prefix);
            }
        }
    }

    fn write_char(&mut self, c: char) {
        if self.line.is_empty() {
            self.start_line();
        } else if self.space {
            self.line.push(' ');
        }
        self.space = false;
        self.line.push(c);
    }

    fn text(&mut self, text: &str) {
        if self.pre > 0 {
            // Kept as written, the pre's own line breaks and blank lines too.
            for c in text.chars() {
                self.start_line();
                self.line.push(c);
            }
            return;
        }
        for c in text.chars() {
            if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}') {
                self.space = true;
            } else {
                self.write_char(c);
            }
        }
    }

    fn enter(&mut self, name: &str) {
        let in_list = !self.lists.is_empty();
        match name {
            "br" => {
                self.flush();
                self.pending = self.pending.max(1);
            }
            "ul" | "ol" => {
                self.block(if in_list { 1 } else { 2 });
                self.lists.push((name == "ol").then_some(1));
            }
            "li" => {
                self.block(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "* ".to_string(),
                };
                self.prefix = Some(marker);
            }
            "tr" => {
                self.block(1);
                self.cells_in_row = 0;
            }
            "td" | "th" => {
                if self.cells_in_row > 0 && !self.line.is_empty() {
                    self.line.push_str(" | ");
                    self.space = false;
                }
                self.cells_in_row += 1;
            }
            "pre" => {
                self.block(2);
                self.pre += 1;
            }
            n if PARAGRAPHS.contains(&n) => self.block(2),
            n if LINES.contains(&n) => self.block(1),
            _ => {}
        }
    }

    fn exit(&mut self, name: &str) {
        match name {
            "br" => {}
            "ul" | "ol" => {
                self.lists.pop();
                let in_list = !self.lists.is_empty();
                self.block(if in_list { 1 } else { 2 });
            }
            "li" => {
                self.prefix = None;
                self.block(1);
            }
            "pre" => {
                self.pre = self.pre.saturating_sub(1);
                self.block(2);
            }
            n if PARAGRAPHS.contains(&n) => self.block(2),
            n if LINES.contains(&n) || n == "tr" => self.block(1),
            _ => {}
        }
    }
}
