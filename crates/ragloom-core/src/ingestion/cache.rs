//! `IngestionCache`: the outputs of each transformation stored under a key made
//! of its input and its settings, so an unchanged input is never transformed twice.

use crate::error::{Error, Result};
use crate::schema::Node;
use crate::storage::docstore::{doc_to_json, json_to_doc};
use crate::storage::kvstore::{KvValue, SimpleKVStore};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_CACHE_NAME`: the cache's collection, and the file
/// name of the persisted cache inside a pipeline's persist directory.
pub const DEFAULT_CACHE_NAME: &str = "llama_cache";

/// The key under which a cached entry keeps its nodes (LlamaIndex `nodes_key`).
const NODES_KEY: &str = "nodes";

/// Transformation outputs by key (LlamaIndex `IngestionCache`).
///
/// Backed by a [`SimpleKVStore`], so several pipelines (or the parallel
/// workers of one) can share it through `Clone`; entries are
/// `{"nodes": [doc_to_json(node), ...]}` in the collection
/// [`DEFAULT_CACHE_NAME`], exactly as Python stores them, and the persisted
/// file is the key-value store's JSON.
#[derive(Clone, Debug)]
pub struct IngestionCache {
    cache: Arc<SimpleKVStore>,
    collection: String,
}

impl Default for IngestionCache {
    fn default() -> Self {
        Self::new()
    }
}

impl IngestionCache {
    /// An empty in-memory cache using the collection `llama_cache`.
    pub fn new() -> Self {
        Self::from_kvstore(Arc::new(SimpleKVStore::new()), DEFAULT_CACHE_NAME)
    }

    /// A cache kept in `kvstore` under `collection` (share a store to share a cache).
    pub fn from_kvstore(kvstore: Arc<SimpleKVStore>, collection: impl Into<String>) -> Self {
        Self {
            cache: kvstore,
            collection: collection.into(),
        }
    }

    /// The key-value store behind this cache.
    pub fn kvstore(&self) -> &Arc<SimpleKVStore> {
        &self.cache
    }

    /// The default collection of this cache.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// Stores `nodes` under `key` in `collection` (the default one when `None`).
    pub fn put(&self, key: &str, nodes: &[Node], collection: Option<&str>) {
        let collection = collection.unwrap_or(&self.collection);
        let mut val = KvValue::new();
        val.insert(
            NODES_KEY.into(),
            Value::Array(
                nodes
                    .iter()
                    .map(|n| Value::Object(doc_to_json(n)))
                    .collect(),
            ),
        );
        self.cache.put(key, val, collection);
    }

    /// The nodes stored under `key`, if any. An entry that is not a list of
    /// stored nodes is an [`Error::InvalidInput`] naming the key.
    pub fn get(&self, key: &str, collection: Option<&str>) -> Result<Option<Vec<Node>>> {
        let collection = collection.unwrap_or(&self.collection);
        let Some(entry) = self.cache.get(key, collection) else {
            return Ok(None);
        };
        let bad = |msg: String| Error::InvalidInput(format!("ingestion cache entry {key}: {msg}"));
        let items = match entry.get(NODES_KEY) {
            Some(Value::Array(items)) => items,
            _ => return Err(bad(format!("no `{NODES_KEY}` list"))),
        };
        let mut nodes = Vec::with_capacity(items.len());
        for item in items {
            let Value::Object(dict) = item else {
                return Err(bad("a stored node is not an object".into()));
            };
            nodes.push(json_to_doc(dict).map_err(bad)?);
        }
        Ok(Some(nodes))
    }

    /// Number of entries in `collection` (the default one when `None`).
    pub fn len(&self, collection: Option<&str>) -> usize {
        self.cache
            .get_all(collection.unwrap_or(&self.collection))
            .len()
    }

    /// Whether `collection` (the default one when `None`) has no entry.
    pub fn is_empty(&self, collection: Option<&str>) -> bool {
        self.len(collection) == 0
    }

    /// Removes every entry of `collection` (the default one when `None`).
    pub fn clear(&self, collection: Option<&str>) {
        let collection = collection.unwrap_or(&self.collection);
        let keys: Vec<String> = self.cache.get_all(collection).keys().cloned().collect();
        for key in keys {
            self.cache.delete(&key, collection);
        }
    }

    /// Writes the cache to the file `persist_path` (atomically).
    pub fn persist(&self, persist_path: &Path) -> Result<()> {
        self.cache.persist(persist_path)
    }

    /// Loads a cache persisted by [`IngestionCache::persist`] or by Python's
    /// `IngestionCache.persist`. Errors name the file.
    pub fn from_persist_path(persist_path: &Path, collection: impl Into<String>) -> Result<Self> {
        Ok(Self::from_kvstore(
            Arc::new(SimpleKVStore::from_persist_path(persist_path)?),
            collection,
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn put_get_roundtrip_and_clear() {
        let cache = IngestionCache::new();
        let nodes = vec![
            Node::text_node("a").with_id("1").with_metadata("k", "v"),
            Node::document("b").with_id("2"),
        ];
        cache.put("key", &nodes, None);
        let back = cache.get("key", None).unwrap().unwrap();
        assert_eq!(back[0], nodes[0]);
        // A document read back keeps Python's resource fields in `extra`; its
        // serialised form, which cache keys hash, is unchanged.
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&nodes).unwrap()
        );
        assert!(cache.get("other", None).unwrap().is_none());
        assert!(cache.get("key", Some("elsewhere")).unwrap().is_none());
        assert_eq!(cache.len(None), 1);
        cache.clear(None);
        assert!(cache.is_empty(None));
    }

    #[test]
    fn a_bad_entry_is_an_error_naming_the_key() {
        let cache = IngestionCache::new();
        cache
            .kvstore()
            .put("k1", KvValue::new(), DEFAULT_CACHE_NAME);
        let err = cache.get("k1", None).unwrap_err().to_string();
        assert!(err.contains("k1"), "{err}");
    }
}
