//! Passages: the nodes an answer draws on as people read them — file, line
//! or page, score, and the sentences that match the question best.

use crate::node_parser::PunktSentenceTokenizer;
use crate::retrievers::Bm25Tokenizer;
use crate::schema::{Metadata, Node, NodeWithScore, QueryBundle};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The longest excerpt shown per passage, in characters.
pub const EXCERPT_CHARS: usize = 500;

/// One passage an answer draws on.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Passage {
    /// The file, relative to the ingested folder.
    pub file: String,
    /// The page label (PDFs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The 1-based line the excerpt starts on (text files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The retriever's score.
    pub score: Option<f32>,
    /// The node's id.
    pub node_id: String,
    /// The sentences of the node that match the question best (at most
    /// [`EXCERPT_CHARS`] characters); `line` is where they start.
    pub excerpt: String,
    /// The node's whole stored text.
    pub text: String,
}

/// Line numbers of files, remembered by path, size and modification time,
/// so a busy server does not read a file per passage.
#[derive(Debug, Default)]
pub struct LineIndex {
    files: Mutex<HashMap<String, Cached>>,
}

#[derive(Debug)]
struct Cached {
    len: u64,
    modified: Option<SystemTime>,
    /// Character offsets of the newlines; `None` for files that are not text.
    newlines: Option<Arc<Vec<usize>>>,
}

/// Files whose line starts are kept at most (about 5 KB each for a typical text file).
const MAX_FILES: usize = 1024;

impl LineIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// The 1-based line of character `char_idx` of the file at `path`;
    /// `None` when the file cannot be read as text.
    pub fn line(&self, path: &str, char_idx: usize) -> Option<usize> {
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok();
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = files
            .get(path)
            .is_some_and(|c| c.len == meta.len() && c.modified == modified);
        if !fresh {
            if files.len() >= MAX_FILES {
                files.clear();
            }
            files.insert(
                path.to_string(),
                Cached {
                    len: meta.len(),
                    modified,
                    newlines: newlines_of(path).map(Arc::new),
                },
            );
        }
        let newlines = files.get(path)?.newlines.clone()?;
        drop(files);
        Some(1 + newlines.partition_point(|&n| n < char_idx))
    }
}

fn newlines_of(path: &str) -> Option<Vec<usize>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(
        text.chars()
            .enumerate()
            .filter(|&(_, c)| c == '\n')
            .map(|(i, _)| i)
            .collect(),
    )
}

/// A node's `file_path` metadata (empty when it has none).
pub fn file_path(meta: &Metadata) -> &str {
    meta.get("file_path")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// Where character `offset` of a node's text comes from: its file, its page
/// label (PDFs), else its line in the file.
pub fn place(
    node: &Node,
    offset: usize,
    lines: &LineIndex,
) -> (String, Option<String>, Option<usize>) {
    let path = file_path(&node.metadata);
    let page = node.metadata.get("page_label").map(|v| match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_string(),
    });
    let line = match (&page, node.start_char_idx) {
        (None, Some(start)) => lines.line(path, start + offset),
        _ => None,
    };
    (path.to_string(), page, line)
}

/// The 1-based line on which character `char_idx` of `text` lies.
pub fn line_of(text: &str, char_idx: usize) -> usize {
    1 + text.chars().take(char_idx).filter(|&c| c == '\n').count()
}

/// Passages for `nodes` retrieved for `query` (whose keyword terms are read
/// once, see [`keyword_query`](crate::retrievers::keyword_query)); `display`
/// turns a stored `file_path` into the path shown.
pub fn passages(
    query: &QueryBundle,
    nodes: &[NodeWithScore],
    display: &dyn Fn(&str) -> String,
    lines: &LineIndex,
) -> Vec<Passage> {
    let tokenizer = Bm25Tokenizer::new();
    let terms: HashSet<String> = tokenizer.query_terms(query).iter().cloned().collect();
    nodes
        .iter()
        .map(|n| {
            let text = n.node.get_text();
            let (excerpt_start, excerpt) = best_excerpt(text, &terms, &tokenizer, EXCERPT_CHARS);
            let (path, page, line) = place(&n.node, excerpt_start, lines);
            Passage {
                file: display(&path),
                page,
                line,
                score: n.score,
                node_id: n.node.node_id().to_string(),
                excerpt,
                text: text.trim().to_string(),
            }
        })
        .collect()
}

/// Where a passage comes from, as people cite it: `file:line`, `file, page P`.
pub fn location(p: &Passage) -> String {
    match (&p.page, p.line) {
        (Some(page), _) => format!("{}, page {page}", p.file),
        (None, Some(line)) => format!("{}:{line}", p.file),
        _ => p.file.clone(),
    }
}

/// The run of consecutive sentences of `text`, at most `max_chars` long
/// (one sentence at least, cut if longer), holding the most distinct terms of
/// the question; the shortest, then the earliest, wins ties. Returns its character offset and text.
pub fn best_excerpt(
    text: &str,
    terms: &HashSet<String>,
    tokenizer: &Bm25Tokenizer,
    max_chars: usize,
) -> (usize, String) {
    let chars: Vec<char> = text.chars().collect();
    let spans = PunktSentenceTokenizer::new().span_tokenize(text);
    if spans.is_empty() {
        return (0, chars.iter().take(max_chars).collect());
    }
    let sentence_terms: Vec<HashSet<String>> = spans
        .iter()
        .map(|&(s, e)| {
            let sentence: String = chars[s..e].iter().collect();
            tokenizer
                .tokenize(&sentence)
                .into_iter()
                .filter(|t| terms.contains(t))
                .collect()
        })
        .collect();
    let mut best = (0usize, 0usize, 0usize); // (score, first, last)
    for first in 0..spans.len() {
        let mut found: HashSet<&String> = HashSet::new();
        for last in first..spans.len() {
            if last > first && spans[last].1 - spans[first].0 > max_chars {
                break;
            }
            found.extend(sentence_terms[last].iter());
            // More terms win; then fewer sentences (no leading filler).
            if found.len() > best.0 || (found.len() == best.0 && last - first < best.2 - best.1) {
                best = (found.len(), first, last);
            }
        }
    }
    let (_, first, last) = best;
    let (start, end) = (
        spans[first].0,
        spans[last].1.min(spans[first].0 + max_chars),
    );
    let mut excerpt: String = chars[start..end].iter().collect();
    if end < spans[last].1 {
        excerpt.push_str(" …");
    }
    (
        start,
        excerpt.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_characters_not_bytes() {
        let t = "é\nb\nc";
        assert_eq!(line_of(t, 0), 1);
        assert_eq!(line_of(t, 2), 2);
        assert_eq!(line_of(t, 4), 3);
    }

    #[test]
    fn the_line_index_agrees_with_counting_and_notices_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        let text = "é one\ntwo\n\nfour";
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let index = LineIndex::new();
        for i in 0..text.chars().count() {
            assert_eq!(index.line(p, i), Some(line_of(text, i)), "char {i}");
        }
        std::fs::write(&path, "x\ny\nz\nw\nv, a longer file").unwrap();
        assert_eq!(index.line(p, 4), Some(3));
        assert_eq!(
            index.line(dir.path().join("gone").to_str().unwrap(), 0),
            None
        );
        std::fs::write(&path, b"bin\0ary").unwrap();
        assert_eq!(index.line(p, 1), None);
    }

    #[test]
    fn excerpts_pick_the_sentences_that_match() {
        let tok = Bm25Tokenizer::new();
        let terms: HashSet<String> = tok.tokenize("white rabbit watch").into_iter().collect();
        let text = "Alice sat by the river. Nothing happened for a while. \
            Then a White Rabbit ran by. It took a watch out of its pocket. The end came later.";
        let (start, excerpt) = best_excerpt(text, &terms, &tok, 80);
        assert!(
            excerpt.starts_with("Then a White Rabbit ran by."),
            "{excerpt}"
        );
        assert!(excerpt.contains("watch"), "{excerpt}");
        assert_eq!(text.chars().skip(start).take(4).collect::<String>(), "Then");
        let none: HashSet<String> = HashSet::new();
        assert_eq!(best_excerpt(text, &none, &tok, 80).0, 0);
    }
}
