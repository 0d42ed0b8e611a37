//! ragloom-storage-postgres: a whole index in PostgreSQL, in LlamaIndex's
//! tables, with one transaction across the docstore, index store and vectors.
//!
//! Nodes and vectors are rows of `PGVectorStore`'s `data_<name>` table; the
//! docstore and index store are key-value tables of LlamaIndex's
//! `PostgresKVStore` layout (`data_<name>_docstore`, `data_<name>_indexstore`),
//! so Python's `PGVectorStore`, `PostgresDocumentStore` and
//! `PostgresIndexStore` open the same index.
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_storage_postgres::PostgresStore;
//!
//! let store = PostgresStore::builder("postgres://postgres@127.0.0.1:5432/postgres")
//!     .name("essays")
//!     .embed_dim(384)
//!     .hybrid_search(true)
//!     .build()
//!     .await?;
//! let tx = store.begin().await?;
//! // ... write nodes through tx.storage_context() ...
//! tx.commit().await?;
//! # Ok(()) }
//! ```
//!
//! A transaction holds one connection; its writes are seen by its own stores
//! and by nobody else until it commits. Writers of one store take a
//! PostgreSQL advisory lock, so a second writer (in any process, on any
//! machine) waits for the first; readers never wait.

#![warn(missing_docs)]

mod admin;
mod durable;
mod embedding_cache;
mod kv;
mod store;
mod transaction;

pub use admin::{WriterLock, drop_index, index_names, lock_key};
pub use durable::{PostgresBuild, PostgresLocation};
pub use embedding_cache::PostgresEmbeddingCache;
pub use kv::{KvTableName, PostgresKv};
pub use store::{MAX_NAME, PostgresStore, PostgresStoreBuilder};
pub use transaction::PostgresTransaction;

use ragloom_core::storage::docstore::KvDocumentStore;
use ragloom_core::storage::index_store::KvIndexStore;

/// LlamaIndex's `PostgresDocumentStore`: the document store over a
/// [`PostgresKv`] table.
pub type PostgresDocumentStore = KvDocumentStore<PostgresKv>;

/// LlamaIndex's `PostgresIndexStore`: the index store over a [`PostgresKv`] table.
pub type PostgresIndexStore = KvIndexStore<PostgresKv>;
