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

use super::filters::matches;
use super::key_index::{KeyIndex, Narrowed, narrowed_rows, narrowing_keys};
use super::types::{
    DEFAULT_PERSIST_FNAME, NAMESPACE_SEP, VectorStoreQuery, VectorStoreQueryMode,
    VectorStoreQueryResult,
};
use super::utils::{check_embeddings, metadata_dict_without_content};
use super::{MetadataFilters, VectorStore};
use crate::embeddings::SimilarityMode;
use crate::embeddings::similarity::{dot, l2};
use crate::error::{Error, Result};
use crate::schema::{Metadata, Node, float_repr};
use crate::utils::{write_atomic, write_python_json};
use async_trait::async_trait;
use rayon::prelude::*;
use serde::Deserializer;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Below this many stored floats a query scans on the calling thread:
/// splitting work across threads costs more than it saves on small stores.
const PARALLEL_MIN_FLOATS: usize = 1 << 18;
/// Below this many candidates, filters are evaluated on the calling thread.
const PARALLEL_MIN_ROWS: usize = 4096;
/// Smallest piece of work handed to one thread.
const PARALLEL_CHUNK_ROWS: usize = 1024;
/// Rows formatted by one thread at a time when persisting.
const PERSIST_PIECE_ROWS: usize = 256;
/// Rows formatted before being written: bounds the memory a persist takes
/// (about 8 KB per row of 384 floats).
const PERSIST_ROUND_ROWS: usize = 4096;

/// The store's contents. Row `r` of every column describes one node; rows
/// stay in insertion order (as Python's dicts do), which decides tie order.
#[derive(Default)]
struct Data {
    /// Length of every vector; 0 while the store is empty.
    dim: usize,
    ids: Vec<String>,
    /// Node id to row.
    rows: HashMap<String, usize>,
    /// `ids.len() * dim` floats, row-major, for scoring.
    vectors: Vec<f32>,
    /// The Euclidean norm of each row of `vectors`.
    norms: Vec<f64>,
    /// The values as given, same layout as `vectors`, for persisting; `None`
    /// while every value is exactly its `f32` (always so for nodes, whose
    /// embeddings are `f32`), so such stores hold 4 bytes per value, not 12.
    wide: Option<Vec<f64>>,
    /// `text_id_to_ref_doc_id`: `None` only for a file that lacked the entry.
    ref_doc_ids: Vec<Option<String>>,
    /// `metadata_dict`: `None` only for a file that lacked the entry.
    metadata: Vec<Option<Metadata>>,
}

impl Data {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn row(&self, r: usize) -> &[f32] {
        &self.vectors[r * self.dim..(r + 1) * self.dim]
    }

    /// Row `r`'s values as given.
    fn values(&self, r: usize) -> Vec<f64> {
        let span = r * self.dim..(r + 1) * self.dim;
        match &self.wide {
            Some(wide) => wide[span].to_vec(),
            None => self.vectors[span].iter().map(|v| f64::from(*v)).collect(),
        }
    }

    /// Number of floats in the scoring buffer (rows × dimension).
    #[cfg(test)]
    fn buffer_len(&self) -> usize {
        self.vectors.len()
    }

    /// Appends a row, or overwrites the row of an id already present (where
    /// Python's dict assignment keeps the key's position).
    fn upsert(
        &mut self,
        id: &str,
        values: impl ExactSizeIterator<Item = f64> + Clone,
        ref_doc_id: Option<String>,
        metadata: Option<Metadata>,
    ) {
        if self.len() == 0 {
            self.dim = values.len();
        }
        let vector: Vec<f32> = values.clone().map(|v| v as f32).collect();
        let norm = dot(&vector, &vector).sqrt();
        let exact = values
            .clone()
            .zip(&vector)
            .all(|(v, f)| v.to_bits() == f64::from(*f).to_bits());
        if !exact && self.wide.is_none() {
            self.wide = Some(self.vectors.iter().map(|v| f64::from(*v)).collect());
        }
        match self.rows.get(id) {
            Some(&r) => {
                let span = r * self.dim..(r + 1) * self.dim;
                self.vectors[span.clone()].copy_from_slice(&vector);
                if let Some(wide) = &mut self.wide {
                    for (slot, v) in wide[span].iter_mut().zip(values) {
                        *slot = v;
                    }
                }
                self.norms[r] = norm;
                self.ref_doc_ids[r] = ref_doc_id;
                self.metadata[r] = metadata;
            }
            None => {
                self.rows.insert(id.to_string(), self.len());
                self.ids.push(id.to_string());
                self.vectors.extend_from_slice(&vector);
                if let Some(wide) = &mut self.wide {
                    wide.extend(values);
                }
                self.norms.push(norm);
                self.ref_doc_ids.push(ref_doc_id);
                self.metadata.push(metadata);
            }
        }
    }

    /// Drops the rows for which `keep` is false, moving the rest down in
    /// order, so the buffers stay contiguous and scans never touch dead rows.
    fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        let n = self.len();
        let dim = self.dim;
        let mut w = 0;
        for r in 0..n {
            if !keep(r) {
                continue;
            }
            if w != r {
                self.vectors.copy_within(r * dim..(r + 1) * dim, w * dim);
                if let Some(wide) = &mut self.wide {
                    wide.copy_within(r * dim..(r + 1) * dim, w * dim);
                }
                self.ids.swap(w, r);
                self.norms.swap(w, r);
                self.ref_doc_ids.swap(w, r);
                self.metadata.swap(w, r);
            }
            w += 1;
        }
        if w == n {
            return;
        }
        self.ids.truncate(w);
        self.norms.truncate(w);
        self.ref_doc_ids.truncate(w);
        self.metadata.truncate(w);
        self.vectors.truncate(w * dim);
        // Give memory back once most of it is dead.
        let shrink = self.vectors.capacity() > 2 * self.vectors.len();
        if shrink {
            self.vectors.shrink_to_fit();
        }
        if let Some(wide) = &mut self.wide {
            wide.truncate(w * dim);
            if shrink {
                wide.shrink_to_fit();
            }
        }
        self.rows = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        if w == 0 {
            *self = Data::default();
        }
    }
}

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

/// The metadata key indexes of one store version, built on first use.
#[derive(Default)]
struct KeyIndexes {
    generation: u64,
    by_key: HashMap<String, Arc<KeyIndex>>,
}

/// The candidate rows of one set of filters at one store version.
struct CandidateCache {
    generation: u64,
    /// `filters` and `doc_ids` of the query, as JSON.
    key: String,
    rows: Arc<Vec<usize>>,
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

    /// [`candidates`], reusing the rows of the previous query when its
    /// filters and `doc_ids` were the same and nothing was written since.
    fn cached_candidates(&self, data: &Data, query: &VectorStoreQuery) -> Option<Arc<Vec<usize>>> {
        let filtered =
            query.filters.as_ref().is_some_and(|f| !f.is_empty()) || query.doc_ids.is_some();
        let key = if filtered && query.node_ids.is_none() {
            serde_json::to_string(&(&query.filters, &query.doc_ids)).ok()
        } else {
            None
        };
        let Some(key) = key else {
            return candidates(data, query, self.narrowed(data, query)).map(Arc::new);
        };
        let generation = self.generation.load(Ordering::Relaxed);
        {
            let cache = self
                .candidate_cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(hit) = cache
                .as_ref()
                .filter(|c| c.generation == generation && c.key == key)
            {
                return Some(Arc::clone(&hit.rows));
            }
        }
        let rows = Arc::new(candidates(data, query, self.narrowed(data, query))?);
        *self
            .candidate_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(CandidateCache {
            generation,
            key,
            rows: Arc::clone(&rows),
        });
        Some(rows)
    }

    /// The rows the query's top-level indexable filters allow, from the key
    /// indexes (built for this store version if missing); `None` when no
    /// filter narrows or the query names its node ids (a short list already).
    fn narrowed(&self, data: &Data, query: &VectorStoreQuery) -> Option<Narrowed> {
        let filters = query.filters.as_ref()?;
        if query.node_ids.is_some() {
            return None;
        }
        let keys = narrowing_keys(filters);
        if keys.is_empty() {
            return None;
        }
        // The generation is stable while `data`'s read lock is held.
        let generation = self.generation.load(Ordering::Relaxed);
        let mut indexes = self
            .key_indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if indexes.generation != generation {
            indexes.by_key.clear();
            indexes.generation = generation;
        }
        for key in keys {
            if !indexes.by_key.contains_key(key) {
                let index = Arc::new(KeyIndex::build(&data.metadata, key));
                indexes.by_key.insert(key.to_string(), index);
            }
        }
        narrowed_rows(filters, |key| indexes.by_key.get(key).cloned())
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

    fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let data = self.read();
        out.write_all(b"{\"embedding_dict\": {")?;
        // Formatting the floats is most of the work: rows are formatted in
        // pieces across threads, a bounded round at a time, and written in order.
        let n = data.len();
        let mut start = 0;
        while start < n {
            let end = n.min(start + PERSIST_ROUND_ROWS);
            let pieces: Vec<Vec<u8>> = (start..end)
                .step_by(PERSIST_PIECE_ROWS)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|first| {
                    let mut piece = Vec::new();
                    for r in first..end.min(first + PERSIST_PIECE_ROWS) {
                        write_row(&data, r, &mut piece)?;
                    }
                    Ok(piece)
                })
                .collect::<std::io::Result<_>>()?;
            for piece in pieces {
                out.write_all(&piece)?;
            }
            start = end;
        }
        out.write_all(b"}, \"text_id_to_ref_doc_id\": {")?;
        let mut first = true;
        for (r, ref_doc_id) in data.ref_doc_ids.iter().enumerate() {
            if let Some(ref_doc_id) = ref_doc_id {
                if !std::mem::take(&mut first) {
                    out.write_all(b", ")?;
                }
                write_python_json(out, &data.ids[r])?;
                out.write_all(b": ")?;
                write_python_json(out, ref_doc_id)?;
            }
        }
        out.write_all(b"}, \"metadata_dict\": {")?;
        let mut first = true;
        for (r, metadata) in data.metadata.iter().enumerate() {
            if let Some(metadata) = metadata {
                if !std::mem::take(&mut first) {
                    out.write_all(b", ")?;
                }
                write_python_json(out, &data.ids[r])?;
                out.write_all(b": ")?;
                write_python_json(out, metadata)?;
            }
        }
        out.write_all(b"}}")
    }
}

/// Appends row `r` of `embedding_dict`: `"id": [v, v, ...]`, after `", "`
/// unless it is the first row.
fn write_row(data: &Data, r: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    if r > 0 {
        out.extend_from_slice(b", ");
    }
    write_python_json(out, &data.ids[r])?;
    out.extend_from_slice(b": [");
    let span = r * data.dim..(r + 1) * data.dim;
    match &data.wide {
        Some(wide) => {
            for (i, v) in wide[span].iter().enumerate() {
                push_float(out, i, *v);
            }
        }
        None => {
            for (i, v) in data.vectors[span].iter().enumerate() {
                push_float(out, i, f64::from(*v));
            }
        }
    }
    out.push(b']');
    Ok(())
}

/// Appends `v` as Python's `repr(float)` writes it, after `", "` unless it is
/// the first value of its list.
///
/// The shortest round-trip digits (Ryū, through serde_json's formatter) are
/// what Python prints too; the two only lay them out differently for
/// exponents outside `-4..16` (`1e-05`, `1e+16`) and at `-5` (`0.00001`),
/// which take the slower general path.
fn push_float(out: &mut Vec<u8>, i: usize, v: f64) {
    if i > 0 {
        out.extend_from_slice(b", ");
    }
    let start = out.len();
    if v.is_finite() && CompactFormatter.write_f64(out, v).is_ok() {
        let written = &out[start..];
        let digits = written.strip_prefix(b"-").unwrap_or(written);
        // An exponent is at most `e-324`: only the last five bytes can hold the `e`.
        let tail = &digits[digits.len().saturating_sub(5)..];
        if !tail.contains(&b'e') && !digits.starts_with(b"0.0000") {
            return;
        }
    }
    out.truncate(start);
    out.extend_from_slice(float_repr(v).as_bytes());
}

/// An `f32` setting as the decimal the user wrote (0.3, not 0.30000001192...),
/// so that MMR arithmetic matches Python's to the last bit where it can.
fn widen_decimal(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// The rows a query may return, in row order; `None` when every row may.
/// `narrowed`, when given, holds every row the filters can match: only
/// those are checked, and when they are exactly the matches, none are.
fn candidates(
    data: &Data,
    query: &VectorStoreQuery,
    narrowed: Option<Narrowed>,
) -> Option<Vec<usize>> {
    let filters = query.filters.as_ref().filter(|f| !f.is_empty());
    if filters.is_none() && query.node_ids.is_none() && query.doc_ids.is_none() {
        return None;
    }
    let doc_ids: Option<HashSet<&str>> = query
        .doc_ids
        .as_ref()
        .map(|d| d.iter().map(String::as_str).collect());
    let keep = |r: usize| {
        let in_docs = doc_ids.as_ref().is_none_or(|docs| {
            data.ref_doc_ids[r]
                .as_deref()
                .is_some_and(|d| docs.contains(d))
        });
        if !in_docs {
            return false;
        }
        match filters {
            Some(f) => row_matches(data, r, f),
            None => true,
        }
    };
    // A short id list is looked up rather than scanned for.
    let pool: Vec<usize> = match &query.node_ids {
        Some(ids) => {
            let mut rows: Vec<usize> = ids
                .iter()
                .filter_map(|id| data.rows.get(id))
                .copied()
                .collect();
            rows.sort_unstable();
            rows.dedup();
            rows
        }
        None => match narrowed {
            Some(n) if n.exact && query.doc_ids.is_none() => return Some(n.rows),
            Some(n) => n.rows,
            None => (0..data.len()).collect(),
        },
    };
    Some(if pool.len() >= PARALLEL_MIN_ROWS {
        pool.into_par_iter()
            .with_min_len(PARALLEL_CHUNK_ROWS)
            .filter(|&r| keep(r))
            .collect()
    } else {
        pool.into_iter().filter(|&r| keep(r)).collect()
    })
}

fn row_matches(data: &Data, r: usize, filters: &MetadataFilters) -> bool {
    static EMPTY: std::sync::OnceLock<Metadata> = std::sync::OnceLock::new();
    let metadata = data.metadata[r]
        .as_ref()
        .unwrap_or_else(|| EMPTY.get_or_init(Metadata::new));
    matches(filters, metadata)
}

/// Scores rows against one query embedding.
struct Scorer<'a> {
    data: &'a Data,
    query: &'a [f32],
    query_norm: f64,
    mode: SimilarityMode,
}

impl<'a> Scorer<'a> {
    fn new(data: &'a Data, query: &'a [f32], mode: SimilarityMode) -> Self {
        Self {
            data,
            query,
            query_norm: dot(query, query).sqrt(),
            mode,
        }
    }

    /// The similarity of row `r` with the query, never NaN.
    fn score(&self, r: usize) -> f64 {
        self.similarity(self.query, self.query_norm, r)
    }

    /// The similarity of two stored rows (MMR's redundancy term).
    fn between(&self, a: usize, b: usize) -> f64 {
        self.similarity(self.data.row(a), self.data.norms[a], b)
    }

    /// The similarity of `v` (whose norm is `norm`) with row `r`; NaN (from
    /// values overflowing `f32`) ranks below everything.
    fn similarity(&self, v: &[f32], norm: f64, r: usize) -> f64 {
        let row = self.data.row(r);
        let s = match self.mode {
            // Same grouping as numpy's `dot / (norm(q) * norm(row))`, so equal
            // scores in Python are equal here too.
            SimilarityMode::Cosine => cosine(dot(v, row), norm, self.data.norms[r]),
            SimilarityMode::DotProduct => dot(v, row),
            SimilarityMode::Euclidean => -l2(v, row),
        };
        if s.is_nan() { f64::NEG_INFINITY } else { s }
    }

    /// Scores of `rows` (every row when `None`), in order.
    fn score_rows(&self, rows: Option<&[usize]>, total: usize) -> Vec<f64> {
        let n = rows.map_or(total, <[usize]>::len);
        let parallel = n * self.data.dim >= PARALLEL_MIN_FLOATS;
        match (rows, parallel) {
            (None, false) => (0..n).map(|r| self.score(r)).collect(),
            (Some(rows), false) => rows.iter().map(|&r| self.score(r)).collect(),
            (None, true) => (0..n)
                .into_par_iter()
                .with_min_len(PARALLEL_CHUNK_ROWS)
                .map(|r| self.score(r))
                .collect(),
            (Some(rows), true) => rows
                .par_iter()
                .with_min_len(PARALLEL_CHUNK_ROWS)
                .map(|&r| self.score(r))
                .collect(),
        }
    }
}

fn cosine(dot: f64, norm_a: f64, norm_b: f64) -> f64 {
    if norm_a == 0.0 || norm_b == 0.0 {
        0.0
    } else {
        dot / (norm_a * norm_b)
    }
}

/// LlamaIndex's `get_top_k_embeddings`, result for result and in the same
/// order: `heapq.heappush((score, id))` for every candidate, `heappop` when
/// the heap outgrows `k` (0: never), then a stable sort by score, descending.
///
/// A push followed by a pop of an item smaller than the heap's root leaves
/// the heap exactly as it was, so such candidates (almost all, on a large
/// store) cost one comparison. Returns `(score, row)` pairs.
fn python_top_k(
    scores: &[f64],
    ids: &[String],
    row_of: impl Fn(usize) -> usize,
    k: usize,
) -> Vec<(f64, usize)> {
    // Python compares the tuples: score first, then the id string.
    let less = |a: &(f64, usize), b: &(f64, usize)| {
        if a.0 == b.0 {
            ids[a.1] < ids[b.1]
        } else {
            a.0 < b.0
        }
    };
    let bound = if k == 0 {
        scores.len()
    } else {
        k.min(scores.len())
    };
    let mut heap: Vec<(f64, usize)> = Vec::with_capacity(bound + 1);
    for (i, &score) in scores.iter().enumerate() {
        let item = (score, row_of(i));
        if k > 0 && heap.len() == k && less(&item, &heap[0]) {
            continue;
        }
        heap.push(item);
        let last = heap.len() - 1;
        sift_down(&mut heap, 0, last, &less);
        if k > 0 && heap.len() > k {
            heap_pop(&mut heap, &less);
        }
    }
    heap.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    heap
}

/// `heapq._siftdown`: moves the item at `pos` up towards `start`.
fn sift_down<T: Copy>(
    heap: &mut [T],
    start: usize,
    mut pos: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let item = heap[pos];
    while pos > start {
        let parent = (pos - 1) / 2;
        if less(&item, &heap[parent]) {
            heap[pos] = heap[parent];
            pos = parent;
        } else {
            break;
        }
    }
    heap[pos] = item;
}

/// `heapq._siftup`: sends the item at `pos` to a leaf along smaller
/// children, then back up with `sift_down`.
fn sift_up<T: Copy>(heap: &mut [T], mut pos: usize, less: &impl Fn(&T, &T) -> bool) {
    let end = heap.len();
    let start = pos;
    let item = heap[pos];
    let mut child = 2 * pos + 1;
    while child < end {
        let right = child + 1;
        if right < end && !less(&heap[child], &heap[right]) {
            child = right;
        }
        heap[pos] = heap[child];
        pos = child;
        child = 2 * pos + 1;
    }
    heap[pos] = item;
    sift_down(heap, start, pos, less);
}

/// `heapq.heappop`, discarding the smallest item.
fn heap_pop<T: Copy>(heap: &mut Vec<T>, less: &impl Fn(&T, &T) -> bool) {
    let Some(last) = heap.pop() else { return };
    if !heap.is_empty() {
        heap[0] = last;
        sift_up(heap, 0, less);
    }
}

/// LlamaIndex's `get_top_k_mmr_embeddings`: the first pick maximises
/// `threshold * score`; each next pick maximises
/// `threshold * score - (1 - threshold) * similarity(candidate, previous pick)`
/// (only the latest pick, as in LlamaIndex). Ties go to the earliest row.
fn mmr(
    scorer: &Scorer<'_>,
    scores: &[f64],
    row_of: impl Fn(usize) -> usize,
    k: usize,
    threshold: f64,
) -> Vec<(f64, usize)> {
    let n = scores.len();
    let mut best: Option<(f64, usize)> = None;
    for (i, s) in scores.iter().enumerate() {
        let v = s * threshold;
        if best.is_none_or(|(b, _)| v > b) {
            best = Some((v, i));
        }
    }
    let mut remaining: Vec<usize> = (0..n).collect();
    let want = if k == 0 { n } else { k.min(n) };
    let mut out = Vec::with_capacity(want);
    while out.len() < want {
        let Some((score, pick)) = best else { break };
        out.push((score, row_of(pick)));
        remaining.retain(|&i| i != pick);
        best = None;
        for &i in &remaining {
            let overlap = scorer.between(row_of(i), row_of(pick));
            let v = threshold * scores[i] - (1.0 - threshold) * overlap;
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, i));
            }
        }
    }
    out
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

// ---- reading the file -------------------------------------------------------

/// Reads a whole `vector_store.json` straight into [`Data`], the vectors
/// into the contiguous buffers without an intermediate JSON tree.
struct FileSeed;

impl<'de> DeserializeSeed<'de> for FileSeed {
    type Value = Data;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Data, D::Error> {
        deserializer.deserialize_map(FileVisitor)
    }
}

struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = Data;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a SimpleVectorStore object with `embedding_dict`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
        let mut data = Data::default();
        let mut refs: Option<serde_json::Map<String, Value>> = None;
        let mut metadata: Option<serde_json::Map<String, Value>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "embedding_dict" => map.next_value_seed(EmbeddingDictSeed(&mut data))?,
                "text_id_to_ref_doc_id" => refs = map.next_value()?,
                "metadata_dict" => metadata = map.next_value()?,
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        // Entries for ids without an embedding cannot be queried; they are dropped.
        for (id, value) in refs.unwrap_or_default() {
            let Some(&r) = data.rows.get(&id) else {
                continue;
            };
            data.ref_doc_ids[r] = match value {
                Value::String(s) => Some(s),
                Value::Null => None,
                other => {
                    return Err(de::Error::custom(format!(
                        "text_id_to_ref_doc_id of `{id}` is not a string: {other}"
                    )));
                }
            };
        }
        for (id, value) in metadata.unwrap_or_default() {
            let Some(&r) = data.rows.get(&id) else {
                continue;
            };
            data.metadata[r] = match value {
                Value::Object(m) => Some(m),
                Value::Null => None,
                other => {
                    return Err(de::Error::custom(format!(
                        "metadata_dict of `{id}` is not an object: {other}"
                    )));
                }
            };
        }
        Ok(data)
    }
}

struct EmbeddingDictSeed<'a>(&'a mut Data);

impl<'de> DeserializeSeed<'de> for EmbeddingDictSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EmbeddingDictSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`embedding_dict`: an object of node id to list of numbers")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let data = self.0;
        let mut row: Vec<f64> = Vec::new();
        while let Some(id) = map.next_key::<String>()? {
            row.clear();
            map.next_value_seed(RowSeed(&mut row))
                .map_err(|e| de::Error::custom(format!("embedding of `{id}`: {e}")))?;
            if row.is_empty() {
                return Err(de::Error::custom(format!("embedding of `{id}` is empty")));
            }
            if data.len() > 0 && row.len() != data.dim {
                return Err(de::Error::custom(format!(
                    "embedding of `{id}` has {} values, the others have {}",
                    row.len(),
                    data.dim
                )));
            }
            data.upsert(&id, row.iter().copied(), None, None);
        }
        Ok(())
    }
}

/// One embedding: a list of numbers, appended to a reused buffer.
struct RowSeed<'a>(&'a mut Vec<f64>);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of numbers")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<f64>()? {
            self.0.push(v);
        }
        Ok(())
    }
}

// ---- writing the file as Python's json.dump does ------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_floats_are_python_reprs() {
        let mut specials = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1e-4,
            1.5e-4,
            1e-5,
            9.999e-5,
            0.00012345,
            1e15,
            1e16,
            9.999999999999998e15,
            1.5e16,
            123456789.0,
            1e300,
            5e-324,
            -2.5e-7,
            0.5,
            3.0,
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if f.is_finite() {
                specials.push(f);
            }
            // Values like embeddings: f32s of every magnitude, widened.
            let g = f64::from(f32::from_bits((x >> 32) as u32));
            if g.is_finite() {
                specials.push(g);
            }
        }
        for v in specials {
            let mut out = Vec::new();
            push_float(&mut out, 0, v);
            let fast = String::from_utf8(out).unwrap_or_default();
            let general = float_repr(v);
            // Both are shortest round-trip digits in Python's layout; they may
            // differ only where two shortest candidates are equally near, and
            // there Python (as Ryū) rounds half to even (the table below).
            assert_eq!(fast.parse::<f64>().ok(), Some(v), "{fast}");
            assert_eq!(fast.len(), general.len(), "{v:e}: {fast} vs {general}");
            assert_eq!(
                fast.contains('e'),
                general.contains('e'),
                "{v:e}: {fast} vs {general}"
            );
        }
        // Python's repr of f32 values whose exact expansion ends in a tie.
        for (exact, python) in [
            ("750.34869384765625", "750.3486938476562"),
            ("-524.07073974609375", "-524.0707397460938"),
            ("-260.08966064453125", "-260.08966064453125"),
            ("-973.66400146484375", "-973.6640014648438"),
            ("674.93817138671875", "674.9381713867188"),
            ("672.92291259765625", "672.9229125976562"),
        ] {
            let mut out = Vec::new();
            push_float(&mut out, 0, exact.parse().unwrap_or_default());
            assert_eq!(String::from_utf8(out).unwrap_or_default(), python);
        }
        let mut out = Vec::new();
        push_float(&mut out, 1, 0.25);
        assert_eq!(out, b", 0.25");
    }

    #[test]
    fn deleting_shrinks_the_buffers_and_keeps_answers() {
        let store = SimpleVectorStore::new();
        let nodes: Vec<Node> = (0..1000)
            .map(|i| {
                Node::text_node("")
                    .with_id(format!("n{i:04}"))
                    .with_relationship(
                        crate::schema::NodeRelationship::Source,
                        crate::schema::RelatedNodeInfo::new(format!("d{}", i % 10)),
                    )
                    .with_embedding(vec![i as f32, 1.0, (i % 7) as f32, 0.5])
            })
            .collect();
        assert!(store.add_nodes(&nodes).is_ok());
        assert_eq!(store.read().buffer_len(), 4000);
        assert!(
            store.read().wide.is_none(),
            "f32 embeddings need no f64 copy"
        );
        for d in 0..9 {
            assert!(futures::executor::block_on(store.delete(&format!("d{d}"))).is_ok());
        }
        let data = store.read();
        assert_eq!(data.buffer_len(), 400);
        assert!(
            data.vectors.capacity() < 4000,
            "{}",
            data.vectors.capacity()
        );
        assert_eq!(data.norms.len(), 100);
        assert_eq!(data.rows.len(), 100);
        assert!(data.ids.iter().all(|id| id.ends_with('9')));
        for (r, id) in data.ids.iter().enumerate() {
            assert_eq!(data.rows[id], r);
            let i: f32 = id[1..].parse().unwrap_or(-1.0);
            assert_eq!(data.row(r)[0], i);
        }
        drop(data);
        let q = VectorStoreQuery::new(vec![999.0, 1.0, 5.0, 0.5], 1);
        let top = store.query_sync(&q).map(|r| r.ids).unwrap_or_default();
        assert_eq!(top, ["n0999"]);
    }

    #[test]
    fn cached_filter_rows_follow_writes() {
        let store = SimpleVectorStore::new();
        let node = |id: &str, color: &str, x: f32| {
            Node::text_node("")
                .with_id(id)
                .with_metadata("color", color)
                .with_embedding(vec![x, 1.0])
        };
        assert!(
            store
                .add_nodes(&[node("a", "red", 1.0), node("b", "blue", 2.0)])
                .is_ok()
        );
        let red = VectorStoreQuery::new(vec![1.0, 1.0], 0)
            .with_filters(MetadataFilters::from_pairs([("color", "red")]));
        let ids = |q: &VectorStoreQuery| store.query_sync(q).map(|r| r.ids).unwrap_or_default();
        assert_eq!(ids(&red), ["a"]);
        assert_eq!(ids(&red), ["a"]);
        // A write (a new red node, a changed colour) invalidates the rows.
        assert!(
            store
                .add_nodes(&[node("c", "red", 3.0), node("a", "blue", 1.0)])
                .is_ok()
        );
        assert_eq!(ids(&red), ["c"]);
        let blue = VectorStoreQuery::new(vec![1.0, 1.0], 0)
            .with_filters(MetadataFilters::from_pairs([("color", "blue")]));
        assert_eq!(ids(&blue).len(), 2);
        assert!(
            futures::executor::block_on(store.delete_nodes(Some(&["b".to_string()]), None)).is_ok()
        );
        assert_eq!(ids(&blue), ["a"]);
        assert_eq!(ids(&red), ["c"]);
    }

    #[test]
    fn indexed_filters_keep_exactly_what_the_scan_keeps() {
        use crate::vector_stores::{FilterOperator, MetadataFilter};
        use serde_json::json;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let values = [
            json!("a"),
            json!("b"),
            json!(1),
            json!(1.0),
            json!(true),
            json!(2.5),
            json!(null),
            json!(["a"]),
            json!(0),
            json!(-0.0),
            json!(-3),
            json!(7.25),
            json!("ab"),
            json!(false),
        ];
        let store = SimpleVectorStore::new();
        let mut nodes = Vec::new();
        for i in 0..400 {
            let mut node = Node::text_node("")
                .with_id(format!("n{i:03}"))
                .with_embedding(vec![1.0, i as f32]);
            for key in ["k", "j"] {
                let v = next(values.len() + 1);
                if v < values.len() {
                    node = node.with_metadata(key, values[v].clone());
                }
            }
            nodes.push(node);
        }
        assert!(store.add_nodes(&nodes).is_ok());
        let pick = |next: &mut dyn FnMut(usize) -> usize| values[next(values.len())].clone();
        for round in 0..600 {
            if round % 50 == 49 {
                // A write between queries: the indexes must follow it.
                let i = next(nodes.len());
                nodes[i] = nodes[i].clone().with_metadata("k", pick(&mut next));
                assert!(store.add_nodes(&nodes[i..=i]).is_ok());
            }
            let mut items = Vec::new();
            for _ in 0..1 + next(3) {
                let key = ["k", "j"][next(2)];
                let operator = [
                    FilterOperator::Eq,
                    FilterOperator::In,
                    FilterOperator::Gt,
                    FilterOperator::Gte,
                    FilterOperator::Lt,
                    FilterOperator::Lte,
                    FilterOperator::Ne,
                ][next(7)];
                let value = match (operator, next(4)) {
                    (FilterOperator::In, 0) => json!("ab"),
                    (FilterOperator::In, _) => json!([pick(&mut next), pick(&mut next)]),
                    _ => pick(&mut next),
                };
                items.push(MetadataFilter::new(key, value, operator));
            }
            let filters = if next(4) == 0 {
                MetadataFilters::or(items)
            } else {
                MetadataFilters::and(items)
            };
            let expected: Vec<String> = nodes
                .iter()
                .filter(|n| matches(&filters, &metadata_dict_without_content(n)))
                .map(|n| n.node_id().to_string())
                .collect();
            let mut got = store
                .query_sync(&VectorStoreQuery::new(vec![1.0, 0.0], 0).with_filters(filters.clone()))
                .map(|r| r.ids)
                .unwrap_or_default();
            got.sort();
            assert_eq!(got, expected, "{filters:?}");
        }
    }

    #[test]
    fn parallel_persist_writes_rows_in_order() {
        let store = SimpleVectorStore::new();
        let n = PERSIST_ROUND_ROWS * 2 + PERSIST_PIECE_ROWS / 2 + 3;
        let nodes: Vec<Node> = (0..n)
            .map(|i| {
                Node::text_node("")
                    .with_id(format!("n{i}"))
                    .with_embedding(vec![i as f32 / 7.0, -(i as f32)])
            })
            .collect();
        assert!(store.add_nodes(&nodes).is_ok());
        let mut parallel = Vec::new();
        assert!(store.write_json(&mut parallel).is_ok());
        let data = store.read();
        let mut sequential = b"{\"embedding_dict\": {".to_vec();
        for r in 0..n {
            assert!(write_row(&data, r, &mut sequential).is_ok());
        }
        assert!(parallel.starts_with(&sequential), "rows out of order");
        let text = String::from_utf8(parallel).unwrap_or_default();
        assert!(
            text.contains(&format!("\"n{}\": [", n - 1)),
            "last row missing"
        );
        assert_eq!(text.matches("\"n").count(), 3 * n, "ids in all three dicts");
    }

    #[test]
    fn values_beyond_f32_keep_their_digits() {
        let store = SimpleVectorStore::new();
        let exact = Node::text_node("")
            .with_id("a")
            .with_embedding(vec![0.5, 0.25]);
        assert!(store.add_nodes(&[exact]).is_ok());
        assert!(store.read().wide.is_none());
        // A row read from a file holding a value no f32 represents.
        store
            .write()
            .upsert("b", [0.1f64, 0.2].into_iter(), None, None);
        let data = store.read();
        assert_eq!(data.wide.as_deref(), Some(&[0.5, 0.25, 0.1, 0.2][..]));
        assert_eq!(data.values(0), [0.5, 0.25]);
        assert_eq!(data.values(1), [0.1, 0.2]);
        assert_eq!(data.row(1), [0.1f32, 0.2f32]);
    }

    #[test]
    fn python_heap_keeps_largest_ids_among_ties() {
        let ids: Vec<String> = ["b", "a", "d", "c"].iter().map(|s| s.to_string()).collect();
        let scores = [1.0, 1.0, 1.0, 1.0];
        let top = python_top_k(&scores, &ids, |i| i, 2);
        // Python: [(1.0,'c'), (1.0,'d')] stays in heap order after the stable sort.
        let got: Vec<&str> = top.iter().map(|(_, r)| ids[*r].as_str()).collect();
        assert_eq!(got, ["c", "d"]);
    }
}
