//! What every node parser shares (LlamaIndex's `NodeParser` fields): whether
//! nodes inherit their document's metadata, Previous/Next links, node ids.

use super::IdFunc;
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

impl fmt::Debug for NodeParserOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeParserOptions")
            .field("include_metadata", &self.include_metadata)
            .field("include_prev_next_rel", &self.include_prev_next_rel)
            .field("id_func", &self.id_func.as_ref().map(|_| "custom"))
            .finish()
    }
}

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
