//! `HTMLTagReader`'s documents: the text of each occurrence of a tag,
//! gathered as the page is read, as BeautifulSoup finds it in Python.

use super::tokens::{Handler, MAX_OPEN, OpenNames};
use ragloom_core::py_strip;

/// Elements whose strings BeautifulSoup gives its own string class, so a
/// parent's `get_text()` leaves them out.
const OWN_STRINGS: [&str; 5] = ["script", "style", "template", "rt", "rp"];

/// How many occurrences may be read inside one another through other
/// elements (`<section><div><section>...`). Each reads the text of those
/// inside it, so the text read grows with this depth: past it the page is
/// refused rather than multiplied.
pub(crate) const MAX_NESTED: usize = 64;

/// One occurrence of the tag, in document order: its `id` and its text.
pub(crate) struct Found {
    pub(crate) id: Option<String>,
    pub(crate) text: String,
}

struct Open {
    name: String,
    /// Open [`OWN_STRINGS`] elements up to and including this one.
    own: usize,
    /// Open `<pre>` and `<textarea>` elements up to and including this one.
    keeps_space: usize,
}

/// An occurrence of the tag whose end is not yet read.
struct Collecting {
    /// Its place in the stack of open elements (its index + 1).
    depth: usize,
    /// Its index in [`Tags::found`].
    slot: usize,
    /// Its children's texts so far.
    parts: Vec<String>,
}

/// The child element of an occurrence being read (never the tag itself):
/// all its strings but those of script, style and template elements inside it.
struct Child {
    /// The occurrence's index in [`Tags::collecting`].
    of: usize,
    depth: usize,
    text: String,
}

/// The page being read for `tag`.
pub(crate) struct Tags {
    tag: String,
    ignore_no_id: bool,
    open: Vec<Open>,
    names: OpenNames,
    collecting: Vec<Collecting>,
    /// Children being read, outermost first: a child ends before any
    /// deeper one begins, so this is a stack too, and a text goes to each.
    children: Vec<Child>,
    found: Vec<Found>,
    /// The string being read: text up to the next tag or comment, which
    /// may come in pieces.
    string: String,
    /// Set when the page nests the tag past [`MAX_NESTED`]: nothing more
    /// is read.
    too_deep: bool,
}

impl Tags {
    pub(crate) fn new(tag: &str, ignore_no_id: bool) -> Self {
        Self {
            tag: tag.to_string(),
            ignore_no_id,
            open: Vec::new(),
            names: OpenNames::default(),
            collecting: Vec::new(),
            children: Vec::new(),
            found: Vec::new(),
            string: String::new(),
            too_deep: false,
        }
    }

    /// Every occurrence, in the order their start tags were read; an error
    /// when the page nests the tag past [`MAX_NESTED`].
    pub(crate) fn finish(mut self) -> std::result::Result<Vec<Found>, String> {
        if self.too_deep {
            return Err(format!(
                "more than {MAX_NESTED} <{}> elements are read inside one another \
                 (each holds the text of those inside it); refused",
                self.tag
            ));
        }
        while !self.open.is_empty() {
            self.pop();
        }
        Ok(self.found)
    }

    /// The innermost occurrence, when what is read now is directly inside it.
    fn direct(&mut self) -> Option<&mut Collecting> {
        let depth = self.open.len();
        self.collecting.last_mut().filter(|c| c.depth == depth)
    }

    /// Ends the string being read and hands it to the occurrences that
    /// read it: the innermost when it is directly inside it, and each one
    /// whose child holds it, unless a script, style or template inside that
    /// child does. Like BeautifulSoup, a string of ASCII whitespace alone
    /// becomes one line break if it has one, else one space (not inside
    /// `<pre>` or `<textarea>`).
    fn end_text(&mut self) {
        if self.string.is_empty() {
            return;
        }
        let mut string = std::mem::take(&mut self.string);
        let keeps_space = self.open.last().is_some_and(|o| o.keeps_space > 0);
        if !keeps_space && string.bytes().all(|b| b" \n\t\x0c\r".contains(&b)) {
            string = if string.contains('\n') { "\n" } else { " " }.to_string();
        }
        if let Some(c) = self.direct() {
            push_stripped(&mut c.parts, &string);
        }
        let own_here = self.open.last().map_or(0, |o| o.own);
        for child in &mut self.children {
            let own_at_child = self.open.get(child.depth - 1).map_or(0, |o| o.own);
            if own_here == own_at_child {
                child.text.push_str(&string);
            }
        }
        // Its buffer is reused for the next string.
        string.clear();
        self.string = string;
    }

    fn pop(&mut self) {
        self.end_text();
        let depth = self.open.len();
        if self.children.last().is_some_and(|ch| ch.depth == depth) {
            if let Some(child) = self.children.pop() {
                if let Some(c) = self.collecting.get_mut(child.of) {
                    c.parts.push(py_strip(&child.text).to_string());
                }
            }
        }
        if self.collecting.last().is_some_and(|c| c.depth == depth) {
            if let Some(c) = self.collecting.pop() {
                if let Some(found) = self.found.get_mut(c.slot) {
                    found.text = c.parts.join("\n");
                }
            }
        }
        if let Some(open) = self.open.pop() {
            self.names.closed(&open.name);
        }
    }
}

impl Handler for Tags {
    fn start(&mut self, name: &str, id: Option<&str>, empty: bool) {
        if self.too_deep {
            return;
        }
        self.end_text();
        let empty = empty || self.open.len() >= MAX_OPEN;
        let is_tag = name == self.tag;
        let depth = self.open.len();
        if !is_tag {
            let of = self.collecting.len().wrapping_sub(1);
            if let Some(c) = self.direct() {
                if empty {
                    // An empty child's text is empty, and kept.
                    c.parts.push(String::new());
                } else if self.children.len() >= MAX_NESTED {
                    self.too_deep = true;
                    return;
                } else {
                    self.children.push(Child {
                        of,
                        depth: depth + 1,
                        text: String::new(),
                    });
                }
            }
        }
        if is_tag && !(self.ignore_no_id && id.is_none_or(str::is_empty)) {
            self.found.push(Found {
                id: id.map(str::to_string),
                text: String::new(),
            });
            if !empty {
                self.collecting.push(Collecting {
                    depth: depth + 1,
                    slot: self.found.len() - 1,
                    parts: Vec::new(),
                });
            }
        }
        if !empty {
            let (own, keeps_space) = self.open.last().map_or((0, 0), |o| (o.own, o.keeps_space));
            self.names.opened(name);
            self.open.push(Open {
                name: name.to_string(),
                own: own + usize::from(OWN_STRINGS.contains(&name)),
                keeps_space: keeps_space + usize::from(name == "pre" || name == "textarea"),
            });
        }
    }

    fn end(&mut self, name: &str) {
        if self.too_deep || !self.names.is_open(name) {
            return;
        }
        let Some(at) = self.open.iter().rposition(|o| o.name == name) else {
            return;
        };
        while self.open.len() > at {
            self.pop();
        }
    }

    fn text(&mut self, text: &str) {
        if !self.too_deep {
            self.string.push_str(text);
        }
    }

    fn comment(&mut self, text: &str) {
        if self.too_deep {
            return;
        }
        self.end_text();
        if let Some(c) = self.direct() {
            push_stripped(&mut c.parts, text);
        }
    }
}

fn push_stripped(parts: &mut Vec<String>, s: &str) {
    let s = py_strip(s);
    if !s.is_empty() {
        parts.push(s.to_string());
    }
}
