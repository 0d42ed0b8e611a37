//! HTML readers: `HTMLReader` (a page's readable text, its `<title>` as
//! metadata) and `HTMLTagReader` (LlamaIndex's: one document per tag).

use crate::util::{merged, read_utf8, run_guarded};
use async_trait::async_trait;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Metadata, Result, py_strip};
use scraper::{ElementRef, Html, Node};
use serde_json::Value;
use std::path::Path;

/// Reads an HTML file into one document: the page's text as a reader sees
/// it, with the `<title>` under the `title` metadata key (left out when the
/// page has none), then the file's metadata.
///
/// LlamaIndex has no such reader (its `SimpleDirectoryReader` reads `.html`
/// as plain text, markup included); this one parses the page with html5ever
/// and skips what is not text: `<head>`, `<script>`, `<style>`,
/// `<noscript>`, `<template>`, `<iframe>`, `<object>`, `<svg>`,
/// `<canvas>` and comments. Whitespace is collapsed as a browser collapses
/// it, except in `<pre>`; paragraphs, headings, lists and tables are
/// separated by a blank line, other blocks (`<div>`, `<li>`, `<tr>`, `<br>`)
/// by a line break; list items start with `* ` (or `1. `, `2. ` in `<ol>`),
/// table cells are separated by `" | "`.
#[derive(Debug, Clone, Default)]
pub struct HTMLReader;

impl HTMLReader {
    /// An HTML reader.
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl FileReader for HTMLReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        run_guarded(path, move |path| {
            let source = read_utf8(path)?;
            let (title, text) = html_to_text(&source);
            let mut meta = Metadata::new();
            if let Some(title) = title {
                meta.insert("title".into(), Value::String(title));
            }
            Ok(vec![
                Document::document(text).with_metadata_map(merged(meta, &extra_info)),
            ])
        })
        .await
    }
}

/// The `<title>` (whitespace collapsed; `None` when absent or empty) and the
/// readable text of an HTML page.
pub fn html_to_text(source: &str) -> (Option<String>, String) {
    let html = Html::parse_document(source);
    let root = html.root_element();
    let title = root
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "title")
        .map(|t| {
            t.text()
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|t| !t.is_empty());
    let mut r = Renderer::default();
    r.element(root);
    r.flush();
    (title, r.out)
}

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

/// Turns a DOM into lines of text.
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

    fn write_char(&mut self, c: char) {
        if self.line.is_empty() {
            if let Some(prefix) = self.prefix.take() {
                self.line.push_str(&prefix);
            }
        } else if self.space {
            self.line.push(' ');
        }
        self.space = false;
        self.line.push(c);
    }

    fn text(&mut self, text: &str) {
        if self.pre > 0 {
            for c in text.chars() {
                if c == '\n' {
                    // Keep the pre's own line breaks, blank lines included.
                    if self.line.is_empty() {
                        if let Some(prefix) = self.prefix.take() {
                            self.line.push_str(&prefix);
                        }
                    }
                    self.line.push('\n');
                } else {
                    if self.line.is_empty() {
                        if let Some(prefix) = self.prefix.take() {
                            self.line.push_str(&prefix);
                        }
                    }
                    self.line.push(c);
                }
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

    fn element(&mut self, el: ElementRef<'_>) {
        let name = el.value().name();
        if SKIPPED.contains(&name) {
            return;
        }
        let in_list = !self.lists.is_empty();
        match name {
            "br" => {
                self.flush();
                self.pending = self.pending.max(1);
                return;
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
        for child in el.children() {
            match child.value() {
                Node::Text(t) => self.text(t),
                Node::Element(_) => {
                    if let Some(child) = ElementRef::wrap(child) {
                        self.element(child);
                    }
                }
                _ => {}
            }
        }
        match name {
            "ul" | "ol" => {
                self.lists.pop();
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

/// Reads an HTML file into one document per occurrence of a tag (LlamaIndex
/// `HTMLTagReader`; default tag `section`), in document order, nested
/// occurrences included.
///
/// A document's text is, for each child of the tag: a text (or comment)
/// node stripped, when not empty; a child of the same tag skipped; any
/// other element's text (without comments or nested script and style
/// text) stripped, even when empty; joined with `"\n"`. Metadata: `tag`,
/// `tag_id` (the `id` attribute, or `null`), `file_path` (the path as
/// given), then the file's metadata. LlamaIndex parses with Python's
/// `html.parser`, this with html5ever: the two agree on well-formed pages
/// and may nest malformed markup differently.
#[derive(Debug, Clone)]
pub struct HTMLTagReader {
    tag: String,
    ignore_no_id: bool,
}

impl Default for HTMLTagReader {
    fn default() -> Self {
        Self {
            tag: "section".into(),
            ignore_no_id: false,
        }
    }
}

impl HTMLTagReader {
    /// Reads `<section>` tags.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tag to read (default `section`).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = tag.into().to_lowercase();
        self
    }

    /// Whether tags without an `id` are skipped (default `false`).
    pub fn ignore_no_id(mut self, ignore_no_id: bool) -> Self {
        self.ignore_no_id = ignore_no_id;
        self
    }
}

#[async_trait]
impl FileReader for HTMLTagReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let this = self.clone();
        run_guarded(path, move |path| {
            let source = read_utf8(path)?;
            let html = Html::parse_document(&source);
            let mut docs = Vec::new();
            for el in html
                .root_element()
                .descendants()
                .filter_map(ElementRef::wrap)
            {
                if el.value().name() != this.tag {
                    continue;
                }
                let id = el.value().attr("id");
                if this.ignore_no_id && id.is_none_or(str::is_empty) {
                    continue;
                }
                let mut meta = Metadata::new();
                meta.insert("tag".into(), Value::String(this.tag.clone()));
                meta.insert(
                    "tag_id".into(),
                    id.map_or(Value::Null, |i| Value::String(i.into())),
                );
                meta.insert(
                    "file_path".into(),
                    Value::String(path.to_string_lossy().into_owned()),
                );
                docs.push(
                    Document::document(tag_text(el, &this.tag))
                        .with_metadata_map(merged(meta, &extra_info)),
                );
            }
            Ok(docs)
        })
        .await
    }
}

/// Elements whose strings BeautifulSoup gives its own string class, so a
/// parent's `get_text()` leaves them out.
const OWN_STRINGS: [&str; 5] = ["script", "style", "template", "rt", "rp"];

fn tag_text(el: ElementRef<'_>, tag: &str) -> String {
    let mut texts = Vec::new();
    for child in el.children() {
        match child.value() {
            Node::Text(t) => push_stripped(&mut texts, t),
            Node::Comment(c) => push_stripped(&mut texts, c),
            Node::Element(e) if e.name() == tag => {}
            Node::Element(_) => {
                if let Some(child) = ElementRef::wrap(child) {
                    let mut text = String::new();
                    get_text(child, true, &mut text);
                    texts.push(py_strip(&text).to_string());
                }
            }
            _ => {}
        }
    }
    texts.join("\n")
}

fn push_stripped(texts: &mut Vec<String>, s: &str) {
    let s = py_strip(s);
    if !s.is_empty() {
        texts.push(s.to_string());
    }
}

/// BeautifulSoup's `get_text()`: the element's strings, without comments,
/// and without the strings of nested script, style or template elements.
fn get_text(el: ElementRef<'_>, top: bool, out: &mut String) {
    if !top && OWN_STRINGS.contains(&el.value().name()) {
        return;
    }
    for child in el.children() {
        match child.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(_) => {
                if let Some(child) = ElementRef::wrap(child) {
                    get_text(child, false, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_text_and_title() {
        let (title, text) = html_to_text(
            "<html><head><title> My  Page </title><style>x{}</style></head><body>\
             <h1>Head</h1><p>One  <b>bold</b>\n word.<br>Next</p><script>no()</script>\
             <ul><li>a</li><li>b<ol><li>c</li></ol></li></ul>\
             <table><tr><th>k</th><td>v</td></tr></table><pre>  x\n  y</pre></body></html>",
        );
        assert_eq!(title.as_deref(), Some("My Page"));
        assert_eq!(
            text,
            "Head\n\nOne bold word.\nNext\n\n* a\n* b\n1. c\n\nk | v\n\n  x\n  y"
        );
    }

    #[test]
    fn no_title_is_none() {
        assert_eq!(html_to_text("<p>x</p>"), (None, "x".to_string()));
    }
}
