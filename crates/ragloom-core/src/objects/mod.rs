//! Objects found by similarity (LlamaIndex's `ObjectIndex`): each object —
//! a tool, a table, anything — becomes a node through a mapping, the nodes
//! are embedded in a vector index, and a retriever gives objects back.

mod tool_mapping;

pub use tool_mapping::{SimpleToolNodeMapping, tool_node_text};

use crate::embeddings::Embedding;
use crate::error::{Error, Result};
use crate::indices::VectorStoreIndex;
use crate::retrievers::Retriever;
use crate::schema::{Node, QueryBundle};
use crate::tools::Tool;
use async_trait::async_trait;
use std::sync::Arc;

/// How an object becomes a node and back (LlamaIndex `BaseObjectNodeMapping`).
#[async_trait]
pub trait ObjectNodeMapping<T>: Send + Sync + std::fmt::Debug {
    /// The node `object` is indexed as: its text is what gets embedded.
    async fn to_node(&self, object: &T) -> Result<Node>;

    /// The object a retrieved node stands for (LlamaIndex `from_node`).
    fn to_object(&self, node: &Node) -> Result<T>;
}

/// Finds the objects that fit a query (LlamaIndex `ObjectRetriever`).
#[async_trait]
pub trait ObjectRetriever<T>: Send + Sync + std::fmt::Debug {
    /// The objects for `query`, best first.
    async fn retrieve(&self, query: &str) -> Result<Vec<T>>;
}

/// Objects in a vector index of their nodes (LlamaIndex `ObjectIndex`).
pub struct ObjectIndex<T> {
    index: VectorStoreIndex,
    mapping: Arc<dyn ObjectNodeMapping<T>>,
}

impl<T> Clone for ObjectIndex<T> {
    fn clone(&self) -> Self {
        Self {
            index: self.index.clone(),
            mapping: Arc::clone(&self.mapping),
        }
    }
}

impl<T> std::fmt::Debug for ObjectIndex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectIndex")
            .field("index", &self.index.index_id())
            .field("mapping", &self.mapping)
            .finish()
    }
}

impl<T: Send + Sync + 'static> ObjectIndex<T> {
    /// Maps every object to its node and embeds the nodes with `embed_model`
    /// (LlamaIndex `ObjectIndex.from_objects`).
    pub async fn from_objects(
        objects: &[T],
        mapping: Arc<dyn ObjectNodeMapping<T>>,
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        let mut nodes = Vec::with_capacity(objects.len());
        for object in objects {
            nodes.push(mapping.to_node(object).await?);
        }
        let index = VectorStoreIndex::builder(embed_model)
            .from_nodes(nodes)
            .await?;
        Ok(Self { index, mapping })
    }

    /// The vector index of the objects' nodes.
    pub fn index(&self) -> &VectorStoreIndex {
        &self.index
    }

    /// The mapping between objects and nodes.
    pub fn mapping(&self) -> &Arc<dyn ObjectNodeMapping<T>> {
        &self.mapping
    }

    /// A retriever giving the `similarity_top_k` most similar objects.
    pub fn as_retriever(&self, similarity_top_k: usize) -> ObjectIndexRetriever<T> {
        ObjectIndexRetriever {
            index: self.clone(),
            similarity_top_k,
        }
    }
}

impl ObjectIndex<Arc<dyn Tool>> {
    /// The tools, each embedded as its name, description and schema
    /// ([`SimpleToolNodeMapping`]).
    pub async fn from_tools(
        tools: Vec<Arc<dyn Tool>>,
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        let mapping = Arc::new(SimpleToolNodeMapping::new(tools.clone()));
        Self::from_objects(&tools, mapping, embed_model).await
    }
}

/// Retrieves objects from an [`ObjectIndex`] through its vector index.
pub struct ObjectIndexRetriever<T> {
    index: ObjectIndex<T>,
    similarity_top_k: usize,
}

impl<T> Clone for ObjectIndexRetriever<T> {
    fn clone(&self) -> Self {
        Self {
            index: self.index.clone(),
            similarity_top_k: self.similarity_top_k,
        }
    }
}

impl<T> std::fmt::Debug for ObjectIndexRetriever<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectIndexRetriever")
            .field("index", &self.index)
            .field("similarity_top_k", &self.similarity_top_k)
            .finish()
    }
}

#[async_trait]
impl<T: Send + Sync + 'static> ObjectRetriever<T> for ObjectIndexRetriever<T> {
    async fn retrieve(&self, query: &str) -> Result<Vec<T>> {
        let nodes = self
            .index
            .index
            .as_retriever()
            .similarity_top_k(self.similarity_top_k)
            .retrieve(&QueryBundle::new(query))
            .await?;
        nodes
            .iter()
            .map(|n| self.index.mapping.to_object(&n.node))
            .collect()
    }
}

/// The metadata value `key` of `node` as text, or an error naming what the
/// mapping expected.
pub(crate) fn metadata_text<'a>(node: &'a Node, key: &str, what: &str) -> Result<&'a str> {
    node.metadata
        .get(key)
        .and_then(|v| v.as_str())
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "node `{}` is not a {what} node: it has no `{key}` metadata",
                node.id_
            ))
        })
}
