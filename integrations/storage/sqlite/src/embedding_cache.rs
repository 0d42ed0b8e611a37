//! `CachedEmbedding`: embeddings kept by content in the store's file, each
//! batch committed as soon as it is embedded, so hours of embedding survive a crash.

use crate::SqliteStore;
use crate::db::Scope;
use crate::vector_store::{from_blob, to_blob};
use async_trait::async_trait;
use ragloom_core::embeddings::Embedding;
use ragloom_core::error::{Error, Result};
use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// An embedding model in front of which the store's `embedding_cache` table
/// answers every text it has seen with this model before.
///
/// The key is SHA-256 of `model_key` and the text, so the cache never holds
/// text itself and a different model (or settings: put them in `model_key`)
/// never reads another's vectors. Each batch of new vectors is committed on
/// its own as it is embedded (callers batch with `embed_in_batches`, as
/// the index does), so call it outside an open
/// transaction of the store: embed first, then write the index in one
/// transaction. Inside one, the cache is only read.
#[derive(Debug)]
pub struct CachedEmbedding {
    inner: Arc<dyn Embedding>,
    store: SqliteStore,
    model_key: String,
}

impl CachedEmbedding {
    /// `inner` cached in `store`'s file under `model_key` (name the model and
    /// anything that changes its vectors: the file, the server, the dimensions).
    pub fn new(
        inner: Arc<dyn Embedding>,
        store: SqliteStore,
        model_key: impl Into<String>,
    ) -> Self {
        Self {
            inner,
            store,
            model_key: model_key.into(),
        }
    }

    fn key(&self, text: &str) -> Vec<u8> {
        let mut h = Sha256::new();
        h.update(self.model_key.as_bytes());
        h.update([0u8]);
        h.update(text.as_bytes());
        h.finalize().to_vec()
    }

    fn lookup(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<f32>>>> {
        let db = &self.store.db;
        db.read(&Scope::Committed, |c| {
            let mut stmt = c
                .prepare_cached("SELECT embedding FROM embedding_cache WHERE key = ?1")
                .map_err(|e| db.err("reading the embedding cache", e))?;
            keys.iter()
                .map(|k| {
                    stmt.query_row(params![k], |r| r.get::<_, Vec<u8>>(0))
                        .optional()
                        .map(|b| b.map(|b| from_blob(&b)))
                        .map_err(|e| db.err("reading the embedding cache", e))
                })
                .collect()
        })
    }

    fn save(&self, keys: &[&Vec<u8>], vectors: &[Vec<f32>]) -> Result<()> {
        let db = &self.store.db;
        if db.in_tx.load(std::sync::atomic::Ordering::SeqCst) {
            // The store is being written in one transaction: the cache waits for the next run.
            return Ok(());
        }
        db.write(&Scope::Committed, |c| {
            let mut stmt = c
                .prepare_cached(
                    "INSERT OR REPLACE INTO embedding_cache (key, embedding) VALUES (?1, ?2)",
                )
                .map_err(|e| db.err("writing the embedding cache", e))?;
            for (k, v) in keys.iter().zip(vectors) {
                stmt.execute(params![k, to_blob(v)])
                    .map_err(|e| db.err("writing the embedding cache", e))?;
            }
            Ok(())
        })
    }
}

#[async_trait]
impl Embedding for CachedEmbedding {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    fn dimensions(&self) -> Option<usize> {
        self.inner.dimensions()
    }

    fn embed_batch_size(&self) -> usize {
        self.inner.embed_batch_size()
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        // Queries are embedded as queries (some models differ): not cached with texts.
        self.inner.embed_query(query).await
    }

    /// One batch, as `embed_in_batches` hands it over: the texts not cached
    /// yet (each once) go to the model in one call, and their vectors are
    /// committed before returning, so every finished batch of a long run is kept.
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<Vec<u8>> = texts.iter().map(|t| self.key(t)).collect();
        let mut found = self.lookup(&keys)?;
        let mut first_of: HashMap<&Vec<u8>, usize> = HashMap::new();
        let missing: Vec<usize> = (0..texts.len())
            .filter(|&i| found[i].is_none() && first_of.insert(&keys[i], i).is_none())
            .collect();
        if !missing.is_empty() {
            let batch: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let vectors = self.inner.embed_texts(&batch).await?;
            if vectors.len() != batch.len() {
                return Err(Error::InvalidInput(format!(
                    "embedding model `{}` returned {} vectors for {} texts",
                    self.inner.model_name(),
                    vectors.len(),
                    batch.len()
                )));
            }
            let batch_keys: Vec<&Vec<u8>> = missing.iter().map(|&i| &keys[i]).collect();
            self.save(&batch_keys, &vectors)?;
            let fresh: HashMap<&Vec<u8>, Vec<f32>> = batch_keys.into_iter().zip(vectors).collect();
            for (slot, key) in found.iter_mut().zip(&keys) {
                if slot.is_none() {
                    *slot = fresh.get(key).cloned();
                }
            }
        }
        found
            .into_iter()
            .map(|v| {
                v.ok_or_else(|| {
                    Error::Other("embedding cache: a text was left without a vector".into())
                })
            })
            .collect()
    }
}
