//! Ingestion: running transformations over documents, the step between
//! loading and indexing, with a cache and docstore de-duplication (`IngestionPipeline`).

mod cache;
mod pipeline;

pub use cache::{DEFAULT_CACHE_NAME, IngestionCache};
pub use pipeline::{
    DEFAULT_PIPELINE_NAME, DocstoreStrategy, EmbeddingTransform, IngestionOutput,
    IngestionPipeline, IngestionStats, transformation_hash,
};

use crate::error::Result;
use crate::schema::Node;
use crate::transform::TransformComponent;
use std::sync::Arc;
use tracing::Instrument;

/// Applies `transformations` in order (LlamaIndex `run_transformations`).
pub async fn run_transformations(
    nodes: Vec<Node>,
    transformations: &[Arc<dyn TransformComponent>],
) -> Result<Vec<Node>> {
    let mut nodes = nodes;
    for t in transformations {
        let span = tracing::info_span!(
            "transform",
            component = t.class_name(),
            nodes_in = nodes.len()
        );
        nodes = t.transform(nodes).instrument(span).await?;
    }
    Ok(nodes)
}

/// [`run_transformations`] on each document apart, `num_workers` at a time
/// (on the runtime's threads), the nodes in document order: the same nodes as
/// one call over all of them, for transformations that treat documents
/// independently, as the splitters do.
pub async fn run_transformations_parallel(
    documents: Vec<Node>,
    transformations: &[Arc<dyn TransformComponent>],
    num_workers: usize,
) -> Result<Vec<Node>> {
    use futures::StreamExt;
    if num_workers <= 1 || documents.len() <= 1 {
        return run_transformations(documents, transformations).await;
    }
    let tasks = documents.into_iter().map(|doc| {
        let transformations = transformations.to_vec();
        tokio::spawn(async move { run_transformations(vec![doc], &transformations).await })
    });
    let mut results = futures::stream::iter(tasks).buffered(num_workers);
    let mut nodes = Vec::new();
    while let Some(joined) = results.next().await {
        let part = joined.map_err(|e| {
            crate::error::Error::Other(format!("a transformation task failed: {e}"))
        })??;
        nodes.extend(part);
    }
    Ok(nodes)
}
