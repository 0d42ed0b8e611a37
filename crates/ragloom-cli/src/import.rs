//! `ragloom import DIR`: a storage folder LlamaIndex persisted becomes the
//! live index of a source, written in one transaction of a new build.

use crate::error::{CliError, exit};
use crate::ui::Ui;
use ragloom::ProviderSpec;
use ragloom::data_structs::IndexStruct;
use ragloom::durable::{
    BuildSettings, DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, DurableIndex,
    SyncReport as IngestSummary, no_model,
};
use ragloom::storage::StorageContext;
use ragloom::vector_stores::SimpleVectorStore;
use std::path::Path;
use std::time::Instant;

/// Reads the Python-written folder `dir` and makes it the live index of
/// the index's source, with the configured embedding model as the one its vectors
/// were made with. Nothing changes unless the whole import commits.
pub async fn import_llamaindex(
    dir: &Path,
    index_id: Option<&str>,
    index: &DurableIndex,
    spec: &ProviderSpec,
    ui: &Ui,
) -> Result<IngestSummary, CliError> {
    let started = Instant::now();
    let context = StorageContext::from_persist_dir(dir).await?;
    let structs = context.index_store.index_structs().await?;
    let dicts: Vec<_> = structs
        .into_iter()
        .filter_map(|s| match s {
            IndexStruct::IndexDict(d) => Some(d),
            _ => None,
        })
        .filter(|d| index_id.is_none_or(|id| d.index_id == id))
        .collect();
    let dict = match dicts.as_slice() {
        [one] => one,
        [] => {
            return Err(CliError::no_input(
                format!(
                    "{} holds no VectorStoreIndex{}",
                    dir.display(),
                    index_id.map(|i| format!(" `{i}`")).unwrap_or_default()
                ),
                "give the folder LlamaIndex's `storage_context.persist()` wrote",
            ));
        }
        many => {
            let ids: Vec<&str> = many.iter().map(|d| d.index_id.as_str()).collect();
            return Err(CliError::new(
                exit::USAGE,
                format!(
                    "{} holds several vector indexes: {}",
                    dir.display(),
                    ids.join(", ")
                ),
                "choose one with --index-id",
            ));
        }
    };
    let ids: Vec<String> = dict.nodes_dict.values().cloned().collect();
    let mut nodes = context.docstore.get_nodes(&ids).await?;
    let vectors = context.vector_store()?;
    let simple = vectors.as_any().downcast_ref::<SimpleVectorStore>();
    let mut embedded = 0;
    if let Some(simple) = simple {
        for node in &mut nodes {
            if let Ok(v) = simple.get(&node.id_) {
                node.embedding = Some(v.into_iter().map(|x| x as f32).collect());
                embedded += 1;
            }
        }
    }
    if embedded > 0 && embedded < nodes.len() {
        return Err(CliError::new(
            exit::FAILURE,
            format!(
                "{} of {} nodes have vectors in {}",
                embedded,
                nodes.len(),
                dir.display()
            ),
            "import a folder whose vector store holds every node of the index",
        ));
    }
    // What a first ingest with the default flags would build with.
    let settings = BuildSettings {
        embed: serde_json::to_value(&spec.embed).map_err(ragloom::Error::from)?,
        chunk_size: DEFAULT_CHUNK_SIZE,
        chunk_overlap: DEFAULT_CHUNK_OVERLAP,
        chunk_tokenizer: None,
    };
    if embedded == 0 && settings.embed != no_model() {
        return Err(CliError::config(
            format!(
                "{} has no vectors, but an embedding model is configured",
                dir.display()
            ),
            "import with --embed none (queries then use the keyword index)",
        ));
    }
    if embedded > 0 && settings.embed == no_model() {
        return Err(CliError::config(
            format!(
                "{} holds vectors, but no embedding model is configured to query them",
                dir.display()
            ),
            "give the model that made them, e.g. --embed huggingface --embed-model DIR",
        ));
    }

    // A build of its own: the next `ingest` of the source rebuilds from the
    // files with the settings' usual build and replaces this one when complete.
    let dim = nodes
        .iter()
        .find_map(|n| n.embedding.as_ref().map(Vec::len))
        .unwrap_or(1);
    let build = index
        .new_build(settings, dim, &crate::ingest::lock_options(false, ui))
        .await?;
    let tx = build.transaction();
    let target = tx.storage_context();
    target.docstore.add_documents(&nodes, true, true).await?;
    // Document hashes as Python recorded them, source documents included.
    let mut hashed: Vec<String> = ids.clone();
    hashed.extend(context.docstore.get_all_ref_doc_info().await?.into_keys());
    for id in &hashed {
        if let Some(hash) = context.docstore.get_document_hash(id).await? {
            target.docstore.set_document_hash(id, &hash).await?;
        }
    }
    target
        .index_store
        .add_index_struct(IndexStruct::IndexDict(dict.clone()))
        .await?;
    if embedded > 0 || tx.text_rows() {
        target.vector_store()?.add(&nodes).await?;
    }
    tx.finish_keyword_index()?;
    let summary = IngestSummary {
        documents: target.docstore.get_all_ref_doc_info().await?.len(),
        nodes_written: nodes.len(),
        nodes_total: nodes.len(),
        millis: started.elapsed().as_millis() as u64,
        ..IngestSummary::default()
    };
    build.commit(summary.clone()).await?;
    Ok(summary)
}
