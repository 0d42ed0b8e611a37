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
/// independently, as the splitters do. On an error no further document
/// starts, those before the failing one are awaited, those after it are
/// stopped, and the error of the first failing document in order is returned.
pub async fn run_transformations_parallel(
    documents: Vec<Node>,
    transformations: &[Arc<dyn TransformComponent>],
    num_workers: usize,
) -> Result<Vec<Node>> {
    if num_workers <= 1 || documents.len() <= 1 {
        return run_transformations(documents, transformations).await;
    }
    let tasks = documents.into_iter().map(|doc| {
        let transformations = transformations.to_vec();
        let task = crate::utils::spawn_stoppable(async move {
            run_transformations(vec![doc], &transformations).await
        });
        async move {
            task.await
                .map_err(|e| crate::error::Error::failed("a transformation task failed", e))?
        }
    });
    // Documents here range from a page to a book: a worker goes on to the
    // next one as soon as its own is done.
    let parts = crate::utils::run_in_order(tasks, num_workers, Result::is_ok).await;
    let mut nodes = Vec::new();
    for part in parts {
        nodes.extend(part?);
    }
    Ok(nodes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Takes as many milliseconds as its document's text is long in
    /// characters, and notes the order documents finish in.
    #[derive(Debug, Default)]
    struct Slow {
        finished: Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl TransformComponent for Slow {
        fn class_name(&self) -> &'static str {
            "Slow"
        }

        async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>> {
            for node in &nodes {
                tokio::time::sleep(Duration::from_millis(node.text.len() as u64)).await;
                if node.text.contains("fail") {
                    return Err(crate::error::Error::Other(node.text.clone()));
                }
                self.finished.lock().unwrap().push(node.text.clone());
            }
            Ok(nodes)
        }
    }

    fn docs(texts: &[&str]) -> Vec<Node> {
        texts.iter().map(|t| Node::document(*t)).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn documents_finish_in_any_order_and_come_back_in_theirs() {
        let slow = Arc::new(Slow::default());
        let texts = ["a long first document", "b", "c", "d", "e short"];
        let transformations: Vec<Arc<dyn TransformComponent>> = vec![slow.clone()];
        let nodes = run_transformations_parallel(docs(&texts), &transformations, 2)
            .await
            .unwrap();
        let out: Vec<&str> = nodes.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(out, texts);
        // The short ones did not wait for the long first one: a worker went
        // on to the next document as soon as its own was done.
        let finished = slow.finished.lock().unwrap().clone();
        assert_eq!(finished.last().map(String::as_str), Some(texts[0]));
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_failing_document_in_order_fails_the_run() {
        let slow = Arc::new(Slow::default());
        let transformations: Vec<Arc<dyn TransformComponent>> = vec![slow.clone()];
        // The second document fails last; the third fails first, and stops
        // the fourth from starting.
        let texts = ["a", "fail, slowly and first in order", "fail", "d"];
        let err = run_transformations_parallel(docs(&texts), &transformations, 2)
            .await
            .unwrap_err();
        // The transformation's own error, not a task's failure.
        assert!(
            matches!(&err, crate::error::Error::Other(m) if m == texts[1]),
            "{err}"
        );
        assert_eq!(*slow.finished.lock().unwrap(), ["a"]);
    }
}
