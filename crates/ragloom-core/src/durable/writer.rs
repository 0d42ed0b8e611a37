//! Where a sync's refreshed documents go, by one path whether or not there
//! is an embedding model: each batch planned, its changed documents' old
//! nodes deleted, split, and written on a thread of its own while the next
//! batch is split — through the vector index (embedded, then stored with its
//! index struct) when there is a model, else through the store's node sink
//! (the docstore, for keyword retrieval).

use super::location::{NodeSink, PreparedNodes};
use super::timed::thread_cpu_time;
use crate::error::{Error, Result};
use crate::indices::{RefreshPlan, VectorStoreIndex, record_hashes};
use crate::ingestion::run_transformations_parallel;
use crate::schema::Node;
use crate::storage::StorageContext;
use crate::transform::TransformComponent;
use async_trait::async_trait;
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
                .map_err(|e| Error::failed("writing a batch of nodes failed", e))?
        }
    }
}

/// The vector index as a node sink: a batch is embedded and added with the
/// index struct when it is written.
#[derive(Debug)]
struct IndexSink(VectorStoreIndex);

struct IndexNodes {
    index: VectorStoreIndex,
    nodes: Vec<Node>,
}

impl NodeSink for IndexSink {
    fn prepare(&self, nodes: Vec<Node>) -> Result<Box<dyn PreparedNodes>> {
        Ok(Box::new(IndexNodes {
            index: self.0.clone(),
            nodes,
        }))
    }
}

#[async_trait]
impl PreparedNodes for IndexNodes {
    fn len(&self) -> usize {
        self.nodes.len()
    }

    async fn write(self: Box<Self>) -> Result<()> {
        self.index.insert_nodes(self.nodes).await
    }
}

/// Where refreshed documents go.
pub(crate) struct Writer {
    context: StorageContext,
    transformations: Vec<Arc<dyn TransformComponent>>,
    workers: usize,
    /// The vector index, when there is an embedding model: its deletes keep
    /// its index struct right.
    index: Option<VectorStoreIndex>,
    /// Without an index: the nodes also go to the vector store, without embeddings.
    text_rows: bool,
    sink: Arc<dyn NodeSink>,
}

impl Writer {
    /// Writes through `index` (whose storage context is the transaction's).
    pub(super) fn vectors(
        index: VectorStoreIndex,
        transformations: Vec<Arc<dyn TransformComponent>>,
        workers: usize,
    ) -> Self {
        Self {
            context: index.storage_context().clone(),
            transformations,
            workers,
            sink: Arc::new(IndexSink(index.clone())),
            index: Some(index),
            text_rows: false,
        }
    }

    /// Writes nodes without embeddings through the store's `sink`.
    pub(super) fn text(
        context: StorageContext,
        transformations: Vec<Arc<dyn TransformComponent>>,
        workers: usize,
        text_rows: bool,
        sink: Arc<dyn NodeSink>,
    ) -> Self {
        Self {
            context,
            transformations,
            workers,
            index: None,
            text_rows,
            sink,
        }
    }

    /// Refreshes `docs`; returns, per document, whether it was written, and
    /// how many nodes were split from them. The nodes of the batch before
    /// (`staged`) are written while these are split, and these are left in
    /// `staged` for the next call or [`Writer::flush`].
    pub(super) async fn refresh(
        &self,
        docs: &[Node],
        staged: &mut Option<Staged>,
        times: &mut Times,
    ) -> Result<(Vec<bool>, usize)> {
        // Planned and deleted before the earlier batch's write starts: both
        // need the transaction's connection, which the write holds.
        let started = Instant::now();
        let RefreshPlan {
            written,
            changed,
            to_write,
            hashes,
        } = RefreshPlan::new(self.context.docstore.as_ref(), docs).await?;
        self.delete(&changed).await?;
        times.plan += started.elapsed();
        let writing = staged
            .take()
            .map(|batch| batch.spawn_store(self.context.clone()));
        let started = Instant::now();
        let nodes =
            run_transformations_parallel(to_write, &self.transformations, self.workers).await;
        times.split += started.elapsed();
        let started = Instant::now();
        // Encoded here, beside the write, which then only inserts: on its
        // own thread, it kept one core idle while it inserted.
        let prepared = match nodes {
            Ok(nodes) => {
                let sink = self.sink.clone();
                tokio::task::spawn_blocking(move || sink.prepare(nodes))
                    .await
                    .map_err(|e| Error::failed("preparing a batch of nodes failed", e))
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
        Ok((written, count))
    }

    /// Writes the nodes left staged by the last [`Writer::refresh`].
    pub(super) async fn flush(&self, staged: Option<Staged>, times: &mut Times) -> Result<()> {
        if let Some(batch) = staged {
            let (wall, cpu) = batch.spawn_store(self.context.clone()).await?;
            times.write += wall;
            times.write_cpu += cpu;
        }
        Ok(())
    }

    /// Removes documents and their nodes (unknown ids are no error).
    pub(super) async fn delete(&self, ids: &[String]) -> Result<()> {
        if let Some(index) = &self.index {
            return index.delete_ref_docs(ids, true).await;
        }
        for id in ids {
            match self.context.docstore.delete_ref_doc(id).await {
                Ok(()) | Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
            if self.text_rows {
                self.context.vector_store()?.delete(id).await?;
            }
        }
        Ok(())
    }

    pub(super) fn context(&self) -> &StorageContext {
        &self.context
    }
}
