//! `IngestionPipeline`: documents through a chain of transformations into a
//! vector store, with LlamaIndex's transformation cache and docstore de-duplication.

use super::cache::{DEFAULT_CACHE_NAME, IngestionCache};
use crate::embeddings::{Embedding, embed_in_batches};
use crate::error::{Error, Result};
use crate::schema::{MetadataMode, Node};
use crate::settings::Settings;
use crate::storage::docstore::{DEFAULT_PERSIST_FNAME, DocStore, SimpleDocumentStore};
use crate::transform::TransformComponent;
use crate::utils::hex;
use crate::vector_stores::VectorStore;
use async_trait::async_trait;
use indexmap::IndexMap;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use tracing::Instrument;

/// How the pipeline uses its docstore to skip, replace and delete documents
/// between runs (LlamaIndex `DocstoreStrategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DocstoreStrategy {
    /// A document whose id is stored with the same hash is skipped; one whose
    /// hash changed has its old nodes deleted from the docstore and the
    /// vector store and is run again; a new one is run.
    #[default]
    Upserts,
    /// A document is run only if no stored document has its hash.
    DuplicatesOnly,
    /// As [`DocstoreStrategy::Upserts`], and documents stored earlier but
    /// absent from this run's input are deleted from both stores.
    UpsertsAndDelete,
}

impl DocstoreStrategy {
    /// LlamaIndex's value of the strategy (`"upserts"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            DocstoreStrategy::Upserts => "upserts",
            DocstoreStrategy::DuplicatesOnly => "duplicates_only",
            DocstoreStrategy::UpsertsAndDelete => "upserts_and_delete",
        }
    }
}

/// What one run did, for logs and for callers that report progress.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestionStats {
    /// Input documents (input nodes grouped by their source document).
    pub documents: usize,
    /// Documents skipped because the docstore already had them unchanged.
    pub skipped: usize,
    /// Documents that went through the transformations.
    pub transformed: usize,
    /// Documents whose earlier nodes were replaced because they changed.
    pub replaced: usize,
    /// Documents deleted because they vanished ([`DocstoreStrategy::UpsertsAndDelete`]).
    pub deleted: usize,
    /// Transformation steps answered from the cache.
    pub cache_hits: usize,
    /// Transformation steps actually computed.
    pub cache_misses: usize,
    /// Nodes returned.
    pub nodes: usize,
}

/// The result of [`IngestionPipeline::run_with_stats`].
#[derive(Clone, Debug, Default)]
pub struct IngestionOutput {
    /// The transformed nodes, documents in input order.
    pub nodes: Vec<Node>,
    /// What the run did.
    pub stats: IngestionStats,
}

/// Runs documents through transformations (splitters, metadata extractors,
/// an embedding) into an optional vector store (LlamaIndex `IngestionPipeline`).
///
/// Input nodes are grouped by source document (a node's `ref_doc_id`, or its
/// own id), and each group goes through the transformations on its own: that
/// is the unit of caching, of de-duplication and of parallelism
/// ([`num_workers`](Self::num_workers)), so parallel and serial runs give the
/// same nodes and a change to one document recomputes only that document.
///
/// With a docstore, the pipeline remembers each document's hash under its id
/// and applies its [`DocstoreStrategy`]. Stores are changed only after every
/// transformation succeeded, so a failed run leaves them as they were.
///
/// ```no_run
/// # async fn run(docs: Vec<ragloom_core::Document>) -> ragloom_core::Result<()> {
/// use ragloom_core::ingestion::IngestionPipeline;
/// use ragloom_core::prelude::*;
/// use ragloom_core::storage::docstore::SimpleDocumentStore;
/// use std::sync::Arc;
///
/// let mut pipeline = IngestionPipeline::new(vec![Arc::new(SentenceSplitter::new())])
///     .embedding(Arc::new(HashEmbedding::new(384)))
///     .docstore(Arc::new(SimpleDocumentStore::new()))
///     .vector_store(Arc::new(SimpleVectorStore::new()));
/// pipeline.load_if_present("./pipeline_storage").await?;
/// let nodes = pipeline.run(docs).await?;
/// pipeline.persist("./pipeline_storage").await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct IngestionPipeline {
    name: String,
    transformations: Vec<Arc<dyn TransformComponent>>,
    vector_store: Option<Arc<dyn VectorStore>>,
    docstore: Option<Arc<dyn DocStore>>,
    cache: IngestionCache,
    cache_collection: Option<String>,
    docstore_strategy: DocstoreStrategy,
    disable_cache: bool,
    store_doc_text: bool,
    num_workers: usize,
    show_progress: bool,
}

/// LlamaIndex's `DEFAULT_PIPELINE_NAME`.
pub const DEFAULT_PIPELINE_NAME: &str = "default";

impl IngestionPipeline {
    /// A pipeline applying `transformations` in order, with an empty cache,
    /// no stores, the `Upserts` strategy and one worker.
    pub fn new(transformations: Vec<Arc<dyn TransformComponent>>) -> Self {
        Self {
            name: DEFAULT_PIPELINE_NAME.to_string(),
            transformations,
            vector_store: None,
            docstore: None,
            cache: IngestionCache::new(),
            cache_collection: None,
            docstore_strategy: DocstoreStrategy::default(),
            disable_cache: false,
            store_doc_text: true,
            num_workers: 1,
            show_progress: false,
        }
    }

    /// A pipeline with the default transformations of `settings` (its node
    /// parser, then its embedding model when it has one), as Python's
    /// pipeline falls back to `[SentenceSplitter(), Settings.embed_model]`.
    pub fn from_settings(settings: &Settings) -> Self {
        let mut pipeline = Self::new(settings.transformations());
        if let Some(embed_model) = settings.embed_model.clone() {
            pipeline = pipeline.embedding(embed_model);
        }
        pipeline
    }

    /// Sets the pipeline's name (LlamaIndex `name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Appends a transformation.
    pub fn transformation(mut self, t: Arc<dyn TransformComponent>) -> Self {
        self.transformations.push(t);
        self
    }

    /// Appends an embedding step: every node gets the vector of its
    /// `MetadataMode::Embed` content, as putting an embed model in Python's
    /// `transformations` does.
    pub fn embedding(self, embed_model: Arc<dyn Embedding>) -> Self {
        self.transformation(Arc::new(EmbeddingTransform::new(embed_model)))
    }

    /// Adds the nodes that have embeddings to this vector store, and deletes
    /// replaced and vanished documents from it.
    pub fn vector_store(mut self, vector_store: Arc<dyn VectorStore>) -> Self {
        self.vector_store = Some(vector_store);
        self
    }

    /// Uses this docstore to skip unchanged documents (see [`DocstoreStrategy`]).
    pub fn docstore(mut self, docstore: Arc<dyn DocStore>) -> Self {
        self.docstore = Some(docstore);
        self
    }

    /// The de-duplication strategy (default [`DocstoreStrategy::Upserts`]).
    pub fn docstore_strategy(mut self, strategy: DocstoreStrategy) -> Self {
        self.docstore_strategy = strategy;
        self
    }

    /// Uses `cache` (for instance one shared with another pipeline).
    pub fn cache(mut self, cache: IngestionCache) -> Self {
        self.cache = cache;
        self
    }

    /// Keeps this pipeline's cache entries in `collection` rather than the
    /// cache's default one (LlamaIndex `cache_collection`).
    pub fn cache_collection(mut self, collection: impl Into<String>) -> Self {
        self.cache_collection = Some(collection.into());
        self
    }

    /// Turns the transformation cache off (LlamaIndex `disable_cache`).
    pub fn disable_cache(mut self, disable: bool) -> Self {
        self.disable_cache = disable;
        self
    }

    /// Whether the docstore keeps documents' text or only their hashes (default `true`).
    pub fn store_doc_text(mut self, store: bool) -> Self {
        self.store_doc_text = store;
        self
    }

    /// How many documents are transformed at once, each on its own Tokio
    /// task (default 1: one after another). Results keep the input order.
    pub fn num_workers(mut self, n: usize) -> Self {
        self.num_workers = n.max(1);
        self
    }

    /// Shows a progress bar over documents (LlamaIndex `show_progress`).
    pub fn show_progress(mut self, show: bool) -> Self {
        self.show_progress = show;
        self
    }

    /// The transformations, in order.
    pub fn transformations(&self) -> &[Arc<dyn TransformComponent>] {
        &self.transformations
    }

    /// The transformation cache.
    pub fn get_cache(&self) -> &IngestionCache {
        &self.cache
    }

    /// The docstore, if any.
    pub fn get_docstore(&self) -> Option<&Arc<dyn DocStore>> {
        self.docstore.as_ref()
    }

    /// The vector store, if any.
    pub fn get_vector_store(&self) -> Option<&Arc<dyn VectorStore>> {
        self.vector_store.as_ref()
    }

    /// Runs `documents` (or any nodes) through the pipeline and returns the
    /// transformed nodes of the documents that were not skipped.
    pub async fn run(&self, documents: Vec<Node>) -> Result<Vec<Node>> {
        Ok(self.run_with_stats(documents).await?.nodes)
    }

    /// LlamaIndex's name for the asynchronous run; the same as [`run`](Self::run).
    pub async fn arun(&self, documents: Vec<Node>) -> Result<Vec<Node>> {
        self.run(documents).await
    }

    /// Like [`run`](Self::run), also saying what was skipped, computed and
    /// answered from the cache.
    pub async fn run_with_stats(&self, documents: Vec<Node>) -> Result<IngestionOutput> {
        let span =
            tracing::info_span!("ingestion", pipeline = %self.name, inputs = documents.len());
        self.run_inner(documents).instrument(span).await
    }

    async fn run_inner(&self, documents: Vec<Node>) -> Result<IngestionOutput> {
        let units = group_by_document(documents);
        let mut stats = IngestionStats {
            documents: units.len(),
            ..Default::default()
        };
        let strategy = self.effective_strategy();
        let plan = self.plan(units, strategy).await?;
        stats.skipped = plan.skipped;
        stats.transformed = plan.to_run.len();
        stats.replaced = plan.replace.len();
        stats.deleted = plan.vanished.len();

        // The docstore records inputs, which the transformations consume.
        let (inputs, keys): (Vec<Vec<Node>>, Vec<(String, String)>) = plan
            .to_run
            .into_iter()
            .map(|u| (u.nodes, (u.ref_id, u.hash)))
            .unzip();
        let stored_inputs: Vec<Node> = if self.docstore.is_some() {
            inputs.iter().flatten().cloned().collect()
        } else {
            Vec::new()
        };

        let results = self.transform_all(inputs).await?;
        let mut nodes = Vec::new();
        for (unit_nodes, hits, misses) in results {
            stats.cache_hits += hits;
            stats.cache_misses += misses;
            nodes.extend(unit_nodes);
        }
        stats.nodes = nodes.len();

        self.apply(&plan.replace, &plan.vanished, &nodes, stored_inputs, &keys)
            .await?;
        Ok(IngestionOutput { nodes, stats })
    }

    /// Python falls back to duplicates-only when there is a docstore but no
    /// vector store to upsert into.
    fn effective_strategy(&self) -> DocstoreStrategy {
        if self.docstore.is_some()
            && self.vector_store.is_none()
            && self.docstore_strategy != DocstoreStrategy::DuplicatesOnly
        {
            tracing::warn!(
                strategy = self.docstore_strategy.as_str(),
                "docstore strategy needs a vector store; using duplicates_only for this run"
            );
            return DocstoreStrategy::DuplicatesOnly;
        }
        self.docstore_strategy
    }

    async fn plan(&self, units: Vec<Unit>, strategy: DocstoreStrategy) -> Result<Plan> {
        let mut plan = Plan::default();
        let Some(docstore) = &self.docstore else {
            plan.to_run = units;
            return Ok(plan);
        };
        match strategy {
            DocstoreStrategy::DuplicatesOnly => {
                let existing = docstore.get_all_document_hashes().await?;
                let mut current = HashSet::new();
                for unit in units {
                    if existing.contains_key(&unit.hash) || !current.insert(unit.hash.clone()) {
                        plan.skipped += 1;
                    } else {
                        plan.to_run.push(unit);
                    }
                }
            }
            DocstoreStrategy::Upserts | DocstoreStrategy::UpsertsAndDelete => {
                let mut seen = HashSet::new();
                for unit in units {
                    seen.insert(unit.ref_id.clone());
                    match docstore.get_document_hash(&unit.ref_id).await? {
                        None => plan.to_run.push(unit),
                        Some(h) if h != unit.hash => {
                            plan.replace.push(unit.ref_id.clone());
                            plan.to_run.push(unit);
                        }
                        Some(_) => plan.skipped += 1,
                    }
                }
                if strategy == DocstoreStrategy::UpsertsAndDelete {
                    plan.vanished = stored_document_ids(docstore.as_ref())
                        .await?
                        .into_iter()
                        .filter(|id| !seen.contains(id))
                        .collect();
                }
            }
        }
        Ok(plan)
    }

    async fn transform_all(
        &self,
        inputs: Vec<Vec<Node>>,
    ) -> Result<Vec<(Vec<Node>, usize, usize)>> {
        let cache = (!self.disable_cache).then(|| self.cache.clone());
        let bar = self.show_progress.then(|| {
            let bar = indicatif::ProgressBar::new(inputs.len() as u64);
            bar.set_message("Applying transformations");
            bar
        });
        let result = self.transform_each(inputs, cache, bar.as_ref()).await;
        // Cleared on success and on failure alike, in one place.
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        result
    }

    /// [`transform_unit`] over each input, serially or on `num_workers`
    /// tasks, ticking `bar` as each ends; outputs in input order.
    async fn transform_each(
        &self,
        inputs: Vec<Vec<Node>>,
        cache: Option<IngestionCache>,
        bar: Option<&indicatif::ProgressBar>,
    ) -> Result<Vec<(Vec<Node>, usize, usize)>> {
        let tick = || {
            if let Some(bar) = bar {
                bar.inc(1);
            }
        };
        let mut out = Vec::with_capacity(inputs.len());
        if self.num_workers <= 1 {
            for unit in inputs {
                out.push(
                    transform_unit(
                        unit,
                        &self.transformations,
                        cache.as_ref(),
                        self.cache_collection.as_deref(),
                    )
                    .await?,
                );
                tick();
            }
            return Ok(out);
        }
        let tasks = inputs.into_iter().map(|unit| {
            let transformations = self.transformations.clone();
            let cache = cache.clone();
            let collection = self.cache_collection.clone();
            let span = tracing::Span::current();
            // A worker after a failing one is stopped with its job.
            crate::utils::spawn_stoppable(
                async move {
                    transform_unit(
                        unit,
                        &transformations,
                        cache.as_ref(),
                        collection.as_deref(),
                    )
                    .await
                }
                .instrument(span),
            )
        });
        let results = crate::utils::run_in_order(tasks, self.num_workers, |joined| {
            tick();
            matches!(joined, Ok(Ok(_)))
        })
        .await;
        for joined in results {
            out.push(joined.map_err(|e| Error::failed("ingestion worker failed", e))??);
        }
        Ok(out)
    }

    async fn apply(
        &self,
        replace: &[String],
        vanished: &[String],
        nodes: &[Node],
        stored_inputs: Vec<Node>,
        keys: &[(String, String)],
    ) -> Result<()> {
        for ref_id in replace.iter().chain(vanished) {
            if let Some(docstore) = &self.docstore {
                ignore_not_found(docstore.delete_ref_doc(ref_id).await)?;
            }
            if let Some(vs) = &self.vector_store {
                vs.delete(ref_id).await?;
            }
        }
        if let Some(docstore) = &self.docstore {
            for ref_id in vanished {
                // Removes the document and its hash; a document stored
                // without text has only the hash, which goes too.
                ignore_not_found(docstore.delete_document(ref_id).await)?;
            }
        }
        if let Some(vs) = &self.vector_store {
            // Usually every node is embedded: hand them over without a copy.
            if nodes.iter().all(|n| n.embedding.is_some()) {
                if !nodes.is_empty() {
                    vs.add(nodes).await?;
                }
            } else {
                let embedded: Vec<Node> = nodes
                    .iter()
                    .filter(|n| n.embedding.is_some())
                    .cloned()
                    .collect();
                if !embedded.is_empty() {
                    vs.add(&embedded).await?;
                }
            }
        }
        if let Some(docstore) = &self.docstore {
            docstore
                .add_documents(&stored_inputs, true, self.store_doc_text)
                .await?;
            // After `add_documents`, which records each node's own hash: a
            // document split before the pipeline is known by its source id.
            for (ref_id, hash) in keys {
                docstore.set_document_hash(ref_id, hash).await?;
            }
        }
        Ok(())
    }

    /// Writes the cache to `persist_dir/llama_cache` and the docstore (if
    /// any) to `persist_dir/docstore.json`, LlamaIndex's layout.
    pub async fn persist(&self, persist_dir: impl AsRef<Path>) -> Result<()> {
        let dir = persist_dir.as_ref();
        let cache = self.cache.clone();
        let cache_path = dir.join(DEFAULT_CACHE_NAME);
        crate::utils::run_blocking(move || cache.persist(&cache_path)).await?;
        if let Some(docstore) = &self.docstore {
            docstore.persist(&dir.join(DEFAULT_PERSIST_FNAME)).await?;
        }
        Ok(())
    }

    /// Loads the cache from `persist_dir/llama_cache` (an error naming the
    /// file if it is missing, as in Python) and, when
    /// `persist_dir/docstore.json` exists, replaces the docstore with it.
    pub async fn load(&mut self, persist_dir: impl AsRef<Path>) -> Result<()> {
        let dir = persist_dir.as_ref().to_path_buf();
        let (cache, docstore) = crate::utils::run_blocking(move || {
            let cache = IngestionCache::from_persist_path(
                &dir.join(DEFAULT_CACHE_NAME),
                DEFAULT_CACHE_NAME,
            )?;
            let docstore_path = dir.join(DEFAULT_PERSIST_FNAME);
            let docstore = if docstore_path.exists() {
                Some(SimpleDocumentStore::from_persist_path(&docstore_path)?)
            } else {
                None
            };
            Ok((cache, docstore))
        })
        .await?;
        self.cache = cache;
        if let Some(docstore) = docstore {
            self.docstore = Some(Arc::new(docstore));
        }
        Ok(())
    }

    /// [`load`](Self::load) when `persist_dir/llama_cache` exists; `false`
    /// (and nothing changed) otherwise — the first run of an incremental ingest.
    pub async fn load_if_present(&mut self, persist_dir: impl AsRef<Path>) -> Result<bool> {
        if !persist_dir.as_ref().join(DEFAULT_CACHE_NAME).exists() {
            return Ok(false);
        }
        self.load(persist_dir).await?;
        Ok(true)
    }
}

/// The input nodes of one source document, with the id and hash the docstore knows it by.
#[derive(Debug)]
struct Unit {
    ref_id: String,
    hash: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Default)]
struct Plan {
    to_run: Vec<Unit>,
    replace: Vec<String>,
    vanished: Vec<String>,
    skipped: usize,
}

/// Groups nodes by source document, first appearance first. A document on
/// its own keeps LlamaIndex's hash (so a docstore written by Python agrees);
/// the chunks of one document, given pre-split, are hashed together, so that
/// none of them is dropped or duplicated on upsert (LlamaIndex issues
/// #14931, #22046).
fn group_by_document(nodes: Vec<Node>) -> Vec<Unit> {
    let mut groups: IndexMap<String, Vec<Node>> = IndexMap::new();
    for node in nodes {
        let key = node.ref_doc_id().unwrap_or(&node.id_).to_string();
        groups.entry(key).or_default().push(node);
    }
    groups
        .into_iter()
        .map(|(ref_id, nodes)| {
            let hash = match nodes.as_slice() {
                [one] => one.hash(),
                many => {
                    let mut h = Sha256::new();
                    for n in many {
                        h.update(n.hash().as_bytes());
                        h.update(b"-");
                    }
                    hex(&h.finalize())
                }
            };
            Unit {
                ref_id,
                hash,
                nodes,
            }
        })
        .collect()
}

/// Ids of the documents the docstore holds hashes for, leaving out nodes
/// that belong to another document (chunks stored by an index).
async fn stored_document_ids(docstore: &dyn DocStore) -> Result<Vec<String>> {
    let hashes = docstore.get_all_document_hashes().await?;
    let ref_infos = docstore.get_all_ref_doc_info().await?;
    let children: HashSet<&str> = ref_infos
        .values()
        .flat_map(|i| i.node_ids.iter().map(String::as_str))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for id in hashes
        .values()
        .map(String::as_str)
        .chain(ref_infos.keys().map(String::as_str))
    {
        if !children.contains(id) && seen.insert(id) {
            out.push(id.to_string());
        }
    }
    Ok(out)
}

fn ignore_not_found(r: Result<()>) -> Result<()> {
    match r {
        Err(Error::NotFound(_)) => Ok(()),
        other => other,
    }
}

/// Runs one document's nodes through every transformation, each step
/// answered from the cache when its key is there. Returns the nodes and the
/// numbers of cache hits and misses.
async fn transform_unit(
    nodes: Vec<Node>,
    transformations: &[Arc<dyn TransformComponent>],
    cache: Option<&IngestionCache>,
    collection: Option<&str>,
) -> Result<(Vec<Node>, usize, usize)> {
    let (mut hits, mut misses) = (0, 0);
    let mut nodes = nodes;
    for t in transformations {
        let span = tracing::debug_span!(
            "transform",
            component = t.class_name(),
            nodes_in = nodes.len()
        );
        let Some(cache) = cache else {
            nodes = t.transform(nodes).instrument(span).await?;
            misses += 1;
            continue;
        };
        let key = transformation_hash(&nodes, t.as_ref())?;
        if let Some(cached) = cache.get(&key, collection)? {
            hits += 1;
            nodes = cached;
        } else {
            misses += 1;
            nodes = t.transform(nodes).instrument(span).await?;
            cache.put(&key, &nodes, collection);
        }
    }
    Ok((nodes, hits, misses))
}

/// Feeds what it is written into a SHA-256, so nodes are hashed as they
/// serialise, without building their JSON.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The cache key of applying `transformation` to `nodes`.
///
/// LlamaIndex hashes the concatenated contents of the nodes and `str()` of
/// the transformation's settings. That key collides when the same text is
/// cut differently (`["ab", "c"]` and `["a", "bc"]`) and ignores node ids,
/// so a cached result could hand back nodes pointing at another document.
/// ragloom hashes each node's whole serialised form, one after another with
/// a separator that JSON text cannot contain, then the transformation's
/// class name and settings: equal keys mean equal inputs and settings.
pub fn transformation_hash(
    nodes: &[Node],
    transformation: &dyn TransformComponent,
) -> Result<String> {
    let mut h = Sha256::new();
    h.update(b"ragloom-ingestion-cache-v1\n");
    for node in nodes {
        serde_json::to_writer(HashWriter(&mut h), node)?;
        h.update(b"\n");
    }
    h.update(b"\x00");
    h.update(transformation.class_name().as_bytes());
    h.update(b"\x00");
    serde_json::to_writer(HashWriter(&mut h), &transformation.settings())?;
    Ok(hex(&h.finalize()))
}

/// An [`Embedding`] as a pipeline step: sets every node's embedding to the
/// vector of its `MetadataMode::Embed` content, in the model's batches (what
/// a LlamaIndex embed model does when called on nodes).
#[derive(Clone, Debug)]
pub struct EmbeddingTransform {
    embed_model: Arc<dyn Embedding>,
    show_progress: bool,
}

impl EmbeddingTransform {
    /// Embeds with `embed_model`.
    pub fn new(embed_model: Arc<dyn Embedding>) -> Self {
        Self {
            embed_model,
            show_progress: false,
        }
    }

    /// Shows a progress bar over the texts embedded.
    pub fn show_progress(mut self, show: bool) -> Self {
        self.show_progress = show;
        self
    }
}

#[async_trait]
impl TransformComponent for EmbeddingTransform {
    fn class_name(&self) -> &'static str {
        "BaseEmbedding"
    }

    fn settings(&self) -> serde_json::Value {
        json!({
            "model_name": self.embed_model.model_name(),
            "dimensions": self.embed_model.dimensions(),
            "embed_batch_size": self.embed_model.embed_batch_size(),
        })
    }

    async fn transform(&self, mut nodes: Vec<Node>) -> Result<Vec<Node>> {
        let texts: Vec<String> = nodes
            .iter()
            .map(|n| n.get_content(MetadataMode::Embed))
            .collect();
        let vectors =
            embed_in_batches(self.embed_model.as_ref(), &texts, self.show_progress).await?;
        for (node, v) in nodes.iter_mut().zip(vectors) {
            node.embedding = Some(v);
        }
        Ok(nodes)
    }
}
