//! `TransformComponent`: anything that turns nodes into nodes (splitters,
//! metadata extractors, embedding), the unit an ingestion pipeline chains.

use crate::error::Result;
use crate::schema::Node;
use async_trait::async_trait;

/// Nodes in, nodes out. Splitters, extractors and embedders implement it, so
/// an ingestion pipeline can chain them in any order.
#[async_trait]
pub trait TransformComponent: Send + Sync + std::fmt::Debug {
    /// LlamaIndex's class name of this component (e.g. `SentenceSplitter`).
    fn class_name(&self) -> &'static str;

    /// The settings that change this component's output, as JSON. Two
    /// components with equal settings must produce equal output: ingestion
    /// caches are keyed on this.
    fn settings(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Transforms `nodes`.
    async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>>;
}
