//! [`DurableIndex`]: one source's index where it lives — synced, opened at
//! its last commit, cleared, or replaced by an imported build.

use super::IndexError;
use super::dir::IndexDir;
use super::fusion::{FusionChoice, HybridFusion};
use super::location::{BuildRequest, BuildTransaction, IndexBuild, IndexLocation, WriterGuard};
use super::manifest::{MANIFEST_FORMAT, Manifest, SyncReport, read_manifest, write_manifest};
use super::settings::{BuildSettings, EmbedModel, no_model};
use super::source::Source;
use super::sync::{SyncEvent, SyncOptions, Target, collect_garbage, sync};
use crate::embeddings::Embedding;
use crate::error::Result;
use crate::indices::VectorStoreIndex;
use crate::retrievers::Retriever;
use crate::storage::docstore::DocStore;
use crate::vector_stores::{MetadataFilters, VectorStoreQueryMode};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One source's durable index: where it lives (an [`IndexLocation`]), the
/// local folder every store keeps (locks, uploads, SQLite files), and the source.
#[derive(Clone, Debug)]
pub struct DurableIndex {
    location: Arc<dyn IndexLocation>,
    dir: IndexDir,
    source: Source,
}

impl DurableIndex {
    /// The index of `source` in `location`, with its local folder under `root`.
    pub fn new(location: Arc<dyn IndexLocation>, root: impl AsRef<Path>, source: Source) -> Self {
        Self {
            dir: IndexDir::for_source(root.as_ref(), &source),
            location,
            source,
        }
    }

    /// What the index is synced from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The source's local folder.
    pub fn dir(&self) -> &IndexDir {
        &self.dir
    }

    /// Where the builds live.
    pub fn location(&self) -> &Arc<dyn IndexLocation> {
        &self.location
    }

    /// Where a server saves files uploaded to this index (part of the source).
    pub fn uploads_dir(&self) -> PathBuf {
        self.dir.uploads_dir()
    }

    fn target(&self) -> Target<'_> {
        Target {
            location: self.location.as_ref(),
            dir: &self.dir,
            source: &self.source,
        }
    }

    /// Brings the index up to date with its source in one transaction,
    /// under the writer lock: reads what changed, refreshes it, deletes what
    /// vanished, keeps what failed to read. Builds beside the live index
    /// when the settings change. A kill at any moment leaves the last commit.
    pub async fn sync(&self, options: &SyncOptions) -> Result<SyncReport> {
        sync(&self.target(), options).await
    }

    /// The last commit, `None` if nothing was synced yet.
    pub async fn open_live(&self) -> Result<Option<LiveIndex>> {
        let Some(build) = self
            .location
            .open_live(&self.dir, &self.source.key, false, false)
            .await?
        else {
            return Ok(None);
        };
        let Some(manifest) = read_manifest(&*build.kv())? else {
            return Ok(None);
        };
        Ok(Some(LiveIndex { build, manifest }))
    }

    /// The last commit, or [`IndexError::NotIngested`].
    pub async fn open(&self) -> Result<LiveIndex> {
        self.open_live().await?.ok_or_else(|| {
            IndexError::NotIngested {
                source_key: self.source.key.clone(),
            }
            .into()
        })
    }

    /// Takes the writer lock (see [`SyncOptions::no_wait`]).
    pub async fn lock_writer(&self, options: &SyncOptions) -> Result<WriterGuard> {
        let on_wait = || options.emit(SyncEvent::WaitingForWriter);
        self.location
            .lock_writer(&self.dir, &self.source.key, options.no_wait, &on_wait)
            .await
    }

    /// Removes the whole index, under the writer lock (waiting for a sync
    /// that runs): every build, and the local folder with its embedding cache.
    pub async fn clear(&self, options: &SyncOptions) -> Result<()> {
        let _writer = self.lock_writer(options).await?;
        for (name, error) in self.location.clear(&self.dir, &self.source.key).await? {
            options.emit(SyncEvent::KeptBuild {
                name: &name,
                error: &error,
            });
        }
        // The lock file lives beside the folder, so removing it keeps the
        // lock held until the end.
        self.dir.clear()
    }

    /// Starts a build of its own with `settings` (an import): nothing reads
    /// it until [`NewBuild::commit`] makes it live. The next sync of the
    /// source rebuilds from the files and replaces it.
    pub async fn new_build(
        &self,
        settings: BuildSettings,
        embed_dim: usize,
        options: &SyncOptions,
    ) -> Result<NewBuild> {
        let writer = self.lock_writer(options).await?;
        let fingerprint = settings.fingerprint();
        let request = BuildRequest {
            fingerprint: &fingerprint,
            import: true,
            no_wait: options.no_wait,
            embed: None,
            embed_dim: Some(embed_dim),
        };
        let build = self
            .location
            .open_build(&self.dir, &self.source.key, None, request)
            .await?;
        let on_wait = || options.emit(SyncEvent::WaitingForWriter);
        let tx = build.begin(&on_wait).await?;
        Ok(NewBuild {
            _writer: writer,
            tx,
            settings,
            source_key: self.source.key.clone(),
        })
    }

    /// Records `fusion` in the manifest of `tuned_on` (the build it was
    /// chosen on), in a transaction of its own under the writer lock:
    /// hybrid retrieval uses it wherever the caller sets no fusion
    /// ([`IndexRetrievers::with_fusion`]). `None` forgets a recorded one. A
    /// build that is no longer live (a rebuild committed meanwhile) is
    /// [`IndexError::Conflict`]: the setting was measured on other chunks.
    pub async fn record_fusion(
        &self,
        tuned_on: &LiveIndex,
        fusion: Option<HybridFusion>,
        options: &SyncOptions,
    ) -> Result<()> {
        let _writer = self.lock_writer(options).await?;
        let live = self.open().await?;
        if live.build.name() != tuned_on.build.name() {
            return Err(IndexError::Conflict {
                source_key: self.source.key.clone(),
            }
            .into());
        }
        let on_wait = || options.emit(SyncEvent::WaitingForWriter);
        let tx = live.build.begin(&on_wait).await?;
        let mut manifest = live.manifest;
        manifest.fusion = fusion;
        write_manifest(&*tx.kv(), &manifest)?;
        tx.commit().await
    }

    /// Drops builds other than the live one (done by every sync).
    pub async fn collect_garbage(&self, options: &SyncOptions) -> Result<()> {
        let _writer = self.lock_writer(options).await?;
        let live = self
            .location
            .open_live(&self.dir, &self.source.key, options.no_wait, true)
            .await?;
        collect_garbage(&self.target(), live.as_deref(), options).await
    }
}

/// A build being written outside a sync (see [`DurableIndex::new_build`]).
#[derive(Debug)]
pub struct NewBuild {
    _writer: WriterGuard,
    tx: Box<dyn BuildTransaction>,
    settings: BuildSettings,
    source_key: String,
}

impl NewBuild {
    /// The transaction to write through.
    pub fn transaction(&self) -> &dyn BuildTransaction {
        self.tx.as_ref()
    }

    /// Records `report` in the manifest, commits, and makes the build live.
    pub async fn commit(self, report: SyncReport) -> Result<()> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            source: self.source_key,
            settings: self.settings,
            created: now.clone(),
            updated: now,
            listed_at_ns: 0,
            last_ingest: report,
            fusion: None,
        };
        write_manifest(&*self.tx.kv(), &manifest)?;
        self.tx.commit().await
    }
}

/// An index as its last commit left it: what queries read. It stays as it
/// is while later syncs commit; open it again to see them.
#[derive(Clone, Debug)]
pub struct LiveIndex {
    build: Arc<dyn IndexBuild>,
    manifest: Manifest,
}

impl LiveIndex {
    /// The build.
    pub fn build(&self) -> &Arc<dyn IndexBuild> {
        &self.build
    }

    /// Its manifest: settings and the last sync's report.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The stored documents and nodes.
    pub fn docstore(&self) -> Arc<dyn DocStore> {
        self.build.docstore()
    }

    /// Keyword retrieval (BM25, full text or sparse vectors, by store).
    pub fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>> {
        self.build.keyword_retriever(top_k, filters)
    }

    /// The vectors as an index embedding queries with `embed`, the model
    /// the index was synced with.
    pub async fn vector_index(&self, embed: Arc<dyn Embedding>) -> Result<VectorStoreIndex> {
        self.build.vector_index(embed).await
    }
}

/// The retrievers of a [`LiveIndex`]: keyword search, fused with dense
/// search when the index was embedded with the model given.
#[derive(Clone, Debug)]
pub struct IndexRetrievers {
    build: Arc<dyn IndexBuild>,
    dense: Option<VectorStoreIndex>,
    fusion: HybridFusion,
    /// `bm25`, `fulltext`, `sparse` (the store's keyword search) or `hybrid`.
    pub retrieval: &'static str,
    /// The index has vectors of another model than the one given: dense
    /// search is off until a sync re-embeds it.
    pub other_model: bool,
}

impl LiveIndex {
    /// Its retrievers, with dense search when `embed` is the model the
    /// index was synced with.
    pub async fn retrievers(&self, embed: Option<&EmbedModel>) -> Result<IndexRetrievers> {
        let mut this = IndexRetrievers {
            build: self.build.clone(),
            dense: None,
            fusion: self.manifest.fusion.unwrap_or_default(),
            retrieval: self.build.keyword_kind(),
            other_model: false,
        };
        let embedded_with = &self.manifest.settings.embed;
        if *embedded_with == no_model() {
            return Ok(this);
        }
        match embed {
            Some(e) if e.identity == *embedded_with => {
                this.dense = Some(self.build.vector_index(e.model.clone()).await?);
                this.retrieval = "hybrid";
            }
            _ => this.other_model = true,
        }
        Ok(this)
    }
}

impl IndexRetrievers {
    /// Fuses keyword and dense results as `fusion` says, laid over the
    /// default: the fusion recorded in the index
    /// ([`DurableIndex::record_fusion`]), else reciprocal rank with equal
    /// weights. A [`HybridFusion`] replaces it whole, a [`FusionChoice`]
    /// the parts it gives, `None` nothing.
    pub fn with_fusion(mut self, fusion: impl Into<FusionChoice>) -> Self {
        self.fusion = fusion.into().over(self.fusion);
        self
    }

    /// The fusion of hybrid retrieval.
    pub fn fusion(&self) -> HybridFusion {
        self.fusion
    }

    /// A retriever of the `top_k` best nodes matching `filters`: keyword
    /// search, fused with dense search as [`with_fusion`](Self::with_fusion)
    /// says (reciprocal rank by default, in the store where it fuses them
    /// itself).
    pub fn retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>> {
        let keyword = self.build.keyword_retriever(top_k, filters.clone())?;
        let Some(index) = &self.dense else {
            return Ok(keyword);
        };
        let mut dense = index.as_retriever().similarity_top_k(top_k);
        if let Some(f) = filters {
            dense = dense.filters(f);
        }
        if self.build.fuses_hybrid() && self.fusion.is_default() {
            return Ok(Arc::new(
                dense.vector_store_query_mode(VectorStoreQueryMode::Hybrid),
            ));
        }
        self.fusion.retriever(Arc::new(dense), keyword, top_k)
    }

    /// Keyword retrieval alone.
    pub fn keyword(&self, top_k: usize) -> Result<Arc<dyn Retriever>> {
        self.build.keyword_retriever(top_k, None)
    }

    /// Dense retrieval alone, when the index has vectors of the model given.
    pub fn vector(&self, top_k: usize) -> Option<Arc<dyn Retriever>> {
        self.dense.as_ref().map(|index| {
            Arc::new(index.as_retriever().similarity_top_k(top_k)) as Arc<dyn Retriever>
        })
    }

    /// The build read.
    pub fn build(&self) -> &Arc<dyn IndexBuild> {
        &self.build
    }
}
