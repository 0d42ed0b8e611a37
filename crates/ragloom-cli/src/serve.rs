//! `ragloom serve` and `ragloom mcp`: ingested folders as a service, each an
//! index the server reopens when another process ingests it.

use crate::error::{CliError, exit};
use crate::ingest::{self, IngestOptions};
use crate::ui::Ui;
use async_trait::async_trait;
use ragloom::durable::{DurableIndex, FusionChoice, IndexRetrievers, Manifest, Source};
use ragloom::retrievers::Retriever;
use ragloom::vector_stores::MetadataFilters;
use ragloom::{Llm, ProviderSpec};
use ragloom_server::{IndexView, RetrieverFactory, ServeError, ServedIndex, Uploads};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a served index looks for a newer ingest.
const REFRESH: Duration = Duration::from_secs(1);

/// Background work talks through errors and job summaries, not the terminal.
const QUIET: Ui = Ui {
    json: true,
    verbose: false,
};

/// One ingested source, served.
#[derive(Debug)]
pub(crate) struct CliIndex {
    name: String,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    index: DurableIndex,
    spec: ProviderSpec,
    fusion: FusionChoice,
    llm: Option<Arc<dyn Llm>>,
    uploads_dir: PathBuf,
    /// Whether upload jobs' ingests read links out of the served folder.
    follow_links: bool,
    cache: tokio::sync::Mutex<Option<Cached>>,
}

#[derive(Debug)]
struct Cached {
    view: Arc<IndexView>,
    manifest: Arc<Manifest>,
    checked: Instant,
}

fn serve_error(e: CliError) -> ServeError {
    let text = match &e.hint {
        Some(h) => format!("{} ({h})", e.message),
        None => e.message.clone(),
    };
    match e.source {
        _ if e.code == exit::NO_INPUT => ServeError::NotFound(text),
        // The library's error itself, cause and kind kept.
        Some(source) => ServeError::Ragloom(source),
        None => ServeError::Ragloom(ragloom::Error::Other(text)),
    }
}

#[derive(Debug)]
struct Factory(IndexRetrievers);

#[async_trait]
impl RetrieverFactory for Factory {
    async fn retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>, ServeError> {
        Ok(self.0.retriever(top_k, filters)?)
    }
}

impl CliIndex {
    pub(crate) fn new(
        name: String,
        index: DurableIndex,
        spec: ProviderSpec,
        fusion: FusionChoice,
        llm: Option<Arc<dyn Llm>>,
        follow_links: bool,
    ) -> Self {
        let uploads_dir = index.uploads_dir();
        Self {
            name,
            shared: Arc::new(Shared {
                index,
                spec,
                fusion,
                llm,
                uploads_dir,
                follow_links,
                cache: tokio::sync::Mutex::new(None),
            }),
        }
    }
}

impl Shared {
    /// The current view and manifest: reopened when an ingest committed
    /// since the last look (at most once per [`REFRESH`]).
    async fn current(&self) -> Result<(Arc<IndexView>, Arc<Manifest>), ServeError> {
        let mut cache = self.cache.lock().await;
        if let Some(c) = cache.as_ref().filter(|c| c.checked.elapsed() < REFRESH) {
            return Ok((c.view.clone(), c.manifest.clone()));
        }
        let source = self.index.source();
        let live = self.index.open_live().await?.ok_or_else(|| {
            ServeError::NotFound(format!(
                "nothing is ingested for {}: run `ragloom ingest {}`",
                source.key, source.key
            ))
        })?;
        let manifest = Arc::new(live.manifest().clone());
        if let Some(c) = cache.as_mut().filter(|c| {
            (&c.manifest.updated, c.manifest.fusion) == (&manifest.updated, manifest.fusion)
        }) {
            c.checked = Instant::now();
            return Ok((c.view.clone(), c.manifest.clone()));
        }
        let retrievers = crate::answer::retrievers(&live, &self.spec, self.fusion, &QUIET)
            .await
            .map_err(serve_error)?;
        let view = Arc::new(IndexView {
            retrieval: retrievers.retrieval.to_string(),
            docstore: retrievers.build().docstore(),
            retrievers: Arc::new(Factory(retrievers)),
            llm: self.llm.clone(),
            base: Some(source.base.clone()),
            uploads_dir: Some(self.uploads_dir.clone()),
        });
        tracing::info!(source = %source.key, updated = %manifest.updated, "opened the index");
        *cache = Some(Cached {
            view: view.clone(),
            manifest: manifest.clone(),
            checked: Instant::now(),
        });
        Ok((view, manifest))
    }
}

#[async_trait]
impl ServedIndex for CliIndex {
    fn name(&self) -> &str {
        &self.name
    }

    async fn view(&self) -> Result<Arc<IndexView>, ServeError> {
        Ok(self.shared.current().await?.0)
    }

    async fn status(&self) -> Result<serde_json::Value, ServeError> {
        let (view, m) = self.shared.current().await?;
        let refs = view.docstore.get_all_ref_doc_info().await?;
        Ok(serde_json::json!({
            "source": m.source,
            "documents": refs.len(),
            "nodes": refs.values().map(|r| r.node_ids.len()).sum::<usize>(),
            "retrieval": view.retrieval,
            "embedding": crate::ingest::model_label(&m.settings.embed),
            "llm": match self.shared.spec.llm {
                ragloom::LlmSpec::None => None,
                ref l => Some(l.label()),
            },
            "store": self.shared.index.location().label(),
            "fusion": m.fusion,
            "chunk_size": m.settings.chunk_size,
            "chunk_overlap": m.settings.chunk_overlap,
            "chunk_tokenizer": m.settings.chunk_tokenizer.as_deref().unwrap_or("cl100k"),
            "created": m.created,
            "updated": m.updated,
            "last_ingest": m.last_ingest,
        }))
    }

    fn uploads(&self) -> Option<Arc<dyn Uploads>> {
        Some(Arc::new(CliUploads(self.shared.clone())))
    }
}

/// Uploads land in the index's uploads folder; the ingest is the command
/// line's own (one writer per source, across processes).
#[derive(Debug)]
struct CliUploads(Arc<Shared>);

#[async_trait]
impl Uploads for CliUploads {
    fn dir(&self) -> &Path {
        &self.0.uploads_dir
    }

    async fn ingest(&self) -> Result<serde_json::Value, ServeError> {
        let s = &self.0;
        let summary = ingest::ingest(
            &s.index,
            &s.spec,
            &IngestOptions {
                follow_links: s.follow_links,
                ..IngestOptions::default()
            },
            &QUIET,
        )
        .await
        .map_err(serve_error)?;
        // The next request sees the new commit at once.
        *s.cache.lock().await = None;
        Ok(serde_json::to_value(&summary).map_err(ragloom::Error::from)?)
    }
}

/// Index names from folder names (as the index folders are named), unique.
pub(crate) fn index_name(source: &Source, taken: &[String]) -> String {
    let base = source.readable_name();
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_plain() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let src = Source::resolve(dir.path().to_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
        let first = index_name(&src, &[]);
        assert!(
            first
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.')),
            "{first}"
        );
        assert_eq!(
            index_name(&src, std::slice::from_ref(&first)),
            format!("{first}-2")
        );
    }
}
