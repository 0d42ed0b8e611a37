//! `VectorStoreIndex` and its retriever: nodes embedded into a vector store,
//! their text in the docstore, the mapping in an `IndexDict`.

pub mod auto_retriever;
mod base;
mod retriever;

pub use auto_retriever::VectorIndexAutoRetriever;
pub use base::{VectorStoreIndex, VectorStoreIndexBuilder};
pub use retriever::VectorIndexRetriever;
