//! Node parsers: splitting documents into chunk nodes, chunk for chunk as
//! LlamaIndex 0.14.25 does (`SentenceSplitter`, `TokenTextSplitter`, `MarkdownNodeParser`).
//!
//! A [`TextSplitter`] cuts text into chunks; a [`NodeParser`] turns documents
//! into nodes (splitting, then offsets, metadata and relationships via
//! [`node_utils`]). Both splitters also are [`crate::TransformComponent`]s.

#[cfg(feature = "code-splitter")]
mod code;
pub mod hierarchical;
mod markdown;
pub mod node_utils;
mod options;
pub mod punkt;
mod punkt_tables;
mod sentence;
mod sentence_window;
pub mod text_utils;
mod token;

#[cfg(feature = "code-splitter")]
pub use code::{CodeLanguage, CodeSplitter, DEFAULT_MAX_CHARS};
pub use hierarchical::{
    DEFAULT_HIERARCHY_CHUNK_SIZES, HierarchicalNodeParser, get_child_nodes, get_deeper_nodes,
    get_leaf_nodes, get_root_nodes,
};
pub use markdown::MarkdownNodeParser;
pub use node_utils::{
    build_nodes_from_splits, default_id_func, metadata_str_for_splitting, postprocess_parsed_nodes,
};
pub use options::NodeParserOptions;
pub use punkt::PunktSentenceTokenizer;
pub use sentence::{
    CHUNKING_REGEX, ChunkingTokenizerFn, DEFAULT_PARAGRAPH_SEP, SENTENCE_CHUNK_OVERLAP,
    SentenceSplitter,
};
pub use sentence_window::{
    DEFAULT_OG_TEXT_METADATA_KEY, DEFAULT_WINDOW_METADATA_KEY, DEFAULT_WINDOW_SIZE,
    SentenceWindowNodeParser,
};
pub use token::{DEFAULT_METADATA_FORMAT_LEN, TokenTextSplitter};

use crate::error::Result;
use crate::schema::Node;
use std::fmt::Debug;
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_CHUNK_SIZE`, in tokens.
pub const DEFAULT_CHUNK_SIZE: usize = 1024;
/// LlamaIndex's `DEFAULT_CHUNK_OVERLAP`, in tokens (the token splitter's default).
pub const DEFAULT_CHUNK_OVERLAP: usize = 20;

/// Makes the id of the `i`-th chunk of a document (LlamaIndex `id_func`).
pub type IdFunc = Arc<dyn Fn(usize, &Node) -> String + Send + Sync>;

/// Cuts text into chunks.
pub trait TextSplitter: Send + Sync + Debug {
    /// The chunks of `text` at the configured chunk size.
    fn split_text(&self, text: &str) -> Result<Vec<String>>;

    /// The chunks of `text`, leaving room in each for `metadata_str` (the
    /// metadata that will be prepended when the chunk is embedded or shown to
    /// an LLM).
    fn split_text_metadata_aware(&self, text: &str, metadata_str: &str) -> Result<Vec<String>>;
}

/// Turns documents (or nodes) into chunk nodes.
pub trait NodeParser: Send + Sync + Debug {
    /// The nodes parsed from `documents`, in order, with `Source`,
    /// `Previous` and `Next` relationships and character offsets.
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>>;
}
