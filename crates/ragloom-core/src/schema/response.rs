//! What retrieval and answering hand back: scored nodes, the query bundle,
//! and responses (complete or streaming) with their sources.

use super::node::{MetadataMode, Node};
use futures::stream::BoxStream;
use serde_json::Value;
use std::fmt;

/// A node and its retrieval score.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeWithScore {
    /// The node.
    pub node: Node,
    /// Its score (similarity, BM25, rerank score...), if scored.
    pub score: Option<f32>,
}

impl NodeWithScore {
    /// A scored node.
    pub fn new(node: Node, score: Option<f32>) -> Self {
        Self { node, score }
    }

    /// The score, or 0.0 when unset.
    pub fn get_score(&self) -> f32 {
        self.score.unwrap_or(0.0)
    }

    /// The node's id.
    pub fn node_id(&self) -> &str {
        &self.node.id_
    }

    /// The node's text with metadata rendered for `mode`.
    pub fn get_content(&self, mode: MetadataMode) -> String {
        self.node.get_content(mode)
    }
}

/// A query as it travels through retrieval: the text, optional strings to
/// embed instead of it, and the embedding once computed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryBundle {
    /// The query text.
    pub query_str: String,
    /// Strings to embed in place of `query_str` (e.g. a HyDE document).
    pub custom_embedding_strs: Option<Vec<String>>,
    /// The query embedding, if already computed.
    pub embedding: Option<Vec<f32>>,
    /// The query's keyword terms as the default keyword tokenizer reads
    /// them (`Bm25Tokenizer::new`), once tokenized: keyword retrievers with
    /// that tokenizer and the passages' excerpts read them instead of
    /// tokenizing the query again. They describe `query_str`: a bundle
    /// whose text is changed needs them cleared (or re-read).
    pub keyword_terms: Option<Vec<String>>,
}

impl QueryBundle {
    /// A bundle for `query`.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query_str: query.into(),
            ..Default::default()
        }
    }

    /// The bundle with its keyword terms already tokenized (see
    /// [`QueryBundle::keyword_terms`]).
    pub fn with_keyword_terms(mut self, terms: Vec<String>) -> Self {
        self.keyword_terms = Some(terms);
        self
    }

    /// The strings to embed: the custom ones, or the query itself.
    pub fn embedding_strs(&self) -> Vec<String> {
        match &self.custom_embedding_strs {
            Some(v) if !v.is_empty() => v.clone(),
            _ => vec![self.query_str.clone()],
        }
    }
}

impl From<&str> for QueryBundle {
    fn from(s: &str) -> Self {
        QueryBundle::new(s)
    }
}

impl From<String> for QueryBundle {
    fn from(s: String) -> Self {
        QueryBundle::new(s)
    }
}

/// An answer: its text (`None` when no text was produced, as with
/// `ResponseMode::NoText`), the nodes it drew on, and free-form metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    /// The answer text.
    pub response: Option<String>,
    /// The retrieved nodes the answer was made from.
    pub source_nodes: Vec<NodeWithScore>,
    /// Extra information (e.g. which synthesizer or call counts).
    pub metadata: serde_json::Map<String, Value>,
}

impl Response {
    /// A response with `text` and its sources.
    pub fn new(text: impl Into<String>, source_nodes: Vec<NodeWithScore>) -> Self {
        Self {
            response: Some(text.into()),
            source_nodes,
            metadata: Default::default(),
        }
    }

    /// The sources formatted as LlamaIndex's `get_formatted_sources`.
    pub fn get_formatted_sources(&self, length: usize) -> String {
        self.source_nodes
            .iter()
            .map(|s| {
                let text: String = s.node.get_text().chars().take(length).collect();
                let ellipsis = if s.node.get_text().chars().count() > length {
                    "..."
                } else {
                    ""
                };
                format!(
                    "> Source (Doc id: {}): {text}{ellipsis}",
                    s.node.ref_doc_id().unwrap_or(&s.node.id_)
                )
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

impl fmt::Display for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.response.as_deref().unwrap_or("None"))
    }
}

/// A response whose text arrives as a stream of deltas. The sources are known
/// before the first delta.
pub struct StreamingResponse {
    /// Text deltas; their concatenation is the answer.
    pub response_gen: BoxStream<'static, crate::Result<String>>,
    /// The nodes the answer is made from.
    pub source_nodes: Vec<NodeWithScore>,
    /// Extra information.
    pub metadata: serde_json::Map<String, Value>,
}

impl fmt::Debug for StreamingResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingResponse")
            .field("source_nodes", &self.source_nodes.len())
            .finish_non_exhaustive()
    }
}

impl StreamingResponse {
    /// Drains the stream into a complete [`Response`].
    pub async fn get_response(self) -> crate::Result<Response> {
        use futures::StreamExt;
        let mut text = String::new();
        let mut stream = self.response_gen;
        while let Some(delta) = stream.next().await {
            text.push_str(&delta?);
        }
        Ok(Response {
            response: Some(text),
            source_nodes: self.source_nodes,
            metadata: self.metadata,
        })
    }
}
