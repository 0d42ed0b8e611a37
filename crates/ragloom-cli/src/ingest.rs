//! `ragloom ingest`: read the source, run the ingestion pipeline against its
//! stored state, and write back only what changed.

use crate::error::CliError;
use crate::source::{Source, SourceKind};
use crate::store::{IndexDir, IngestSummary, MANIFEST_FORMAT, Manifest};
use crate::ui::Ui;
use ragloom::ingestion::{DocstoreStrategy, IngestionPipeline};
use ragloom::readers::SimpleDirectoryReader;
use ragloom::storage::docstore::{DocStore, SimpleDocumentStore};
use ragloom::vector_stores::{SimpleVectorStore, VectorStore};
use ragloom::{EmbedSpec, Embedding, Node, SentenceSplitter};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

/// Builds the reader for `source`.
fn reader(source: &Source, ui: &Ui) -> Result<SimpleDirectoryReader, CliError> {
    let reader = match &source.kind {
        SourceKind::Folder => SimpleDirectoryReader::new(&source.base).recursive(true),
        SourceKind::File(path) => SimpleDirectoryReader::from_files([path.clone()]),
        SourceKind::Glob(pattern) => {
            let files = source.glob_files()?.unwrap_or_default();
            if files.is_empty() {
                return Err(CliError::no_input(
                    format!("no file under {} matches {pattern}", source.base.display()),
                    "check the glob; quote it so the shell does not expand it",
                ));
            }
            SimpleDirectoryReader::from_files(files)
        }
    };
    let reader = reader
        .filename_as_id(true)
        .num_workers(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .show_progress(ui.progress());
    #[cfg(feature = "file-readers")]
    let reader = {
        use ragloom::file_readers::SimpleDirectoryReaderExt;
        reader.with_default_file_extractors()
    };
    Ok(reader)
}

/// Opens the node store, or an empty one.
pub fn open_nodes(index: &IndexDir) -> Result<SimpleDocumentStore, CliError> {
    let path = index.nodes_path();
    if path.exists() {
        Ok(SimpleDocumentStore::from_persist_path(&path)?)
    } else {
        Ok(SimpleDocumentStore::new())
    }
}

/// Opens the vector store, or an empty one.
pub fn open_vectors(index: &IndexDir) -> Result<SimpleVectorStore, CliError> {
    let path = index.vectors_path();
    if path.exists() {
        Ok(SimpleVectorStore::from_persist_path(&path)?)
    } else {
        Ok(SimpleVectorStore::new())
    }
}

/// The document hashes the pipeline's docstore remembers, by document id.
async fn pipeline_hashes(
    pipeline: &IngestionPipeline,
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    Ok(match pipeline.get_docstore() {
        Some(d) => d.get_all_document_hashes().await?,
        None => Default::default(),
    })
}

/// Ingests `source` into `index`, embedding with `embed` when given.
pub async fn ingest(
    source: &Source,
    index: &IndexDir,
    embed_spec: &EmbedSpec,
    embed: Option<Arc<dyn Embedding>>,
    ui: &Ui,
) -> Result<IngestSummary, CliError> {
    let started = Instant::now();
    let previous = index.manifest()?;
    if let Some(m) = &previous {
        if &m.embed != embed_spec {
            ui.note(&format!(
                "the embedding model changed ({} → {}): rebuilding the index",
                m.embed.label(),
                embed_spec.label()
            ));
            index.clear()?;
        }
    }
    let previous = index.manifest()?;

    let report = reader(source, ui)?.load_data_with_report().await?;
    for (path, err) in &report.errors {
        ui.warn(&format!("skipped {}: {err}", path.display()));
    }
    let documents = report.documents;
    if documents.is_empty() && previous.is_none() {
        return Err(CliError::no_input(
            format!("no readable files in {}", source.key),
            "point --files at a folder with text, Markdown or PDF files",
        ));
    }
    let files: BTreeSet<&str> = documents
        .iter()
        .filter_map(|d| d.metadata.get("file_path").and_then(|v| v.as_str()))
        .collect();
    let files = files.len();
    let input_ids: BTreeSet<String> = documents.iter().map(|d| d.node_id().to_string()).collect();

    let mut pipeline = IngestionPipeline::new(vec![Arc::new(SentenceSplitter::new())])
        .docstore(Arc::new(SimpleDocumentStore::new()))
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete)
        .num_workers(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .show_progress(ui.progress());
    if let Some(e) = &embed {
        pipeline = pipeline.embedding(e.clone());
    }
    pipeline.load_if_present(index.pipeline_dir()).await?;

    let nodes_store = open_nodes(index)?;
    let vectors = open_vectors(index)?;
    let stored_refs: BTreeSet<String> = nodes_store
        .get_all_ref_doc_info()
        .await?
        .into_keys()
        .collect();

    let hashes_before = pipeline_hashes(&pipeline).await?;
    // The pipeline runs first: if splitting or embedding fails, nothing stored changes.
    let out = pipeline.run_with_stats(documents).await?;

    // Documents that vanished, and documents whose hash changed: their old
    // nodes go, even when the new version yields no nodes at all.
    let hashes_after = pipeline_hashes(&pipeline).await?;
    let mut stale: BTreeSet<String> = stored_refs.difference(&input_ids).cloned().collect();
    let deleted = stale.len();
    let mut replaced = 0;
    for (id, before) in &hashes_before {
        if input_ids.contains(id)
            && hashes_after.get(id) != Some(before)
            && stale.insert(id.clone())
        {
            replaced += 1;
        }
    }
    // New nodes always replace whatever their document had stored.
    for n in &out.nodes {
        if let Some(r) = n.ref_doc_id() {
            if stored_refs.contains(r) && stale.insert(r.to_string()) {
                replaced += 1;
            }
        }
    }
    for ref_id in &stale {
        nodes_store.try_delete_ref_doc(ref_id)?;
        vectors.delete(ref_id).await?;
    }
    let nodes_written = out.nodes.len();
    let mut nodes_embedded = 0;
    if embed.is_some() {
        let with_vectors: Vec<Node> = out
            .nodes
            .iter()
            .filter(|n| n.embedding.is_some())
            .cloned()
            .collect();
        nodes_embedded = with_vectors.len();
        vectors.add(&with_vectors).await?;
    }
    let nodes: Vec<Node> = out
        .nodes
        .into_iter()
        .map(|mut n| {
            // The vectors live in the vector store; the docstore keeps text and metadata.
            n.embedding = None;
            n
        })
        .collect();
    nodes_store.add_documents(&nodes, true, true).await?;
    let nodes_total = nodes_store.docs().await?.len();

    pipeline.persist(index.pipeline_dir()).await?;
    nodes_store.persist(&index.nodes_path()).await?;
    if embed.is_some() {
        vectors.persist(&index.vectors_path()).await?;
    }

    let summary = IngestSummary {
        files,
        documents: out.stats.documents,
        unchanged: out.stats.skipped,
        ingested: out.stats.transformed,
        replaced,
        deleted,
        failed_files: report.errors.len(),
        nodes_written,
        nodes_total,
        nodes_embedded,
        millis: started.elapsed().as_millis() as u64,
    };
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    index.write_manifest(&Manifest {
        format: MANIFEST_FORMAT,
        source: source.key.clone(),
        embed: embed_spec.clone(),
        created: previous.map(|m| m.created).unwrap_or_else(|| now.clone()),
        updated: now,
        last_ingest: summary.clone(),
    })?;
    Ok(summary)
}
