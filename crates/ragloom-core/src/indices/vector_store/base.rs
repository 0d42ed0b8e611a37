//! Building, updating and querying a `VectorStoreIndex`, with LlamaIndex's
//! semantics: embed only what lacks an embedding, insert in batches, keep text in the docstore.

use super::retriever::VectorIndexRetriever;
use crate::data_structs::{IndexDict, IndexStruct};
use crate::embeddings::{Embedding, embed_missing};
use crate::error::{Error, Result};
use crate::indices::{RefreshPlan, record_hashes};
use crate::ingestion::{run_transformations, run_transformations_parallel};
use crate::node_parser::SentenceSplitter;
use crate::schema::{Node, NodeKind};
use crate::storage::{RefDocInfo, StorageContext};
use crate::transform::TransformComponent;
use crate::utils::setters;
use crate::vector_stores::VectorStore;
use indexmap::IndexMap;
use std::sync::{Arc, RwLock};

/// LlamaIndex's default `insert_batch_size`.
pub(super) const DEFAULT_INSERT_BATCH_SIZE: usize = 2048;

/// An index that embeds nodes into a vector store and retrieves them by
/// similarity (LlamaIndex `VectorStoreIndex`). Cloning shares the index.
#[derive(Clone, Debug)]
pub struct VectorStoreIndex {
    index_struct: Arc<RwLock<IndexDict>>,
    storage_context: StorageContext,
    vector_store: Arc<dyn VectorStore>,
    embed_model: Arc<dyn Embedding>,
    transformations: Vec<Arc<dyn TransformComponent>>,
    insert_batch_size: usize,
    store_nodes_override: bool,
    show_progress: bool,
    num_workers: usize,
}

/// Options for building a [`VectorStoreIndex`].
#[derive(Debug)]
pub struct VectorStoreIndexBuilder {
    embed_model: Arc<dyn Embedding>,
    storage_context: Option<StorageContext>,
    transformations: Option<Vec<Arc<dyn TransformComponent>>>,
    insert_batch_size: usize,
    store_nodes_override: bool,
    show_progress: bool,
    num_workers: usize,
}

impl VectorStoreIndexBuilder {
    setters!(
        /// Transformations applied to documents (default: one `SentenceSplitter`).
        transformations => transformations: Vec<Arc<dyn TransformComponent>>,
        /// Where nodes and vectors go (default: in-memory simple stores).
        storage_context => storage_context: StorageContext,
        /// Keep nodes in the docstore even when the vector store keeps text.
        store_nodes_override => store_nodes_override: bool,
        /// Show progress bars while embedding.
        show_progress => show_progress: bool,
    );

    /// Nodes per vector-store insert (default 2048).
    pub fn insert_batch_size(mut self, n: usize) -> Self {
        self.insert_batch_size = n.max(1);
        self
    }

    /// Documents split at once by [`VectorStoreIndex::insert`] and
    /// [`VectorStoreIndex::refresh_ref_docs`] (default 1; the nodes are the
    /// same whatever the number, only faster).
    pub fn num_workers(mut self, n: usize) -> Self {
        self.num_workers = n.max(1);
        self
    }

    fn into_index(self, index_struct: IndexDict) -> Result<VectorStoreIndex> {
        let storage_context = self.storage_context.unwrap_or_default();
        let vector_store = storage_context.vector_store()?;
        let transformations = match self.transformations {
            Some(t) => t,
            None => vec![Arc::new(SentenceSplitter::default()) as Arc<dyn TransformComponent>],
        };
        Ok(VectorStoreIndex {
            index_struct: Arc::new(RwLock::new(index_struct)),
            storage_context,
            vector_store,
            embed_model: self.embed_model,
            transformations,
            insert_batch_size: self.insert_batch_size,
            store_nodes_override: self.store_nodes_override,
            show_progress: self.show_progress,
            num_workers: self.num_workers,
        })
    }

    /// Splits `documents` with the transformations, embeds the nodes and
    /// builds the index (LlamaIndex `VectorStoreIndex.from_documents`).
    pub async fn from_documents(self, documents: &[Node]) -> Result<VectorStoreIndex> {
        let index = self.into_index(IndexDict::new())?;
        let docstore = &index.storage_context.docstore;
        for doc in documents {
            docstore.set_document_hash(&doc.id_, &doc.hash()).await?;
        }
        let nodes = run_transformations(documents.to_vec(), &index.transformations).await?;
        index.build_from_nodes(nodes).await?;
        Ok(index)
    }

    /// The vector index already in the storage context (its only one), with
    /// these options, or a new empty one recorded there: how a program opens
    /// an index it keeps up to date (LlamaIndex `load_index_from_storage`
    /// with keyword arguments, falling back to an empty `VectorStoreIndex`).
    pub async fn load_or_create(self) -> Result<VectorStoreIndex> {
        let context = self.storage_context.clone().unwrap_or_default();
        let mut structs = context.index_store.index_structs().await?;
        match structs.len() {
            0 => self.from_nodes(Vec::new()).await,
            1 => match structs.remove(0) {
                IndexStruct::IndexDict(dict) => self.into_index(dict),
                other => Err(Error::Unsupported(format!(
                    "index `{}` is a `{}` index, not a vector store index",
                    other.index_id(),
                    other.type_name()
                ))),
            },
            n => Err(Error::InvalidInput(format!(
                "the storage holds {n} indexes; load the one you want with load_index_from_storage"
            ))),
        }
    }

    /// Builds the index from nodes as they are (LlamaIndex `VectorStoreIndex(nodes)`).
    pub async fn from_nodes(self, nodes: Vec<Node>) -> Result<VectorStoreIndex> {
        let index = self.into_index(IndexDict::new())?;
        index.build_from_nodes(nodes).await?;
        Ok(index)
    }

    /// An index over a vector store that already holds the nodes and their
    /// text (LlamaIndex `VectorStoreIndex.from_vector_store`).
    pub fn from_vector_store(self, vector_store: Arc<dyn VectorStore>) -> Result<VectorStoreIndex> {
        if !vector_store.stores_text() {
            return Err(Error::InvalidInput(
                "from_vector_store needs a vector store that keeps node text (stores_text)".into(),
            ));
        }
        let mut this = self;
        this.storage_context = Some(StorageContext::with_vector_store(vector_store));
        this.into_index(IndexDict::new())
    }
}

impl VectorStoreIndex {
    /// A builder embedding with `embed_model`.
    pub fn builder(embed_model: Arc<dyn Embedding>) -> VectorStoreIndexBuilder {
        VectorStoreIndexBuilder {
            embed_model,
            storage_context: None,
            transformations: None,
            insert_batch_size: DEFAULT_INSERT_BATCH_SIZE,
            store_nodes_override: false,
            show_progress: false,
            num_workers: 1,
        }
    }

    /// Splits, embeds and indexes `documents` in in-memory stores.
    pub async fn from_documents(
        documents: &[Node],
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        Self::builder(embed_model).from_documents(documents).await
    }

    /// An index over a vector store that already holds nodes with their text.
    pub fn from_vector_store(
        vector_store: Arc<dyn VectorStore>,
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        Self::builder(embed_model).from_vector_store(vector_store)
    }

    /// An index from a loaded index struct (see `load_index_from_storage`).
    pub(crate) fn from_parts(
        index_struct: IndexDict,
        storage_context: StorageContext,
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        Self::builder(embed_model)
            .storage_context(storage_context)
            .into_index(index_struct)
    }

    /// The index id.
    pub fn index_id(&self) -> String {
        self.index_struct
            .read()
            .map(|s| s.index_id.clone())
            .unwrap_or_default()
    }

    /// Maps vector-store ids to node ids under the read lock, without copying
    /// the index struct (this runs on every query); `None` if any id is not
    /// this index's (another index's node in a shared vector store).
    pub(crate) fn node_ids_for(&self, vector_ids: &[String]) -> Result<Option<Vec<String>>> {
        let s = self.struct_ref()?;
        Ok(vector_ids
            .iter()
            .map(|id| s.nodes_dict.get(id).cloned())
            .collect())
    }

    /// The vector-store ids of this index's nodes, in insertion order.
    pub(crate) fn vector_ids(&self) -> Result<Vec<String>> {
        Ok(self.struct_ref()?.nodes_dict.keys().cloned().collect())
    }

    fn struct_ref(&self) -> Result<std::sync::RwLockReadGuard<'_, IndexDict>> {
        self.index_struct
            .read()
            .map_err(|_| Error::Other("index lock poisoned".into()))
    }

    /// Renames the index (LlamaIndex `set_index_id`): the struct under the
    /// old id leaves the index store and comes back under `index_id`, so
    /// several indexes can share one storage context and be loaded by id.
    pub async fn set_index_id(&self, index_id: impl Into<String>) -> Result<()> {
        let index_id = index_id.into();
        let old = std::mem::replace(&mut self.struct_mut()?.index_id, index_id);
        let index_store = &self.storage_context.index_store;
        index_store.delete_index_struct(&old).await?;
        index_store
            .add_index_struct(IndexStruct::IndexDict(self.index_struct()))
            .await
    }

    /// The source documents of this index's nodes, each with its node ids and
    /// metadata, in node order (LlamaIndex `ref_doc_info`). Only for indexes
    /// that keep their nodes in the docstore; otherwise [`Error::Unsupported`].
    pub async fn ref_doc_info(&self) -> Result<IndexMap<String, RefDocInfo>> {
        if !self.keeps_nodes() {
            return Err(Error::Unsupported(
                "ref_doc_info needs the nodes in the docstore; this vector store keeps them \
                 (build the index with store_nodes_override(true))"
                    .into(),
            ));
        }
        let node_ids: Vec<String> = self.struct_ref()?.nodes_dict.values().cloned().collect();
        let docstore = &self.storage_context.docstore;
        let mut out = IndexMap::new();
        for node in docstore.get_nodes(&node_ids).await? {
            let Some(source) = node.source_node() else {
                continue;
            };
            if out.contains_key(&source.node_id) {
                continue;
            }
            if let Some(info) = docstore.get_ref_doc_info(&source.node_id).await? {
                out.insert(source.node_id.clone(), info);
            }
        }
        Ok(out)
    }

    /// A copy of the index struct.
    pub fn index_struct(&self) -> IndexDict {
        self.index_struct
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The storage context.
    pub fn storage_context(&self) -> &StorageContext {
        &self.storage_context
    }

    /// The text vector store.
    pub fn vector_store(&self) -> &Arc<dyn VectorStore> {
        &self.vector_store
    }

    /// The embedding model.
    pub fn embed_model(&self) -> &Arc<dyn Embedding> {
        &self.embed_model
    }

    /// A retriever over this index (`similarity_top_k` 2 unless changed).
    pub fn as_retriever(&self) -> VectorIndexRetriever {
        VectorIndexRetriever::new(self.clone())
    }

    fn keeps_nodes(&self) -> bool {
        !self.vector_store.stores_text() || self.store_nodes_override
    }

    async fn build_from_nodes(&self, nodes: Vec<Node>) -> Result<()> {
        self.add_nodes(nodes).await?;
        let s = self.index_struct();
        self.storage_context
            .index_store
            .add_index_struct(IndexStruct::IndexDict(s))
            .await
    }

    /// Embeds the nodes that lack an embedding, in batches, reading the text
    /// an embedding model should see (`MetadataMode::Embed`).
    async fn with_embeddings(&self, mut nodes: Vec<Node>) -> Result<Vec<Node>> {
        embed_missing(self.embed_model.as_ref(), &mut nodes, self.show_progress).await?;
        Ok(nodes)
    }

    /// Adds nodes batch by batch. Each batch is written to the docstore and
    /// the index struct *before* the vector store: queries start from the
    /// vector store, whose add is atomic, so a query sees a batch's nodes
    /// all at once and only when their text is already stored (LlamaIndex
    /// writes the vector store first, which lets a concurrent query find an
    /// id the index does not know yet).
    async fn add_nodes(&self, nodes: Vec<Node>) -> Result<()> {
        let keeps_nodes = self.keeps_nodes();
        let mut nodes = nodes;
        while !nodes.is_empty() {
            let rest = nodes.split_off(nodes.len().min(self.insert_batch_size));
            let batch = self
                .with_embeddings(std::mem::replace(&mut nodes, rest))
                .await?;
            // The vector store keeps the embedding; the docstore keeps the rest.
            let stored: Vec<Node> = batch
                .iter()
                .filter(|n| keeps_nodes || matches!(n.kind, NodeKind::Index { .. }))
                .map(|n| Node {
                    embedding: None,
                    ..n.clone()
                })
                .collect();
            if !stored.is_empty() {
                self.storage_context
                    .docstore
                    .add_documents(&stored, true, true)
                    .await?;
                let mut s = self.struct_mut()?;
                for node in &stored {
                    // Provisionally under the node id; corrected below if the
                    // vector store assigns ids of its own.
                    s.add_node(&node.id_, None);
                }
            }
            let new_ids = match self.vector_store.add(&batch).await {
                Ok(ids) => ids,
                Err(e) => {
                    self.forget_provisional(&stored).await;
                    return Err(e);
                }
            };
            if !stored.is_empty() {
                let by_id: std::collections::HashMap<&str, &str> = batch
                    .iter()
                    .zip(&new_ids)
                    .map(|(n, id)| (n.id_.as_str(), id.as_str()))
                    .collect();
                let mut s = self.struct_mut()?;
                for node in &stored {
                    match by_id.get(node.id_.as_str()) {
                        Some(&new_id) if new_id != node.id_ => {
                            let _ = s.delete(&node.id_);
                            s.add_node(&node.id_, Some(new_id));
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Undoes the docstore and index-struct writes of a batch the vector
    /// store refused, so that nothing refers to vectors that do not exist.
    async fn forget_provisional(&self, stored: &[Node]) {
        if let Ok(mut s) = self.struct_mut() {
            for node in stored {
                let _ = s.delete(&node.id_);
            }
        }
        for node in stored {
            // Best effort: the error that matters is the vector store's.
            let _ = self
                .storage_context
                .docstore
                .delete_document(&node.id_)
                .await;
        }
    }

    fn struct_mut(&self) -> Result<std::sync::RwLockWriteGuard<'_, IndexDict>> {
        self.index_struct
            .write()
            .map_err(|_| Error::Other("index lock poisoned".into()))
    }

    /// Splits, embeds and adds one document (LlamaIndex `insert`), then
    /// records its hash, so a document whose nodes were not all written is
    /// not taken for up to date.
    pub async fn insert(&self, document: Node) -> Result<()> {
        let hashes = [(document.id_.clone(), document.hash())];
        self.insert_then_hash(vec![document], &hashes).await
    }

    /// Inserts documents whose hashes are already known: all of them split
    /// (on [`num_workers`](VectorStoreIndexBuilder::num_workers) workers),
    /// their nodes added in batches with the index struct written once, and
    /// only then their hashes recorded.
    async fn insert_then_hash(
        &self,
        documents: Vec<Node>,
        hashes: &[(String, String)],
    ) -> Result<()> {
        if documents.is_empty() {
            return Ok(());
        }
        let nodes =
            run_transformations_parallel(documents, &self.transformations, self.num_workers)
                .await?;
        self.insert_nodes(nodes).await?;
        record_hashes(self.storage_context.docstore.as_ref(), hashes).await
    }

    /// Replaces a document's nodes with those of its new version (LlamaIndex
    /// `update_ref_doc`): its old nodes are deleted, then it is inserted.
    pub async fn update_ref_doc(&self, document: Node) -> Result<()> {
        self.delete_ref_doc(&document.id_, true).await?;
        self.insert(document).await
    }

    /// Brings the index up to date with `documents` (LlamaIndex
    /// `refresh_ref_docs`): a document the docstore has no hash for is
    /// inserted, one whose hash changed is updated, an unchanged one is left
    /// alone. Returns, for each document, whether it was written. Documents
    /// missing from `documents` are not deleted (use [`delete_ref_docs`](Self::delete_ref_docs)).
    ///
    /// The result is Python's, but the work is batched: changed documents'
    /// old nodes are deleted first, then every new version is split and
    /// embedded together. Run it inside a [`StorageContext::transaction`] on
    /// a transactional store to make the whole refresh land at once.
    pub async fn refresh_ref_docs(&self, documents: &[Node]) -> Result<Vec<bool>> {
        let RefreshPlan {
            written,
            changed,
            to_write,
            hashes,
        } = RefreshPlan::new(self.storage_context.docstore.as_ref(), documents).await?;
        self.delete_ref_docs(&changed, true).await?;
        self.insert_then_hash(to_write, &hashes).await?;
        Ok(written)
    }

    /// Embeds (where needed) and adds nodes (LlamaIndex `insert_nodes`).
    pub async fn insert_nodes(&self, nodes: Vec<Node>) -> Result<()> {
        self.build_from_nodes(nodes).await
    }

    /// Removes a document's nodes from the vector store and the index, and
    /// from the docstore too when `delete_from_docstore`.
    pub async fn delete_ref_doc(&self, ref_doc_id: &str, delete_from_docstore: bool) -> Result<()> {
        self.delete_ref_docs(&[ref_doc_id.to_string()], delete_from_docstore)
            .await
    }

    /// [`delete_ref_doc`](Self::delete_ref_doc) for several documents, writing
    /// the index struct once.
    pub async fn delete_ref_docs(
        &self,
        ref_doc_ids: &[String],
        delete_from_docstore: bool,
    ) -> Result<()> {
        if ref_doc_ids.is_empty() {
            return Ok(());
        }
        for ref_doc_id in ref_doc_ids {
            self.vector_store.delete(ref_doc_id).await?;
            if self.keeps_nodes() {
                let docstore = &self.storage_context.docstore;
                let info = docstore.get_ref_doc_info(ref_doc_id).await?;
                if let Some(info) = &info {
                    let mut s = self.struct_mut()?;
                    for id in &info.node_ids {
                        // A node missing from the struct is already gone: nothing to undo.
                        let _ = s.delete(id);
                    }
                }
                // As Python's `raise_error=False`: a document the docstore does
                // not know is not an error.
                if delete_from_docstore && info.is_some() {
                    docstore.delete_ref_doc(ref_doc_id).await?;
                }
            }
        }
        let s = self.index_struct();
        self.storage_context
            .index_store
            .add_index_struct(IndexStruct::IndexDict(s))
            .await
    }
}
