//! `SentenceSplitter`: chunks that keep sentences and paragraphs whole, a
//! port of LlamaIndex 0.14.25's `node_parser/text/sentence.py`.
//!
//! Text is split recursively (paragraphs, Punkt sentences, clauses, words,
//! characters) until every piece fits the chunk size in tokens, then pieces
//! are merged greedily into chunks that overlap by up to `chunk_overlap`.

use super::node_utils::parse_nodes_metadata_aware;
use super::text_utils::{
    split_by_char, split_by_default_chunking_regex, split_by_regex, split_by_sentence_tokenizer,
    split_text_keep_separator,
};
use super::{DEFAULT_CHUNK_SIZE, IdFunc, NodeParser, TextSplitter};
use crate::error::{Error, Result};
use crate::schema::{Node, py_strip};
use crate::tokenizer::{Tokenizer, default_tokenizer};
use crate::transform::TransformComponent;
use async_trait::async_trait;
use regex::Regex;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;

/// The sentence splitter's default overlap, in tokens.
pub const SENTENCE_CHUNK_OVERLAP: usize = 200;
/// The regex that splits a sentence into clauses when it is too long.
pub const CHUNKING_REGEX: &str = "[^,.;。？！]+[,.;。？！]?|[,.;。？！]";
/// The default paragraph separator.
pub const DEFAULT_PARAGRAPH_SEP: &str = "\n\n\n";

/// Splits text into sentences (LlamaIndex `chunking_tokenizer_fn`).
pub type ChunkingTokenizerFn = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// How deep the recursive split may go. The built-in split functions always
/// shrink the text and real texts stop within about six levels, so this only
/// stops a custom `chunking_tokenizer_fn` that returns its input (Python dies
/// of `RecursionError` there) before it exhausts the stack.
const MAX_SPLIT_DEPTH: usize = 256;

/// Splits text preferring whole sentences and paragraphs (LlamaIndex
/// `SentenceSplitter`). Configure with the builder methods; an invalid
/// configuration (overlap larger than the chunk size, ...) is reported by
/// [`SentenceSplitter::build`] and by every split.
#[derive(Clone)]
pub struct SentenceSplitter {
    /// Chunk size in tokens.
    pub chunk_size: usize,
    /// Overlap between consecutive chunks in tokens.
    pub chunk_overlap: usize,
    /// Separator between words.
    pub separator: String,
    /// Separator between paragraphs.
    pub paragraph_separator: String,
    /// Regex splitting a sentence into clauses; `None` goes from sentences
    /// straight to words.
    pub secondary_chunking_regex: Option<String>,
    /// Whether chunks inherit their document's metadata.
    pub include_metadata: bool,
    /// Whether chunks of one document are chained with `Previous`/`Next`.
    pub include_prev_next_rel: bool,
    compiled_regex: Option<Regex>,
    regex_error: Option<String>,
    tokenizer: Arc<dyn Tokenizer>,
    chunking_tokenizer_fn: Option<ChunkingTokenizerFn>,
    id_func: Option<IdFunc>,
}

impl std::fmt::Debug for SentenceSplitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceSplitter")
            .field("chunk_size", &self.chunk_size)
            .field("chunk_overlap", &self.chunk_overlap)
            .field("separator", &self.separator)
            .field("paragraph_separator", &self.paragraph_separator)
            .field("secondary_chunking_regex", &self.secondary_chunking_regex)
            .field("include_metadata", &self.include_metadata)
            .field("include_prev_next_rel", &self.include_prev_next_rel)
            .field("tokenizer", &self.tokenizer)
            .field(
                "chunking_tokenizer_fn",
                &self.chunking_tokenizer_fn.as_ref().map(|_| "custom"),
            )
            .field("id_func", &self.id_func.as_ref().map(|_| "custom"))
            .finish()
    }
}

impl Default for SentenceSplitter {
    fn default() -> Self {
        Self::new()
    }
}

/// A piece of text small enough to be merged, and whether it is a whole
/// sentence (whole sentences may exceed a chunk already holding overlap).
struct Split {
    text: String,
    is_sentence: bool,
    token_size: usize,
}

impl SentenceSplitter {
    /// LlamaIndex's defaults: chunk size 1024, overlap 200, separator `" "`,
    /// paragraph separator `"\n\n\n"`, [`CHUNKING_REGEX`], metadata and
    /// prev/next relationships included, tiktoken `cl100k_base` tokens.
    pub fn new() -> Self {
        SentenceSplitter {
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_overlap: SENTENCE_CHUNK_OVERLAP,
            separator: " ".into(),
            paragraph_separator: DEFAULT_PARAGRAPH_SEP.into(),
            secondary_chunking_regex: Some(CHUNKING_REGEX.into()),
            include_metadata: true,
            include_prev_next_rel: true,
            compiled_regex: None,
            regex_error: None,
            tokenizer: default_tokenizer(),
            chunking_tokenizer_fn: None,
            id_func: None,
        }
    }

    /// Sets the chunk size in tokens.
    pub fn chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }

    /// Sets the overlap in tokens.
    pub fn chunk_overlap(mut self, chunk_overlap: usize) -> Self {
        self.chunk_overlap = chunk_overlap;
        self
    }

    /// Sets the word separator.
    pub fn separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// Sets the paragraph separator.
    pub fn paragraph_separator(mut self, paragraph_separator: impl Into<String>) -> Self {
        self.paragraph_separator = paragraph_separator.into();
        self
    }

    /// Sets the clause regex (Rust `regex` syntax; matches are the clauses,
    /// as Python's `re.findall`), or `None` to skip clause splitting.
    pub fn secondary_chunking_regex(mut self, regex: Option<&str>) -> Self {
        self.secondary_chunking_regex = regex.map(str::to_string);
        self.compiled_regex = None;
        self.regex_error = None;
        if let Some(pattern) = regex.filter(|p| *p != CHUNKING_REGEX) {
            match Regex::new(pattern) {
                Ok(re) => self.compiled_regex = Some(re),
                Err(e) => self.regex_error = Some(e.to_string()),
            }
        }
        self
    }

    /// Whether chunks inherit their document's metadata.
    pub fn include_metadata(mut self, include: bool) -> Self {
        self.include_metadata = include;
        self
    }

    /// Whether chunks are chained with `Previous`/`Next`.
    pub fn include_prev_next_rel(mut self, include: bool) -> Self {
        self.include_prev_next_rel = include;
        self
    }

    /// Sets the tokenizer that measures chunks.
    pub fn tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Replaces the Punkt sentence splitter.
    pub fn chunking_tokenizer_fn(mut self, f: ChunkingTokenizerFn) -> Self {
        self.chunking_tokenizer_fn = Some(f);
        self
    }

    /// Sets how chunk ids are made (default: UUID v4).
    pub fn id_func(mut self, f: IdFunc) -> Self {
        self.id_func = Some(f);
        self
    }

    /// Checks the configuration, returning the splitter if it is usable.
    pub fn build(self) -> Result<Self> {
        self.validate()?;
        Ok(self)
    }

    /// The configuration errors LlamaIndex raises at construction.
    pub fn validate(&self) -> Result<()> {
        if self.chunk_overlap > self.chunk_size {
            return Err(Error::InvalidInput(format!(
                "Got a larger chunk overlap ({}) than chunk size ({}), should be smaller.",
                self.chunk_overlap, self.chunk_size
            )));
        }
        if self.chunk_size == 0 {
            return Err(Error::InvalidInput(
                "chunk_size must be greater than 0".into(),
            ));
        }
        if self.separator.is_empty() {
            return Err(Error::InvalidInput("separator must not be empty".into()));
        }
        if self.paragraph_separator.is_empty() {
            return Err(Error::InvalidInput(
                "paragraph_separator must not be empty".into(),
            ));
        }
        if let Some(e) = &self.regex_error {
            return Err(Error::InvalidInput(format!(
                "secondary_chunking_regex: {e}"
            )));
        }
        Ok(())
    }

    /// The clause regex to use, compiling it here if the public field was
    /// changed after the setter ran.
    fn clause_regex(&self) -> Result<ClauseRegex> {
        let Some(pattern) = self.secondary_chunking_regex.as_deref() else {
            return Ok(ClauseRegex::None);
        };
        if pattern == CHUNKING_REGEX {
            return Ok(ClauseRegex::Default);
        }
        match &self.compiled_regex {
            Some(re) if re.as_str() == pattern => Ok(ClauseRegex::Custom(re.clone())),
            _ => Regex::new(pattern)
                .map(ClauseRegex::Custom)
                .map_err(|e| Error::InvalidInput(format!("secondary_chunking_regex: {e}"))),
        }
    }

    fn split_text_with_size(&self, text: &str, chunk_size: usize) -> Result<Vec<String>> {
        self.validate()?;
        if text.is_empty() {
            // Python returns the empty text itself, so an empty document
            // still yields one (empty) node.
            return Ok(vec![String::new()]);
        }
        let clause = self.clause_regex()?;
        let mut splits = Vec::new();
        let token_size = self.tokenizer.count_up_to(text, chunk_size);
        self.split(text, token_size, chunk_size, &clause, 0, &mut splits)?;
        self.merge(&splits, chunk_size)
    }

    /// Python's `_split`: pieces no larger than `chunk_size` tokens unless
    /// indivisible. `token_size` is `text`'s token count, which the caller
    /// already knows (Python counts every oversized piece twice). Counts stop
    /// past `chunk_size`: an oversized piece's size is only ever compared
    /// with it, so text is counted whole once, in the pieces that fit, plus
    /// at most a chunk's worth of each piece that is cut further.
    fn split(
        &self,
        text: &str,
        token_size: usize,
        chunk_size: usize,
        clause: &ClauseRegex,
        depth: usize,
        out: &mut Vec<Split>,
    ) -> Result<()> {
        if token_size <= chunk_size {
            out.push(Split {
                text: text.to_string(),
                is_sentence: true,
                token_size,
            });
            return Ok(());
        }
        if depth >= MAX_SPLIT_DEPTH {
            return Err(Error::InvalidInput(
                "text could not be split below the chunk size: the split functions \
                 keep returning it whole"
                    .into(),
            ));
        }
        let (pieces, is_sentence) = self.splits_by_fns(text, clause);
        let single = pieces.len() == 1;
        for piece in pieces {
            let token_size = self.tokenizer.count_up_to(&piece, chunk_size);
            if token_size <= chunk_size || single {
                out.push(Split {
                    text: piece,
                    is_sentence,
                    token_size,
                });
            } else {
                self.split(&piece, token_size, chunk_size, clause, depth + 1, out)?;
            }
        }
        Ok(())
    }

    /// Python's `_get_splits_by_fns`: paragraphs, then sentences (both count
    /// as sentences), then clauses, words, characters (which do not).
    fn splits_by_fns(&self, text: &str, clause: &ClauseRegex) -> (Vec<String>, bool) {
        let paragraphs = split_text_keep_separator(text, &self.paragraph_separator);
        if paragraphs.len() > 1 {
            return (owned(paragraphs), true);
        }
        let sentences = match &self.chunking_tokenizer_fn {
            Some(f) => f(text),
            None => owned(split_by_sentence_tokenizer(text)),
        };
        if sentences.len() > 1 {
            return (sentences, true);
        }
        let by_clause = match clause {
            ClauseRegex::None => None,
            ClauseRegex::Default => Some(split_by_default_chunking_regex(text)),
            ClauseRegex::Custom(re) => Some(split_by_regex(text, re)),
        };
        if let Some(pieces) = by_clause.filter(|p| p.len() > 1) {
            return (owned(pieces), false);
        }
        let words = split_text_keep_separator(text, &self.separator);
        if words.len() > 1 {
            return (owned(words), false);
        }
        (owned(split_by_char(text)), false)
    }

    /// Python's `_merge`: greedy packing with overlap carried from the end of
    /// the previous chunk; whitespace-only chunks are dropped and the rest
    /// stripped.
    fn merge(&self, splits: &[Split], chunk_size: usize) -> Result<Vec<String>> {
        let mut chunks: Vec<String> = Vec::new();
        // indices into `splits`; lengths are read from there
        let mut cur: VecDeque<usize> = VecDeque::new();
        let mut cur_len = 0usize;
        let mut new_chunk = true;

        let join = |idx: &VecDeque<usize>| -> String {
            idx.iter().map(|&i| splits[i].text.as_str()).collect()
        };
        let close_chunk = |cur: &mut VecDeque<usize>,
                           cur_len: &mut usize,
                           new_chunk: &mut bool,
                           chunks: &mut Vec<String>| {
            chunks.push(join(cur));
            let last: Vec<usize> = cur.drain(..).collect();
            *cur_len = 0;
            *new_chunk = true;
            for &i in last.iter().rev() {
                if *cur_len + splits[i].token_size > self.chunk_overlap {
                    break;
                }
                *cur_len += splits[i].token_size;
                cur.push_front(i);
            }
        };

        let mut idx = 0usize;
        while idx < splits.len() {
            let split = &splits[idx];
            if split.token_size > chunk_size {
                return Err(Error::InvalidInput(
                    "Single token exceeded chunk size".into(),
                ));
            }
            if cur_len + split.token_size > chunk_size && !new_chunk {
                close_chunk(&mut cur, &mut cur_len, &mut new_chunk, &mut chunks);
                continue;
            }
            if new_chunk && cur_len + split.token_size > chunk_size {
                // drop overlap until the new split fits
                while cur_len + split.token_size > chunk_size {
                    let Some(i) = cur.pop_front() else { break };
                    cur_len -= splits[i].token_size;
                }
            }
            if split.is_sentence || cur_len + split.token_size <= chunk_size || new_chunk {
                cur_len += split.token_size;
                cur.push_back(idx);
                idx += 1;
                new_chunk = false;
            } else {
                close_chunk(&mut cur, &mut cur_len, &mut new_chunk, &mut chunks);
            }
        }
        if !new_chunk {
            chunks.push(join(&cur));
        }
        Ok(chunks
            .iter()
            .map(|c| py_strip(c))
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect())
    }
}

/// The clause splitter chosen for one call.
enum ClauseRegex {
    None,
    Default,
    Custom(Regex),
}

fn owned(v: Vec<&str>) -> Vec<String> {
    v.into_iter().map(str::to_string).collect()
}

/// Checks the metadata's share of the chunk size as LlamaIndex does: an
/// error when nothing is left, a warning below 50 tokens.
pub(crate) fn effective_chunk_size(chunk_size: usize, metadata_len: usize) -> Result<usize> {
    if metadata_len >= chunk_size {
        return Err(Error::InvalidInput(format!(
            "Metadata length ({metadata_len}) is longer than chunk size ({chunk_size}). \
             Consider increasing the chunk size or decreasing the size of your metadata \
             to avoid this."
        )));
    }
    let effective = chunk_size - metadata_len;
    if effective < 50 {
        tracing::warn!(
            "Metadata length ({metadata_len}) is close to chunk size ({chunk_size}). \
             Resulting chunks are less than 50 tokens. Consider increasing the chunk size \
             or decreasing the size of your metadata to avoid this."
        );
    }
    Ok(effective)
}

impl TextSplitter for SentenceSplitter {
    fn split_text(&self, text: &str) -> Result<Vec<String>> {
        self.split_text_with_size(text, self.chunk_size)
    }

    fn split_text_metadata_aware(&self, text: &str, metadata_str: &str) -> Result<Vec<String>> {
        self.validate()?;
        let metadata_len = self.tokenizer.count(metadata_str);
        let effective = effective_chunk_size(self.chunk_size, metadata_len)?;
        self.split_text_with_size(text, effective)
    }
}

impl NodeParser for SentenceSplitter {
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>> {
        self.validate()?;
        parse_nodes_metadata_aware(
            self,
            documents,
            self.include_metadata,
            self.include_prev_next_rel,
            self.id_func.as_ref(),
        )
    }
}

#[async_trait]
impl TransformComponent for SentenceSplitter {
    fn class_name(&self) -> &'static str {
        "SentenceSplitter"
    }

    /// LlamaIndex's `to_dict()` of the splitter.
    fn settings(&self) -> Value {
        json!({
            "include_metadata": self.include_metadata,
            "include_prev_next_rel": self.include_prev_next_rel,
            "id_func": id_func_json(self.id_func.is_some()),
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "separator": self.separator,
            "paragraph_separator": self.paragraph_separator,
            "secondary_chunking_regex": self.secondary_chunking_regex,
            "class_name": "SentenceSplitter",
        })
    }

    async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>> {
        self.get_nodes_from_documents(&nodes)
    }
}

/// How LlamaIndex serialises the id function of a node parser.
pub(crate) fn id_func_json(custom: bool) -> Value {
    let name = if custom {
        "custom_id_func"
    } else {
        "default_id_func"
    };
    json!({"id_func_name": name, "title": "id_func"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_overlap_larger_than_size() {
        let err = SentenceSplitter::new()
            .chunk_size(10)
            .chunk_overlap(11)
            .build();
        assert!(
            matches!(err, Err(Error::InvalidInput(ref m)) if m.contains("larger chunk overlap (11)"))
        );
        assert!(
            SentenceSplitter::new()
                .chunk_size(0)
                .chunk_overlap(0)
                .build()
                .is_err()
        );
        assert!(SentenceSplitter::new().separator("").build().is_err());
        assert!(
            SentenceSplitter::new()
                .secondary_chunking_regex(Some("("))
                .build()
                .is_err()
        );
        // a configuration made invalid after building is still caught on use
        let mut s = SentenceSplitter::new();
        s.chunk_overlap = 5000;
        assert!(s.split_text("text").is_err());
    }

    #[test]
    fn short_text_is_one_chunk() {
        let s = SentenceSplitter::new();
        assert_eq!(
            s.split_text("  Hello world.  ").ok(),
            Some(vec!["Hello world.".to_string()])
        );
        assert_eq!(s.split_text("").ok(), Some(vec![String::new()]));
        assert_eq!(s.split_text(" \n ").ok(), Some(vec![]));
    }

    #[test]
    fn custom_chunking_fn_is_used_and_cannot_loop_forever() {
        // expected chunks recorded from Python with the same function
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let by_pairs: ChunkingTokenizerFn = Arc::new(|t: &str| {
            let words: Vec<&str> = t.split_inclusive(' ').collect();
            words.chunks(2).map(|c| c.concat()).collect()
        });
        let s = SentenceSplitter::new()
            .chunk_size(4)
            .chunk_overlap(0)
            .chunking_tokenizer_fn(by_pairs);
        assert_eq!(
            s.split_text(text).ok(),
            Some(
                [
                    "alpha beta",
                    "gamma delta",
                    "epsilon zeta",
                    "eta theta",
                    "iota kappa"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        let stubborn: ChunkingTokenizerFn = Arc::new(|t: &str| vec![t.to_string(), t.to_string()]);
        let s = SentenceSplitter::new()
            .chunk_size(4)
            .chunk_overlap(0)
            .chunking_tokenizer_fn(stubborn);
        assert!(s.split_text(text).is_err());
    }

    #[test]
    fn metadata_leaves_room_or_errors() {
        assert_eq!(effective_chunk_size(100, 30).ok(), Some(70));
        assert_eq!(effective_chunk_size(100, 60).ok(), Some(40));
        assert!(effective_chunk_size(100, 100).is_err());
        assert!(effective_chunk_size(100, 300).is_err());
    }
}
