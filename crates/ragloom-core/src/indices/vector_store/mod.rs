//! `VectorStoreIndex` and its retriever: nodes embedded into a vector store,
//! their text in the docstore, the mapping in an `IndexDict`.

mod base;
mod retriever;

pub use base::{VectorStoreIndex, VectorStoreIndexBuilder};
pub use retriever::VectorIndexRetriever;
