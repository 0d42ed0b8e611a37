//! `TokenTextSplitter`: fixed-size token windows cut at word boundaries, a
//! port of LlamaIndex 0.14.25's `node_parser/text/token.py`.
//!
//! Text is split on the separator (then the backup separators, then
//! characters) until pieces fit, and pieces are packed into chunks that
//! start with up to `chunk_overlap` tokens of the previous chunk.

use super::options::{
    NodeParserOptions, check_chunk_sizes, node_parser_component, node_parser_options_setters,
    text_splitter_setters,
};
use super::sentence::effective_chunk_size;
use super::text_utils::{char_pieces, keep_separator_pieces};
use super::{DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, TextSplitter};
use crate::error::{Error, Result};
use crate::schema::py_strip;
use crate::tokenizer::{Tokenizer, default_tokenizer};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::Arc;

/// Tokens LlamaIndex reserves for metadata formatting on top of the metadata
/// string itself.
pub const DEFAULT_METADATA_FORMAT_LEN: usize = 2;

/// Splits text into chunks of at most `chunk_size` tokens at word
/// boundaries (LlamaIndex `TokenTextSplitter`).
#[derive(Clone)]
pub struct TokenTextSplitter {
    /// Chunk size in tokens.
    pub chunk_size: usize,
    /// Overlap between consecutive chunks in tokens.
    pub chunk_overlap: usize,
    /// Separator between words.
    pub separator: String,
    /// Separators tried when a word is still too long.
    pub backup_separators: Vec<String>,
    /// Keep leading/trailing whitespace of chunks instead of stripping it.
    pub keep_whitespaces: bool,
    /// Metadata, Previous/Next links and node ids (every parser has them).
    pub options: NodeParserOptions,
    tokenizer: Arc<dyn Tokenizer>,
}

impl std::fmt::Debug for TokenTextSplitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenTextSplitter")
            .field("chunk_size", &self.chunk_size)
            .field("chunk_overlap", &self.chunk_overlap)
            .field("separator", &self.separator)
            .field("backup_separators", &self.backup_separators)
            .field("keep_whitespaces", &self.keep_whitespaces)
            .field("options", &self.options)
            .field("tokenizer", &self.tokenizer)
            .finish()
    }
}

impl Default for TokenTextSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenTextSplitter {
    /// LlamaIndex's defaults: chunk size 1024, overlap 20, separator `" "`,
    /// backup separators `["\n"]`, whitespace stripped, metadata and
    /// prev/next relationships included, tiktoken `cl100k_base` tokens.
    pub fn new() -> Self {
        TokenTextSplitter {
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_overlap: DEFAULT_CHUNK_OVERLAP,
            separator: " ".into(),
            backup_separators: vec!["\n".into()],
            keep_whitespaces: false,
            options: NodeParserOptions::default(),
            tokenizer: default_tokenizer(),
        }
    }

    text_splitter_setters!();

    /// Sets the backup separators.
    pub fn backup_separators<S: Into<String>>(
        mut self,
        separators: impl IntoIterator<Item = S>,
    ) -> Self {
        self.backup_separators = separators.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps leading/trailing whitespace of chunks.
    pub fn keep_whitespaces(mut self, keep: bool) -> Self {
        self.keep_whitespaces = keep;
        self
    }

    node_parser_options_setters!();

    /// Sets the tokenizer that measures chunks.
    pub fn tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// The configuration errors LlamaIndex raises at construction.
    pub fn validate(&self) -> Result<()> {
        check_chunk_sizes(self.chunk_size, self.chunk_overlap)?;
        if self.separator.is_empty() || self.backup_separators.iter().any(String::is_empty) {
            return Err(Error::InvalidInput(
                "separator and backup_separators must not be empty".into(),
            ));
        }
        Ok(())
    }

    fn split_text_with_size(&self, text: &str, chunk_size: usize) -> Result<Vec<String>> {
        self.validate()?;
        if text.is_empty() {
            return Ok(vec![String::new()]);
        }
        let mut merger = Merger {
            chunk_size,
            chunk_overlap: self.chunk_overlap,
            keep_whitespaces: self.keep_whitespaces,
            chunks: Vec::new(),
            cur: VecDeque::new(),
            cur_len: 0,
        };
        let token_size = self.tokenizer.count_up_to(text, chunk_size);
        self.split(text, token_size, chunk_size, &mut merger);
        Ok(merger.finish())
    }

    /// Python's `_split`, feeding `_merge` as it goes: pieces (separators
    /// kept) no larger than the chunk size unless indivisible, each with its
    /// token count. Pieces are walked one at a time, so memory holds the
    /// chunks and one chunk's window, never a list as long as the text.
    /// `token_size` is `text`'s count, already known to the caller; counts
    /// stop past the chunk size, since an oversized piece's is only compared
    /// with it.
    fn split<'t>(&self, text: &'t str, token_size: usize, chunk_size: usize, out: &mut Merger<'t>) {
        if token_size <= chunk_size {
            out.push(text, token_size);
            return;
        }
        for sep in std::iter::once(&self.separator).chain(&self.backup_separators) {
            if has_two(keep_separator_pieces(text, sep)) {
                return self.split_pieces(keep_separator_pieces(text, sep), chunk_size, out);
            }
        }
        if !has_two(text.chars()) {
            // One character cannot be cut: it is kept whole whatever its
            // size, counted exactly for the merge's warning.
            out.push(text, self.tokenizer.count(text));
            return;
        }
        self.split_pieces(char_pieces(text), chunk_size, out);
    }

    /// One level's pieces: each that fits is merged, each that does not is
    /// split further (every piece is shorter than its text, so this ends).
    fn split_pieces<'t>(
        &self,
        pieces: impl Iterator<Item = &'t str>,
        chunk_size: usize,
        out: &mut Merger<'t>,
    ) {
        for piece in pieces {
            let len = self.tokenizer.count_up_to(piece, chunk_size);
            if len <= chunk_size {
                out.push(piece, len);
            } else {
                self.split(piece, len, chunk_size, out);
            }
        }
    }
}

/// Whether `pieces` yields at least two items (Python's `len(splits) > 1`).
fn has_two<T>(mut pieces: impl Iterator<Item = T>) -> bool {
    pieces.next().is_some() && pieces.next().is_some()
}

/// Python's `_merge` fed one piece at a time: when a piece does not fit,
/// the chunk is emitted and pieces are dropped from its front until at most
/// `chunk_overlap` tokens remain and the new piece fits. It holds the
/// chunks and the current chunk's pieces only.
struct Merger<'t> {
    chunk_size: usize,
    chunk_overlap: usize,
    keep_whitespaces: bool,
    chunks: Vec<String>,
    cur: VecDeque<(&'t str, usize)>,
    cur_len: usize,
}

impl<'t> Merger<'t> {
    fn push(&mut self, piece: &'t str, len: usize) {
        if len > self.chunk_size {
            tracing::warn!(
                "Got a split of size {len}, larger than chunk size {}.",
                self.chunk_size
            );
        }
        if self.cur_len + len > self.chunk_size {
            self.emit();
            while self.cur_len > self.chunk_overlap || self.cur_len + len > self.chunk_size {
                let Some((_, first_len)) = self.cur.pop_front() else {
                    break;
                };
                self.cur_len -= first_len;
            }
        }
        self.cur.push_back((piece, len));
        self.cur_len += len;
    }

    /// Joins the current pieces into a chunk, stripped unless whitespace is
    /// kept, and keeps it unless it is empty.
    fn emit(&mut self) {
        let joined: String = self.cur.iter().map(|(s, _)| *s).collect();
        let chunk = if self.keep_whitespaces {
            joined
        } else {
            let stripped = py_strip(&joined);
            if stripped.len() == joined.len() {
                joined
            } else {
                stripped.to_string()
            }
        };
        if !chunk.is_empty() {
            self.chunks.push(chunk);
        }
    }

    /// The chunks, the last one included.
    fn finish(mut self) -> Vec<String> {
        self.emit();
        self.chunks
    }
}

impl TextSplitter for TokenTextSplitter {
    fn split_text(&self, text: &str) -> Result<Vec<String>> {
        self.split_text_with_size(text, self.chunk_size)
    }

    fn split_text_metadata_aware(&self, text: &str, metadata_str: &str) -> Result<Vec<String>> {
        self.validate()?;
        let metadata_len = self.tokenizer.count(metadata_str) + DEFAULT_METADATA_FORMAT_LEN;
        let effective = effective_chunk_size(self.chunk_size, metadata_len)?;
        self.split_text_with_size(text, effective)
    }
}

node_parser_component!(metadata_aware TokenTextSplitter, "TokenTextSplitter", |p| json!({
    "chunk_size": p.chunk_size,
    "chunk_overlap": p.chunk_overlap,
    "separator": p.separator,
    "backup_separators": p.backup_separators,
    "keep_whitespaces": p.keep_whitespaces,
}));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_configuration() {
        assert!(
            TokenTextSplitter::new()
                .chunk_size(10)
                .chunk_overlap(11)
                .build()
                .is_err_and(|e| e.to_string().contains("larger chunk overlap (11)"))
        );
        assert!(
            TokenTextSplitter::new()
                .backup_separators([""])
                .build()
                .is_err()
        );
    }

    #[test]
    fn tiny_chunks_fall_back_to_characters() {
        let s = TokenTextSplitter::new().chunk_size(1).chunk_overlap(0);
        // recorded from Python: multi-token characters stay whole
        assert_eq!(
            s.split_text("東京🚀 x").ok(),
            Some(vec!["東".into(), "京".into(), "🚀".into(), "x".into()])
        );
    }
}
