//! ragloom-vector-stores-qdrant: [`QdrantVectorStore`], ragloom's `VectorStore` on
//! Qdrant, remote over gRPC or embedded in-process, in LlamaIndex's payload layout.
//!
//! Points are LlamaIndex's: the point id is the node id (a UUID), the
//! vector is the node's embedding (one unnamed dense vector, as LlamaIndex
//! creates without hybrid search), the payload is the node's metadata plus
//! `_node_content`, `_node_type`, `document_id`, `doc_id` and `ref_doc_id`.
//! A collection written by Python's `QdrantVectorStore` is read here and the
//! reverse. Every core metadata filter, nested with `and`/`or`/`not`, becomes a
//! Qdrant filter; the one Qdrant cannot express
//! (`text_match_insensitive`) is an [`Error::Unsupported`](ragloom_core::Error).
//!
//! The `qdrant-embedded` feature adds [`QdrantVectorStore::embedded`]: Qdrant's
//! engine (the `qdrant-edge` crate) in this process, persisted in a folder.
//! Starting embedded and moving to a server is one line:
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_core::vector_stores::{VectorStore, VectorStoreQuery};
//! use ragloom_vector_stores_qdrant::QdrantVectorStore;
//!
//! // let store = QdrantVectorStore::embedded("./qdrant_data")   // with `qdrant-embedded`
//! let store = QdrantVectorStore::remote("http://localhost:6334")
//!     .collection_name("essays")
//!     .build()?;
//! let result = store.query(&VectorStoreQuery::new(vec![0.0; 384], 3)).await?;
//! println!("{:?}", result.ids);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod admin;
mod backend;
mod durable;
mod filters;
pub mod generation;
mod kv;
pub mod sparse;
mod store;

pub use durable::{LocalCache, QdrantBuild, QdrantLocation};
pub use generation::{CommitMarkers, Generation};
pub use kv::{FLUSH_BYTES, QdrantKv};
pub use sparse::{Bm25SparseEncoder, SparseVector};
pub use store::{
    DEFAULT_BATCH_SIZE, DEFAULT_DENSE_VECTOR_NAME, DEFAULT_SPARSE_VECTOR_NAME, DEL_KEY,
    DOCUMENT_ID_KEY, Distance, GEN_KEY, PROVIDER, QdrantVectorStore, QdrantVectorStoreBuilder,
};
