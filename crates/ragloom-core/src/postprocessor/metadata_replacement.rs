//! `MetadataReplacementPostProcessor`: replaces each node's text with one of
//! its metadata values, e.g. the sentence window `SentenceWindowNodeParser` stores.

use super::NodePostprocessor;
use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle, py_str};
use async_trait::async_trait;
use serde_json::Value;

/// Replaces node text with `metadata[target_metadata_key]` (LlamaIndex
/// `MetadataReplacementPostProcessor`); nodes without the key (or with a
/// `null` value) keep their text. A non-string value becomes its Python `str()`.
#[derive(Clone, Debug)]
pub struct MetadataReplacementPostProcessor {
    /// The metadata key whose value replaces the text (e.g. `"window"`).
    pub target_metadata_key: String,
}

impl MetadataReplacementPostProcessor {
    /// A postprocessor reading `target_metadata_key`.
    pub fn new(target_metadata_key: impl Into<String>) -> Self {
        Self {
            target_metadata_key: target_metadata_key.into(),
        }
    }
}

#[async_trait]
impl NodePostprocessor for MetadataReplacementPostProcessor {
    async fn postprocess_nodes(
        &self,
        mut nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        for n in &mut nodes {
            let replacement = match n.node.metadata.get(&self.target_metadata_key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => s.clone(),
                Some(other) => py_str(other),
            };
            n.node.text = replacement;
        }
        Ok(nodes)
    }
}
