//! `LongContextReorder`: puts the best-scored nodes at both ends of the
//! context, where models attend best (arXiv 2307.03172), as LlamaIndex does.

use super::NodePostprocessor;
use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;
use std::collections::VecDeque;

/// Reorders nodes so the highest scores sit at the start and the end and the
/// lowest in the middle (LlamaIndex `LongContextReorder`).
///
/// Exactly Python's order: nodes are sorted by ascending score (unscored
/// count as 0, ties keep their order), then taken in turn, the 1st, 3rd, 5th…
/// pushed to the front and the 2nd, 4th… to the back.
#[derive(Clone, Copy, Debug, Default)]
pub struct LongContextReorder;

impl LongContextReorder {
    /// The reorderer.
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl NodePostprocessor for LongContextReorder {
    async fn postprocess_nodes(
        &self,
        mut nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        // stable, and NaN sorts like Python's comparisons leave it: in place
        nodes.sort_by(|a, b| {
            let (x, y) = (a.score.unwrap_or(0.0), b.score.unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut out = VecDeque::with_capacity(nodes.len());
        for (i, node) in nodes.into_iter().enumerate() {
            if i % 2 == 0 {
                out.push_front(node);
            } else {
                out.push_back(node);
            }
        }
        Ok(out.into())
    }
}
