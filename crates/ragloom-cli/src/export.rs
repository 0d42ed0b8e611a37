//! `ragloom export --llamaindex DIR`: the live index of a source written as
//! LlamaIndex's storage folder, which Python's `load_index_from_storage` loads.

use crate::error::{CliError, exit};
use ragloom::data_structs::{IndexDict, IndexStruct};
use ragloom::durable::IndexBuild;
use ragloom::storage::docstore::{
    DEFAULT_COLLECTION_DATA_SUFFIX, DEFAULT_METADATA_COLLECTION_SUFFIX,
    DEFAULT_NAMESPACE as DOCSTORE, DEFAULT_REF_DOC_COLLECTION_SUFFIX, DocStore,
};
use ragloom::storage::index_store::{
    DEFAULT_COLLECTION_SUFFIX as INDEX_SUFFIX, DEFAULT_NAMESPACE as INDEX_STORE, IndexStore,
};
use ragloom::storage::{SimpleDocumentStore, SimpleIndexStore, StorageContext};
use ragloom::vector_stores::{DEFAULT_VECTOR_STORE, VectorStore};
use std::path::Path;
use std::sync::Arc;

/// What an export wrote.
#[derive(Debug, serde::Serialize)]
pub struct Exported {
    pub dir: String,
    pub nodes: usize,
    pub vectors: usize,
}

/// Writes `build`'s index under `dir` in LlamaIndex's layout (docstore.json,
/// index_store.json, default__vector_store.json, image__vector_store.json,
/// graph_store.json). An index built without embeddings gets an index
/// struct listing its nodes and an empty vector store.
pub async fn export_llamaindex(build: &dyn IndexBuild, dir: &Path) -> Result<Exported, CliError> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(CliError::new(
            exit::USAGE,
            format!("{} exists and is not empty", dir.display()),
            "give a new or empty folder",
        ));
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
    let (doc_kv, index_kv, vectors) = build.to_simple(&doc_collections, &index_collection).await?;
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
