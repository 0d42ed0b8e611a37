//! HTML readers: `HTMLReader` (a page's readable text, its `<title>` as
//! metadata) and `HTMLTagReader` (LlamaIndex's: one document per tag).

mod render;
mod tags;
mod tokens;

use crate::util::{PartReader, Utf8, merged, part_error, run_guarded};
use async_trait::async_trait;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result};
use serde_json::Value;
use std::path::Path;

/// Reads an HTML file into one document: the page's text as a reader sees
/// it, with the `<title>` under the `title` metadata key (left out when the
/// page has none), then the file's metadata.
///
/// LlamaIndex has no such reader (its `SimpleDirectoryReader` reads `.html`
/// as plain text, markup included); this one reads the page as html5ever
/// tokenizes it, a chunk at a time, and skips what is not text: `<head>`, `<script>`, `<style>`,
/// `<noscript>`, `<template>`, `<iframe>`, `<object>`, `<svg>`,
/// `<canvas>` and comments. Whitespace is collapsed as a browser collapses
/// it, except in `<pre>`; paragraphs, headings, lists and tables are
/// separated by a blank line, other blocks (`<div>`, `<li>`, `<tr>`, `<br>`)
/// by a line break; list items start with `* ` (or `1. `, `2. ` in `<ol>`),
/// table cells are separated by `" | "`.
///
/// No tree is built: the reader keeps the elements that are open (at most
/// 4,096; deeper start tags are read as empty elements) and closes them as
/// a browser would where the page leaves them open (`<li>`, `<td>`, `<tr>`,
/// `<dt>`, `<dd>`, `<option>`, `<head>`), so its memory follows the text it
/// extracts, not the markup. Invalid UTF-8 is the file's error.
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
            let (page, read) = read_file(path, render::Page::default())?;
            read?;
            let (title, text) = page.finish();
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
    tokens::read_str(source, render::Page::default()).finish()
}

/// [`html_to_text`] of the page `source` yields as it is read (an archive
/// part inflating, say); the error is the reading's.
pub(crate) fn html_to_text_from<R: std::io::Read>(
    source: &mut PartReader<R>,
) -> std::io::Result<(Option<String>, String)> {
    let (page, read) = tokens::read(source, render::Page::default());
    read.map(|()| page.finish())
}

/// Runs `handler` over the HTML file at `path`, read a chunk at a time as
/// strict UTF-8. The outer error is the file's (it cannot be opened); the
/// inner one stopped the reading, and comes with the handler as it was.
fn read_file<H: tokens::Handler>(path: &Path, handler: H) -> Result<(H, Result<()>)> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("reading", path, e))?;
    let mut source = PartReader::new(file, u64::MAX, Utf8::Strict).unbounded_events();
    let (handler, read) = tokens::read(&mut source, handler);
    let read = read.map_err(|e| match source.fault() {
        Some(fault) => part_error(path, "the file", Some(fault), e),
        None => Error::io("reading", path, e),
    });
    Ok((handler, read))
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
/// `html.parser`, this with html5ever's tokenizer over a stack of open
/// elements, as `html.parser` builds BeautifulSoup's tree (an end tag
/// closes the innermost open element of its name, void elements and
/// `<x/>` are empty); they may still tokenize malformed markup differently.
/// The page is read a chunk at a time and no tree is built. A page that
/// reads more than 64 occurrences inside one another through other elements
/// (`<section><div><section>...`, each occurrence's text holding those
/// inside it) is an [`Error::CorruptFile`], where Python's text would grow
/// with the square of the depth.
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
            let (tags, read) = read_file(path, tags::Tags::new(&this.tag, this.ignore_no_id))?;
            read?;
            let mut docs = Vec::new();
            for found in tags.finish().map_err(|e| Error::corrupt(path, e))? {
                let mut meta = Metadata::new();
                meta.insert("tag".into(), Value::String(this.tag.clone()));
                meta.insert("tag_id".into(), found.id.map_or(Value::Null, Value::String));
                meta.insert(
                    "file_path".into(),
                    Value::String(path.to_string_lossy().into_owned()),
                );
                docs.push(
                    Document::document(found.text).with_metadata_map(merged(meta, &extra_info)),
                );
            }
            Ok(docs)
        })
        .await
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
    fn a_head_left_open_ends_where_the_body_starts() {
        let (title, text) = html_to_text("<head><title>T</title><p>body text<li>x");
        assert_eq!(title.as_deref(), Some("T"));
        assert_eq!(text, "body text\n\n* x");
    }

    #[test]
    fn items_rows_and_cells_left_open_are_closed_as_a_browser_closes_them() {
        let (_, text) = html_to_text(
            "<ul><li>a<li>b<ul><li>c</ul><li>d</ul><table><tr><td>1<td>2<tr><td>3</table>",
        );
        assert_eq!(text, "* a\n* b\n* c\n* d\n\n1 | 2\n3");
    }

    #[test]
    fn thousands_of_unclosed_elements_keep_a_bounded_stack() {
        let page = format!("{}deep<p>after", "<b>".repeat(20_000));
        let (_, text) = html_to_text(&page);
        assert_eq!(text, "deep\n\nafter");
    }

    #[test]
    fn text_split_by_references_and_chunks_is_one_text() {
        let page = format!("<p>{}</p>", "a &amp; b ".repeat(20_000));
        let (_, text) = html_to_text(&page);
        assert_eq!(text, "a & b ".repeat(20_000).trim_end());
    }

    #[tokio::test]
    async fn occurrences_nested_past_the_limit_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("deep.html");
        let nested = |n: usize| "<section><div>x".repeat(n);
        std::fs::write(&path, nested(tags::MAX_NESTED)).unwrap_or_else(|e| panic!("{e}"));
        let docs = HTMLTagReader::new().load_file(&path, Metadata::new()).await;
        assert_eq!(docs.map(|d| d.len()).ok(), Some(tags::MAX_NESTED));
        std::fs::write(&path, nested(tags::MAX_NESTED + 1)).unwrap_or_else(|e| panic!("{e}"));
        let err = HTMLTagReader::new()
            .load_file(&path, Metadata::new())
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("deep.html") && err.contains("inside one another"),
            "{err}"
        );
    }

    #[test]
    fn no_title_is_none() {
        assert_eq!(html_to_text("<p>x</p>"), (None, "x".to_string()));
    }
}
