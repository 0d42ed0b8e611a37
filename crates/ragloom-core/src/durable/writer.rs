//! Where a sync's refreshed documents go: a vector index when there is an
//! embedding model, else the docstore alone (keyword retrieval), each batch
//! written on a thread of its own while the next one is split.

use super::location::{NodeSink, PreparedNodes};
use super::timed::thread_cpu_time;
use crate::error::{Error, Result};
use crate::indices::{RefreshPlan, VectorStoreIndex, record_hashes};
use crate::ingestion::run_transformations_parallel;
use crate::schema::Node;
use crate::storage::StorageContext;
use crate::transform::TransformComponent;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Wall time of the sync's stages so far (see [`super::IngestStages`]).
#[derive(Default)]
pub(crate) struct Times {
    pub read: Duration,
    pub plan: Duration,
    pub split: Duration,
    pub encode: Duration,
    pub write: Duration,
    /// The writer's thread CPU time, of `write`.
    pub write_cpu: Duration,
}

/// Split nodes of one batch, waiting to be written.
pub(crate) struct Staged {
    nodes: Box<dyn PreparedNodes>,
    /// Their documents' ids and hashes, recorded once the nodes are stored.
    hashes: Vec<(String, String)>,
}

impl Staged {
    /// Writes the nodes on a thread of its own: the inserts are serial, and
    /// the split keeps the other cores busy meanwhile. Gives the wall time
    /// and the thread's CPU time.
    fn spawn_store(
        self,
        context: StorageContext,
    ) -> impl std::future::Future<Output = Result<(Duration, Duration)>> {
        let runtime = tokio::runtime::Handle::current();
        let task = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let cpu = thread_cpu_time();
            runtime.block_on(async {
                self.nodes.write().await?;
                record_hashes(context.docstore.as_ref(), &self.hashes).await
            })?;
            let cpu = match (cpu, thread_cpu_time()) {
                (Some(before), Some(after)) => after.saturating_sub(before),
                _ => Duration::ZERO,
            };
            Ok((started.elapsed(), cpu))
        });
        async move {
            task.await
                .map_err(|e| Error::Other(format!("writing a batch of nodes failed: {e}")))?
        }
    }
}

/// Where refreshed documents go.
pub(crate) enum Writer {
    Vectors(VectorStoreIndex),
    Text {
        context: StorageContext,
        transformations: Vec<Arc<dyn TransformComponent>>,
        /// The nodes also go to the vector store, without embeddings.
        text_rows: bool,
        sink: Arc<dyn NodeSink>,
        workers: usize,
    },
}

impl Writer {
    /// Refreshes `docs`; returns, per document, whether it was written, and
    /// how many nodes were split from them. Without an embedding model the
    /// nodes of the batch before (`staged`) are written while these are
    /// split, and these are left in `staged` for the next call or
    /// [`Writer::flush`].
    pub async fn refresh(
        &self,
        docs: &[Node],
        staged: &mut Option<Staged>,
        times: &mut Times,
    ) -> Result<(Vec<bool>, Option<usize>)> {
        let (context, transformations, sink, workers) = match self {
            Writer::Vectors(index) => {
                let started = Instant::now();
                let written = index.refresh_ref_docs(docs).await;
                times.split += started.elapsed();
                return Ok((written?, None));
            }
            Writer::Text {
                context,
                transformations,
                sink,
                workers,
                ..
            } => (context, transformations, sink, *workers),
        };
        // Planned and deleted before the earlier batch's write starts: both
        // need the transaction's connection, which the write holds.
        let started = Instant::now();
        let RefreshPlan {
            written,
            changed,
            to_write,
            hashes,
        } = RefreshPlan::new(context.docstore.as_ref(), docs).await?;
        self.delete(&changed).await?;
        times.plan += started.elapsed();
        let writing = staged
            .take()
            .map(|batch| batch.spawn_store(context.clone()));
        let started = Instant::now();
        let nodes = run_transformations_parallel(to_write, transformations, workers).await;
        times.split += started.elapsed();
        let started = Instant::now();
        // Encoded here, beside the write, which then only inserts: on its
        // own thread, it kept one core idle while it inserted.
        let prepared = match nodes {
            Ok(nodes) => {
                let sink = sink.clone();
                tokio::task::spawn_blocking(move || sink.prepare(nodes))
                    .await
                    .map_err(|e| Error::Other(format!("preparing a batch of nodes failed: {e}")))
                    .and_then(|p| p)
            }
            Err(e) => Err(e),
        };
        times.encode += started.elapsed();
        // The write is awaited before any error returns, so nothing of this
        // sync is written after it gives up.
        if let Some(writing) = writing {
            let (wall, cpu) = writing.await?;
            times.write += wall;
            times.write_cpu += cpu;
        }
        let nodes = prepared?;
        let count = nodes.len();
        *staged = Some(Staged { nodes, hashes });
        Ok((written, Some(count)))
    }

    /// Writes the nodes left staged by the last [`Writer::refresh`].
    pub async fn flush(&self, staged: Option<Staged>, times: &mut Times) -> Result<()> {
        if let (Writer::Text { context, .. }, Some(batch)) = (self, staged) {
            let (wall, cpu) = batch.spawn_store(context.clone()).await?;
            times.write += wall;
            times.write_cpu += cpu;
        }
        Ok(())
    }

    /// Removes documents and their nodes (unknown ids are no error).
    pub async fn delete(&self, ids: &[String]) -> Result<()> {
        match self {
            Writer::Vectors(index) => index.delete_ref_docs(ids, true).await,
            Writer::Text {
                context, text_rows, ..
            } => {
                for id in ids {
                    match context.docstore.delete_ref_doc(id).await {
                        Ok(()) | Err(Error::NotFound(_)) => {}
                        Err(e) => return Err(e),
                    }
                    if *text_rows {
                        context.vector_store()?.delete(id).await?;
                    }
                }
                Ok(())
            }
        }
    }

    pub fn context(&self) -> &StorageContext {
        match self {
            Writer::Vectors(index) => index.storage_context(),
            Writer::Text { context, .. } => context,
        }
    }

    /// How many nodes the documents `ids` have now.
    pub async fn node_count(&self, ids: &[String]) -> Result<usize> {
        let docstore = &self.context().docstore;
        let mut n = 0;
        for id in ids {
            n += docstore
                .get_ref_doc_info(id)
                .await?
                .map_or(0, |i| i.node_ids.len());
        }
        Ok(n)
    }
}
