//! LlamaIndex's storage folders in and out of a durable index: a folder
//! Python persisted becomes the live index, and the live index is written back as one.

use super::index::{DurableIndex, LiveIndex};
use super::manifest::SyncReport;
use super::settings::{BuildSettings, DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, no_model};
use super::sync::SyncOptions;
use crate::data_structs::{IndexDict, IndexStruct};
use crate::error::{FolderProblem, IndexError};
use crate::storage::docstore::{
    DEFAULT_COLLECTION_DATA_SUFFIX, DEFAULT_METADATA_COLLECTION_SUFFIX,
    DEFAULT_NAMESPACE as DOCSTORE, DEFAULT_REF_DOC_COLLECTION_SUFFIX, DocStore,
};
use crate::storage::index_store::{
    DEFAULT_COLLECTION_SUFFIX as INDEX_SUFFIX, DEFAULT_NAMESPACE as INDEX_STORE, IndexStore,
};
use crate::storage::{SimpleDocumentStore, SimpleIndexStore, StorageContext};
use crate::vector_stores::{DEFAULT_VECTOR_STORE, SimpleVectorStore, VectorStore};
use crate::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn refused(dir: &Path, problem: FolderProblem) -> Error {
    Error::Index(IndexError::Folder {
        dir: dir.to_path_buf(),
        problem,
    })
}

/// What an export wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Exported {
    /// The folder.
    pub dir: String,
    /// Nodes written to its docstore.
    pub nodes: usize,
    /// Vectors written to its vector store.
    pub vectors: usize,
}

impl DurableIndex {
    /// Makes the `VectorStoreIndex` that LlamaIndex persisted in `dir` (the
    /// one with `index_id`, or the only one) the live index, its nodes,
    /// document hashes and vectors as Python wrote them. `embed` is the
    /// identity of the model that made the vectors (`no_model()` when it has
    /// none). It is written as a build of its own in one transaction: nothing
    /// changes unless the whole import commits, and the next sync rebuilds
    /// from the files with the usual settings.
    pub async fn import_llamaindex(
        &self,
        dir: &Path,
        index_id: Option<&str>,
        embed: serde_json::Value,
        options: &SyncOptions,
    ) -> Result<SyncReport> {
        let started = Instant::now();
        let context = StorageContext::from_persist_dir(dir).await?;
        let dict = vector_index(&context, dir, index_id).await?;
        let ids: Vec<String> = dict.nodes_dict.values().cloned().collect();
        let mut nodes = context.docstore.get_nodes(&ids).await?;
        let vectors = context.vector_store()?;
        let mut embedded = 0;
        if let Some(simple) = vectors.as_any().downcast_ref::<SimpleVectorStore>() {
            for node in &mut nodes {
                if let Ok(v) = simple.get(&node.id_) {
                    node.embedding = Some(v.into_iter().map(|x| x as f32).collect());
                    embedded += 1;
                }
            }
        }
        let problem = match (embedded, embed == no_model()) {
            (e, _) if e > 0 && e < nodes.len() => Some(FolderProblem::PartialVectors {
                embedded,
                nodes: nodes.len(),
            }),
            (0, false) => Some(FolderProblem::ModelWithoutVectors),
            (e, true) if e > 0 => Some(FolderProblem::VectorsWithoutModel),
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(refused(dir, problem));
        }
        // What a first sync with the default settings would build with.
        let settings = BuildSettings {
            embed,
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_overlap: DEFAULT_CHUNK_OVERLAP,
            chunk_tokenizer: None,
        };
        let dim = nodes
            .iter()
            .find_map(|n| n.embedding.as_ref().map(Vec::len))
            .unwrap_or(1);
        let build = self.new_build(settings, dim, options).await?;
        let tx = build.transaction();
        let target = tx.storage_context();
        target.docstore.add_documents(&nodes, true, true).await?;
        // Document hashes as Python recorded them, source documents included.
        let mut hashed = ids;
        hashed.extend(context.docstore.get_all_ref_doc_info().await?.into_keys());
        for id in &hashed {
            if let Some(hash) = context.docstore.get_document_hash(id).await? {
                target.docstore.set_document_hash(id, &hash).await?;
            }
        }
        target
            .index_store
            .add_index_struct(IndexStruct::IndexDict(dict))
            .await?;
        if embedded > 0 || tx.text_rows() {
            target.vector_store()?.add(&nodes).await?;
        }
        tx.finish_keyword_index()?;
        let report = SyncReport {
            documents: target.docstore.get_all_ref_doc_info().await?.len(),
            nodes_written: nodes.len(),
            nodes_total: nodes.len(),
            millis: started.elapsed().as_millis() as u64,
            ..SyncReport::default()
        };
        build.commit(report.clone()).await?;
        Ok(report)
    }
}

/// The vector index of `context` with `index_id`, or its only one.
async fn vector_index(
    context: &StorageContext,
    dir: &Path,
    index_id: Option<&str>,
) -> Result<IndexDict> {
    let mut dicts: Vec<IndexDict> = context
        .index_store
        .index_structs()
        .await?
        .into_iter()
        .filter_map(|s| match s {
            IndexStruct::IndexDict(d) => Some(d),
            _ => None,
        })
        .filter(|d| index_id.is_none_or(|id| d.index_id == id))
        .collect();
    match dicts.len() {
        1 => Ok(dicts.remove(0)),
        0 => Err(refused(
            dir,
            FolderProblem::NoVectorIndex {
                index_id: index_id.map(str::to_owned),
            },
        )),
        _ => Err(refused(
            dir,
            FolderProblem::SeveralIndexes {
                ids: dicts.into_iter().map(|d| d.index_id).collect(),
            },
        )),
    }
}

impl LiveIndex {
    /// Writes the index under `dir` (new or empty) in LlamaIndex's layout
    /// (docstore.json, index_store.json, default__vector_store.json, ...),
    /// which Python's `load_index_from_storage` loads. An index without
    /// embeddings gets an index struct listing its nodes and an empty vector store.
    pub async fn export_llamaindex(&self, dir: &Path) -> Result<Exported> {
        let occupied = dir.exists()
            && std::fs::read_dir(dir)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true);
        if occupied {
            return Err(refused(dir, FolderProblem::NotEmpty));
        }
        let doc_collections: Vec<String> = [
            DEFAULT_COLLECTION_DATA_SUFFIX,
            DEFAULT_REF_DOC_COLLECTION_SUFFIX,
            DEFAULT_METADATA_COLLECTION_SUFFIX,
        ]
        .iter()
        .map(|suffix| format!("{DOCSTORE}{suffix}"))
        .collect();
        let index_collection = vec![format!("{INDEX_STORE}{INDEX_SUFFIX}")];
        let (doc_kv, index_kv, vectors) = self
            .build()
            .to_simple(&doc_collections, &index_collection)
            .await?;
        let docstore = SimpleDocumentStore::from_kvstore(doc_kv, None);
        let index_store = SimpleIndexStore::from_kvstore(index_kv, None);
        let nodes = docstore.docs().await?;
        if index_store.index_structs().await?.is_empty() {
            let mut dict = IndexDict::new();
            for node in &nodes {
                dict.add_node(&node.id_, None);
            }
            index_store
                .add_index_struct(IndexStruct::IndexDict(dict))
                .await?;
        }
        let vector_count = vectors.len();
        let mut context = StorageContext::from_defaults();
        context.docstore = Arc::new(docstore);
        context.index_store = Arc::new(index_store);
        context
            .vector_stores
            .insert(DEFAULT_VECTOR_STORE.into(), vectors as Arc<dyn VectorStore>);
        context.persist(dir).await?;
        Ok(Exported {
            dir: dir.display().to_string(),
            nodes: nodes.len(),
            vectors: vector_count,
        })
    }
}
