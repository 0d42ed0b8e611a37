//! `SentenceSplitter`: chunks that keep sentences and paragraphs whole, a
//! port of LlamaIndex 0.14.25's `node_parser/text/sentence.py`.
//!
//! Text is split recursively (paragraphs, Punkt sentences, clauses, words,
//! characters) until every piece fits the chunk size in tokens, then pieces
//! are merged greedily into chunks that overlap by up to `chunk_overlap`.

use super::options::{
    NodeParserOptions, check_chunk_sizes, node_parser_component, node_parser_options_setters,
    text_splitter_setters,
};
use super::text_utils::{
    char_pieces, default_chunking_pieces, keep_separator_pieces, sentence_pieces,
};
use super::{DEFAULT_CHUNK_SIZE, TextSplitter};
use crate::error::{Error, Result};
use crate::schema::py_strip;
use crate::tokenizer::{Tokenizer, default_tokenizer};
use regex::Regex;
use serde_json::json;
use std::borrow::Cow;
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
    /// Metadata, Previous/Next links and node ids (every parser has them).
    pub options: NodeParserOptions,
    compiled_regex: Option<Regex>,
    regex_error: Option<regex::Error>,
    tokenizer: Arc<dyn Tokenizer>,
    chunking_tokenizer_fn: Option<ChunkingTokenizerFn>,
}

impl std::fmt::Debug for SentenceSplitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceSplitter")
            .field("chunk_size", &self.chunk_size)
            .field("chunk_overlap", &self.chunk_overlap)
            .field("separator", &self.separator)
            .field("paragraph_separator", &self.paragraph_separator)
            .field("secondary_chunking_regex", &self.secondary_chunking_regex)
            .field("options", &self.options)
            .field("tokenizer", &self.tokenizer)
            .field(
                "chunking_tokenizer_fn",
                &self.chunking_tokenizer_fn.as_ref().map(|_| "custom"),
            )
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
/// Pieces of the document borrow it; only the pieces of a custom
/// `chunking_tokenizer_fn`, which returns owned strings, are copies.
struct Split<'t> {
    text: Cow<'t, str>,
    is_sentence: bool,
    token_size: usize,
}

/// Turns a piece of the text being split into a [`Split`]'s text: a borrow
/// of the document, or a copy of a piece of an owned sentence.
type Lift<'s, 't> = dyn Fn(&'s str) -> Cow<'t, str> + 's;

/// The document's own pieces go to the merge as borrows.
fn borrow(piece: &str) -> Cow<'_, str> {
    Cow::Borrowed(piece)
}

/// Whether `pieces` yields at least two items (Python's `len(splits) > 1`),
/// looking no further than that.
fn has_two<T>(mut pieces: impl Iterator<Item = T>) -> bool {
    pieces.next().is_some() && pieces.next().is_some()
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
            options: NodeParserOptions::default(),
            compiled_regex: None,
            regex_error: None,
            tokenizer: default_tokenizer(),
            chunking_tokenizer_fn: None,
        }
    }

    text_splitter_setters!();

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
                Err(e) => self.regex_error = Some(e),
            }
        }
        self
    }

    node_parser_options_setters!();

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

    /// The configuration errors LlamaIndex raises at construction.
    pub fn validate(&self) -> Result<()> {
        check_chunk_sizes(self.chunk_size, self.chunk_overlap)?;
        if self.separator.is_empty() {
            return Err(Error::InvalidInput("separator must not be empty".into()));
        }
        if self.paragraph_separator.is_empty() {
            return Err(Error::InvalidInput(
                "paragraph_separator must not be empty".into(),
            ));
        }
        if let Some(e) = &self.regex_error {
            return Err(Error::invalid("secondary_chunking_regex", e.clone()));
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
                .map_err(|e| Error::invalid("secondary_chunking_regex", e)),
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
        let mut merger = Merger::new(chunk_size, self.chunk_overlap);
        let token_size = self.tokenizer.count_up_to(text, chunk_size);
        self.split(
            text,
            token_size,
            chunk_size,
            &clause,
            0,
            &borrow,
            &mut merger,
        )?;
        Ok(merger.finish())
    }

    /// Python's `_split`, feeding `_merge` as it goes: pieces no larger than
    /// `chunk_size` tokens unless indivisible. The pieces of each level are
    /// walked one at a time and merged at once, so memory holds the chunks
    /// and one chunk's window of pieces, never a list as long as the text
    /// (a separator-free text is split into characters).
    ///
    /// `token_size` is `text`'s token count, which the caller already knows
    /// (Python counts every oversized piece twice). Counts stop past
    /// `chunk_size`: an oversized piece's size is only ever compared with
    /// it, so text is counted whole once, in the pieces that fit, plus at
    /// most a chunk's worth of each piece that is cut further.
    #[allow(clippy::too_many_arguments)]
    fn split<'s, 't>(
        &self,
        text: &'s str,
        token_size: usize,
        chunk_size: usize,
        clause: &ClauseRegex,
        depth: usize,
        lift: &Lift<'s, 't>,
        out: &mut Merger<'t>,
    ) -> Result<()> {
        if token_size <= chunk_size {
            return out.push(Split {
                text: lift(text),
                is_sentence: true,
                token_size,
            });
        }
        if depth >= MAX_SPLIT_DEPTH {
            return Err(Error::InvalidInput(
                "text could not be split below the chunk size: the split functions \
                 keep returning it whole"
                    .into(),
            ));
        }
        // Python's `_get_splits_by_fns`: paragraphs, then sentences (both
        // count as sentences), then clauses, words, characters (which do
        // not). Each level is tried by looking for a second piece, then
        // walked afresh.
        let level = Level {
            chunk_size,
            clause,
            depth,
            lift,
        };
        let paragraphs = || keep_separator_pieces(text, &self.paragraph_separator);
        if has_two(paragraphs()) {
            return self.split_level(paragraphs(), true, &level, out);
        }
        match &self.chunking_tokenizer_fn {
            Some(f) => {
                let sentences = f(text);
                if sentences.len() > 1 {
                    return self.split_owned(&sentences, &level, out);
                }
            }
            None => {
                if has_two(sentence_pieces(text)) {
                    return self.split_level(sentence_pieces(text), true, &level, out);
                }
            }
        }
        match clause {
            ClauseRegex::None => {}
            ClauseRegex::Default => {
                if has_two(default_chunking_pieces(text)) {
                    return self.split_level(default_chunking_pieces(text), false, &level, out);
                }
            }
            ClauseRegex::Custom(re) => {
                let clauses = || re.find_iter(text).map(|m| m.as_str());
                if has_two(clauses()) {
                    return self.split_level(clauses(), false, &level, out);
                }
            }
        }
        let words = || keep_separator_pieces(text, &self.separator);
        if has_two(words()) {
            return self.split_level(words(), false, &level, out);
        }
        // One character cannot be cut further: it goes to the merge whatever
        // its size, which rejects it there if it is over the chunk size
        // (Python recurses until its stack runs out).
        if !has_two(text.chars()) {
            return out.push(Split {
                text: lift(text),
                is_sentence: false,
                token_size,
            });
        }
        self.split_level(char_pieces(text), false, &level, out)
    }

    /// The pieces of one level: each that fits is merged, each that does
    /// not is split further.
    fn split_level<'s, 't>(
        &self,
        pieces: impl Iterator<Item = &'s str>,
        is_sentence: bool,
        level: &Level<'_, 's, 't>,
        out: &mut Merger<'t>,
    ) -> Result<()> {
        for piece in pieces {
            let token_size = self.tokenizer.count_up_to(piece, level.chunk_size);
            if token_size <= level.chunk_size {
                out.push(Split {
                    text: (level.lift)(piece),
                    is_sentence,
                    token_size,
                })?;
            } else {
                self.split(
                    piece,
                    token_size,
                    level.chunk_size,
                    level.clause,
                    level.depth + 1,
                    level.lift,
                    out,
                )?;
            }
        }
        Ok(())
    }

    /// The sentences of a custom `chunking_tokenizer_fn`: owned strings, so
    /// what is merged from them is copied (a chunk's window at a time).
    fn split_owned<'t>(
        &self,
        sentences: &[String],
        level: &Level<'_, '_, 't>,
        out: &mut Merger<'t>,
    ) -> Result<()> {
        let copy = |piece: &str| Cow::Owned(piece.to_string());
        for sentence in sentences {
            let token_size = self.tokenizer.count_up_to(sentence, level.chunk_size);
            if token_size <= level.chunk_size {
                out.push(Split {
                    text: Cow::Owned(sentence.clone()),
                    is_sentence: true,
                    token_size,
                })?;
            } else {
                self.split(
                    sentence,
                    token_size,
                    level.chunk_size,
                    level.clause,
                    level.depth + 1,
                    &copy,
                    out,
                )?;
            }
        }
        Ok(())
    }
}

/// What one level of the recursive split passes down unchanged.
struct Level<'a, 's, 't> {
    chunk_size: usize,
    clause: &'a ClauseRegex,
    depth: usize,
    lift: &'a Lift<'s, 't>,
}

/// Python's `_merge` as a state machine fed one split at a time: greedy
/// packing with overlap carried from the end of the previous chunk. It
/// holds the chunks made so far and the current chunk's splits (at most a
/// chunk's worth of tokens, each at least one token but for empty ones).
/// Whitespace-only chunks are dropped and the rest stripped as they close.
struct Merger<'t> {
    chunk_size: usize,
    chunk_overlap: usize,
    chunks: Vec<String>,
    cur: VecDeque<Split<'t>>,
    cur_len: usize,
    new_chunk: bool,
}

impl<'t> Merger<'t> {
    fn new(chunk_size: usize, chunk_overlap: usize) -> Self {
        Merger {
            chunk_size,
            chunk_overlap,
            chunks: Vec::new(),
            cur: VecDeque::new(),
            cur_len: 0,
            new_chunk: true,
        }
    }

    /// One turn of Python's loop per chunk the split closes, until it is in.
    fn push(&mut self, split: Split<'t>) -> Result<()> {
        if split.token_size > self.chunk_size {
            return Err(Error::InvalidInput(
                "Single token exceeded chunk size".into(),
            ));
        }
        loop {
            if self.cur_len + split.token_size > self.chunk_size && !self.new_chunk {
                self.close_chunk();
                continue;
            }
            if self.new_chunk && self.cur_len + split.token_size > self.chunk_size {
                // drop overlap until the new split fits
                while self.cur_len + split.token_size > self.chunk_size {
                    let Some(first) = self.cur.pop_front() else {
                        break;
                    };
                    self.cur_len -= first.token_size;
                }
            }
            if split.is_sentence
                || self.cur_len + split.token_size <= self.chunk_size
                || self.new_chunk
            {
                self.cur_len += split.token_size;
                self.cur.push_back(split);
                self.new_chunk = false;
                return Ok(());
            }
            self.close_chunk();
        }
    }

    /// Emits the current chunk and keeps, as the next one's start, the
    /// longest run of its last splits that fits in the overlap.
    fn close_chunk(&mut self) {
        self.emit();
        let mut kept = 0usize;
        let mut kept_len = 0usize;
        for split in self.cur.iter().rev() {
            if kept_len + split.token_size > self.chunk_overlap {
                break;
            }
            kept_len += split.token_size;
            kept += 1;
        }
        let dropped = self.cur.len() - kept;
        self.cur.drain(..dropped);
        self.cur_len = kept_len;
        self.new_chunk = true;
    }

    /// Joins the current splits into a chunk, stripped, unless it is blank.
    fn emit(&mut self) {
        let len = self.cur.iter().map(|s| s.text.len()).sum();
        let mut joined = String::with_capacity(len);
        for split in &self.cur {
            joined.push_str(&split.text);
        }
        let stripped = py_strip(&joined);
        if stripped.len() == joined.len() {
            self.chunks.push(joined);
        } else if !stripped.is_empty() {
            self.chunks.push(stripped.to_string());
        }
    }

    /// The chunks, the last one included.
    fn finish(mut self) -> Vec<String> {
        if !self.new_chunk {
            self.emit();
        }
        self.chunks
    }
}

/// The clause splitter chosen for one call.
enum ClauseRegex {
    None,
    Default,
    Custom(Regex),
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

node_parser_component!(metadata_aware SentenceSplitter, "SentenceSplitter", |p| json!({
    "chunk_size": p.chunk_size,
    "chunk_overlap": p.chunk_overlap,
    "separator": p.separator,
    "paragraph_separator": p.paragraph_separator,
    "secondary_chunking_regex": p.secondary_chunking_regex,
}));

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
