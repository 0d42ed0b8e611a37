//! `SimilarityPostprocessor`: drops nodes whose retrieval score is below a
//! cutoff, as LlamaIndex's class of that name.

use super::NodePostprocessor;
use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;
use std::cmp::Ordering;

/// Drops nodes scoring below a cutoff (LlamaIndex `SimilarityPostprocessor`).
///
/// As in LlamaIndex, the default cutoff is `0.0` and, with a cutoff set, a
/// node without a score is dropped too. `None` (which Python's field does not
/// accept) keeps every node.
#[derive(Clone, Debug)]
pub struct SimilarityPostprocessor {
    /// Nodes with a score below this, or with no score, are dropped.
    pub similarity_cutoff: Option<f32>,
}

impl Default for SimilarityPostprocessor {
    /// LlamaIndex's default: a cutoff of `0.0`.
    fn default() -> Self {
        Self {
            similarity_cutoff: Some(0.0),
        }
    }
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
            // "not below" rather than `s >= cut`: Python keeps a NaN score.
            Some(cut) => nodes
                .into_iter()
                .filter(|n| {
                    n.score
                        .is_some_and(|s| s.partial_cmp(&cut) != Some(Ordering::Less))
                })
                .collect(),
        })
    }
}
