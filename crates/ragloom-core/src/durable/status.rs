//! What a durable index holds, for a status line or a health check: where it
//! lives, its size, documents and nodes, settings, and the last sync.

use super::dir::IndexDir;
use super::index::LiveIndex;
use super::location::StoreInfo;
use super::manifest::Manifest;
use super::settings::no_model;
use crate::Result;
use serde::Serialize;
use std::path::PathBuf;

/// A durable index's state as its last commit left it.
#[derive(Clone, Debug, Serialize)]
pub struct IndexStatus {
    /// The source key.
    pub source: String,
    /// Where the build lives (`kind`, `path`, `size_bytes`, `points`).
    pub store: StoreInfo,
    /// The local folder of the index (lock, pointers).
    pub index_dir: PathBuf,
    /// Bytes the build takes where it lives.
    pub size_bytes: u64,
    /// Source documents held.
    pub documents: usize,
    /// Nodes (chunks) held.
    pub nodes: usize,
    /// The retrieval the index answers with: `bm25`, `fulltext` or `sparse`
    /// alone without an embedding model, else `hybrid`.
    pub retrieval: String,
    /// The embedding model's identity (`no_model()` for keyword-only).
    pub embed: serde_json::Value,
    /// The chunk size, in `chunk_unit`s.
    pub chunk_size: usize,
    /// The overlap between chunks.
    pub chunk_overlap: usize,
    /// What the sizes count (`cl100k tokens`, `embedding-model tokens`).
    pub chunk_unit: String,
    /// The tokenizer chunks were counted with.
    pub chunk_tokenizer: String,
    /// The store's own format version, where it has one.
    pub schema_version: Option<i64>,
    /// When the build was first written (RFC 3339).
    pub created: String,
    /// When the last sync committed (RFC 3339).
    pub updated: String,
    /// The last sync's report.
    pub last_ingest: super::manifest::SyncReport,
    /// The hybrid fusion recorded in the index, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fusion: Option<super::fusion::HybridFusion>,
}

impl IndexStatus {
    /// Whether the index holds vectors (else it answers by keyword alone).
    pub fn is_embedded(&self) -> bool {
        self.embed != no_model()
    }
}

impl LiveIndex {
    /// The index's [`IndexStatus`]; `dir` is its [`IndexDir`].
    pub async fn status(&self, dir: &IndexDir) -> Result<IndexStatus> {
        let build = self.build();
        let manifest: &Manifest = self.manifest();
        let refs = build.docstore().get_all_ref_doc_info().await?;
        let store = build.info(dir).await?;
        let settings = &manifest.settings;
        let embedded = settings.embed != no_model();
        Ok(IndexStatus {
            source: manifest.source.clone(),
            index_dir: dir.dir.clone(),
            size_bytes: store.size_bytes,
            store,
            documents: refs.len(),
            nodes: refs.values().map(|r| r.node_ids.len()).sum(),
            retrieval: if embedded {
                "hybrid"
            } else {
                build.keyword_kind()
            }
            .to_owned(),
            embed: settings.embed.clone(),
            chunk_size: settings.chunk_size,
            chunk_overlap: settings.chunk_overlap,
            chunk_unit: settings.chunk_unit(),
            chunk_tokenizer: settings
                .chunk_tokenizer
                .clone()
                .unwrap_or_else(|| "cl100k".to_owned()),
            schema_version: build.schema_version()?,
            created: manifest.created.clone(),
            updated: manifest.updated.clone(),
            last_ingest: manifest.last_ingest.clone(),
            fusion: manifest.fusion,
        })
    }
}
