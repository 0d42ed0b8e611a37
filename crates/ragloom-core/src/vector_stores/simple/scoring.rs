//! Scoring: cosine, dot product or distance over the rows, the top k in
//! exactly LlamaIndex's heap order, and maximal marginal relevance.

use super::data::Data;
use super::{PARALLEL_CHUNK_ROWS, PARALLEL_MIN_FLOATS};
use crate::embeddings::SimilarityMode;
use crate::embeddings::similarity::{dot, l2};
use rayon::prelude::*;

/// An `f32` setting as the decimal the user wrote (0.3, not 0.30000001192...),
/// so that MMR arithmetic matches Python's to the last bit where it can.
pub(super) fn widen_decimal(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// Scores rows against one query embedding.
pub(super) struct Scorer<'a> {
    data: &'a Data,
    query: &'a [f32],
    query_norm: f64,
    mode: SimilarityMode,
}

impl<'a> Scorer<'a> {
    pub(super) fn new(data: &'a Data, query: &'a [f32], mode: SimilarityMode) -> Self {
        Self {
            data,
            query,
            query_norm: dot(query, query).sqrt(),
            mode,
        }
    }

    /// The similarity of row `r` with the query, never NaN.
    pub(super) fn score(&self, r: usize) -> f64 {
        self.similarity(self.query, self.query_norm, r)
    }

    /// The similarity of two stored rows (MMR's redundancy term).
    pub(super) fn between(&self, a: usize, b: usize) -> f64 {
        self.similarity(self.data.row(a), self.data.norms[a], b)
    }

    /// The similarity of `v` (whose norm is `norm`) with row `r`; NaN (from
    /// values overflowing `f32`) ranks below everything.
    pub(super) fn similarity(&self, v: &[f32], norm: f64, r: usize) -> f64 {
        similarity(self.mode, v, norm, self.data.row(r), self.data.norms[r])
    }

    /// Scores of `rows` (every row when `None`), in order.
    pub(super) fn score_rows(&self, rows: Option<&[usize]>, total: usize) -> Vec<f64> {
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

/// The similarity of `v` and `row` (of norms `v_norm`, `row_norm`) by
/// `mode`; NaN (from values overflowing `f32`) ranks below everything.
fn similarity(mode: SimilarityMode, v: &[f32], v_norm: f64, row: &[f32], row_norm: f64) -> f64 {
    let s = match mode {
        // Same grouping as numpy's `dot / (norm(q) * norm(row))`, so equal
        // scores in Python are equal here too.
        SimilarityMode::Cosine => cosine(dot(v, row), v_norm, row_norm),
        SimilarityMode::DotProduct => dot(v, row),
        SimilarityMode::Euclidean => -l2(v, row),
    };
    if s.is_nan() { f64::NEG_INFINITY } else { s }
}

/// Exact nearest-neighbour search over rows streamed one by one (a store
/// reading its vectors from disk instead of holding them): scores and order
/// equal [`SimpleVectorStore`](super::SimpleVectorStore)'s over the same
/// rows in the same order, while only ids and scores stay in memory.
#[derive(Debug)]
pub struct ExactSearch {
    query: Vec<f32>,
    query_norm: f64,
    mode: SimilarityMode,
    top_k: usize,
    ids: Vec<String>,
    scores: Vec<f64>,
}

impl ExactSearch {
    /// A search for the `top_k` (0: all) rows nearest `query` by `mode`.
    pub fn new(query: &[f32], mode: SimilarityMode, top_k: usize) -> Self {
        Self {
            query: query.to_vec(),
            query_norm: dot(query, query).sqrt(),
            mode,
            top_k,
            ids: Vec::new(),
            scores: Vec::new(),
        }
    }

    /// Scores the next row. A row of another length than the query, or a
    /// query holding a non-finite value, is an error (as the in-memory
    /// store's query is, and only once there are rows).
    pub fn push(&mut self, id: String, row: &[f32]) -> crate::Result<()> {
        if row.len() != self.query.len() {
            return Err(crate::Error::InvalidInput(format!(
                "the query embedding has {} dimensions, the store holds {}",
                self.query.len(),
                row.len()
            )));
        }
        if self.ids.is_empty() && self.query.iter().any(|v| !v.is_finite()) {
            return Err(crate::Error::InvalidInput(
                "the query embedding holds a non-finite value".to_string(),
            ));
        }
        let norm = dot(row, row).sqrt();
        let score = similarity(self.mode, &self.query, self.query_norm, row, norm);
        self.ids.push(id);
        self.scores.push(score);
        Ok(())
    }

    /// The best rows, best first: `(similarity, id)` pairs.
    pub fn finish(self) -> Vec<(f32, String)> {
        let picked = python_top_k(&self.scores, &self.ids, |i| i, self.top_k);
        let mut ids: Vec<Option<String>> = self.ids.into_iter().map(Some).collect();
        picked
            .into_iter()
            .map(|(score, row)| (score as f32, ids[row].take().unwrap_or_default()))
            .collect()
    }
}

pub(super) fn cosine(dot: f64, norm_a: f64, norm_b: f64) -> f64 {
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
pub(super) fn python_top_k(
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
pub(super) fn sift_down<T: Copy>(
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
pub(super) fn sift_up<T: Copy>(heap: &mut [T], mut pos: usize, less: &impl Fn(&T, &T) -> bool) {
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
pub(super) fn heap_pop<T: Copy>(heap: &mut Vec<T>, less: &impl Fn(&T, &T) -> bool) {
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
pub(super) fn mmr(
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
