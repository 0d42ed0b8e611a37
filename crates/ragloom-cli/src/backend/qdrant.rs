//! The command line's indexes in Qdrant: a build is two collections, its
//! nodes (dense and BM25 sparse vectors) and its key-value points, written by
//! generation and made live by a commit marker (see `ragloom::qdrant::generation`).

use crate::error::CliError;
use ragloom::qdrant::{CommitMarkers, Generation, QdrantKv, QdrantVectorStore, admin};
use ragloom::storage::StorageContext;
use ragloom::storage::docstore::KvDocumentStore;
use ragloom::storage::index_store::KvIndexStore;
use ragloom::vector_stores::DEFAULT_VECTOR_STORE;
use std::sync::Arc;

/// The collection of commit markers: one per source, naming its live build
/// and that build's committed generation.
pub const MARKERS: &str = "ragloom_indexes";

/// Points per upsert request: bigger than LlamaIndex's 64, as one ingest
/// writes many (one request per batch of the embedding model anyway).
const BATCH: usize = 256;

/// `QDRANT_API_KEY`, as Qdrant's own clients read it.
pub fn api_key() -> Option<String> {
    std::env::var("QDRANT_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty())
}

/// The commit markers of the indexes whose collections start with `prefix`.
pub fn markers(url: &str, prefix: &str) -> Result<CommitMarkers, CliError> {
    Ok(CommitMarkers::remote(
        url,
        api_key().as_deref(),
        &format!("{prefix}{MARKERS}"),
    )?)
}

fn kv_collection(name: &str) -> String {
    format!("{name}_kv")
}

fn vector_store(url: &str, name: &str, g: Generation) -> ragloom::Result<QdrantVectorStore> {
    let mut b = QdrantVectorStore::remote(url)
        .collection_name(name)
        .enable_hybrid(true)
        .generation(g)
        .batch_size(BATCH);
    if let Some(key) = api_key() {
        b = b.api_key(key);
    }
    b.build()
}

/// A build read at its committed generation.
#[derive(Clone, Debug)]
pub struct QdrantBuild {
    pub url: String,
    pub name: String,
    pub embed_dim: usize,
    pub committed: u64,
    pub kv: QdrantKv,
    pub vectors: Arc<QdrantVectorStore>,
}

/// A build's writer: the next generation, unseen until committed.
#[derive(Debug)]
pub struct QdrantTx {
    pub build: QdrantBuild,
    pub kv: QdrantKv,
    pub context: StorageContext,
    pub generation: Generation,
}

impl QdrantBuild {
    pub async fn open(
        url: &str,
        name: &str,
        embed_dim: usize,
        committed: u64,
    ) -> ragloom::Result<Self> {
        let g = Generation::read(committed);
        Ok(Self {
            url: url.to_string(),
            name: name.to_string(),
            embed_dim,
            committed,
            kv: QdrantKv::remote(url, api_key().as_deref(), &kv_collection(name), g).await?,
            vectors: Arc::new(vector_store(url, name, g)?),
        })
    }

    /// Starts writing the next generation, first undoing what an earlier
    /// writer that died left behind.
    pub async fn begin(&self) -> ragloom::Result<QdrantTx> {
        let g = Generation::write(self.committed);
        let vectors = Arc::new(vector_store(&self.url, &self.name, g)?);
        vectors.recover(&g).await?;
        let kv = QdrantKv::remote(
            &self.url,
            api_key().as_deref(),
            &kv_collection(&self.name),
            g,
        )
        .await?;
        kv.recover().await?;
        let mut context = StorageContext::from_defaults();
        context.docstore = Arc::new(KvDocumentStore::from_backend(Arc::new(kv.clone()), None));
        context.index_store = Arc::new(KvIndexStore::from_backend(Arc::new(kv.clone()), None));
        context
            .vector_stores
            .insert(DEFAULT_VECTOR_STORE.to_string(), vectors);
        Ok(QdrantTx {
            build: self.clone(),
            kv,
            context,
            generation: g,
        })
    }

    /// Points in the build's two collections.
    pub async fn points(&self) -> ragloom::Result<u64> {
        let key = api_key();
        Ok(
            admin::count_points(&self.url, key.as_deref(), &self.name).await?
                + admin::count_points(&self.url, key.as_deref(), &kv_collection(&self.name))
                    .await?,
        )
    }

    /// After a commit: removes what the committed generation deleted (only
    /// space; a failure leaves it for the next writer).
    pub async fn tidy(url: &str, name: &str, committed: u64) -> ragloom::Result<()> {
        let g = Generation::read(committed);
        vector_store(url, name, g)?.recover(&g).await?;
        QdrantKv::remote(url, api_key().as_deref(), &kv_collection(name), g)
            .await?
            .recover()
            .await
    }
}

/// The builds (their collections) whose names start with `prefix`.
pub async fn build_names(url: &str, prefix: &str) -> ragloom::Result<Vec<String>> {
    let names = admin::collection_names(url, api_key().as_deref(), prefix).await?;
    let builds: std::collections::BTreeSet<String> = names
        .iter()
        .map(|n| n.strip_suffix("_kv").unwrap_or(n).to_string())
        .collect();
    Ok(builds.into_iter().collect())
}

/// Drops a build's collections.
pub async fn drop_build(url: &str, name: &str) -> ragloom::Result<()> {
    let key = api_key();
    admin::drop_collection(url, key.as_deref(), name).await?;
    admin::drop_collection(url, key.as_deref(), &kv_collection(name)).await
}
