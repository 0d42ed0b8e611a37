//! `VectorIndexRetriever`: embeds the query, asks the vector store for the
//! nearest nodes, and fills in text from the docstore when the store keeps none.

use super::base::VectorStoreIndex;
use crate::embeddings::query_embedding;
use crate::error::{Error, Result};
use crate::retrievers::Retriever;
use crate::schema::{Node, NodeWithScore, ObjectType, QueryBundle};
use crate::vector_stores::{
    MetadataFilters, VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult,
};
use async_trait::async_trait;
use std::collections::{HashMap, HashSet};

/// LlamaIndex's default `similarity_top_k`.
pub(super) const DEFAULT_SIMILARITY_TOP_K: usize = 2;

/// Retrieves the nodes of a [`VectorStoreIndex`] nearest to a query
/// (LlamaIndex `VectorIndexRetriever`). Configure with the builder methods.
#[derive(Clone, Debug)]
pub struct VectorIndexRetriever {
    index: VectorStoreIndex,
    similarity_top_k: usize,
    mode: VectorStoreQueryMode,
    filters: Option<MetadataFilters>,
    alpha: Option<f32>,
    doc_ids: Option<Vec<String>>,
    node_ids: Option<Vec<String>>,
    sparse_top_k: Option<usize>,
    hybrid_top_k: Option<usize>,
}

impl VectorIndexRetriever {
    /// A retriever over `index` returning the top 2 nodes.
    pub fn new(index: VectorStoreIndex) -> Self {
        Self {
            index,
            similarity_top_k: DEFAULT_SIMILARITY_TOP_K,
            mode: VectorStoreQueryMode::Default,
            filters: None,
            alpha: None,
            doc_ids: None,
            node_ids: None,
            sparse_top_k: None,
            hybrid_top_k: None,
        }
    }

    /// How many nodes to return.
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }

    /// The vector store query mode.
    pub fn vector_store_query_mode(mut self, mode: VectorStoreQueryMode) -> Self {
        self.mode = mode;
        self
    }

    /// Only nodes whose metadata match `filters`.
    pub fn filters(mut self, filters: MetadataFilters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// Weight of dense vs sparse scores in hybrid mode.
    pub fn alpha(mut self, alpha: f32) -> Self {
        self.alpha = Some(alpha);
        self
    }

    /// Only nodes of these documents.
    pub fn doc_ids(mut self, ids: Vec<String>) -> Self {
        self.doc_ids = Some(ids);
        self
    }

    /// Only these nodes.
    pub fn node_ids(mut self, ids: Vec<String>) -> Self {
        self.node_ids = Some(ids);
        self
    }

    /// Sparse candidates in hybrid mode.
    pub fn sparse_top_k(mut self, k: usize) -> Self {
        self.sparse_top_k = Some(k);
        self
    }

    /// Final count in hybrid mode.
    pub fn hybrid_top_k(mut self, k: usize) -> Self {
        self.hybrid_top_k = Some(k);
        self
    }
}

impl VectorIndexRetriever {
    /// `query` restricted to the index's own nodes (and to the retriever's
    /// `node_ids`, if set).
    async fn query_own_nodes(&self, mut query: VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        let mut own = self.index.vector_ids()?;
        if let Some(wanted) = &query.node_ids {
            let wanted: HashSet<&str> = wanted.iter().map(String::as_str).collect();
            own.retain(|id| wanted.contains(id.as_str()));
        }
        query.node_ids = Some(own);
        self.index.vector_store().query(&query).await
    }
}

#[async_trait]
impl Retriever for VectorIndexRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let needs_embedding = !matches!(
            self.mode,
            VectorStoreQueryMode::TextSearch | VectorStoreQueryMode::Sparse
        );
        let embedding = if needs_embedding {
            Some(query_embedding(self.index.embed_model().as_ref(), query).await?)
        } else {
            query.embedding.clone()
        };
        let vs_query = VectorStoreQuery {
            query_embedding: embedding,
            similarity_top_k: self.similarity_top_k,
            doc_ids: self.doc_ids.clone(),
            node_ids: self.node_ids.clone(),
            query_str: Some(query.query_str.clone()),
            mode: self.mode,
            alpha: self.alpha,
            filters: self.filters.clone(),
            sparse_top_k: self.sparse_top_k,
            hybrid_top_k: self.hybrid_top_k,
            ..Default::default()
        };
        let mut result = self.index.vector_store().query(&vs_query).await?;
        let docstore = &self.index.storage_context().docstore;
        let nodes: Vec<Node> = match result.nodes {
            // The store keeps text: only non-text nodes (index nodes) come from the docstore.
            Some(nodes) if !nodes.is_empty() => {
                let to_fetch: Vec<String> = nodes
                    .iter()
                    .filter(|n| n.object_type() != ObjectType::Text)
                    .map(|n| n.id_.clone())
                    .collect();
                let fetched: HashMap<String, Node> = if to_fetch.is_empty() {
                    HashMap::new()
                } else {
                    docstore
                        .get_nodes(&to_fetch)
                        .await?
                        .into_iter()
                        .map(|n| (n.id_.clone(), n))
                        .collect()
                };
                nodes
                    .into_iter()
                    .map(|n| fetched.get(&n.id_).cloned().unwrap_or(n))
                    .collect()
            }
            _ => match self.index.node_ids_for(&result.ids)? {
                Some(ids) => docstore.get_nodes(&ids).await?,
                None => {
                    // The vector store holds other indexes' nodes too (several
                    // indexes in one storage context): ask again, restricted
                    // to this index's nodes. LlamaIndex raises `KeyError` here.
                    result = self.query_own_nodes(vs_query).await?;
                    let ids = self.index.node_ids_for(&result.ids)?.ok_or_else(|| {
                        Error::NotFound(
                            "a node returned by the vector store is not in the index".into(),
                        )
                    })?;
                    docstore.get_nodes(&ids).await?
                }
            },
        };
        Ok(nodes
            .into_iter()
            .enumerate()
            .map(|(i, node)| NodeWithScore::new(node, result.similarities.get(i).copied()))
            .collect())
    }
}
