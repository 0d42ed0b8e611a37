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
