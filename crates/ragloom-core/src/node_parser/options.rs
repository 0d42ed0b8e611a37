//! What every node parser shares (LlamaIndex's `NodeParser` fields): whether
//! nodes inherit their document's metadata, Previous/Next links, node ids.

use super::IdFunc;
use super::TextSplitter;
use super::node_utils::{parse_nodes_metadata_aware, postprocess_parsed_nodes};
use crate::error::{Error, Result};
use crate::schema::Node;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;

/// The options every node parser has, with LlamaIndex's defaults.
#[derive(Clone)]
pub struct NodeParserOptions {
    /// Whether nodes inherit their document's metadata (default true).
    pub include_metadata: bool,
    /// Whether a document's nodes are chained with `Previous`/`Next` (default true).
    pub include_prev_next_rel: bool,
    /// How node ids are made; `None`: a UUID v4 each (LlamaIndex's `default_id_func`).
    pub id_func: Option<IdFunc>,
}

impl Default for NodeParserOptions {
    fn default() -> Self {
        Self {
            include_metadata: true,
            include_prev_next_rel: true,
            id_func: None,
        }
    }
}

impl NodeParserOptions {
    /// LlamaIndex's `to_dict()` of a parser: these options, the parser's
    /// own `fields` in their order, then its `class_name`.
    pub(crate) fn settings(&self, class_name: &str, fields: Value) -> Value {
        let mut out = Map::new();
        out.insert("include_metadata".into(), json!(self.include_metadata));
        out.insert(
            "include_prev_next_rel".into(),
            json!(self.include_prev_next_rel),
        );
        out.insert("id_func".into(), id_func_json(self.id_func.is_some()));
        if let Value::Object(fields) = fields {
            out.extend(fields);
        }
        out.insert("class_name".into(), json!(class_name));
        Value::Object(out)
    }

    /// The nodes of `documents` split by `splitter`, each leaving room for
    /// its document's metadata, then post-processed.
    pub(crate) fn parse_metadata_aware(
        &self,
        splitter: &dyn TextSplitter,
        documents: &[Node],
    ) -> Result<Vec<Node>> {
        parse_nodes_metadata_aware(
            splitter,
            documents,
            self.include_metadata,
            self.include_prev_next_rel,
            self.id_func.as_ref(),
        )
    }

    /// Metadata and `Previous`/`Next` links on the nodes parsed from
    /// `documents`, as these options say (LlamaIndex's `_postprocess_parsed_nodes`).
    pub(crate) fn postprocess(&self, nodes: &mut [Node], documents: &[Node]) {
        // Later documents with the same id win, as in Python's dict comprehension.
        let parents: HashMap<&str, &Node> = documents.iter().map(|d| (d.id_.as_str(), d)).collect();
        postprocess_parsed_nodes(
            nodes,
            &parents,
            self.include_metadata,
            self.include_prev_next_rel,
        );
    }
}

/// How LlamaIndex serialises the id function of a node parser.
fn id_func_json(custom: bool) -> Value {
    let name = if custom {
        "custom_id_func"
    } else {
        "default_id_func"
    };
    json!({"id_func_name": name, "title": "id_func"})
}

impl fmt::Debug for NodeParserOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeParserOptions")
            .field("include_metadata", &self.include_metadata)
            .field("include_prev_next_rel", &self.include_prev_next_rel)
            .field("id_func", &self.id_func.as_ref().map(|_| "custom"))
            .finish()
    }
}

/// The chunk size and overlap checks LlamaIndex's text splitters make at
/// construction, with its messages.
pub(crate) fn check_chunk_sizes(chunk_size: usize, chunk_overlap: usize) -> Result<()> {
    if chunk_overlap > chunk_size {
        return Err(Error::InvalidInput(format!(
            "Got a larger chunk overlap ({chunk_overlap}) than chunk size ({chunk_size}), should be smaller."
        )));
    }
    if chunk_size == 0 {
        return Err(Error::InvalidInput(
            "chunk_size must be greater than 0".into(),
        ));
    }
    Ok(())
}

/// `chunk_size`, `chunk_overlap` and `separator`, the settings every text
/// splitter that counts tokens shares, and `build`, which checks them with
/// the splitter's `validate`.
macro_rules! text_splitter_setters {
    () => {
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

        /// Checks the configuration, returning the splitter if it is usable.
        pub fn build(self) -> $crate::Result<Self> {
            self.validate()?;
            Ok(self)
        }
    };
}
pub(crate) use text_splitter_setters;

/// The setters of [`NodeParserOptions`] on a parser with an `options`
/// field, written once for every parser's builder.
macro_rules! node_parser_options_setters {
    () => {
        /// Whether nodes inherit their document's metadata (default true).
        pub fn include_metadata(mut self, include: bool) -> Self {
            self.options.include_metadata = include;
            self
        }

        /// Whether a document's nodes are chained with `Previous`/`Next` (default true).
        pub fn include_prev_next_rel(mut self, include: bool) -> Self {
            self.options.include_prev_next_rel = include;
            self
        }

        /// Sets how node ids are made (default: a UUID v4 each).
        pub fn id_func(mut self, f: $crate::node_parser::IdFunc) -> Self {
            self.options.id_func = Some(f);
            self
        }
    };
}
pub(crate) use node_parser_options_setters;

/// `TransformComponent` for a node parser with an `options` field: its
/// LlamaIndex class name, its `to_dict()` (the shared options, then the
/// parser's own fields, given as `|parser| json!({...})`), and a transform
/// that parses.
macro_rules! node_parser_component {
    // A text splitter whose nodes are split with room for their metadata:
    // its `NodeParser` too, checking the configuration first.
    (metadata_aware $ty:ty, $class:literal, |$parser:ident| $fields:expr) => {
        impl $crate::node_parser::NodeParser for $ty {
            fn get_nodes_from_documents(
                &self,
                documents: &[$crate::schema::Node],
            ) -> $crate::Result<Vec<$crate::schema::Node>> {
                self.validate()?;
                self.options.parse_metadata_aware(self, documents)
            }
        }
        $crate::node_parser::options::node_parser_component!($ty, $class, |$parser| $fields);
    };
    ($ty:ty, $class:literal, |$parser:ident| $fields:expr) => {
        #[async_trait::async_trait]
        impl $crate::transform::TransformComponent for $ty {
            fn class_name(&self) -> &'static str {
                $class
            }

            fn settings(&self) -> serde_json::Value {
                let $parser = self;
                $parser.options.settings($class, $fields)
            }

            async fn transform(
                &self,
                nodes: Vec<$crate::schema::Node>,
            ) -> $crate::Result<Vec<$crate::schema::Node>> {
                $crate::node_parser::NodeParser::get_nodes_from_documents(self, &nodes)
            }
        }
    };
}
pub(crate) use node_parser_component;
