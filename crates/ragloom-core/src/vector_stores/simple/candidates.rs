//! Which rows a query may return: its filters and doc ids evaluated, the rows
//! kept until the next write, and sorted key indexes that narrow the search.

use super::SimpleVectorStore;
use super::data::Data;
use super::{PARALLEL_CHUNK_ROWS, PARALLEL_MIN_ROWS};
use crate::schema::Metadata;
use crate::vector_stores::MetadataFilters;
use crate::vector_stores::filters::matches;
use crate::vector_stores::key_index::{KeyIndex, Narrowed, narrowed_rows, narrowing_keys};
use crate::vector_stores::types::VectorStoreQuery;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

/// The metadata key indexes of one store version, built on first use.
#[derive(Default)]
pub(super) struct KeyIndexes {
    pub(super) generation: u64,
    pub(super) by_key: HashMap<String, Arc<KeyIndex>>,
}

/// The candidate rows of one set of filters at one store version.
pub(super) struct CandidateCache {
    pub(super) generation: u64,
    /// `filters` and `doc_ids` of the query, as JSON.
    pub(super) key: String,
    pub(super) rows: Arc<Vec<usize>>,
}

impl SimpleVectorStore {
    /// [`candidates`], reusing the rows of the previous query when its
    /// filters and `doc_ids` were the same and nothing was written since.
    pub(super) fn cached_candidates(
        &self,
        data: &Data,
        query: &VectorStoreQuery,
    ) -> Option<Arc<Vec<usize>>> {
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
    pub(super) fn narrowed(&self, data: &Data, query: &VectorStoreQuery) -> Option<Narrowed> {
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
}

/// The rows a query may return, in row order; `None` when every row may.
/// `narrowed`, when given, holds every row the filters can match: only
/// those are checked, and when they are exactly the matches, none are.
pub(super) fn candidates(
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

pub(super) fn row_matches(data: &Data, r: usize, filters: &MetadataFilters) -> bool {
    static EMPTY: std::sync::OnceLock<Metadata> = std::sync::OnceLock::new();
    let metadata = data.metadata[r]
        .as_ref()
        .unwrap_or_else(|| EMPTY.get_or_init(Metadata::new));
    matches(filters, metadata)
}
