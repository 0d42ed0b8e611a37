//! ragloom-storage-sqlite: the embedded default store. Nodes, index structs,
//! vectors and document hashes live in one SQLite file in WAL mode, and an
//! ingest is one transaction, so a crash leaves the last commit intact.
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_storage_sqlite::SqliteStore;
//!
//! let store = SqliteStore::open("index.sqlite")?;
//! let storage_context = store.storage_context();
//! let tx = storage_context.transaction().await?;
//! // ... write nodes through tx.storage_context() ...
//! tx.commit().await?;
//! # Ok(()) }
//! ```
//!
//! Readers use their own connections and see the last commit while a writer
//! writes. One transaction runs at a time: another in the same process waits
//! its turn, one in another process waits up to
//! [`SqliteOptions::busy_timeout`]. A write outside the open transaction, in
//! the same process, is refused rather than left waiting.

#![warn(missing_docs)]

mod ann;
mod bm25;
mod db;
mod docstore;
mod durable;
mod embedding_cache;
mod keyword;
mod kv;
pub mod schema;
mod transaction;
pub use transaction::SqliteTransaction;
mod vector_store;

pub use ann::{
    DEFAULT_ANN_MIN_VECTORS, DEFAULT_ANN_SEARCH_BREADTH, VectorIndexStatus, VectorIndexUpdate,
    set_ann_min_vectors, set_ann_search_breadth, vector_index_files,
};
pub use bm25::SqliteBm25Retriever;
pub use db::{SqliteOptions, database_files, set_reader_mmap_size};
pub use docstore::{PreparedNodes, SqliteDocumentStore};
pub use durable::{SqliteBuild, SqliteLocation, live_db};
pub use kv::SqliteKv;
/// Core's cache in front of an embedding model; a [`SqliteStore`] holds it.
pub use ragloom_core::embeddings::CachedEmbedding;
pub use schema::SCHEMA_VERSION;
pub use vector_store::SqliteVectorStore;

use db::{Db, Scope};
use ragloom_core::error::Result;
use ragloom_core::storage::index_store::KvIndexStore;
use ragloom_core::storage::{StorageContext, TransactionalStore};
use std::path::Path;
use std::sync::Arc;

/// LlamaIndex's index store semantics over the file's `kv` table.
pub type SqliteIndexStore = KvIndexStore<SqliteKv>;

/// One SQLite file holding a whole index. Cloning shares it.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    db: Arc<Db>,
    vector_cache: vector_store::VectorCache,
}

impl SqliteStore {
    /// Opens (or creates) the file at `path` with default options, migrating
    /// an older schema; a file from a newer ragloom is an error.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens (or creates) the file at `path`.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        Ok(Self {
            db: Arc::new(Db::open(path.as_ref(), options)?),
            vector_cache: Arc::default(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.db.path
    }

    /// Moves what the write-ahead log holds into the file and truncates the
    /// log, waiting at most a second for readers (returns whether it did).
    /// SQLite does this on its own as the log grows; call it after a large
    /// transaction, so the next process to open the file does not pay for it
    /// and the log does not keep the transaction's size on disk. Refused while
    /// a transaction of this store is open.
    pub fn checkpoint(&self) -> Result<bool> {
        if self.db.in_tx.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ragloom_core::error::Error::InvalidInput(format!(
                "{}: a transaction is open on this store; checkpoint after it ends",
                self.db.path.display()
            )));
        }
        self.db.checkpoint()
    }

    /// Builds or updates the vector index beside the file when it is due:
    /// built once the store holds [`DEFAULT_ANN_MIN_VECTORS`] vectors (see
    /// [`set_ann_min_vectors`]), updated once more than 1,000 rows changed
    /// since it was written. Every commit of this store calls it;
    /// call it after writes by another kind of writer. Blocks while it builds.
    pub fn update_vector_index(&self) -> Result<VectorIndexUpdate> {
        ann::maintain(&self.db)
    }

    /// The vector index of the last commit: whether queries use one, and
    /// how many changed rows they score beside it.
    pub fn vector_index_status(&self) -> Result<VectorIndexStatus> {
        self.db.read(&Scope::Committed, |c| {
            ann::status(&self.db.path, c).map_err(|e| self.db.err("reading", e))
        })
    }

    /// The schema version recorded in the file.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self.db.schema_version()?.unwrap_or(0))
    }

    /// The document store, reading the last commit.
    pub fn docstore(&self) -> Arc<SqliteDocumentStore> {
        Arc::new(SqliteDocumentStore::new(
            Arc::clone(&self.db),
            Scope::Committed,
        ))
    }

    /// Keyword retrieval (BM25) over every stored node, reading the last
    /// commit; ranks as `BM25Retriever` over the same nodes.
    pub fn bm25_retriever(&self) -> SqliteBm25Retriever {
        SqliteBm25Retriever::new(Arc::clone(&self.db))
    }

    /// The index store, reading the last commit.
    pub fn index_store(&self) -> Arc<SqliteIndexStore> {
        Arc::new(KvIndexStore::from_backend(self.kv(), None))
    }

    /// The vector store, reading the last commit.
    pub fn vector_store(&self) -> Arc<SqliteVectorStore> {
        Arc::new(self.vectors(Scope::Committed))
    }

    /// A storage context over this file, whose
    /// [`transaction`](StorageContext::transaction) is a SQLite transaction.
    pub fn storage_context(&self) -> StorageContext {
        self.context_for(Scope::Committed)
    }

    /// The file's key-value collections, reading the last commit (writes
    /// commit at once; inside a transaction use [`SqliteTransaction::kv`]).
    pub fn kv(&self) -> Arc<SqliteKv> {
        Arc::new(SqliteKv {
            db: Arc::clone(&self.db),
            scope: Scope::Committed,
        })
    }

    fn vectors(&self, scope: Scope) -> SqliteVectorStore {
        // A transaction's stores cache its own state apart from the last commit's.
        let cache = match scope {
            Scope::Committed => Arc::clone(&self.vector_cache),
            Scope::Tx(_) => Arc::default(),
        };
        SqliteVectorStore {
            db: Arc::clone(&self.db),
            scope,
            cache,
        }
    }

    pub(crate) fn context_for(&self, scope: Scope) -> StorageContext {
        let mut context = StorageContext::from_defaults();
        context.docstore = Arc::new(SqliteDocumentStore::new(
            Arc::clone(&self.db),
            scope.clone(),
        ));
        context.index_store = Arc::new(KvIndexStore::from_backend(
            Arc::new(SqliteKv {
                db: Arc::clone(&self.db),
                scope: scope.clone(),
            }),
            None,
        ));
        context.vector_stores.insert(
            ragloom_core::vector_stores::DEFAULT_VECTOR_STORE.to_string(),
            Arc::new(self.vectors(scope.clone())),
        );
        match scope {
            Scope::Committed => {
                let transactions: Arc<dyn TransactionalStore> = Arc::new(self.clone());
                context.with_transactions(transactions)
            }
            // A transaction asked for inside one joins it: the outer one commits.
            Scope::Tx(_) => context,
        }
    }
}
