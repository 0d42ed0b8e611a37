//! `MarkdownReader`: a Markdown file as one document per header section,
//! following LlamaIndex's `MarkdownReader` line for line, quirks included.

use crate::util::{read_utf8, run_guarded};
use async_trait::async_trait;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Metadata, Result, py_strip};
use regex::Regex;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

/// Reads a Markdown file (LlamaIndex `MarkdownReader`) into one document per
/// section, each with the file's metadata.
///
/// As in LlamaIndex:
/// - links `[text](url)` become `text` (unless
///   [`remove_hyperlinks(false)`](Self::remove_hyperlinks)), and its image
///   pattern is applied as written there (`![(.?)](.?)`, which in practice
///   only drops a `!` followed by one of `(.?)` and keeps the next
///   character), unless [`remove_images(false)`](Self::remove_images);
/// - outside fenced code blocks, lines are stripped and blank ones dropped;
///   inside, lines are kept as they are;
/// - text before the first header is a document of its own, without header;
/// - a section ends only when a header of a level already open comes (a
///   deeper header joins the section it is in, so `# A` then `## B` make
///   one section titled `A B`); the title is the open headers' texts joined
///   with [`separator`](Self::separator) (`" "`), and the text is
///   `"\n\n{title}\n{body}"`;
/// - `<...>` tags are removed from each section's body.
///
/// [`header_metadata(true)`](Self::header_metadata) also puts the section's
/// title under the `header` metadata key (LlamaIndex has no such key, so it
/// is off by default: it would change the embedded text and the hash).
#[derive(Debug, Clone)]
pub struct MarkdownReader {
    remove_hyperlinks: bool,
    remove_images: bool,
    separator: String,
    header_metadata: bool,
}

impl Default for MarkdownReader {
    fn default() -> Self {
        Self {
            remove_hyperlinks: true,
            remove_images: true,
            separator: " ".into(),
            header_metadata: false,
        }
    }
}

static HYPERLINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\[(.*?)\]\((.*?)\)").ok());
// LlamaIndex's image pattern, unescaped as it is there.
static IMAGE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"![(.?)](.?)").ok());
static HEADER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^(#+)\s+(.*)").ok());
static TAG: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"<.*?>").ok());

impl MarkdownReader {
    /// LlamaIndex's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `[text](url)` becomes `text` (default `true`).
    pub fn remove_hyperlinks(mut self, remove: bool) -> Self {
        self.remove_hyperlinks = remove;
        self
    }

    /// Whether LlamaIndex's image pattern is applied (default `true`).
    pub fn remove_images(mut self, remove: bool) -> Self {
        self.remove_images = remove;
        self
    }

    /// What joins the open headers into a section's title (default `" "`).
    pub fn separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// Whether each section's title is also put in its metadata as `header`
    /// (default `false`, as LlamaIndex).
    pub fn header_metadata(mut self, header_metadata: bool) -> Self {
        self.header_metadata = header_metadata;
        self
    }

    /// The `(title, body)` sections of `markdown` (LlamaIndex `parse_tups`
    /// after reading the file): no title for text before the first header.
    pub fn parse_tups(&self, markdown: &str) -> Vec<(Option<String>, String)> {
        let mut content = markdown.to_string();
        if self.remove_hyperlinks {
            if let Some(re) = HYPERLINK.as_ref() {
                content = re.replace_all(&content, "$1").into_owned();
            }
        }
        if self.remove_images {
            if let Some(re) = IMAGE.as_ref() {
                content = re.replace_all(&content, "$1").into_owned();
            }
        }
        self.markdown_to_tups(&content)
    }

    /// LlamaIndex's `markdown_to_tups`.
    fn markdown_to_tups(&self, markdown: &str) -> Vec<(Option<String>, String)> {
        // The open section's lines, joined as they come: a line held on its
        // own costs a `String` (about 56 bytes) however short it is.
        let mut current = Lines::default();
        let mut in_code_block = false;
        // Open headers by level, in the order they were set (a Python dict).
        let mut headers: Vec<(usize, String)> = Vec::new();
        let title = |headers: &[(usize, String)]| -> String {
            headers
                .iter()
                .map(|(_, h)| h.as_str())
                .collect::<Vec<_>>()
                .join(&self.separator)
        };
        let mut sections: Vec<(Option<String>, String)> = Vec::new();
        for raw in markdown.split('\n') {
            if raw.starts_with("```") {
                in_code_block = !in_code_block;
            }
            if in_code_block {
                current.push(raw);
                continue;
            }
            let line = py_strip(raw);
            if line.is_empty() {
                continue;
            }
            let captures = HEADER.as_ref().and_then(|re| re.captures(line));
            let Some(caps) = captures else {
                current.push(line);
                continue;
            };
            let level = caps.get(1).map_or(0, |m| m.as_str().len());
            let text = caps.get(2).map_or("", |m| m.as_str()).to_string();
            if !current.is_empty() && headers.is_empty() {
                sections.push((None, current.take()));
            }
            // Python tests the dict value's truth: an empty title does not count.
            let open = headers.iter().any(|(l, h)| *l == level && !h.is_empty());
            if open {
                sections.push((Some(title(&headers)), current.take()));
                headers.retain(|(l, _)| *l < level);
            }
            match headers.iter_mut().find(|(l, _)| *l == level) {
                Some(slot) => slot.1 = text,
                None => headers.push((level, text)),
            }
        }
        if !current.is_empty() || !headers.is_empty() {
            sections.push((Some(title(&headers)), current.take()));
        }
        sections
            .into_iter()
            .map(|(key, value)| {
                // An empty title counts as none, as `key.strip() if key else None` has it.
                let key = key
                    .filter(|k| !k.is_empty())
                    .map(|k| py_strip(&k).to_string());
                let value = match TAG.as_ref() {
                    Some(re) => re.replace_all(&value, "").into_owned(),
                    None => value,
                };
                (key, value)
            })
            .collect()
    }
}

/// Lines joined with `"\n"` as they are pushed (Python's list of lines and
/// its `"\n".join`), without a `String` per line.
#[derive(Debug, Default)]
struct Lines {
    text: String,
    count: usize,
}

impl Lines {
    fn push(&mut self, line: &str) {
        if self.count > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.count += 1;
    }

    /// Whether no line was pushed (an empty line counts as one).
    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The joined lines; the list is empty again.
    fn take(&mut self) -> String {
        self.count = 0;
        std::mem::take(&mut self.text)
    }
}

#[async_trait]
impl FileReader for MarkdownReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let this = self.clone();
        run_guarded(path, move |path| {
            let text = read_utf8(path)?;
            Ok(this
                .parse_tups(&text)
                .into_iter()
                .map(|(header, body)| {
                    let mut meta = extra_info.clone();
                    match header {
                        None => Document::document(body).with_metadata_map(meta),
                        Some(header) => {
                            if this.header_metadata {
                                meta.insert("header".into(), Value::String(header.clone()));
                            }
                            Document::document(format!("\n\n{header}\n{body}"))
                                .with_metadata_map(meta)
                        }
                    }
                })
                .collect())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeper_headers_join_the_open_section() {
        let tups = MarkdownReader::new().parse_tups("# A\ntext a\n## B\ntext b\n# C\nc");
        assert_eq!(
            tups,
            vec![
                (Some("A B".to_string()), "text a\ntext b".to_string()),
                (Some("C".to_string()), "c".to_string()),
            ]
        );
    }

    #[test]
    fn image_pattern_is_llamaindexs() {
        let r = MarkdownReader::new();
        assert_eq!(r.parse_tups("Really!? Yes")[0].1, "Really Yes");
        assert_eq!(r.parse_tups("![alt](x.png)")[0].1, "!alt");
    }
}
