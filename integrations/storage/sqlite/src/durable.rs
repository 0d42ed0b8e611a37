//! Durable indexes in SQLite files: one file per build under the source's
//! local folder, the live one named by `current.json` (replaced atomically).
//!
//! ```text
//! <root>/indexes/<name>-<hash>/current.json        which build is live
//!                              index-<fp>.sqlite   nodes, hashes, keyword index, vectors,
//!                                                  the files seen and the manifest: one
//!                                                  transaction per sync (+ -wal, -shm)
//!                              embeddings.sqlite   vectors by content, per model
//! ```
//!
//! `<fp>` is the fingerprint of the build's settings: a change builds a new
//! file beside the live one, which replaces it once the new build committed.

use crate::{
    PreparedNodes, SqliteDocumentStore, SqliteOptions, SqliteStore, SqliteTransaction,
    database_files,
};
use async_trait::async_trait;
use ragloom_core::durable::{
    BuildRequest, BuildTransaction, DynKv, IndexBuild, IndexDir, IndexError, IndexLocation,
    NodeSink, SimpleStores, StoreInfo, copy_collections,
};
use ragloom_core::embeddings::{Embedding, EmbeddingCacheStore};
use ragloom_core::error::{Error, Result};
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::retrievers::Retriever;
use ragloom_core::schema::Node;
use ragloom_core::storage::StorageContext;
use ragloom_core::storage::docstore::DocStore;
use ragloom_core::vector_stores::MetadataFilters;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Durable indexes as SQLite files on this machine (the embedded default).
#[derive(Clone, Copy, Debug, Default)]
pub struct SqliteLocation;

impl SqliteLocation {
    /// The embedded location.
    pub fn new() -> Self {
        Self
    }
}

fn damaged(what: String) -> Error {
    IndexError::Damaged { what }.into()
}

fn pointer(dir: &IndexDir) -> PathBuf {
    dir.dir.join("current.json")
}

/// The file of the build with `fingerprint`.
fn db_path(dir: &IndexDir, fingerprint: &str) -> PathBuf {
    dir.dir.join(format!("index-{fingerprint}.sqlite"))
}

/// The live build's file, `None` if nothing was synced here yet.
pub fn live_db(dir: &IndexDir) -> Result<Option<PathBuf>> {
    let path = pointer(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("reading", &path, e)),
    };
    let db = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("db").and_then(|d| d.as_str()).map(str::to_owned))
        .ok_or_else(|| damaged(format!("{} is damaged", path.display())))?;
    // Only a bare file name is accepted: the pointer never leads elsewhere.
    if db.contains(['/', '\\']) || !db.ends_with(".sqlite") {
        return Err(damaged(format!(
            "{} names an unexpected file",
            path.display()
        )));
    }
    Ok(Some(dir.dir.join(db)))
}

/// Makes `db` the live build (one atomic rename), then removes the build it
/// replaced. Queries that opened the old file keep reading it.
fn make_live(dir: &IndexDir, db: &Path) -> Result<()> {
    let previous = live_db(dir)?;
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let json = serde_json::to_vec(&serde_json::json!({ "db": name }))?;
    ragloom_core::utils::write_atomic(&pointer(dir), |w| w.write_all(&json))?;
    if let Some(old) = previous.filter(|p| p != db) {
        remove_db_files(&old);
    }
    Ok(())
}

/// Removes a build's file and SQLite's files beside it; best effort (a
/// leftover file is only disk space).
fn remove_db_files(db: &Path) {
    for file in database_files(db)
        .into_iter()
        .chain(crate::vector_index_files(db))
    {
        let _ = std::fs::remove_file(file);
    }
}

/// Opens the build at `path`; with `no_wait` a write held by another sync
/// fails at once. A `new` build is one that is not live: nothing reads it
/// and its sync commits it once, at its end, so what a failed or killed sync
/// left there is removed and the file is written fresh.
fn open_db(path: &Path, no_wait: bool, new: bool) -> Result<SqliteStore> {
    if new {
        remove_db_files(path);
    }
    let options = SqliteOptions {
        busy_timeout: if no_wait {
            Duration::ZERO
        } else {
            SqliteOptions::default().busy_timeout
        },
        fresh: new,
    };
    SqliteStore::open_with(path, options)
}

#[async_trait]
impl IndexLocation for SqliteLocation {
    // The writer lock is the default lock file: the transaction locks the
    // database too, but only once the build is open, and a new build's
    // leftovers are removed before that, under the lock file.

    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn label(&self) -> String {
        "embedded".into()
    }

    async fn open_live(
        &self,
        dir: &IndexDir,
        _key: &str,
        no_wait: bool,
        rebuild_missing: bool,
    ) -> Result<Option<Arc<dyn IndexBuild>>> {
        match live_db(dir)? {
            Some(path) if path.exists() => Ok(Some(Arc::new(SqliteBuild {
                store: open_db(&path, no_wait, false)?,
                dir: dir.clone(),
            }))),
            Some(_) if rebuild_missing => Ok(None),
            Some(path) => Err(damaged(format!(
                "the index file {} is missing",
                path.display()
            ))),
            None => Ok(None),
        }
    }

    async fn open_build(
        &self,
        dir: &IndexDir,
        _key: &str,
        live: Option<Arc<dyn IndexBuild>>,
        request: BuildRequest<'_>,
    ) -> Result<Arc<dyn IndexBuild>> {
        let path = if request.import {
            std::fs::create_dir_all(&dir.dir).map_err(|e| Error::io("creating", &dir.dir, e))?;
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            dir.dir.join(format!(
                "index-{}-import-{nanos}.sqlite",
                request.fingerprint
            ))
        } else {
            db_path(dir, request.fingerprint)
        };
        if let Some(live) = live
            && let Some(b) = live.as_any().downcast_ref::<SqliteBuild>()
            && b.store.path() == path
        {
            return Ok(live);
        }
        // New unless the pointer names it (a live file that vanished is
        // rebuilt where queries look for it, in the usual way, so they never
        // open a file being written without its log).
        let named = live_db(dir)?.is_some_and(|live| live == path);
        Ok(Arc::new(SqliteBuild {
            store: open_db(&path, request.no_wait, !named)?,
            dir: dir.clone(),
        }))
    }

    async fn collect_garbage(
        &self,
        _dir: &IndexDir,
        _key: &str,
        _keep: Option<&dyn IndexBuild>,
    ) -> Result<Vec<(String, String)>> {
        // A replaced file goes when its successor becomes live.
        Ok(Vec::new())
    }

    async fn clear(&self, _dir: &IndexDir, _key: &str) -> Result<Vec<(String, String)>> {
        // Everything is in the local folder, which the caller removes.
        Ok(Vec::new())
    }

    async fn embedding_cache(
        &self,
        dir: &IndexDir,
    ) -> Result<Option<Arc<dyn EmbeddingCacheStore>>> {
        Ok(Some(Arc::new(SqliteStore::open(dir.embeddings_path())?)))
    }
}

/// One SQLite build.
#[derive(Clone, Debug)]
pub struct SqliteBuild {
    store: SqliteStore,
    dir: IndexDir,
}

impl SqliteBuild {
    /// The build's store.
    pub fn store(&self) -> &SqliteStore {
        &self.store
    }
}

#[async_trait]
impl IndexBuild for SqliteBuild {
    fn name(&self) -> String {
        self.store
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        self.store.kv()
    }

    fn docstore(&self) -> Arc<dyn DocStore> {
        self.store.docstore()
    }

    fn keyword_kind(&self) -> &'static str {
        "bm25"
    }

    fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>> {
        let mut r = self.store.bm25_retriever().similarity_top_k(top_k);
        if let Some(f) = filters {
            r = r.filters(f);
        }
        Ok(Arc::new(r))
    }

    async fn vector_index(&self, embed: Arc<dyn Embedding>) -> Result<VectorStoreIndex> {
        VectorStoreIndex::builder(embed)
            .storage_context(self.store.storage_context())
            .load_or_create()
            .await
    }

    fn schema_version(&self) -> Result<Option<i64>> {
        self.store.schema_version().map(Some)
    }

    async fn info(&self, dir: &IndexDir) -> Result<StoreInfo> {
        Ok(StoreInfo {
            kind: "sqlite",
            path: self.store.path().display().to_string(),
            size_bytes: dir.size_bytes(),
            points: None,
            // A keyword-only build has no vectors to speak of.
            vector_index: Some(self.store.vector_index_status()?)
                .filter(|s| s.vectors > 0)
                .map(|s| s.to_string()),
        })
    }

    async fn to_simple(
        &self,
        doc_collections: &[String],
        index_collections: &[String],
    ) -> Result<SimpleStores> {
        let kv = self.store.kv();
        Ok((
            copy_collections(&*kv, doc_collections)?,
            copy_collections(&*kv, index_collections)?,
            self.store.vector_store().to_simple_vector_store().await?,
        ))
    }

    async fn begin(&self, on_wait: &(dyn Fn() + Send + Sync)) -> Result<Box<dyn BuildTransaction>> {
        let begin = self.store.begin();
        tokio::pin!(begin);
        let result = tokio::select! {
            r = &mut begin => r,
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                on_wait();
                begin.await
            }
        };
        let tx = result.map_err(|e| {
            if e.to_string().contains("another process is writing") {
                IndexError::WriterBusy.into()
            } else {
                e
            }
        })?;
        Ok(Box::new(SqliteBuildTransaction {
            tx,
            store: self.store.clone(),
            dir: self.dir.clone(),
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A sync's transaction on a SQLite build.
#[derive(Debug)]
struct SqliteBuildTransaction {
    tx: SqliteTransaction,
    store: SqliteStore,
    dir: IndexDir,
}

#[async_trait]
impl BuildTransaction for SqliteBuildTransaction {
    fn storage_context(&self) -> StorageContext {
        self.tx.storage_context().clone()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        self.tx.kv()
    }

    fn node_sink(&self) -> Arc<dyn NodeSink> {
        Arc::new(SqliteSink(self.tx.docstore().clone()))
    }

    fn finish_keyword_index(&self) -> Result<()> {
        self.tx.merge_keyword_index()
    }

    async fn commit(self: Box<Self>) -> Result<()> {
        let this = *self;
        this.tx.commit().await?;
        // The writer pays for its own log: the first query after it would
        // otherwise copy it into the file (a gigabyte after a large sync).
        this.store.checkpoint()?;
        make_live(&this.dir, this.store.path())
    }
}

/// Encodes a batch (JSON, compression, hashes, keyword counts) beside the
/// write, which then only inserts.
#[derive(Debug)]
struct SqliteSink(Arc<SqliteDocumentStore>);

struct Prepared(Arc<SqliteDocumentStore>, PreparedNodes);

impl NodeSink for SqliteSink {
    fn prepare(&self, nodes: Vec<Node>) -> Result<Box<dyn ragloom_core::durable::PreparedNodes>> {
        Ok(Box::new(Prepared(
            self.0.clone(),
            self.0.prepare(nodes, true)?,
        )))
    }
}

#[async_trait]
impl ragloom_core::durable::PreparedNodes for Prepared {
    fn len(&self) -> usize {
        self.1.nodes().len()
    }

    async fn write(self: Box<Self>) -> Result<()> {
        let Prepared(store, prepared) = *self;
        store.add_prepared_nodes(prepared, true)
    }
}
