//! `ragloom ingest`: read the source, run the ingestion pipeline against its
//! stored state, and write back only what changed.

use crate::error::CliError;
use crate::source::{Source, SourceKind};
use crate::store::{IndexDir, IngestSummary, MANIFEST_FORMAT, Manifest};
use crate::ui::Ui;
use async_trait::async_trait;
use ragloom::ingestion::{DocstoreStrategy, IngestionPipeline};
use ragloom::readers::SimpleDirectoryReader;
use ragloom::storage::docstore::{DocStore, SimpleDocumentStore};
use ragloom::vector_stores::{
    MetadataFilters, SimpleVectorStore, VectorStore, VectorStoreQuery, VectorStoreQueryResult,
};
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

/// The index's stores seen by the pipeline as one vector store, so the
/// pipeline's own upserts and deletions reach the text of the nodes too.
///
/// Without a vector store LlamaIndex's pipeline (and ragloom's) falls back to
/// `DuplicatesOnly`, which would skip a file whose content another file
/// already has; with this one it keeps `UpsertsAndDelete`. The pipeline hands
/// over embedded nodes only, so without an embedding model the caller adds
/// the text nodes itself.
#[derive(Debug)]
struct IndexStores {
    nodes: Arc<SimpleDocumentStore>,
    vectors: Arc<SimpleVectorStore>,
}

#[async_trait]
impl VectorStore for IndexStores {
    fn stores_text(&self) -> bool {
        true
    }

    async fn add(&self, nodes: &[Node]) -> ragloom::Result<Vec<String>> {
        let ids = self.vectors.add(nodes).await?;
        add_text(&self.nodes, nodes).await?;
        Ok(ids)
    }

    async fn delete(&self, ref_doc_id: &str) -> ragloom::Result<()> {
        self.nodes.try_delete_ref_doc(ref_doc_id)?;
        self.vectors.delete(ref_doc_id).await
    }

    async fn delete_nodes(
        &self,
        node_ids: &[String],
        filters: Option<&MetadataFilters>,
    ) -> ragloom::Result<()> {
        for id in node_ids {
            self.nodes.try_delete_document(id)?;
        }
        self.vectors.delete_nodes(node_ids, filters).await
    }

    async fn query(&self, _query: &VectorStoreQuery) -> ragloom::Result<VectorStoreQueryResult> {
        Err(ragloom::Error::Unsupported(
            "the ingest stores are written, not queried".into(),
        ))
    }

    async fn clear(&self) -> ragloom::Result<()> {
        for id in self.nodes.get_all_ref_doc_info().await?.into_keys() {
            self.nodes.try_delete_ref_doc(&id)?;
        }
        self.vectors.clear().await
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Adds `nodes` to the node store without their vectors (those live in the vector store).
async fn add_text(store: &SimpleDocumentStore, nodes: &[Node]) -> ragloom::Result<()> {
    let nodes: Vec<Node> = nodes
        .iter()
        .map(|n| {
            let mut n = n.clone();
            n.embedding = None;
            n
        })
        .collect();
    store.add_documents(&nodes, true, true).await
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

    let stores = Arc::new(IndexStores {
        nodes: Arc::new(open_nodes(index)?),
        vectors: Arc::new(open_vectors(index)?),
    });
    let mut pipeline = IngestionPipeline::new(vec![Arc::new(SentenceSplitter::new())])
        .docstore(Arc::new(SimpleDocumentStore::new()))
        .vector_store(stores.clone())
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete)
        .num_workers(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .show_progress(ui.progress());
    if let Some(e) = &embed {
        pipeline = pipeline.embedding(e.clone());
    }
    pipeline.load_if_present(index.pipeline_dir()).await?;

    // Stores change only after every transformation succeeded: if splitting
    // or embedding fails, nothing stored changes.
    let out = pipeline.run_with_stats(documents).await?;
    if embed.is_none() {
        add_text(&stores.nodes, &out.nodes).await?;
    }
    let nodes_written = out.nodes.len();
    let nodes_embedded = out.nodes.iter().filter(|n| n.embedding.is_some()).count();
    let nodes_total: usize = stores
        .nodes
        .get_all_ref_doc_info()
        .await?
        .values()
        .map(|r| r.node_ids.len())
        .sum();

    pipeline.persist(index.pipeline_dir()).await?;
    stores.nodes.persist(&index.nodes_path()).await?;
    if embed.is_some() {
        stores.vectors.persist(&index.vectors_path()).await?;
    }

    let summary = IngestSummary {
        files,
        documents: out.stats.documents,
        unchanged: out.stats.skipped,
        ingested: out.stats.transformed,
        replaced: out.stats.replaced,
        deleted: out.stats.deleted,
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
