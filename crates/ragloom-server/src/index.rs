//! What the server serves: [`ServedIndex`], one named index the routes ask
//! for a current [`IndexView`] per request, and its optional uploads.

use crate::error::ServeError;
use async_trait::async_trait;
use ragloom::Llm;
use ragloom::indices::VectorStoreIndex;
use ragloom::retrievers::Retriever;
use ragloom::storage::DocStore;
use ragloom::vector_stores::MetadataFilters;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use utoipa::ToSchema;

/// Makes retrievers of an index for one request: its `top_k`, its filters.
#[async_trait]
pub trait RetrieverFactory: Send + Sync + fmt::Debug {
    /// A retriever of the `top_k` best nodes among those matching `filters`.
    async fn retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>, ServeError>;
}

/// An index as it is at one moment: what a request reads. A request keeps
/// the view it started with, so an ingest that lands meanwhile never mixes
/// into one answer.
#[derive(Clone, Debug)]
pub struct IndexView {
    /// How it retrieves, as clients are told: `bm25`, `vector`, `hybrid`...
    pub retrieval: String,
    /// Makes the retriever of each request (its `top_k` and filters).
    pub retrievers: Arc<dyn RetrieverFactory>,
    /// The LLM answers are generated with; `None`: answers are the passages.
    pub llm: Option<Arc<dyn Llm>>,
    /// The stored documents and nodes (document lists, passages by id).
    pub docstore: Arc<dyn DocStore>,
    /// The folder file paths are shown relative to.
    pub base: Option<PathBuf>,
    /// The folder uploads are saved in; files there show as `uploads/NAME`.
    pub uploads_dir: Option<PathBuf>,
}

impl IndexView {
    /// `path` (a node's `file_path`) as clients see it.
    pub fn display_path(&self, path: &str) -> String {
        let p = Path::new(path);
        if let Some(rel) = self
            .uploads_dir
            .as_ref()
            .and_then(|d| p.strip_prefix(d).ok())
        {
            return format!("uploads/{}", rel.display());
        }
        match self.base.as_ref().and_then(|b| p.strip_prefix(b).ok()) {
            Some(rel) => rel.display().to_string(),
            None => path.to_string(),
        }
    }

    /// Whether `path` is a file uploaded to the server.
    pub fn is_upload(&self, path: &str) -> bool {
        self.uploads_dir
            .as_ref()
            .is_some_and(|d| Path::new(path).starts_with(d))
    }

    /// The documents of the index, by file then id.
    pub async fn documents(&self) -> Result<Vec<DocumentInfo>, ServeError> {
        let refs = self.docstore.get_all_ref_doc_info().await?;
        let mut docs: Vec<DocumentInfo> = refs
            .into_iter()
            .map(|(id, info)| {
                let path = crate::passage::file_path(&info.metadata);
                DocumentInfo {
                    file: self.display_path(path),
                    uploaded: self.is_upload(path),
                    nodes: info.node_ids.len(),
                    id,
                }
            })
            .collect();
        docs.sort_by(|a, b| a.file.cmp(&b.file).then_with(|| a.id.cmp(&b.id)));
        Ok(docs)
    }
}

/// One document of an index.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct DocumentInfo {
    /// The document id (LlamaIndex's `ref_doc_id`).
    pub id: String,
    /// Its file, relative to the ingested folder (`uploads/NAME` for uploads).
    pub file: String,
    /// How many nodes it was split into.
    pub nodes: usize,
    /// Whether it was uploaded to the server (only those can be deleted there).
    pub uploaded: bool,
}

/// Where uploaded files go, and the ingest that takes them in.
#[async_trait]
pub trait Uploads: Send + Sync + fmt::Debug {
    /// The folder uploads are saved in: one of the index's sources, so an
    /// ingest keeps them.
    fn dir(&self) -> &Path;
    /// Ingests the index's sources (the uploads folder among them). The
    /// server runs one at a time per index; the result is the job's summary.
    async fn ingest(&self) -> Result<serde_json::Value, ServeError>;
}

/// One index the server serves.
#[async_trait]
pub trait ServedIndex: Send + Sync + fmt::Debug {
    /// Its name: the model id of the OpenAI API, the `index` of REST requests.
    fn name(&self) -> &str;
    /// The index as it is now. Called per request: an implementation that
    /// reopens its store notices ingests made by other processes.
    async fn view(&self) -> Result<Arc<IndexView>, ServeError>;
    /// Facts for `/v1/status` (any JSON object).
    async fn status(&self) -> Result<serde_json::Value, ServeError>;
    /// Uploads, when the index takes them.
    fn uploads(&self) -> Option<Arc<dyn Uploads>> {
        None
    }
}

/// Serves a [`VectorStoreIndex`] of your program, with an optional LLM.
#[derive(Debug)]
pub struct VectorIndexService {
    name: String,
    view: Arc<IndexView>,
}

#[derive(Debug)]
struct VectorRetrievers(VectorStoreIndex);

#[async_trait]
impl RetrieverFactory for VectorRetrievers {
    async fn retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>, ServeError> {
        let mut r = self.0.as_retriever().similarity_top_k(top_k);
        if let Some(f) = filters {
            r = r.filters(f);
        }
        Ok(Arc::new(r))
    }
}

impl VectorIndexService {
    /// Serves `index` as `name`; without an LLM, answers are the passages.
    pub fn new(
        name: impl Into<String>,
        index: VectorStoreIndex,
        llm: Option<Arc<dyn Llm>>,
    ) -> Self {
        let docstore = index.storage_context().docstore.clone();
        Self {
            name: name.into(),
            view: Arc::new(IndexView {
                retrieval: "vector".into(),
                retrievers: Arc::new(VectorRetrievers(index)),
                llm,
                docstore,
                base: None,
                uploads_dir: None,
            }),
        }
    }

    /// Shows file paths relative to `base`.
    pub fn base(mut self, base: impl Into<PathBuf>) -> Self {
        Arc::make_mut(&mut self.view).base = Some(base.into());
        self
    }
}

#[async_trait]
impl ServedIndex for VectorIndexService {
    fn name(&self) -> &str {
        &self.name
    }

    async fn view(&self) -> Result<Arc<IndexView>, ServeError> {
        Ok(self.view.clone())
    }

    async fn status(&self) -> Result<serde_json::Value, ServeError> {
        let refs = self.view.docstore.get_all_ref_doc_info().await?;
        Ok(serde_json::json!({
            "documents": refs.len(),
            "nodes": refs.values().map(|r| r.node_ids.len()).sum::<usize>(),
            "retrieval": self.view.retrieval,
            "llm": self.view.llm.as_ref().map(|l| l.metadata().model_name),
        }))
    }
}
