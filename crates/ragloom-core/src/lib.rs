//! ragloom-core: the data model, the traits and the in-process defaults of
//! ragloom — everything from `Document` to `Response`, with no network and no provider SDK.
//!
//! The flow: a [`readers::Reader`] yields documents, node parsers split them
//! into nodes, an [`embeddings::Embedding`] embeds them, a vector store holds
//! them inside a storage context, a retriever finds them again and a
//! synthesizer turns them into an answer with an [`llms::Llm`].

pub mod error;
pub mod schema;
pub mod utils;

pub use error::{Error, Result};
pub use schema::*;
pub mod transform;
pub use transform::TransformComponent;
pub mod embeddings;
pub use embeddings::{Embedding, HashEmbedding, MockEmbedding, SimilarityMode};
pub mod vector_stores;
pub use vector_stores::{
    FilterCondition, FilterOperator, MetadataFilter, MetadataFilters, SimpleVectorStore,
    VectorStore, VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult,
};
