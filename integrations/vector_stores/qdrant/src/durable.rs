//! Durable indexes in Qdrant: a build is two collections, its nodes (dense
//! and BM25 sparse vectors) and its key-value points, written by generation
//! and made live by a commit marker (see [`crate::generation`]). Qdrant has
//! no locks: the writers of one source take a lock file on this machine,
//! and a commit that finds another writer's commit publishes nothing.

use crate::{CommitMarkers, Generation, QdrantKv, QdrantVectorStore, admin};
use async_trait::async_trait;
use ragloom_core::durable::{
    BuildRequest, BuildTransaction, DynKv, IndexBuild, IndexDir, IndexError, IndexLocation,
    SimpleStores, StoreInfo, build_prefix, check_manifest_source, copy_collections, drop_builds,
    embedded_vectors, live_entry, live_if_named, own_build_name, store_keyword_retriever,
};
use ragloom_core::embeddings::{Embedding, EmbeddingCacheStore};
use ragloom_core::error::Result;
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::retrievers::Retriever;
use ragloom_core::storage::StorageContext;
use ragloom_core::storage::docstore::{DocStore, KvDocumentStore};
use ragloom_core::storage::index_store::KvIndexStore;
use ragloom_core::vector_stores::{
    DEFAULT_VECTOR_STORE, MetadataFilters, VectorStore, VectorStoreQueryMode,
};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// The collection of commit markers: one per source, naming its live build
/// and that build's committed generation.
pub(crate) const MARKERS: &str = "ragloom_indexes";

/// Points per upsert request: bigger than LlamaIndex's 64, as one sync
/// writes many.
const BATCH: usize = 256;

/// Opens the embedding cache of a source's local folder.
pub type LocalCache = Arc<dyn Fn(&IndexDir) -> Result<Arc<dyn EmbeddingCacheStore>> + Send + Sync>;

/// Durable indexes on a Qdrant server.
#[derive(Clone)]
pub struct QdrantLocation {
    url: String,
    prefix: String,
    api_key: Option<String>,
    cache: Option<LocalCache>,
}

impl fmt::Debug for QdrantLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl QdrantLocation {
    /// The server at `url` (its gRPC address, `http://host:6334`); `prefix`
    /// starts every collection name (empty, or ending in `_`).
    pub fn new(url: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: prefix.into(),
            api_key: None,
            cache: None,
        }
    }

    /// The API key (Qdrant's own clients read `QDRANT_API_KEY`).
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key;
        self
    }

    /// Where vectors already made are kept, on this machine (e.g. a SQLite
    /// file of the source's folder); without it they are not cached.
    pub fn embedding_cache(mut self, open: LocalCache) -> Self {
        self.cache = Some(open);
        self
    }

    fn markers(&self) -> Result<CommitMarkers> {
        CommitMarkers::remote(
            &self.url,
            self.api_key.as_deref(),
            &format!("{}{MARKERS}", self.prefix),
        )
    }

    /// This source's commit marker: its live build, vectors' length and generation.
    async fn entry(&self, key: &str) -> Result<Option<(String, usize, u64)>> {
        let Some(v) = self.markers()?.get(key).await? else {
            return Ok(None);
        };
        let (name, dim) = live_entry(&v, &format!("the commit marker of {key}"))?;
        let generation = v.get("generation").and_then(|g| g.as_u64()).unwrap_or(0);
        Ok(Some((name, dim, generation)))
    }

    fn vector_store(&self, name: &str, g: Generation) -> Result<QdrantVectorStore> {
        let mut b = QdrantVectorStore::remote(&self.url)
            .collection_name(name)
            .enable_hybrid(true)
            .generation(g)
            .batch_size(BATCH);
        if let Some(key) = &self.api_key {
            b = b.api_key(key.clone());
        }
        b.build()
    }

    async fn kv(&self, name: &str, g: Generation) -> Result<QdrantKv> {
        QdrantKv::remote(&self.url, self.api_key.as_deref(), &format!("{name}_kv"), g).await
    }

    async fn open(
        &self,
        key: &str,
        name: &str,
        embed_dim: usize,
        committed: u64,
    ) -> Result<QdrantBuild> {
        let g = Generation::read(committed);
        Ok(QdrantBuild {
            location: self.clone(),
            key: key.to_string(),
            name: name.to_string(),
            embed_dim,
            committed,
            kv: self.kv(name, g).await?,
            vectors: Arc::new(self.vector_store(name, g)?),
        })
    }

    async fn drop_build(&self, name: &str) -> Result<()> {
        let key = self.api_key.as_deref();
        admin::drop_collection(&self.url, key, name).await?;
        admin::drop_collection(&self.url, key, &format!("{name}_kv")).await
    }

    async fn drop_others(&self, key: &str, keep: Option<&str>) -> Result<Vec<(String, String)>> {
        let prefix = format!("{}{}", self.prefix, build_prefix(key));
        let names = admin::collection_names(&self.url, self.api_key.as_deref(), &prefix).await?;
        let builds: std::collections::BTreeSet<String> = names
            .iter()
            .map(|n| n.strip_suffix("_kv").unwrap_or(n).to_string())
            .collect();
        Ok(drop_builds(
            builds,
            keep,
            |name| async move { self.drop_build(&name).await },
        )
        .await)
    }
}

#[async_trait]
impl IndexLocation for QdrantLocation {
    fn kind(&self) -> &'static str {
        "qdrant"
    }

    fn label(&self) -> String {
        let base =
            self.url
                .replacen("https://", "qdrants://", 1)
                .replacen("http://", "qdrant://", 1);
        if self.prefix.is_empty() {
            base
        } else {
            format!("{base}?prefix={}", self.prefix.trim_end_matches('_'))
        }
    }

    async fn open_live(
        &self,
        _dir: &IndexDir,
        key: &str,
        _no_wait: bool,
        _rebuild_missing: bool,
    ) -> Result<Option<Arc<dyn IndexBuild>>> {
        let Some((name, dim, generation)) = self.entry(key).await? else {
            return Ok(None);
        };
        let build = self.open(key, &name, dim, generation).await?;
        check_manifest_source(&build.kv, key, &format!("the collections of {name}"), "")?;
        Ok(Some(Arc::new(build)))
    }

    async fn open_build(
        &self,
        _dir: &IndexDir,
        key: &str,
        live: Option<Arc<dyn IndexBuild>>,
        request: BuildRequest<'_>,
    ) -> Result<Arc<dyn IndexBuild>> {
        let name = format!("{}{}", self.prefix, request.build_name(key));
        if let Some(live) = live_if_named::<QdrantBuild>(live, &name) {
            return Ok(live);
        }
        let dim = request.dim().await?;
        // A new build starts at generation 0, empty: collections a failed or
        // replaced build of these settings left go first.
        self.drop_build(&name).await?;
        Ok(Arc::new(self.open(key, &name, dim, 0).await?))
    }

    async fn collect_garbage(
        &self,
        _dir: &IndexDir,
        key: &str,
        keep: Option<&dyn IndexBuild>,
    ) -> Result<Vec<(String, String)>> {
        let keep = own_build_name::<QdrantBuild>(keep);
        self.drop_others(key, keep.as_deref()).await
    }

    async fn clear(&self, _dir: &IndexDir, key: &str) -> Result<Vec<(String, String)>> {
        self.markers()?.remove(key).await?;
        self.drop_others(key, None).await
    }

    async fn embedding_cache(
        &self,
        dir: &IndexDir,
    ) -> Result<Option<Arc<dyn EmbeddingCacheStore>>> {
        self.cache.as_ref().map(|open| open(dir)).transpose()
    }
}

/// A Qdrant build read at its committed generation.
#[derive(Clone, Debug)]
pub struct QdrantBuild {
    location: QdrantLocation,
    key: String,
    name: String,
    embed_dim: usize,
    committed: u64,
    kv: QdrantKv,
    vectors: Arc<QdrantVectorStore>,
}

impl QdrantBuild {
    /// Points in the build's two collections.
    pub async fn points(&self) -> Result<u64> {
        let l = &self.location;
        let key = l.api_key.as_deref();
        Ok(admin::count_points(&l.url, key, &self.name).await?
            + admin::count_points(&l.url, key, &format!("{}_kv", self.name)).await?)
    }
}

#[async_trait]
impl IndexBuild for QdrantBuild {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        Arc::new(self.kv.clone())
    }

    fn docstore(&self) -> Arc<dyn DocStore> {
        Arc::new(KvDocumentStore::from_backend(
            Arc::new(self.kv.clone()),
            None,
        ))
    }

    fn keyword_kind(&self) -> &'static str {
        "sparse"
    }

    fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>> {
        let vectors: Arc<dyn VectorStore> = self.vectors.clone();
        store_keyword_retriever(vectors, VectorStoreQueryMode::Sparse, top_k, filters)
    }

    async fn vector_index(&self, embed: Arc<dyn Embedding>) -> Result<VectorStoreIndex> {
        VectorStoreIndex::from_vector_store(self.vectors.clone(), embed)
    }

    fn fuses_hybrid(&self) -> bool {
        // Both searches and their reciprocal rank fusion in one query.
        true
    }

    async fn info(&self, dir: &IndexDir) -> Result<StoreInfo> {
        Ok(StoreInfo {
            kind: "qdrant",
            path: format!(
                "{} collections {name}, {name}_kv (generation {})",
                self.location.label(),
                self.committed,
                name = self.name
            ),
            // Qdrant reports no sizes: what stays on this machine (the embedding cache).
            size_bytes: dir.size_bytes(),
            points: Some(self.points().await?),
            vector_index: None,
        })
    }

    async fn to_simple(
        &self,
        doc_collections: &[String],
        index_collections: &[String],
    ) -> Result<SimpleStores> {
        let nodes = self.vectors.get_nodes_with_embeddings(usize::MAX).await?;
        Ok((
            copy_collections(&self.kv, doc_collections)?,
            copy_collections(&self.kv, index_collections)?,
            embedded_vectors(nodes).await?,
        ))
    }

    async fn begin(
        &self,
        _on_wait: &(dyn Fn() + Send + Sync),
    ) -> Result<Box<dyn BuildTransaction>> {
        // Starts writing the next generation, first undoing what an earlier
        // writer that died left behind.
        let l = &self.location;
        let g = Generation::write(self.committed);
        let vectors = Arc::new(l.vector_store(&self.name, g)?);
        vectors.recover(&g).await?;
        let kv = l.kv(&self.name, g).await?;
        kv.recover().await?;
        let mut context = StorageContext::from_defaults();
        context.docstore = Arc::new(KvDocumentStore::from_backend(Arc::new(kv.clone()), None));
        context.index_store = Arc::new(KvIndexStore::from_backend(Arc::new(kv.clone()), None));
        context
            .vector_stores
            .insert(DEFAULT_VECTOR_STORE.to_string(), vectors);
        Ok(Box::new(QdrantBuildTransaction {
            build: self.clone(),
            kv,
            context,
            generation: g,
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A build's writer: the next generation, unseen until committed.
#[derive(Debug)]
struct QdrantBuildTransaction {
    build: QdrantBuild,
    kv: QdrantKv,
    context: StorageContext,
    generation: Generation,
}

#[async_trait]
impl BuildTransaction for QdrantBuildTransaction {
    fn storage_context(&self) -> StorageContext {
        self.context.clone()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        Arc::new(self.kv.clone())
    }

    fn text_rows(&self) -> bool {
        // Sparse vectors live in the nodes' points.
        true
    }

    async fn commit(self: Box<Self>) -> Result<()> {
        let this = *self;
        let b = &this.build;
        let l = &b.location;
        this.kv.flush().await?;
        let committed = this.generation.writing()?;
        let value = serde_json::json!({
            "name": b.name,
            "embed_dim": b.embed_dim,
            "generation": committed,
        });
        // The lock file keeps writers of one machine apart; this catches one
        // from elsewhere that committed meanwhile.
        let now = l.entry(&b.key).await?;
        let ours = b.committed;
        let unchanged = match now {
            Some((name, _, generation)) if name == b.name => generation == ours && ours > 0,
            _ => ours == 0,
        };
        if !unchanged {
            return Err(IndexError::Conflict {
                source_key: b.key.clone(),
            }
            .into());
        }
        // The commit: one point, written whole.
        l.markers()?.set(&b.key, &value).await?;
        // Only space: a failure leaves it for the next writer.
        let g = Generation::read(committed);
        let tidy = async {
            l.vector_store(&b.name, g)?.recover(&g).await?;
            l.kv(&b.name, g).await?.recover().await
        };
        if let Err(e) = tidy.await {
            tracing::warn!("left deleted points for the next sync to remove: {e}");
        }
        Ok(())
    }
}
