//! The traits a store implements to hold durable indexes: where builds live
//! ([`IndexLocation`]), one build ([`IndexBuild`]) and its writer ([`BuildTransaction`]).

use super::dir::IndexDir;
use super::kv::DynKv;
use crate::embeddings::{Embedding, EmbeddingCacheStore};
use crate::error::Result;
use crate::indices::VectorStoreIndex;
use crate::retrievers::Retriever;
use crate::schema::Node;
use crate::storage::StorageContext;
use crate::storage::docstore::DocStore;
use crate::storage::kvstore::SimpleKVStore;
use crate::vector_stores::{MetadataFilters, SimpleVectorStore};
use async_trait::async_trait;
use serde::Serialize;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What keeps a second writer of a source out until the first is done;
/// released when dropped.
pub struct WriterGuard {
    _held: Box<dyn Any + Send + Sync>,
}

impl WriterGuard {
    /// Holds `lock` (a locked file, a database lock...) until dropped.
    pub fn new(lock: impl Any + Send + Sync) -> Self {
        Self {
            _held: Box::new(lock),
        }
    }
}

impl fmt::Debug for WriterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WriterGuard")
    }
}

/// What a sync asks of [`IndexLocation::open_build`].
#[derive(Clone, Copy, Debug)]
pub struct BuildRequest<'a> {
    /// The settings' [`fingerprint`](super::BuildSettings::fingerprint).
    pub fingerprint: &'a str,
    /// A build of its own, never live before its commit, whatever the live
    /// build's settings (an import).
    pub import: bool,
    /// Fail at once where another writer holds the store.
    pub no_wait: bool,
    /// The embedding model, asked for its vectors' length only when a store
    /// must size a new build; `embed_dim` instead when given.
    pub embed: Option<&'a Arc<dyn Embedding>>,
    /// The vectors' length, when known.
    pub embed_dim: Option<usize>,
}

/// Where a build lives and its size, as `status` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StoreInfo {
    /// `sqlite`, `postgres` or `qdrant`.
    pub kind: &'static str,
    /// The SQLite file, or the server and tables.
    pub path: String,
    /// Bytes the build takes where it lives.
    pub size_bytes: u64,
    /// Qdrant: the build's points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points: Option<u64>,
    /// Embedded: how vector queries are answered (an approximate index and
    /// its size, or an exact scan), in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_index: Option<String>,
}

/// A build as LlamaIndex's in-memory stores: docstore and index store
/// collections copied value for value, and the vectors.
pub type SimpleStores = (
    Arc<SimpleKVStore>,
    Arc<SimpleKVStore>,
    Arc<SimpleVectorStore>,
);

/// Where durable indexes live, one per source key: SQLite files under a
/// folder, PostgreSQL tables, Qdrant collections. Every method is called for
/// one source's [`IndexDir`] (the local folder every store has) and key.
#[async_trait]
pub trait IndexLocation: Send + Sync + fmt::Debug {
    /// `sqlite`, `postgres` or `qdrant`.
    fn kind(&self) -> &'static str;
    /// For messages: the server, user and database, never a password.
    fn label(&self) -> String;
    /// Takes the source's writer lock, waiting (calling `on_wait` once when
    /// it must) or with `no_wait` failing with
    /// [`IndexError::WriterBusy`](super::IndexError::WriterBusy). Default:
    /// the lock file of the source's local folder, which keeps apart the
    /// writers of one machine only (as for the embedded store and Qdrant,
    /// whose writers of one source must run on one machine). A store that
    /// writers on several machines share overrides it with a lock of its
    /// own, as PostgreSQL takes an advisory lock in the database.
    async fn lock_writer(
        &self,
        dir: &IndexDir,
        key: &str,
        no_wait: bool,
        on_wait: &(dyn Fn() + Send + Sync),
    ) -> Result<WriterGuard> {
        let _ = key;
        Ok(WriterGuard::new(dir.lock_file(no_wait, on_wait).await?))
    }
    /// The live build, `None` if nothing was synced yet. With
    /// `rebuild_missing`, a live build whose data vanished is `None` (a
    /// sync rebuilds it), else [`IndexError::Damaged`](super::IndexError::Damaged).
    async fn open_live(
        &self,
        dir: &IndexDir,
        key: &str,
        no_wait: bool,
        rebuild_missing: bool,
    ) -> Result<Option<Arc<dyn IndexBuild>>>;
    /// The build with the requested settings: `live` when it has them, else
    /// a new, empty one beside it. Call it holding the writer lock.
    async fn open_build(
        &self,
        dir: &IndexDir,
        key: &str,
        live: Option<Arc<dyn IndexBuild>>,
        request: BuildRequest<'_>,
    ) -> Result<Arc<dyn IndexBuild>>;
    /// Drops the source's builds other than `keep` (replaced builds kept for
    /// queries still reading them, leftovers of failed builds); returns the
    /// builds it could not drop yet, each with why. Call it holding the writer lock.
    async fn collect_garbage(
        &self,
        dir: &IndexDir,
        key: &str,
        keep: Option<&dyn IndexBuild>,
    ) -> Result<Vec<(String, String)>>;
    /// Forgets the source's live build and drops its builds (the local
    /// folder is removed by the caller). Call it holding the writer lock.
    async fn clear(&self, dir: &IndexDir, key: &str) -> Result<Vec<(String, String)>>;
    /// Where the vectors of texts already embedded are kept for this
    /// source (`None`: they are not kept).
    async fn embedding_cache(&self, dir: &IndexDir)
    -> Result<Option<Arc<dyn EmbeddingCacheStore>>>;
}

/// One build of a source's index, reading its last commit.
#[async_trait]
pub trait IndexBuild: Send + Sync + fmt::Debug {
    /// The build's name in its store (a file, tables, collections).
    fn name(&self) -> String;
    /// The build's key-value collections (the manifest, the files seen).
    fn kv(&self) -> Arc<dyn DynKv>;
    /// The stored documents and nodes.
    fn docstore(&self) -> Arc<dyn DocStore>;
    /// What keyword retrieval is in this store: `bm25`, `fulltext` or `sparse`.
    fn keyword_kind(&self) -> &'static str;
    /// Keyword retrieval of the `top_k` best nodes matching `filters`.
    fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>>;
    /// The build's vectors as an index embedding queries with `embed`, the
    /// model the vectors were made with.
    async fn vector_index(&self, embed: Arc<dyn Embedding>) -> Result<VectorStoreIndex>;
    /// Whether the store fuses keyword and dense search itself.
    fn fuses_hybrid(&self) -> bool {
        false
    }
    /// The store's own format version, where it has one.
    fn schema_version(&self) -> Result<Option<i64>> {
        Ok(None)
    }
    /// Where the build lives and its size there.
    async fn info(&self, dir: &IndexDir) -> Result<StoreInfo>;
    /// The build as LlamaIndex's in-memory stores (for export).
    async fn to_simple(
        &self,
        doc_collections: &[String],
        index_collections: &[String],
    ) -> Result<SimpleStores>;
    /// Starts the sync's transaction, calling `on_wait` once when another
    /// writer makes it wait.
    async fn begin(&self, on_wait: &(dyn Fn() + Send + Sync)) -> Result<Box<dyn BuildTransaction>>;
    /// For the store's own downcasts.
    fn as_any(&self) -> &dyn Any;
}

/// A sync's transaction on a build: nothing of it is seen until
/// [`commit`](Self::commit), which also makes the build live.
#[async_trait]
pub trait BuildTransaction: Send + Sync + fmt::Debug {
    /// The stores as the transaction sees them.
    fn storage_context(&self) -> StorageContext;
    /// The build's key-value collections, in the transaction.
    fn kv(&self) -> Arc<dyn DynKv>;
    /// Whether nodes written without embeddings also go to the vector store
    /// (where the store's keyword search reads the vector table or points).
    fn text_rows(&self) -> bool {
        false
    }
    /// How nodes without embeddings are written.
    fn node_sink(&self) -> Arc<dyn NodeSink> {
        Arc::new(PlainNodeSink {
            context: self.storage_context(),
            text_rows: self.text_rows(),
        })
    }
    /// Whether the store can hold `document` (`Err` with why not): one it
    /// cannot fails its file, as a read error would, instead of the sync.
    fn check_document(&self, _document: &Node) -> std::result::Result<(), String> {
        Ok(())
    }
    /// Folds the store's keyword index once the nodes are written.
    fn finish_keyword_index(&self) -> Result<()> {
        Ok(())
    }
    /// Commits everything written (the manifest included) and makes the
    /// build live; the build it replaces goes now or at the next sync.
    async fn commit(self: Box<Self>) -> Result<()>;
}

/// Writes nodes without embeddings, in two steps: [`prepare`](Self::prepare)
/// (CPU work, on any thread) and [`PreparedNodes::write`] (the store's writes).
pub trait NodeSink: Send + Sync + fmt::Debug {
    /// Makes `nodes` ready to write (encoded, where the store encodes).
    fn prepare(&self, nodes: Vec<Node>) -> Result<Box<dyn PreparedNodes>>;
}

/// A batch of nodes ready to write.
#[async_trait]
pub trait PreparedNodes: Send {
    /// How many nodes.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes them (and their text rows) to the transaction.
    async fn write(self: Box<Self>) -> Result<()>;
}

/// The [`NodeSink`] of any store: nodes to the docstore and, with
/// `text_rows`, to the vector store.
#[derive(Debug, Clone)]
pub struct PlainNodeSink {
    /// The transaction's stores.
    pub context: StorageContext,
    /// See [`BuildTransaction::text_rows`].
    pub text_rows: bool,
}

struct PlainNodes {
    sink: PlainNodeSink,
    nodes: Vec<Node>,
}

impl NodeSink for PlainNodeSink {
    fn prepare(&self, nodes: Vec<Node>) -> Result<Box<dyn PreparedNodes>> {
        Ok(Box::new(PlainNodes {
            sink: self.clone(),
            nodes,
        }))
    }
}

#[async_trait]
impl PreparedNodes for PlainNodes {
    fn len(&self) -> usize {
        self.nodes.len()
    }

    async fn write(self: Box<Self>) -> Result<()> {
        let context = &self.sink.context;
        context
            .docstore
            .add_documents(&self.nodes, true, true)
            .await?;
        if self.sink.text_rows {
            context.vector_store()?.add(&self.nodes).await?;
        }
        Ok(())
    }
}

/// The length of `embed`'s vectors, for a store that sizes its vector
/// column or collection: as the model says, else from one query; 1 without
/// a model (no vectors are stored).
pub async fn probe_dim(embed: Option<&Arc<dyn Embedding>>) -> Result<usize> {
    match embed {
        // A model that knows its length is not called.
        Some(e) => match e.dimensions() {
            Some(n) => Ok(n.max(1)),
            None => Ok(e.embed_query("ragloom").await?.len().max(1)),
        },
        None => Ok(1),
    }
}

impl BuildRequest<'_> {
    /// The vectors' length: given, else probed from the model.
    pub async fn dim(&self) -> Result<usize> {
        match self.embed_dim {
            Some(d) => Ok(d.max(1)),
            None => probe_dim(self.embed).await,
        }
    }
}

/// What every build name of the source `key` starts with in a shared store
/// (PostgreSQL tables, Qdrant collections): `rl_` and 48 bits of the key's hash.
pub fn build_prefix(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(key.as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("rl_{hash}_")
}

/// A suffix that makes an imported build's name its own (`_i` and the time
/// in base 36, which keeps names within PostgreSQL's identifiers).
pub fn import_suffix() -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    format!("_i{}", String::from_utf8_lossy(&out))
}

/// Keyword retrieval a vector store does itself (PostgreSQL's full text,
/// Qdrant's sparse vectors): `mode` is `TextSearch` or `Sparse`, which embed
/// nothing.
pub fn store_keyword_retriever(
    vectors: Arc<dyn crate::vector_stores::VectorStore>,
    mode: crate::vector_stores::VectorStoreQueryMode,
    top_k: usize,
    filters: Option<MetadataFilters>,
) -> Result<Arc<dyn Retriever>> {
    let index = VectorStoreIndex::from_vector_store(vectors, Arc::new(NoEmbedding))?;
    let mut r = index
        .as_retriever()
        .vector_store_query_mode(mode)
        .similarity_top_k(top_k);
    if let Some(f) = filters {
        r = r.filters(f);
    }
    Ok(Arc::new(r))
}

/// The model of a retriever that searches text: asked for a vector, it
/// says so instead of making one up.
#[derive(Debug)]
struct NoEmbedding;

#[async_trait]
impl Embedding for NoEmbedding {
    fn model_name(&self) -> &str {
        "none"
    }

    fn dimensions(&self) -> Option<usize> {
        None
    }

    async fn embed_query(&self, _query: &str) -> Result<Vec<f32>> {
        Err(crate::Error::Unsupported(
            "keyword retrieval embeds nothing: this index has no embedding model".into(),
        ))
    }

    async fn embed_texts(&self, _texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Err(crate::Error::Unsupported(
            "keyword retrieval embeds nothing: this index has no embedding model".into(),
        ))
    }
}
