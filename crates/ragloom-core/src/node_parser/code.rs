//! `CodeSplitter`: chunks of source code cut along its syntax tree (feature
//! `code-splitter`, tree-sitter grammars for Rust and Python via `text-splitter`).
//!
//! LlamaIndex's `CodeSplitter` walks the tree-sitter tree itself; ragloom
//! delegates to the `text-splitter` crate, which packs the largest syntax
//! nodes that fit into `max_chars` characters. Chunks therefore respect the
//! same limit and the same boundaries in spirit, not byte for byte.

use super::node_utils::{build_nodes_from_splits, with_node_id};
use super::options::{NodeParserOptions, node_parser_component, node_parser_options_setters};
use super::{NodeParser, TextSplitter};
use crate::error::{Error, Result};
use crate::schema::Node;
use serde_json::json;

/// LlamaIndex's default `max_chars` of a code chunk.
pub const DEFAULT_MAX_CHARS: usize = 1500;

/// A language `CodeSplitter` has a grammar for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeLanguage {
    /// Rust (`tree-sitter-rust`).
    Rust,
    /// Python (`tree-sitter-python`).
    Python,
}

impl CodeLanguage {
    /// The language for a LlamaIndex language name (`"rust"`, `"python"`);
    /// others are an [`Error::Unsupported`] naming them.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "rust" => Ok(Self::Rust),
            "python" => Ok(Self::Python),
            other => Err(Error::Unsupported(format!(
                "CodeSplitter has no grammar for language `{other}` (supported: rust, python)"
            ))),
        }
    }

    /// LlamaIndex's name of the language.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Python => "python",
        }
    }
}

/// Splits source code into chunks of at most `max_chars` characters along
/// its syntax tree (LlamaIndex `CodeSplitter`).
#[derive(Clone)]
pub struct CodeSplitter {
    language: CodeLanguage,
    max_chars: usize,
    /// Metadata, Previous/Next links and node ids (every parser has them).
    pub options: NodeParserOptions,
}

impl std::fmt::Debug for CodeSplitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeSplitter")
            .field("language", &self.language)
            .field("max_chars", &self.max_chars)
            .field("options", &self.options)
            .finish()
    }
}

impl CodeSplitter {
    /// A splitter for `language` with LlamaIndex's defaults (`max_chars` 1500).
    pub fn new(language: CodeLanguage) -> Self {
        Self {
            language,
            max_chars: DEFAULT_MAX_CHARS,
            options: NodeParserOptions::default(),
        }
    }

    /// The most characters in one chunk.
    pub fn max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }

    node_parser_options_setters!();
}

impl TextSplitter for CodeSplitter {
    fn split_text(&self, text: &str) -> Result<Vec<String>> {
        if self.max_chars == 0 {
            return Err(Error::InvalidInput(
                "CodeSplitter: max_chars must be > 0".into(),
            ));
        }
        let splitter = match self.language {
            CodeLanguage::Rust => {
                text_splitter::CodeSplitter::new(tree_sitter_rust::LANGUAGE, self.max_chars)
            }
            CodeLanguage::Python => {
                text_splitter::CodeSplitter::new(tree_sitter_python::LANGUAGE, self.max_chars)
            }
        }
        .map_err(|e| Error::failed(format!("CodeSplitter ({})", self.language.name()), e))?;
        Ok(splitter.chunks(text).map(str::to_string).collect())
    }

    /// Code chunks are not shortened for metadata, as in LlamaIndex.
    fn split_text_metadata_aware(&self, text: &str, _metadata_str: &str) -> Result<Vec<String>> {
        self.split_text(text)
    }
}

impl NodeParser for CodeSplitter {
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>> {
        let mut all = Vec::new();
        for doc in documents {
            let splits = self
                .split_text(&doc.text)
                .map_err(|e| with_node_id(e, &doc.id_))?;
            all.extend(build_nodes_from_splits(
                splits,
                doc,
                None,
                self.options.id_func.as_ref(),
            ));
        }
        self.options.postprocess(&mut all, documents);
        Ok(all)
    }
}

node_parser_component!(CodeSplitter, "CodeSplitter", |p| json!({
    "language": p.language.name(),
    "max_chars": p.max_chars,
}));

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const RUST: &str = "use std::fmt;\n\n/// Adds.\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nstruct Point {\n    x: f64,\n    y: f64,\n}\n\nimpl Point {\n    fn norm(&self) -> f64 {\n        (self.x * self.x + self.y * self.y).sqrt()\n    }\n}\n";
    const PYTHON: &str = "import math\n\n\ndef add(a, b):\n    return a + b\n\n\nclass Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n    def norm(self):\n        return math.hypot(self.x, self.y)\n";

    #[test]
    fn chunks_fit_and_keep_items_whole() {
        let chunks = CodeSplitter::new(CodeLanguage::Rust)
            .max_chars(80)
            .split_text(RUST)
            .unwrap();
        assert!(chunks.len() > 1);
        assert!(chunks.iter().all(|c| c.chars().count() <= 80));
        // The function is never cut in two.
        let add = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}";
        assert!(chunks.iter().any(|c| c.contains(add)), "{chunks:#?}");
        let chunks = CodeSplitter::new(CodeLanguage::Python)
            .max_chars(60)
            .split_text(PYTHON)
            .unwrap();
        assert!(chunks.iter().all(|c| c.chars().count() <= 60));
        let add = "def add(a, b):\n    return a + b";
        assert!(chunks.iter().any(|c| c.contains(add)), "{chunks:#?}");
    }

    #[test]
    fn nodes_have_offsets_into_the_source() {
        let doc = Node::document(PYTHON).with_id("p.py");
        let nodes = CodeSplitter::new(CodeLanguage::Python)
            .max_chars(60)
            .get_nodes_from_documents(&[doc])
            .unwrap();
        for n in &nodes {
            let (s, e) = (n.start_char_idx.unwrap(), n.end_char_idx.unwrap());
            assert_eq!(&PYTHON[s..e], n.text, "ASCII source: chars are bytes");
            assert_eq!(n.ref_doc_id(), Some("p.py"));
        }
    }

    #[test]
    fn unknown_languages_and_zero_sizes_are_errors() {
        assert_eq!(CodeLanguage::from_name("Rust").unwrap(), CodeLanguage::Rust);
        assert!(
            CodeLanguage::from_name("cobol")
                .unwrap_err()
                .to_string()
                .contains("cobol")
        );
        assert!(
            CodeSplitter::new(CodeLanguage::Rust)
                .max_chars(0)
                .split_text("fn a() {}")
                .is_err()
        );
    }
}
