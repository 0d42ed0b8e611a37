//! Node postprocessors: rerank, filter or rewrite retrieved nodes before they
//! reach the synthesizer, applied in order by query engines.

use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;

/// Reranks, filters or rewrites retrieved nodes.
#[async_trait]
pub trait NodePostprocessor: Send + Sync + std::fmt::Debug {
    /// Processes `nodes` retrieved for `query`.
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>>;
}

/// Drops nodes scoring below a cutoff (LlamaIndex `SimilarityPostprocessor`).
#[derive(Clone, Debug, Default)]
pub struct SimilarityPostprocessor {
    /// Nodes with a score below this are dropped; unscored nodes are kept.
    pub similarity_cutoff: Option<f32>,
}

impl SimilarityPostprocessor {
    /// A postprocessor with the given cutoff.
    pub fn new(similarity_cutoff: f32) -> Self {
        Self {
            similarity_cutoff: Some(similarity_cutoff),
        }
    }
}

#[async_trait]
impl NodePostprocessor for SimilarityPostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        Ok(match self.similarity_cutoff {
            None => nodes,
            Some(cut) => nodes
                .into_iter()
                .filter(|n| n.score.is_none_or(|s| s >= cut))
                .collect(),
        })
    }
}
