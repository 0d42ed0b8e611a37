//! `SimpleVectorStore`: the in-process vector store, with LlamaIndex's file
//! format (`default__vector_store.json`), query semantics and result order.
//!
//! Vectors live in one contiguous row-major `f32` buffer with their norms
//! precomputed, so a query is one pass over memory (split across cores for
//! large stores). Beside it the store keeps each vector's values exactly as
//! given (`f64`, as read from a file) when they are not exactly `f32`s, so
//! that persisting writes back what was loaded, digit for digit; a store built
//! from nodes (whose embeddings are `f32`) keeps only the `f32` buffer.
//!
//! Query semantics, as LlamaIndex 0.14.25's `SimpleVectorStore`, except where noted:
//! - `filters`, `node_ids` and `doc_ids` restrict the candidates before
//!   scoring. LlamaIndex ignores `doc_ids`; ragloom keeps only nodes whose
//!   ref doc id is listed. Nested filters are evaluated (LlamaIndex raises).
//!   The rows a filter keeps are remembered until the next write, so
//!   repeating a query's filters (a retriever's fixed filters) skips them;
//!   and top-level `==`, `in [...]`, `<`, `<=`, `>`, `>=` filters of an
//!   `and` group look their rows up in a sorted index of their key (built
//!   on first use, dropped at the next write), so new values each query do
//!   not visit every row.
//! - Scores are cosine similarity by default (dot product or negated
//!   Euclidean distance with [`SimpleVectorStore::with_similarity_mode`]).
//!   A zero vector has cosine 0.0 with everything (LlamaIndex: NaN).
//! - `similarity_top_k` results, best first; 0 means all, as in LlamaIndex.
//!   Equal scores come out in exactly LlamaIndex's order: its
//!   `get_top_k_embeddings` keeps a `heapq` of `(score, node_id)` tuples and
//!   stable-sorts it by score, so among equal scores the larger ids win the
//!   last places, and their order is the heap's layout. ragloom replays the
//!   same heap operations (skipping those that provably leave it unchanged).
//! - [`VectorStoreQueryMode::Mmr`] is LlamaIndex's `get_top_k_mmr_embeddings`
//!   (threshold `mmr_threshold`, default 0.5; the scores returned are MMR
//!   scores). The threshold comes from [`VectorStoreQuery::mmr_threshold`]
//!   (LlamaIndex reads it from the query call's keyword arguments). Other
//!   modes, the learner ones (SVM, regressions) included, are
//!   [`Error::Unsupported`].
//! - Scores are computed from the `f32` vectors, so they differ from Python's
//!   float64 ones by about 1e-7.
//!
//! Adding a node without an embedding, with a non-finite value, or with a
//! length other than the store's is an error naming the node, and leaves the
//! store untouched (LlamaIndex accepts such nodes and fails at query time).
//!
//! Files: ids in `text_id_to_ref_doc_id` or `metadata_dict` without an
//! embedding are dropped on load; a node without a `metadata_dict` entry
//! filters as if its metadata were empty; an integer inside an embedding is
//! written back as a float (`1` becomes `1.0`, as Python would store it).
//!
//! One file per job: `data` (the columns), `candidates` (filters, the rows
//! they keep, key indexes), `scoring` (similarity, top k, MMR), `file`
//! (reading and writing the JSON); this file is the store and its trait.

mod candidates;
mod data;
mod file;
mod scoring;
#[cfg(test)]
mod tests;

use super::types::{
    DEFAULT_PERSIST_FNAME, NAMESPACE_SEP, VectorStoreQuery, VectorStoreQueryMode,
    VectorStoreQueryResult,
};
use super::utils::{check_embeddings, metadata_dict_without_content};
use super::{MetadataFilters, VectorStore};
use crate::embeddings::SimilarityMode;
use crate::error::{Error, Result};
use crate::schema::Node;
use crate::utils::write_atomic;
use async_trait::async_trait;
use candidates::{CandidateCache, KeyIndexes, row_matches};
use data::Data;
use file::FileSeed;
pub use scoring::ExactSearch;
use scoring::*;
use serde::de::DeserializeSeed;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Below this many stored floats a query scans on the calling thread:
/// splitting work across threads costs more than it saves on small stores.
const PARALLEL_MIN_FLOATS: usize = 1 << 18;
/// Below this many candidates, filters are evaluated on the calling thread.
const PARALLEL_MIN_ROWS: usize = 4096;
/// Smallest piece of work handed to one thread.
const PARALLEL_CHUNK_ROWS: usize = 1024;
/// LlamaIndex's in-process vector store: embeddings, ref doc ids and metadata
/// (not text: [`VectorStore::stores_text`] is false), persisted as
/// `default__vector_store.json`. Share it as `Arc<SimpleVectorStore>`; reads
/// run concurrently, writes take a lock.
pub struct SimpleVectorStore {
    data: RwLock<Data>,
    similarity_mode: SimilarityMode,
    /// Bumped by every write, so cached candidates know when they are stale.
    generation: AtomicU64,
    /// The rows the last filtered query kept: a retriever with fixed filters
    /// evaluates them once per version of the store, not once per query.
    candidate_cache: Mutex<Option<CandidateCache>>,
    /// Sorted indexes over the metadata keys filters have used, for one
    /// version of the store: `key == v` or `key >= v` with a new `v` each
    /// query visits the matching rows, not every row.
    key_indexes: Mutex<KeyIndexes>,
}

impl Default for SimpleVectorStore {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SimpleVectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data = self.read();
        f.debug_struct("SimpleVectorStore")
            .field("len", &data.len())
            .field("dim", &data.dim)
            .field("similarity_mode", &self.similarity_mode)
            .finish()
    }
}

impl SimpleVectorStore {
    /// An empty store scoring by cosine similarity.
    pub fn new() -> Self {
        Self::with_data(Data::default())
    }

    fn with_data(data: Data) -> Self {
        Self {
            data: RwLock::new(data),
            similarity_mode: SimilarityMode::Cosine,
            generation: AtomicU64::new(0),
            candidate_cache: Mutex::new(None),
            key_indexes: Mutex::new(KeyIndexes::default()),
        }
    }

    /// Scores with `mode` instead of cosine similarity (not persisted: the
    /// file format has no place for it).
    pub fn with_similarity_mode(mut self, mode: SimilarityMode) -> Self {
        self.similarity_mode = mode;
        self
    }

    /// How this store scores.
    pub fn similarity_mode(&self) -> SimilarityMode {
        self.similarity_mode
    }

    /// Loads a store persisted at `persist_path` (by ragloom or by LlamaIndex).
    /// A missing file is an [`Error::Io`], a malformed one an
    /// [`Error::CorruptFile`]; both name the file. Unknown top-level keys are ignored.
    pub fn from_persist_path(persist_path: impl AsRef<Path>) -> Result<Self> {
        let path = persist_path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
        // Node ids Python wrote from names that are not UTF-8 hold lone surrogates.
        let bytes = crate::utils::replace_lone_surrogates(&bytes);
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let data = FileSeed
            .deserialize(&mut de)
            .and_then(|d| de.end().map(|()| d))
            .map_err(|e| Error::corrupt(path, e))?;
        Ok(Self::with_data(data))
    }

    /// Loads `{namespace}__vector_store.json` from `persist_dir` (LlamaIndex
    /// `from_persist_dir`; the default namespace is `"default"`).
    pub fn from_persist_dir(persist_dir: impl AsRef<Path>, namespace: &str) -> Result<Self> {
        Self::from_persist_path(Self::persist_path_in(persist_dir, namespace))
    }

    /// Where a store of `namespace` lives inside `persist_dir`.
    pub fn persist_path_in(persist_dir: impl AsRef<Path>, namespace: &str) -> PathBuf {
        persist_dir
            .as_ref()
            .join(format!("{namespace}{NAMESPACE_SEP}{DEFAULT_PERSIST_FNAME}"))
    }

    /// How many vectors the store holds.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the store holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the stored vectors (`None` while empty).
    pub fn dim(&self) -> Option<usize> {
        let data = self.read();
        (data.len() > 0).then_some(data.dim)
    }

    /// The stored node ids, in insertion order.
    pub fn node_ids(&self) -> Vec<String> {
        self.read().ids.clone()
    }

    /// The embedding stored for `text_id` (LlamaIndex `get`), as given.
    pub fn get(&self, text_id: &str) -> Result<Vec<f64>> {
        let data = self.read();
        let r = *data
            .rows
            .get(text_id)
            .ok_or_else(|| Error::NotFound(format!("node `{text_id}` in SimpleVectorStore")))?;
        Ok(data.values(r))
    }

    fn read(&self) -> RwLockReadGuard<'_, Data> {
        // A panic elsewhere while holding the lock cannot leave `Data`
        // half-updated in a way queries would trip on: every mutation
        // validates first, so the data is still usable.
        self.data.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Data> {
        let guard = self.data.write().unwrap_or_else(PoisonError::into_inner);
        // Readers compare generations under the read lock, so bumping while
        // the write lock is held orders every cached entry before this write.
        self.generation.fetch_add(1, Ordering::Relaxed);
        guard
    }

    fn add_nodes(&self, nodes: &[Node]) -> Result<Vec<String>> {
        let mut data = self.write();
        // Validate everything first, so a bad node leaves the store untouched.
        check_embeddings(nodes, (data.len() > 0).then_some(data.dim))?;
        let mut ids = Vec::with_capacity(nodes.len());
        for node in nodes {
            let embedding = node.embedding.as_deref().unwrap_or_default();
            let ref_doc_id = node.ref_doc_id().unwrap_or("None").to_string();
            data.upsert(
                &node.id_,
                embedding.iter().map(|v| f64::from(*v)),
                Some(ref_doc_id),
                Some(metadata_dict_without_content(node)),
            );
            ids.push(node.id_.clone());
        }
        Ok(ids)
    }

    fn query_sync(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        if !matches!(
            query.mode,
            VectorStoreQueryMode::Default | VectorStoreQueryMode::Mmr
        ) {
            return Err(Error::Unsupported(format!(
                "SimpleVectorStore does not support query mode `{}`",
                query.mode.as_str()
            )));
        }
        let embedding = query
            .query_embedding
            .as_deref()
            .ok_or_else(|| Error::InvalidInput("the query has no query_embedding".to_string()))?;
        let data = self.read();
        if data.len() == 0 {
            return Ok(VectorStoreQueryResult::default());
        }
        if embedding.len() != data.dim {
            return Err(Error::InvalidInput(format!(
                "the query embedding has {} dimensions, the store holds {}",
                embedding.len(),
                data.dim
            )));
        }
        if embedding.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(
                "the query embedding holds a non-finite value".to_string(),
            ));
        }
        if query.filters.is_some() && data.metadata.iter().all(Option::is_none) {
            return Err(Error::InvalidInput(
                "cannot filter a SimpleVectorStore persisted without metadata; \
                 rebuild it with metadata to enable filtering"
                    .to_string(),
            ));
        }
        let candidates = self.cached_candidates(&data, query);
        let scorer = Scorer::new(&data, embedding, self.similarity_mode);
        let scores = scorer.score_rows(candidates.as_deref().map(Vec::as_slice), data.len());
        let rows = |i: usize| candidates.as_ref().map_or(i, |c| c[i]);
        let picked = match query.mode {
            VectorStoreQueryMode::Mmr => {
                let threshold = query.mmr_threshold.map_or(0.5, widen_decimal);
                mmr(&scorer, &scores, rows, query.similarity_top_k, threshold)
            }
            _ => python_top_k(&scores, &data.ids, rows, query.similarity_top_k),
        };
        let (similarities, ids) = picked
            .into_iter()
            .map(|(score, row)| (score as f32, data.ids[row].clone()))
            .unzip();
        Ok(VectorStoreQueryResult {
            nodes: None,
            similarities,
            ids,
        })
    }
}

#[async_trait]
impl VectorStore for SimpleVectorStore {
    fn stores_text(&self) -> bool {
        false
    }

    async fn add(&self, nodes: &[Node]) -> Result<Vec<String>> {
        self.add_nodes(nodes)
    }

    async fn delete(&self, ref_doc_id: &str) -> Result<()> {
        let mut data = self.write();
        let doomed: Vec<bool> = data
            .ref_doc_ids
            .iter()
            .map(|d| d.as_deref() == Some(ref_doc_id))
            .collect();
        data.retain(|r| !doomed[r]);
        Ok(())
    }

    /// Deletes the listed nodes that also match `filters`, read as
    /// [`super::delete_selection`] reads them.
    async fn delete_nodes(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<()> {
        let Some(sel) = super::delete_selection(node_ids, filters)? else {
            return Ok(());
        };
        let mut data = self.write();
        let listed: Option<HashSet<&str>> = sel
            .node_ids
            .map(|ids| ids.iter().map(String::as_str).collect());
        let doomed: Vec<bool> = (0..data.len())
            .map(|r| {
                listed
                    .as_ref()
                    .is_none_or(|l| l.contains(data.ids[r].as_str()))
                    && sel.filters.is_none_or(|f| row_matches(&data, r, f))
            })
            .collect();
        data.retain(|r| !doomed[r]);
        Ok(())
    }

    async fn query(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        self.query_sync(query)
    }

    async fn clear(&self) -> Result<()> {
        *self.write() = Data::default();
        Ok(())
    }

    /// Writes the store to `persist_path` as LlamaIndex's `json.dump` writes
    /// it (same keys, order, separators, number formats and `\uXXXX` escapes),
    /// streaming, through a temporary file renamed into place.
    async fn persist(&self, persist_path: &Path) -> Result<()> {
        write_atomic(persist_path, |out| self.write_json(out))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
