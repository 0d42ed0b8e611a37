//! Vector stores: the [`VectorStore`] trait every store implements, the query
//! and filter vocabulary, the shared filter evaluator, the node payload helpers
//! of external stores ([`utils`]) and [`SimpleVectorStore`].

pub mod filters;
mod key_index;
mod simple;
pub mod types;
pub mod utils;

pub use filters::matches;
pub use simple::{ExactSearch, SimpleVectorStore};
pub use types::{
    DEFAULT_PERSIST_DIR, DEFAULT_PERSIST_FNAME, DEFAULT_VECTOR_STORE, FilterCondition, FilterItem,
    FilterOperator, MetadataFilter, MetadataFilters, MetadataInfo, NAMESPACE_SEP, VectorStoreInfo,
    VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult, VectorStoreQuerySpec,
};
pub use utils::{check_embeddings, metadata_dict_to_node, node_to_metadata_dict};

use crate::error::{Error, Result};
use crate::schema::Node;
use async_trait::async_trait;
use std::path::Path;

/// A store of embedded nodes that answers nearest-neighbour queries
/// (LlamaIndex `BasePydanticVectorStore`). Shared as `Arc<dyn VectorStore>`.
///
/// A query mode a store does not implement is an [`Error::Unsupported`],
/// never silently answered in another mode.
#[async_trait]
pub trait VectorStore: Send + Sync + std::fmt::Debug {
    /// Whether the store keeps node text (so the index need not keep it in the docstore).
    fn stores_text(&self) -> bool;
    /// Adds nodes with embeddings; returns their ids. A node without an embedding is an error naming its id.
    async fn add(&self, nodes: &[Node]) -> Result<Vec<String>>;
    /// Deletes every node whose source document is `ref_doc_id`.
    async fn delete(&self, ref_doc_id: &str) -> Result<()>;
    /// Deletes nodes by id, by filters, or both (the listed nodes that match).
    ///
    /// One meaning in every store (read it with [`delete_selection`]): `None`
    /// ids or filters (or filters with no conditions) restrict nothing; an
    /// empty id list selects no node, so deletes nothing; neither ids nor
    /// filters is an [`Error::InvalidInput`] — LlamaIndex would delete
    /// everything there, ragloom asks for [`VectorStore::clear`].
    async fn delete_nodes(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<()>;
    /// The nodes nearest to the query, best first.
    async fn query(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult>;
    /// The stored nodes with these ids (stores that keep text only).
    async fn get_nodes(&self, node_ids: &[String]) -> Result<Vec<Node>> {
        let _ = node_ids;
        Err(Error::Unsupported(format!(
            "get_nodes is not supported by {}",
            std::any::type_name_of_val(self)
        )))
    }
    /// Removes every node: the one way to empty a store.
    async fn clear(&self) -> Result<()>;
    /// Writes the store under `persist_path` if it is a local store; remote stores do nothing.
    async fn persist(&self, persist_path: &Path) -> Result<()> {
        let _ = persist_path;
        Ok(())
    }
    /// The concrete store, for downcasting.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The nodes a [`VectorStore::delete_nodes`] call selects, read the same way by every store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeleteSelection<'a> {
    /// Only these ids (`None`: any id).
    pub node_ids: Option<&'a [String]>,
    /// Only nodes matching these filters (`None`: any node).
    pub filters: Option<&'a MetadataFilters>,
}

/// Reads `delete_nodes`' arguments: `Ok(None)` when they select no node (an
/// empty id list), an error when they restrict nothing (that is `clear`).
pub fn delete_selection<'a>(
    node_ids: Option<&'a [String]>,
    filters: Option<&'a MetadataFilters>,
) -> Result<Option<DeleteSelection<'a>>> {
    let filters = filters.filter(|f| !f.is_empty());
    match (node_ids, filters) {
        (None, None) => Err(Error::InvalidInput(
            "delete_nodes was given neither node ids nor filters; \
             call clear() to delete every node"
                .into(),
        )),
        (Some([]), _) => Ok(None),
        (node_ids, filters) => Ok(Some(DeleteSelection { node_ids, filters })),
    }
}
