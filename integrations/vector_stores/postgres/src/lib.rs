//! ragloom-vector-stores-postgres: [`PGVectorStore`], ragloom's `VectorStore` on
//! PostgreSQL with pgvector, in LlamaIndex's `data_<table>` layout.
//!
//! Rows are LlamaIndex's (`id`, `text`, `metadata_` with `_node_content`,
//! `node_id`, `embedding`, and `text_search_tsv` for hybrid search), so a
//! table written by Python's `PGVectorStore` is read here and the reverse.
//! Dense search by cosine, inner product or L2 distance, with an optional HNSW
//! or IVFFlat index; full-text and hybrid search with PostgreSQL's
//! `tsvector`; every core metadata filter, nested, translated to SQL with
//! bound parameters.
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_core::vector_stores::{VectorStore, VectorStoreQuery};
//! use ragloom_vector_stores_postgres::PGVectorStore;
//!
//! let store = PGVectorStore::from_url("postgres://postgres@127.0.0.1:5432/postgres")
//!     .table_name("essays")
//!     .embed_dim(384)
//!     .hybrid_search(true)
//!     .build()?;
//! let result = store.query(&VectorStoreQuery::new(vec![0.0; 384], 3)).await?;
//! println!("{:?}", result.ids);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod filters;
mod sql;
mod store;
mod text_search;

pub use ragloom_common_postgres::{PROVIDER, PgSession, connect_options};
pub use store::{
    DistanceMethod, HnswOptions, IvfFlatOptions, PGVectorStore, PGVectorStoreBuilder, VectorIndex,
};
