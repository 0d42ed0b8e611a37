//! `QdrantVectorStore`: one type over a remote Qdrant (gRPC) or Qdrant's
//! engine embedded in-process, with LlamaIndex's payload layout.

use crate::backend::{Backend, CreateSpec, Hit, Point, Search, Using, VectorNames};
use crate::filters::{self, Cond, Plan};
use crate::generation::Generation;
use crate::sparse::Bm25SparseEncoder;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::{Metadata, Node};
use ragloom_core::vector_stores::utils::{NODE_CONTENT_KEY, NODE_TYPE_KEY};
use ragloom_core::vector_stores::{
    MetadataFilters, VectorStore, VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult,
    delete_selection, metadata_dict_to_node, node_to_metadata_dict,
};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use tokio::sync::Mutex;
use tracing::Instrument;

/// The provider name in [`Error::Provider`].
pub const PROVIDER: &str = "qdrant";
/// The dense vector name LlamaIndex uses in hybrid collections (`text-dense`).
pub const DEFAULT_DENSE_VECTOR_NAME: &str = "text-dense";
/// The sparse vector name LlamaIndex uses in hybrid collections (`text-sparse-new`).
pub const DEFAULT_SPARSE_VECTOR_NAME: &str = "text-sparse-new";
/// Points per upsert request (LlamaIndex's `batch_size`).
pub const DEFAULT_BATCH_SIZE: usize = 64;
/// The payload key holding the source document id that LlamaIndex filters and deletes on.
pub const DOCUMENT_ID_KEY: &str = "doc_id";

/// How Qdrant compares vectors (the collection's `distance`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Distance {
    /// Cosine similarity (LlamaIndex's default); higher is nearer.
    #[default]
    Cosine,
    /// Dot product; higher is nearer.
    Dot,
    /// Euclidean distance; lower is nearer (Qdrant returns the distance as the score).
    Euclid,
    /// Manhattan distance; lower is nearer.
    Manhattan,
}

/// Where the points live.
#[derive(Clone)]
pub(crate) enum Target {
    Remote {
        url: String,
        api_key: Option<String>,
    },
    #[cfg_attr(not(feature = "qdrant-embedded"), allow(dead_code))]
    Embedded { path: PathBuf },
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Remote { url, api_key } => f
                .debug_struct("Remote")
                .field("url", url)
                .field("api_key", &api_key.as_ref().map(|_| "<redacted>"))
                .finish(),
            Target::Embedded { path } => f.debug_struct("Embedded").field("path", path).finish(),
        }
    }
}

/// Settings of a [`QdrantVectorStore`]; [`QdrantVectorStore::remote`] or
/// [`QdrantVectorStore::embedded`] starts one, [`build`](Self::build) ends it.
#[derive(Clone, Debug)]
pub struct QdrantVectorStoreBuilder {
    target: Target,
    collection_name: String,
    batch_size: usize,
    parallel: usize,
    distance: Distance,
    dense_vector_name: Option<String>,
    stores_text: bool,
    index_doc_id: bool,
    hybrid: bool,
    generation: Option<Generation>,
}

impl QdrantVectorStoreBuilder {
    fn new(target: Target) -> Self {
        Self {
            target,
            collection_name: "ragloom".into(),
            batch_size: DEFAULT_BATCH_SIZE,
            parallel: 1,
            distance: Distance::Cosine,
            dense_vector_name: None,
            stores_text: true,
            index_doc_id: true,
            hybrid: false,
            generation: None,
        }
    }

    /// The collection (default `"ragloom"`); created on the first `add`
    /// with the embeddings' dimension when it does not exist.
    pub fn collection_name(mut self, name: impl Into<String>) -> Self {
        self.collection_name = name.into();
        self
    }

    /// The API key sent to a remote Qdrant (never shown by `Debug`).
    /// Ignored by the embedded mode.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        if let Target::Remote { api_key, .. } = &mut self.target {
            *api_key = Some(key.into());
        }
        self
    }

    /// Points per upsert request (default 64, as LlamaIndex).
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }

    /// Upsert requests in flight at once on a remote Qdrant (default 1, as
    /// LlamaIndex). The embedded engine writes batches one after another.
    pub fn parallel(mut self, n: usize) -> Self {
        self.parallel = n;
        self
    }

    /// The distance of a collection this store creates (default cosine).
    pub fn distance(mut self, distance: Distance) -> Self {
        self.distance = distance;
        self
    }

    /// The name of the dense vector. By default a new collection gets one
    /// unnamed vector, which is what LlamaIndex creates without hybrid
    /// search; an existing collection's own layout wins (its unnamed vector,
    /// or `text-dense` as LlamaIndex's hybrid collections name it).
    pub fn dense_vector_name(mut self, name: impl Into<String>) -> Self {
        self.dense_vector_name = Some(name.into());
        self
    }

    /// Whether the payload keeps the node's text (default true, as
    /// LlamaIndex); when false, queries return ids and scores only and the
    /// text lives in the docstore.
    pub fn stores_text(mut self, yes: bool) -> Self {
        self.stores_text = yes;
        self
    }

    /// Whether a remote collection this store creates gets a keyword index
    /// on `doc_id` (default true, as LlamaIndex's `index_doc_id`).
    pub fn index_doc_id(mut self, yes: bool) -> Self {
        self.index_doc_id = yes;
        self
    }

    /// Hybrid search, as LlamaIndex's `enable_hybrid`: a new collection gets
    /// the dense vector `text-dense` and the sparse vector `text-sparse-new`
    /// (with Qdrant's IDF modifier), each node a BM25 sparse vector of its
    /// text ([`Bm25SparseEncoder`]); `Sparse`/`TextSearch` queries use the
    /// sparse side alone, `Hybrid` queries fuse both in Qdrant (reciprocal
    /// rank fusion). Nodes without embeddings are stored with the sparse
    /// vector alone; a collection first written so has no dense vector.
    pub fn enable_hybrid(mut self, yes: bool) -> Self {
        self.hybrid = yes;
        self
    }

    /// Reads and writes one [`Generation`] of a collection shared with
    /// other generations (see its docs): points are tagged, deletions of
    /// committed points are marks, and queries see only what is visible.
    pub fn generation(mut self, generation: Generation) -> Self {
        self.generation = Some(generation);
        self
    }

    /// The store. Nothing is contacted yet: the remote connection is lazy,
    /// the embedded folder is opened on first use.
    pub fn build(self) -> Result<QdrantVectorStore> {
        if self.collection_name.is_empty()
            || self
                .collection_name
                .chars()
                .any(|c| c == '/' || c == '\\' || c.is_control())
        {
            return Err(Error::InvalidInput(format!(
                "collection_name `{}` must be non-empty, without slashes or control characters",
                self.collection_name
            )));
        }
        if self.batch_size == 0 || self.parallel == 0 {
            return Err(Error::InvalidInput(
                "batch_size and parallel must be at least 1".into(),
            ));
        }
        let backend = Backend::open(&self.target, &self.collection_name)?;
        Ok(QdrantVectorStore {
            settings: self,
            backend,
            layout: Mutex::new(None),
        })
    }
}

/// The collection's vectors, once known.
#[derive(Clone, Debug)]
struct Layout {
    /// The dense vector (`""`: unnamed); `None` in a keyword-only collection.
    dense: Option<String>,
    /// The sparse vector of a hybrid collection.
    sparse: Option<String>,
}

impl Layout {
    fn using(&self) -> Using {
        Using {
            dense: self.dense.clone(),
            sparse: self.sparse.clone(),
        }
    }
}

/// LlamaIndex's `QdrantVectorStore`: nodes as Qdrant points whose id is the
/// node id (a UUID) and whose payload is `node_to_metadata_dict(node)`, so
/// Python LlamaIndex and ragloom share collections.
///
/// The same type runs against a Qdrant server over gRPC
/// ([`remote`](Self::remote)) or, with the `qdrant-embedded` feature,
/// against Qdrant's engine in-process persisted in a folder
/// ([`embedded`](Self::embedded)); moving from one to the other is the
/// constructor call alone.
pub struct QdrantVectorStore {
    settings: QdrantVectorStoreBuilder,
    backend: Backend,
    layout: Mutex<Option<Layout>>,
}

impl fmt::Debug for QdrantVectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QdrantVectorStore")
            .field("target", &self.settings.target)
            .field("collection_name", &self.settings.collection_name)
            .field("batch_size", &self.settings.batch_size)
            .field("parallel", &self.settings.parallel)
            .field("stores_text", &self.settings.stores_text)
            .finish_non_exhaustive()
    }
}

impl QdrantVectorStore {
    /// A store on the Qdrant server at `url` (its gRPC port, e.g.
    /// `http://localhost:6334`).
    pub fn remote(url: impl Into<String>) -> QdrantVectorStoreBuilder {
        QdrantVectorStoreBuilder::new(Target::Remote {
            url: url.into(),
            api_key: None,
        })
    }

    /// A store on Qdrant's engine in this process, persisted under `path`
    /// (one sub-folder per collection). Needs the `qdrant-embedded` feature.
    #[cfg(feature = "qdrant-embedded")]
    pub fn embedded(path: impl Into<PathBuf>) -> QdrantVectorStoreBuilder {
        QdrantVectorStoreBuilder::new(Target::Embedded { path: path.into() })
    }

    /// The collection's name.
    pub fn collection_name(&self) -> &str {
        &self.settings.collection_name
    }

    /// Whether the collection exists.
    pub async fn collection_exists(&self) -> Result<bool> {
        Ok(self.layout(None).await?.is_some())
    }

    /// The collection's layout; with `create`, a missing collection is
    /// created (with a dense vector of the given dimension, if any).
    async fn layout(&self, create: Option<Option<usize>>) -> Result<Option<Layout>> {
        let mut guard = self.layout.lock().await;
        if let Some(layout) = guard.as_ref() {
            return Ok(Some(layout.clone()));
        }
        let layout = match self.backend.vector_names().await? {
            Some(names) => self.choose_vectors(&names)?,
            None => {
                let Some(dim) = create else {
                    return Ok(None);
                };
                let hybrid = self.settings.hybrid;
                let dense_name = self.settings.dense_vector_name.clone().unwrap_or_else(|| {
                    if hybrid {
                        DEFAULT_DENSE_VECTOR_NAME.into()
                    } else {
                        String::new()
                    }
                });
                let layout = Layout {
                    dense: dim.map(|_| dense_name),
                    sparse: hybrid.then(|| DEFAULT_SPARSE_VECTOR_NAME.to_string()),
                };
                let mut keyword_indexes = Vec::new();
                if self.settings.index_doc_id {
                    keyword_indexes.push(DOCUMENT_ID_KEY.to_string());
                }
                let integer_indexes = if self.settings.generation.is_some() {
                    vec![GEN_KEY.to_string(), DEL_KEY.to_string()]
                } else {
                    Vec::new()
                };
                self.backend
                    .create(&CreateSpec {
                        dense: layout.dense.clone().zip(dim),
                        sparse: layout.sparse.clone(),
                        distance: self.settings.distance,
                        keyword_indexes,
                        integer_indexes,
                    })
                    .await?;
                layout
            }
        };
        *guard = Some(layout.clone());
        Ok(Some(layout))
    }

    /// As LlamaIndex's `_detect_vector_format`: an unnamed dense vector
    /// wins; a hybrid store also takes the sparse vector.
    fn choose_vectors(&self, names: &VectorNames) -> Result<Layout> {
        let sparse = if self.settings.hybrid {
            if names.sparse.iter().any(|n| n == DEFAULT_SPARSE_VECTOR_NAME) {
                Some(DEFAULT_SPARSE_VECTOR_NAME.to_string())
            } else {
                names.sparse.first().cloned()
            }
        } else {
            None
        };
        if names.dense.is_empty() {
            // Keyword vectors only: queries say what they lack.
            return Ok(Layout {
                dense: None,
                sparse,
            });
        }
        let names = &names.dense;
        if names.iter().any(String::is_empty) {
            return Ok(Layout {
                dense: Some(String::new()),
                sparse,
            });
        }
        let wanted = self
            .settings
            .dense_vector_name
            .as_deref()
            .unwrap_or(DEFAULT_DENSE_VECTOR_NAME);
        if names.iter().any(|n| n == wanted) {
            return Ok(Layout {
                dense: Some(wanted.to_string()),
                sparse,
            });
        }
        if self.settings.dense_vector_name.is_none() && names.len() == 1 {
            return Ok(Layout {
                dense: Some(names[0].clone()),
                sparse,
            });
        }
        Err(Error::InvalidInput(format!(
            "Qdrant collection `{}` has no dense vector `{wanted}` (it has {names:?}); set dense_vector_name",
            self.settings.collection_name
        )))
    }

    /// What the store's generation sees (everything without one).
    fn visible(&self) -> Plan {
        match &self.settings.generation {
            Some(g) => g.visible_plan(GEN_KEY, DEL_KEY),
            None => Plan::default(),
        }
    }

    fn point(&self, node: &Node, dim: Option<usize>) -> Result<Point> {
        let id = point_id(&node.id_)?;
        let vector = match (&node.embedding, dim) {
            (Some(v), Some(dim)) if v.len() != dim => {
                return Err(Error::InvalidInput(format!(
                    "node `{}` has an embedding of dimension {}, the batch has {dim}",
                    node.id_,
                    v.len()
                )));
            }
            (Some(v), Some(_)) => Some(v.clone()),
            (None, None) if self.settings.hybrid => None,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "node `{}` has no embedding{}",
                    node.id_,
                    if self.settings.hybrid {
                        " (in a hybrid store a batch has embeddings for all its nodes or for none)"
                    } else {
                        ""
                    }
                )));
            }
        };
        let mut payload = node_to_metadata_dict(node, !self.settings.stores_text, false)?;
        if let Some(g) = &self.settings.generation {
            payload.insert(GEN_KEY.into(), g.writing()?.into());
        }
        let sparse = self.settings.hybrid.then(|| {
            Bm25SparseEncoder::new()
                .encode_document(&node.get_content(ragloom_core::schema::MetadataMode::Embed))
        });
        Ok(Point {
            id,
            vector,
            sparse,
            payload,
        })
    }

    /// Nodes for `hits`, as LlamaIndex's `parse_to_query_result`.
    fn to_result(&self, hits: Vec<Hit>) -> VectorStoreQueryResult {
        let mut nodes = Vec::with_capacity(hits.len());
        let mut similarities = Vec::with_capacity(hits.len());
        let mut ids = Vec::with_capacity(hits.len());
        for hit in hits {
            similarities.push(hit.score);
            ids.push(hit.id.clone());
            nodes.push(payload_to_node(&hit.id, &hit.payload));
        }
        VectorStoreQueryResult {
            nodes: self.settings.stores_text.then_some(nodes),
            similarities,
            ids,
        }
    }

    /// Nodes matching `filters` (all nodes when `None`), up to `limit`.
    pub async fn get_nodes_filtered(
        &self,
        filters: Option<&MetadataFilters>,
        limit: usize,
    ) -> Result<Vec<Node>> {
        if self.layout(None).await?.is_none() {
            return Ok(Vec::new());
        }
        let plan = filters::plan(filters, None, None)?.and(self.visible());
        let hits = self.backend.scroll(&plan, limit).await?;
        Ok(hits
            .iter()
            .map(|h| payload_to_node(&h.id, &h.payload))
            .collect())
    }
}

impl QdrantVectorStore {
    /// The query to send for `query` on `layout`, and its limit.
    fn search_for(&self, query: &VectorStoreQuery, layout: &Layout) -> Result<(Search, usize)> {
        let top_k = query.similarity_top_k;
        let sparse = || -> Result<(String, crate::sparse::SparseVector)> {
            let name = layout.sparse.clone().ok_or_else(|| {
                Error::Unsupported(format!(
                    "`{}` queries need a hybrid Qdrant store (enable_hybrid) over a collection with a sparse vector",
                    query.mode.as_str()
                ))
            })?;
            let text = query.query_str.as_deref().ok_or_else(|| {
                Error::InvalidInput(format!("a `{}` query needs query_str", query.mode.as_str()))
            })?;
            Ok((name, Bm25SparseEncoder::new().encode_query(text)))
        };
        let dense = || -> Result<(String, Vec<f32>)> {
            let name = layout.dense.clone().ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Qdrant collection `{}` has no dense vector: it holds keyword vectors only",
                    self.settings.collection_name
                ))
            })?;
            let v = query.query_embedding.clone().ok_or_else(|| {
                Error::InvalidInput("a Qdrant query needs a query_embedding".into())
            })?;
            Ok((name, v))
        };
        Ok(match query.mode {
            VectorStoreQueryMode::Default => {
                let (name, v) = dense()?;
                (Search::Dense(name, v), top_k)
            }
            VectorStoreQueryMode::Sparse | VectorStoreQueryMode::TextSearch => {
                let (name, v) = sparse()?;
                (Search::Sparse(name, v), query.sparse_top_k.unwrap_or(top_k))
            }
            VectorStoreQueryMode::Hybrid => {
                let sparse = sparse()?;
                let sparse_limit = query.sparse_top_k.unwrap_or(top_k);
                let limit = query.hybrid_top_k.unwrap_or(top_k);
                // A keyword-only collection, or a query without a vector: the sparse side alone.
                if layout.dense.is_none() || query.query_embedding.is_none() {
                    (Search::Sparse(sparse.0, sparse.1), limit)
                } else {
                    let dense = dense()?;
                    (
                        Search::Hybrid {
                            dense,
                            dense_limit: top_k,
                            sparse,
                            sparse_limit,
                        },
                        limit,
                    )
                }
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "QdrantVectorStore supports default, sparse, text_search and hybrid queries, not `{}`",
                    other.as_str()
                )));
            }
        })
    }

    /// Deletes what `plan` selects; in a generation, points of earlier
    /// generations are marked deleted at this one (readers of those keep them).
    async fn delete_plan(&self, plan: Plan) -> Result<()> {
        let Some(g) = &self.settings.generation else {
            return self.backend.delete(&plan).await;
        };
        let writing = g.writing()?;
        if g.committed() > 0 {
            let mut mark = Metadata::new();
            mark.insert(DEL_KEY.into(), writing.into());
            self.backend
                .set_payload(
                    &plan.clone().and(g.committed_live_plan(GEN_KEY, DEL_KEY)),
                    mark,
                )
                .await?;
        }
        self.backend.delete(&plan.and(g.own_plan(GEN_KEY))).await
    }

    /// Fails when a point of `points` has a point of an earlier generation,
    /// even one this writer deleted: readers of those still see it.
    async fn refuse_committed_ids(&self, g: &Generation, points: &[Point]) -> Result<()> {
        let ids: Vec<String> = points.iter().map(|p| p.id.clone()).collect();
        let plan = Plan {
            must: vec![Cond::HasId(ids)],
            ..Plan::default()
        }
        .and(g.committed_plan(GEN_KEY));
        let hits = self.backend.scroll(&plan, 1).await?;
        match hits.first() {
            Some(h) => Err(Error::InvalidInput(format!(
                "node `{}` is already committed in an earlier generation of Qdrant collection `{}`: its point would change under readers; give the new version a new node id",
                h.id, self.settings.collection_name
            ))),
            None => Ok(()),
        }
    }

    /// Undoes what an unfinished writer of a generation after `g`'s
    /// committed one left (its points and its deletion marks), then removes
    /// the points deleted before the committed generation (readers of the
    /// committed one and of the one before it keep what they see). Run it
    /// holding the writer's lock, before writing.
    pub async fn recover(&self, g: &Generation) -> Result<()> {
        if self.layout(None).await?.is_none() {
            return Ok(());
        }
        crate::generation::recover(&self.backend, g, GEN_KEY, DEL_KEY).await
    }
}

/// Payload keys of a generation-tagged point: the generation that wrote it,
/// and the one that deleted it.
pub const GEN_KEY: &str = "_ragloom_generation";
/// See [`GEN_KEY`].
pub const DEL_KEY: &str = "_ragloom_deleted";

impl QdrantVectorStore {
    /// Every node this store sees (up to `limit`) with its dense vector as
    /// its embedding, for copying an index elsewhere (a remote server only).
    pub async fn get_nodes_with_embeddings(&self, limit: usize) -> Result<Vec<Node>> {
        let Some(layout) = self.layout(None).await? else {
            return Ok(Vec::new());
        };
        let name = layout.dense.clone().unwrap_or_default();
        let hits = self
            .backend
            .scroll_vectors(&self.visible(), limit, &name)
            .await?;
        Ok(hits
            .into_iter()
            .map(|(h, v)| {
                let mut node = payload_to_node(&h.id, &h.payload);
                if layout.dense.is_some() {
                    node.embedding = v;
                }
                node
            })
            .collect())
    }
}

/// A node id as a Qdrant point id: Qdrant takes UUIDs (or integers) only.
fn point_id(node_id: &str) -> Result<String> {
    uuid::Uuid::parse_str(node_id)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| {
            Error::InvalidInput(format!(
                "node id `{node_id}` is not a UUID; Qdrant point ids are UUIDs (as LlamaIndex's node ids)"
            ))
        })
}

/// The node a payload holds, or, for payloads without `_node_content`
/// (written by very old LlamaIndex versions or by hand), a text node with
/// the payload's `text` and the rest as metadata.
pub(crate) fn payload_to_node(point_id: &str, payload: &Metadata) -> Node {
    match metadata_dict_to_node(payload, None) {
        Ok(node) => node,
        Err(_) => {
            let text = payload.get("text").and_then(Value::as_str).unwrap_or("");
            let metadata: Metadata = payload
                .iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "text"
                            | NODE_CONTENT_KEY
                            | NODE_TYPE_KEY
                            | "document_id"
                            | "doc_id"
                            | "ref_doc_id"
                    )
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Node::text_node(text)
                .with_id(point_id)
                .with_metadata_map(metadata)
        }
    }
}

#[async_trait]
impl VectorStore for QdrantVectorStore {
    fn stores_text(&self) -> bool {
        self.settings.stores_text
    }

    /// Upserts the nodes in batches of `batch_size` (`parallel` requests at
    /// once on a remote server); a node id already stored is replaced (in a
    /// generation, a node id visible from an earlier one is an error: its
    /// committed point would change under readers).
    async fn add(&self, nodes: &[Node]) -> Result<Vec<String>> {
        let Some(first) = nodes.first() else {
            return Ok(Vec::new());
        };
        let dim = first.embedding.as_ref().map(Vec::len);
        if dim.is_none() && !self.settings.hybrid {
            return Err(Error::InvalidInput(format!(
                "node `{}` has no embedding",
                first.id_
            )));
        }
        let points = nodes
            .iter()
            .map(|n| self.point(n, dim))
            .collect::<Result<Vec<_>>>()?;
        let span = tracing::debug_span!(
            "qdrant.add",
            collection = %self.settings.collection_name,
            nodes = nodes.len()
        );
        async {
            let layout = self
                .layout(Some(dim))
                .await?
                .ok_or_else(|| Error::NotFound("Qdrant collection".into()))?;
            if dim.is_some() && layout.dense.is_none() {
                return Err(Error::InvalidInput(format!(
                    "Qdrant collection `{}` has no dense vector: it was first written without embeddings",
                    self.settings.collection_name
                )));
            }
            // Nothing is committed before generation 1.
            if let Some(g) = self.settings.generation.filter(|g| g.committed() > 0) {
                self.refuse_committed_ids(&g, &points).await?;
            }
            self.backend
                .upsert(
                    &layout.using(),
                    points,
                    self.settings.batch_size,
                    self.settings.parallel,
                )
                .await
        }
        .instrument(span)
        .await?;
        Ok(nodes.iter().map(|n| n.id_.clone()).collect())
    }

    /// Deletes every node whose `doc_id` payload is `ref_doc_id`.
    async fn delete(&self, ref_doc_id: &str) -> Result<()> {
        if self.layout(None).await?.is_none() {
            return Ok(());
        }
        let plan = Plan {
            must: vec![Cond::Keyword(DOCUMENT_ID_KEY.into(), ref_doc_id.into())],
            ..Plan::default()
        };
        self.delete_plan(plan).await
    }

    /// Deletes the listed nodes that also match `filters`, read as
    /// [`ragloom_core::vector_stores::delete_selection`] reads them.
    async fn delete_nodes(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<()> {
        let Some(sel) = delete_selection(node_ids, filters)? else {
            return Ok(());
        };
        if self.layout(None).await?.is_none() {
            return Ok(());
        }
        let ids = sel
            .node_ids
            .map(|ids| {
                ids.iter()
                    .map(|id| point_id(id))
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        let plan = filters::plan(sel.filters, None, ids)?;
        self.delete_plan(plan).await
    }

    async fn query(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        let point_ids = match &query.node_ids {
            Some(ids) if !ids.is_empty() => Some(
                ids.iter()
                    .map(|id| point_id(id))
                    .collect::<Result<Vec<_>>>()?,
            ),
            _ => None,
        };
        let doc_ids = query.doc_ids.as_deref().filter(|ids| !ids.is_empty());
        let plan = filters::plan(query.filters.as_ref(), doc_ids, point_ids)?.and(self.visible());
        let Some(layout) = self.layout(None).await? else {
            if query.mode == VectorStoreQueryMode::Default && query.query_embedding.is_none() {
                return Err(Error::InvalidInput(
                    "a Qdrant query needs a query_embedding".into(),
                ));
            }
            return Ok(VectorStoreQueryResult::default());
        };
        let (search, limit) = self.search_for(query, &layout)?;
        let span = tracing::debug_span!(
            "qdrant.query",
            collection = %self.settings.collection_name,
            top_k = query.similarity_top_k,
            mode = query.mode.as_str()
        );
        let hits = self
            .backend
            .search(&search, limit, &plan)
            .instrument(span)
            .await?;
        Ok(self.to_result(hits))
    }

    async fn get_nodes(&self, node_ids: &[String]) -> Result<Vec<Node>> {
        if node_ids.is_empty() || self.layout(None).await?.is_none() {
            return Ok(Vec::new());
        }
        let ids = node_ids
            .iter()
            .map(|id| point_id(id))
            .collect::<Result<Vec<_>>>()?;
        let hits = match &self.settings.generation {
            // Only what the generation sees, so through a filter.
            Some(_) => {
                let plan = Plan {
                    must: vec![Cond::HasId(ids)],
                    ..Plan::default()
                }
                .and(self.visible());
                self.backend.scroll(&plan, node_ids.len()).await?
            }
            None => self.backend.retrieve(&ids).await?,
        };
        Ok(hits
            .iter()
            .map(|h| payload_to_node(&h.id, &h.payload))
            .collect())
    }

    /// Deletes the collection, as LlamaIndex's `clear`; the next `add` creates it again.
    async fn clear(&self) -> Result<()> {
        if self.settings.generation.is_some() {
            return Err(Error::Unsupported(
                "clear on one generation of a Qdrant collection: delete its documents, or drop the collection".into(),
            ));
        }
        let mut guard = self.layout.lock().await;
        self.backend.drop_collection().await?;
        *guard = None;
        Ok(())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let builder = QdrantVectorStore::remote("http://db.example:6334")
            .api_key("s3cr3t-key")
            .collection_name("essays");
        let text = format!("{builder:?}");
        assert!(text.contains("db.example:6334"), "{text}");
        assert!(!text.contains("s3cr3t-key"), "{text}");
        let store = builder.build().unwrap();
        let text = format!("{store:?}");
        assert!(text.contains("essays"), "{text}");
        assert!(!text.contains("s3cr3t-key"), "{text}");
    }

    #[test]
    fn bad_settings_are_errors() {
        for b in [
            QdrantVectorStore::remote("http://h:6334").collection_name(""),
            QdrantVectorStore::remote("http://h:6334").collection_name("a/b"),
            QdrantVectorStore::remote("http://h:6334").batch_size(0),
            QdrantVectorStore::remote("http://h:6334").parallel(0),
            QdrantVectorStore::remote("not a url"),
        ] {
            assert!(b.build().is_err());
        }
    }

    #[test]
    fn point_ids_are_uuids() {
        assert_eq!(
            point_id("0A8C6F4E-1C1D-4B7A-8F43-6A3E3C0C9B01").unwrap(),
            "0a8c6f4e-1c1d-4b7a-8f43-6a3e3c0c9b01"
        );
        let err = point_id("node-1").unwrap_err();
        assert!(err.to_string().contains("node-1"), "{err}");
    }

    #[test]
    fn payloads_without_node_content_read_as_text_nodes() {
        let payload: Metadata = serde_json::from_str(r#"{"text": "hi", "author": "a"}"#).unwrap();
        let node = payload_to_node("0a8c6f4e-1c1d-4b7a-8f43-6a3e3c0c9b01", &payload);
        assert_eq!(node.text, "hi");
        assert_eq!(node.id_, "0a8c6f4e-1c1d-4b7a-8f43-6a3e3c0c9b01");
        assert_eq!(node.metadata.get("author"), Some(&Value::from("a")));
        assert!(!node.metadata.contains_key("text"));
    }
}
