//! `SummaryIndex` (LlamaIndex's list index): nodes kept in order, retrieved
//! all at once, by embedding similarity, or by asking an LLM which are relevant.

mod retrievers;

pub use retrievers::{
    DEFAULT_CHOICE_BATCH_SIZE, DEFAULT_CHOICE_SELECT_PROMPT_TMPL, SummaryIndexEmbeddingRetriever,
    SummaryIndexLLMRetriever, SummaryIndexRetriever, default_format_node_batch_fn,
    default_parse_choice_select_answer_fn,
};

use crate::data_structs::{IndexList, IndexStruct};
use crate::embeddings::Embedding;
use crate::error::{Error, Result};
use crate::ingestion::run_transformations;
use crate::llms::Llm;
use crate::node_parser::SentenceSplitter;
use crate::schema::Node;
use crate::storage::StorageContext;
use crate::transform::TransformComponent;
use crate::utils::setters;
use std::sync::{Arc, RwLock};

/// An index that keeps its nodes in a list (LlamaIndex `SummaryIndex`, alias
/// `ListIndex`). Nodes live in the docstore; the index struct (`IndexList`,
/// type `"list"` in `index_store.json`) keeps their ids in order. Cloning
/// shares the index.
#[derive(Clone, Debug)]
pub struct SummaryIndex {
    index_struct: Arc<RwLock<IndexList>>,
    storage_context: StorageContext,
}

/// Options for building a [`SummaryIndex`].
#[derive(Debug, Default)]
pub struct SummaryIndexBuilder {
    storage_context: Option<StorageContext>,
    transformations: Option<Vec<Arc<dyn TransformComponent>>>,
}

impl SummaryIndexBuilder {
    setters!(
        /// Where nodes and the index struct go (default: in-memory stores).
        storage_context => storage_context: StorageContext,
        /// Transformations applied to documents (default: one `SentenceSplitter`).
        transformations => transformations: Vec<Arc<dyn TransformComponent>>,
    );

    /// Splits `documents` and indexes the nodes (`SummaryIndex.from_documents`).
    pub async fn from_documents(self, documents: &[Node]) -> Result<SummaryIndex> {
        let storage_context = self.storage_context.unwrap_or_default();
        for doc in documents {
            storage_context
                .docstore
                .set_document_hash(&doc.id_, &doc.hash())
                .await?;
        }
        let transformations = match self.transformations {
            Some(t) => t,
            None => vec![Arc::new(SentenceSplitter::default()) as Arc<dyn TransformComponent>],
        };
        let nodes = run_transformations(documents.to_vec(), &transformations).await?;
        SummaryIndexBuilder {
            storage_context: Some(storage_context),
            transformations: None,
        }
        .from_nodes(nodes)
        .await
    }

    /// Indexes `nodes` as they are (`SummaryIndex(nodes)`).
    pub async fn from_nodes(self, nodes: Vec<Node>) -> Result<SummaryIndex> {
        let index = SummaryIndex {
            index_struct: Arc::new(RwLock::new(IndexList::new())),
            storage_context: self.storage_context.unwrap_or_default(),
        };
        index.insert_nodes(nodes).await?;
        Ok(index)
    }
}

impl SummaryIndex {
    /// A builder with in-memory stores and the default splitter.
    pub fn builder() -> SummaryIndexBuilder {
        SummaryIndexBuilder::default()
    }

    /// Splits and indexes `documents` in in-memory stores.
    pub async fn from_documents(documents: &[Node]) -> Result<Self> {
        Self::builder().from_documents(documents).await
    }

    /// Indexes `nodes` in in-memory stores.
    pub async fn from_nodes(nodes: Vec<Node>) -> Result<Self> {
        Self::builder().from_nodes(nodes).await
    }

    /// Loads the summary index `index_id` (or the only index, when `None`)
    /// from `storage_context` (LlamaIndex `load_index_from_storage` for a list index).
    pub async fn load_from_storage(
        storage_context: StorageContext,
        index_id: Option<&str>,
    ) -> Result<Self> {
        let found = storage_context
            .index_store
            .get_index_struct(index_id)
            .await?;
        match found {
            Some(IndexStruct::IndexList(list)) => Ok(Self {
                index_struct: Arc::new(RwLock::new(list)),
                storage_context,
            }),
            Some(other) => Err(Error::InvalidInput(format!(
                "index `{}` is a `{}` index, not a summary (`list`) index",
                other.index_id(),
                other.type_name()
            ))),
            None => Err(Error::NotFound(match index_id {
                Some(id) => format!("index `{id}` in the storage context"),
                None => "no index in the storage context".into(),
            })),
        }
    }

    fn read(&self) -> IndexList {
        self.index_struct
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The index id.
    pub fn index_id(&self) -> String {
        self.read().index_id
    }

    /// A copy of the index struct.
    pub fn index_struct(&self) -> IndexList {
        self.read()
    }

    /// The node ids, in order.
    pub fn node_ids(&self) -> Vec<String> {
        self.read().nodes
    }

    /// The storage context.
    pub fn storage_context(&self) -> &StorageContext {
        &self.storage_context
    }

    /// The nodes, in order, read from the docstore.
    pub async fn nodes(&self) -> Result<Vec<Node>> {
        self.storage_context
            .docstore
            .get_nodes(&self.node_ids())
            .await
    }

    async fn save_struct(&self) -> Result<()> {
        self.storage_context
            .index_store
            .add_index_struct(IndexStruct::IndexList(self.read()))
            .await
    }

    /// Stores `nodes` in the docstore and appends their ids (`insert_nodes`).
    pub async fn insert_nodes(&self, nodes: Vec<Node>) -> Result<()> {
        self.storage_context
            .docstore
            .add_documents(&nodes, true, true)
            .await?;
        {
            let mut s = self
                .index_struct
                .write()
                .map_err(|_| Error::Other("summary index lock poisoned".into()))?;
            for n in &nodes {
                s.add_node(&n.id_);
            }
        }
        self.save_struct().await
    }

    /// Removes `node_ids` from the index (`delete_nodes`); with
    /// `delete_from_docstore` the nodes also leave the docstore.
    pub async fn delete_nodes(
        &self,
        node_ids: &[String],
        delete_from_docstore: bool,
    ) -> Result<()> {
        {
            let mut s = self
                .index_struct
                .write()
                .map_err(|_| Error::Other("summary index lock poisoned".into()))?;
            s.nodes.retain(|id| !node_ids.contains(id));
        }
        if delete_from_docstore {
            for id in node_ids {
                self.storage_context.docstore.delete_document(id).await?;
            }
        }
        self.save_struct().await
    }

    /// A retriever returning every node (`as_retriever()`, mode `default`).
    pub fn as_retriever(&self) -> SummaryIndexRetriever {
        SummaryIndexRetriever::new(self.clone())
    }

    /// A retriever ranking nodes by embedding similarity (mode `embedding`).
    pub fn as_embedding_retriever(
        &self,
        embed_model: Arc<dyn Embedding>,
    ) -> SummaryIndexEmbeddingRetriever {
        SummaryIndexEmbeddingRetriever::new(self.clone(), embed_model)
    }

    /// A retriever asking `llm` which nodes are relevant (mode `llm`).
    pub fn as_llm_retriever(&self, llm: Arc<dyn Llm>) -> SummaryIndexLLMRetriever {
        SummaryIndexLLMRetriever::new(self.clone(), llm)
    }
}
