//! `SentenceTransformerRerank`: scores each retrieved node against the query
//! with a cross-encoder and keeps the `top_n` best.

use crate::cross_encoder::{CrossEncoder, PROVIDER};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::postprocessor::NodePostprocessor;
use ragloom_core::schema::{MetadataMode, NodeWithScore, QueryBundle};
use std::path::PathBuf;

/// A cross-encoder reranker (LlamaIndex `SentenceTransformerRerank`).
///
/// ```no_run
/// # fn run() -> ragloom_core::Result<()> {
/// use ragloom_postprocessor_sbert_rerank::SentenceTransformerRerank;
/// let rerank = SentenceTransformerRerank::from_folder("models/ms-marco-MiniLM-L-6-v2")?
///     .top_n(3)
///     .keep_retrieval_score(true);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SentenceTransformerRerank {
    model: CrossEncoder,
    top_n: usize,
    keep_retrieval_score: bool,
}

impl SentenceTransformerRerank {
    /// A reranker keeping the 2 best nodes (LlamaIndex's default `top_n`).
    pub fn new(model: CrossEncoder) -> Self {
        Self {
            model,
            top_n: 2,
            keep_retrieval_score: false,
        }
    }

    /// Loads the cross-encoder in `folder` (see [`CrossEncoder::from_folder`]).
    pub fn from_folder(folder: impl Into<PathBuf>) -> Result<Self> {
        Ok(Self::new(CrossEncoder::from_folder(folder)?))
    }

    /// How many nodes to keep.
    pub fn top_n(mut self, top_n: usize) -> Self {
        self.top_n = top_n;
        self
    }

    /// Keeps each node's retrieval score in its metadata as `retrieval_score`.
    pub fn keep_retrieval_score(mut self, keep: bool) -> Self {
        self.keep_retrieval_score = keep;
        self
    }

    /// The cross-encoder.
    pub fn model(&self) -> &CrossEncoder {
        &self.model
    }
}

#[async_trait]
impl NodePostprocessor for SentenceTransformerRerank {
    async fn postprocess_nodes(
        &self,
        mut nodes: Vec<NodeWithScore>,
        query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let Some(query) = query else {
            return Err(Error::InvalidInput(
                "Missing query bundle in extra info.".into(),
            ));
        };
        if nodes.is_empty() {
            return Ok(nodes);
        }
        let pairs: Vec<(String, String)> = nodes
            .iter()
            .map(|n| {
                (
                    query.query_str.clone(),
                    n.node.get_content(MetadataMode::Embed),
                )
            })
            .collect();
        let model = self.model.clone();
        let span =
            tracing::info_span!("rerank", model = %model.folder().display(), nodes = pairs.len());
        let scores = tokio::task::spawn_blocking(move || span.in_scope(|| model.predict(&pairs)))
            .await
            .map_err(|e| Error::provider(PROVIDER, "the reranking thread failed", e))??;
        for (node, score) in nodes.iter_mut().zip(scores) {
            if self.keep_retrieval_score {
                let kept = node.score.map_or(serde_json::Value::Null, |s| s.into());
                node.node.metadata.insert("retrieval_score".into(), kept);
            }
            node.score = Some(score);
        }
        // Best first; ties keep their retrieval order, as Python's stable sort does.
        nodes.sort_by(|a, b| {
            let (a, b) = (a.score.unwrap_or(0.0), b.score.unwrap_or(0.0));
            b.total_cmp(&a)
        });
        nodes.truncate(self.top_n);
        Ok(nodes)
    }
}
