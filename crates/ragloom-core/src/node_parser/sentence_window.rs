//! `SentenceWindowNodeParser`: one node per sentence, each carrying the
//! sentences around it in metadata, a port of LlamaIndex's `sentence_window.py`.
//!
//! Pair it with `MetadataReplacementPostProcessor::new("window")`: retrieval
//! matches single sentences, the LLM then sees each one's window.

use super::NodeParser;
use super::node_utils::build_nodes_from_splits;
use super::options::{NodeParserOptions, node_parser_component, node_parser_options_setters};
use super::sentence::ChunkingTokenizerFn;
use super::text_utils::split_by_sentence_tokenizer;
use crate::error::{Error, Result};
use crate::schema::Node;
use serde_json::{Value, json};

/// LlamaIndex's `DEFAULT_WINDOW_SIZE`: sentences on each side.
pub const DEFAULT_WINDOW_SIZE: usize = 3;
/// LlamaIndex's `DEFAULT_WINDOW_METADATA_KEY`.
pub const DEFAULT_WINDOW_METADATA_KEY: &str = "window";
/// LlamaIndex's `DEFAULT_OG_TEXT_METADATA_KEY`.
pub const DEFAULT_OG_TEXT_METADATA_KEY: &str = "original_text";

/// Splits documents into one node per sentence (LlamaIndex
/// `SentenceWindowNodeParser`).
///
/// Each node's metadata gets `window_metadata_key` (the node's sentence with
/// up to `window_size` sentences on each side, joined by a space) and
/// `original_text_metadata_key` (its own sentence), both added to the
/// node's excluded embed and LLM keys, so they are neither embedded nor
/// shown unless a postprocessor puts the window in place of the text. As in
/// Python, sentences are cut by the Punkt tokenizer keeping their trailing
/// whitespace; the document's metadata is merged in before the window keys;
/// offsets and `Previous`/`Next` links are set as for any node parser.
#[derive(Clone)]
pub struct SentenceWindowNodeParser {
    /// Sentences on each side of a node's sentence (default 3, at least 1).
    pub window_size: usize,
    /// Metadata key of the window (default `"window"`).
    pub window_metadata_key: String,
    /// Metadata key of the node's own sentence (default `"original_text"`).
    pub original_text_metadata_key: String,
    /// Metadata, Previous/Next links and node ids (every parser has them).
    pub options: NodeParserOptions,
    sentence_splitter: Option<ChunkingTokenizerFn>,
}

impl std::fmt::Debug for SentenceWindowNodeParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceWindowNodeParser")
            .field("window_size", &self.window_size)
            .field("window_metadata_key", &self.window_metadata_key)
            .field(
                "original_text_metadata_key",
                &self.original_text_metadata_key,
            )
            .field("options", &self.options)
            .field(
                "sentence_splitter",
                &self.sentence_splitter.as_ref().map(|_| "custom"),
            )
            .finish()
    }
}

impl Default for SentenceWindowNodeParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SentenceWindowNodeParser {
    /// LlamaIndex's defaults (`SentenceWindowNodeParser.from_defaults()`).
    pub fn new() -> Self {
        Self {
            window_size: DEFAULT_WINDOW_SIZE,
            window_metadata_key: DEFAULT_WINDOW_METADATA_KEY.to_string(),
            original_text_metadata_key: DEFAULT_OG_TEXT_METADATA_KEY.to_string(),
            options: NodeParserOptions::default(),
            sentence_splitter: None,
        }
    }

    /// Sets `window_size`.
    pub fn window_size(mut self, window_size: usize) -> Self {
        self.window_size = window_size;
        self
    }

    /// Sets `window_metadata_key`.
    pub fn window_metadata_key(mut self, key: impl Into<String>) -> Self {
        self.window_metadata_key = key.into();
        self
    }

    /// Sets `original_text_metadata_key`.
    pub fn original_text_metadata_key(mut self, key: impl Into<String>) -> Self {
        self.original_text_metadata_key = key.into();
        self
    }

    node_parser_options_setters!();

    /// Replaces the Punkt sentence splitter.
    pub fn sentence_splitter(mut self, f: ChunkingTokenizerFn) -> Self {
        self.sentence_splitter = Some(f);
        self
    }

    /// Checks the settings (`window_size` must be positive, as Python's `gt=0`).
    pub fn build(self) -> Result<Self> {
        self.validate()?;
        Ok(self)
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.window_size == 0 {
            return Err(Error::InvalidInput(
                "SentenceWindowNodeParser: window_size must be greater than 0".into(),
            ));
        }
        Ok(())
    }

    fn split(&self, text: &str) -> Vec<String> {
        match &self.sentence_splitter {
            Some(f) => f(text),
            None => split_by_sentence_tokenizer(text)
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }

    /// The window nodes of `documents`, before offsets, document metadata
    /// and relationships are added (LlamaIndex `build_window_nodes_from_documents`).
    pub fn build_window_nodes_from_documents(&self, documents: &[Node]) -> Vec<Node> {
        let mut all = Vec::new();
        for doc in documents {
            let mut nodes = build_nodes_from_splits(
                self.split(&doc.text),
                doc,
                None,
                self.options.id_func.as_ref(),
            );
            let windows: Vec<String> = (0..nodes.len())
                .map(|i| {
                    let lo = i.saturating_sub(self.window_size);
                    let hi = (i + self.window_size + 1).min(nodes.len());
                    nodes[lo..hi]
                        .iter()
                        .map(|n| n.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            for (node, window) in nodes.iter_mut().zip(windows) {
                node.metadata
                    .insert(self.window_metadata_key.clone(), Value::String(window));
                node.metadata.insert(
                    self.original_text_metadata_key.clone(),
                    Value::String(node.text.clone()),
                );
                for keys in [
                    &mut node.excluded_embed_metadata_keys,
                    &mut node.excluded_llm_metadata_keys,
                ] {
                    keys.push(self.window_metadata_key.clone());
                    keys.push(self.original_text_metadata_key.clone());
                }
            }
            all.extend(nodes);
        }
        all
    }
}

impl NodeParser for SentenceWindowNodeParser {
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>> {
        self.validate()?;
        let mut nodes = self.build_window_nodes_from_documents(documents);
        self.options.postprocess(&mut nodes, documents);
        Ok(nodes)
    }
}

node_parser_component!(
    SentenceWindowNodeParser,
    "SentenceWindowNodeParser",
    |p| json!({
                "window_size": p.window_size,
                "window_metadata_key": p.window_metadata_key,
                "original_text_metadata_key": p.original_text_metadata_key,
    })
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_window_is_rejected() {
        assert!(
            SentenceWindowNodeParser::new()
                .window_size(0)
                .build()
                .is_err()
        );
        let mut p = SentenceWindowNodeParser::new();
        p.window_size = 0;
        assert!(
            p.get_nodes_from_documents(&[Node::document("a. b.")])
                .is_err()
        );
    }

    #[test]
    fn windows_reach_window_size_each_side() {
        let split: ChunkingTokenizerFn =
            std::sync::Arc::new(|t: &str| t.split(' ').map(String::from).collect());
        let p = SentenceWindowNodeParser::new()
            .window_size(1)
            .sentence_splitter(split);
        let nodes = p
            .get_nodes_from_documents(&[Node::document("a b c d")])
            .unwrap_or_default();
        let windows: Vec<&str> = nodes
            .iter()
            .filter_map(|n| n.metadata["window"].as_str())
            .collect();
        assert_eq!(windows, ["a b", "a b c", "b c d", "c d"]);
        assert_eq!(nodes[2].start_char_idx, Some(4));
    }
}
