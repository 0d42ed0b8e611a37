//! Indexes over nodes and loading them back from storage. `VectorStoreIndex`
//! embeds nodes into a vector store and retrieves them by similarity.

pub mod prompt_helper;
pub mod query;
pub mod refresh;
pub mod summary;
pub mod utils;
pub mod vector_store;

pub use prompt_helper::{DEFAULT_CHUNK_OVERLAP_RATIO, DEFAULT_PADDING, PromptHelper};
pub use refresh::{RefreshPlan, record_hashes};
pub use summary::{
    SummaryIndex, SummaryIndexBuilder, SummaryIndexEmbeddingRetriever, SummaryIndexLLMRetriever,
    SummaryIndexRetriever,
};
pub use vector_store::{
    VectorIndexAutoRetriever, VectorIndexRetriever, VectorStoreIndex, VectorStoreIndexBuilder,
};

use crate::data_structs::IndexStruct;
use crate::embeddings::Embedding;
use crate::error::{Error, Result};
use crate::storage::StorageContext;
use std::sync::Arc;

/// Loads the index `index_id` (or the only index, when `None`) from
/// `storage_context` (LlamaIndex `load_index_from_storage`).
pub async fn load_index_from_storage(
    storage_context: StorageContext,
    embed_model: Arc<dyn Embedding>,
    index_id: Option<&str>,
) -> Result<VectorStoreIndex> {
    let structs = storage_context.index_store.index_structs().await?;
    let found = match index_id {
        Some(id) => structs.into_iter().find(|s| s.index_id() == id),
        None if structs.len() == 1 => structs.into_iter().next(),
        None if structs.is_empty() => None,
        None => {
            return Err(Error::InvalidInput(format!(
                "the storage holds {} indexes; name the one to load by its index_id",
                structs.len()
            )));
        }
    };
    match found {
        Some(IndexStruct::IndexDict(dict)) => {
            VectorStoreIndex::from_parts(dict, storage_context, embed_model)
        }
        Some(other) => Err(Error::Unsupported(format!(
            "index `{}` is a `{}` index; only vector store indexes can be loaded in this version",
            other.index_id(),
            other.type_name()
        ))),
        None => Err(Error::NotFound(match index_id {
            Some(id) => format!("index `{id}` in the storage context"),
            None => "no index in the storage context".into(),
        })),
    }
}
