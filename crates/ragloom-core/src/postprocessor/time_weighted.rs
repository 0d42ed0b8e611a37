//! `TimeWeightedPostprocessor`: reranks nodes by score plus recency of last
//! access, and marks the nodes it returns as just accessed.

use super::NodePostprocessor;
use crate::error::{Error, Result};
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Reranks by `score + (1 - time_decay) ^ hours_since_last_access` and keeps
/// the `top_k` best (LlamaIndex `TimeWeightedPostprocessor`).
///
/// As in Python: a node's score counts as `1.0` when unset *or zero*; its
/// last access is `metadata[last_accessed_key]` (Unix seconds), or now when
/// missing; the returned nodes carry the combined score.
///
/// Access refresh: with `time_access_refresh` (the default), every returned
/// node gets `metadata[last_accessed_key] = now`. Python writes that into
/// the node objects it was handed, so a caller passing the same objects
/// again sees the refresh; ragloom's nodes arrive by value, so this
/// postprocessor also remembers each refresh by node id (behind a mutex, as
/// `postprocess_nodes` takes `&self`) and prefers the remembered time over
/// the node's metadata on later calls. [`Self::last_accessed`] reads it.
#[derive(Debug)]
pub struct TimeWeightedPostprocessor {
    /// Per-hour decay of the recency bonus (default `0.99`).
    pub time_decay: f64,
    /// Metadata key holding the last access time (default `"__last_accessed__"`).
    pub last_accessed_key: String,
    /// Whether returned nodes are marked as accessed now (default `true`).
    pub time_access_refresh: bool,
    /// A fixed "now" in Unix seconds (for tests); the clock when `None` or `0`.
    pub now: Option<f64>,
    /// How many nodes to return (default 1).
    pub top_k: usize,
    accessed: Mutex<HashMap<String, f64>>,
}

impl Default for TimeWeightedPostprocessor {
    fn default() -> Self {
        Self {
            time_decay: 0.99,
            last_accessed_key: "__last_accessed__".to_string(),
            time_access_refresh: true,
            now: None,
            top_k: 1,
            accessed: Mutex::new(HashMap::new()),
        }
    }
}

impl Clone for TimeWeightedPostprocessor {
    fn clone(&self) -> Self {
        Self {
            time_decay: self.time_decay,
            last_accessed_key: self.last_accessed_key.clone(),
            time_access_refresh: self.time_access_refresh,
            now: self.now,
            top_k: self.top_k,
            accessed: Mutex::new(self.record().clone()),
        }
    }
}

impl TimeWeightedPostprocessor {
    /// LlamaIndex's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `time_decay`.
    pub fn time_decay(mut self, time_decay: f64) -> Self {
        self.time_decay = time_decay;
        self
    }

    /// Sets `last_accessed_key`.
    pub fn last_accessed_key(mut self, key: impl Into<String>) -> Self {
        self.last_accessed_key = key.into();
        self
    }

    /// Sets `time_access_refresh`.
    pub fn time_access_refresh(mut self, refresh: bool) -> Self {
        self.time_access_refresh = refresh;
        self
    }

    /// Fixes "now" (Unix seconds).
    pub fn now(mut self, now: f64) -> Self {
        self.now = Some(now);
        self
    }

    /// Sets `top_k`.
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// When this postprocessor last returned `node_id` (Unix seconds), if it did.
    pub fn last_accessed(&self, node_id: &str) -> Option<f64> {
        self.record().get(node_id).copied()
    }

    fn record(&self) -> MutexGuard<'_, HashMap<String, f64>> {
        // the map stays consistent whatever a panicking holder did
        self.accessed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn current_time(&self) -> f64 {
        match self.now {
            Some(n) if n != 0.0 => n,
            _ => {
                let now = chrono::Utc::now();
                now.timestamp() as f64 + f64::from(now.timestamp_subsec_micros()) / 1e6
            }
        }
    }
}

#[async_trait]
impl NodePostprocessor for TimeWeightedPostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let now = self.current_time();
        let mut scored = Vec::with_capacity(nodes.len());
        {
            let record = self.record();
            for n in nodes {
                let score = match n.score {
                    Some(s) if s != 0.0 => f64::from(s),
                    _ => 1.0,
                };
                let last_accessed = match record.get(n.node.node_id()) {
                    Some(t) => *t,
                    None => match n.node.metadata.get(&self.last_accessed_key) {
                        None | Some(Value::Null) => now,
                        Some(Value::Number(x)) => x.as_f64().unwrap_or(now),
                        Some(other) => {
                            return Err(Error::InvalidInput(format!(
                                "node {}: metadata `{}` must be a Unix time in seconds, got {other}",
                                n.node.node_id(),
                                self.last_accessed_key
                            )));
                        }
                    },
                };
                let hours_passed = (now - last_accessed) / 3600.0;
                let time_similarity = (1.0 - self.time_decay).powf(hours_passed);
                scored.push((score + time_similarity, n));
            }
        }
        // stable and descending: ties keep their order, as Python's sorted(reverse=True)
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        scored.truncate(self.top_k);
        let mut out = Vec::with_capacity(scored.len());
        let mut record = self.record();
        for (similarity, mut n) in scored {
            n.score = Some(similarity as f32);
            if self.time_access_refresh {
                n.node
                    .metadata
                    .insert(self.last_accessed_key.clone(), Value::from(now));
                record.insert(n.node.id_.clone(), now);
            }
            out.push(n);
        }
        Ok(out)
    }
}
