//! `CachedEmbedding`: an embedding model behind a content-addressed cache, and
//! the [`EmbeddingCacheStore`] a store implements to hold that cache.

use super::Embedding;
use crate::error::{Error, Result};
use async_trait::async_trait;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Where a [`CachedEmbedding`] keeps vectors: by key (32 bytes, SHA-256 of
/// the model key and the text), never the text itself. A cache may forget:
/// a store busy with a transaction of its own may decline to write.
#[async_trait]
pub trait EmbeddingCacheStore: Send + Sync + fmt::Debug {
    /// The vector stored under each key, `None` where there is none.
    async fn get_vectors(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<f32>>>>;
    /// Stores `vectors` under `keys` (same length), committed before returning.
    async fn put_vectors(&self, keys: &[&Vec<u8>], vectors: &[Vec<f32>]) -> Result<()>;
}

/// An embedding model in front of which a cache store answers every text it
/// has seen with this model before.
///
/// The key is SHA-256 of `model_key` and the text, so the cache never holds
/// text and a different model (or settings: put them in `model_key`) never
/// reads another's vectors. Each batch of new vectors is stored as soon as it
/// is embedded (callers batch with `embed_in_batches`, as the index does), so
/// a run that dies hours in keeps what it embedded. Queries are not cached.
#[derive(Debug)]
pub struct CachedEmbedding {
    inner: Arc<dyn Embedding>,
    cache: Arc<dyn EmbeddingCacheStore>,
    model_key: String,
}

impl CachedEmbedding {
    /// `inner` cached in `cache` under `model_key` (name the model and
    /// anything that changes its vectors: the file, the server, the dimensions).
    pub fn new(
        inner: Arc<dyn Embedding>,
        cache: impl EmbeddingCacheStore + 'static,
        model_key: impl Into<String>,
    ) -> Self {
        Self::with_store(inner, Arc::new(cache), model_key)
    }

    /// [`new`](Self::new) with a shared cache store.
    pub fn with_store(
        inner: Arc<dyn Embedding>,
        cache: Arc<dyn EmbeddingCacheStore>,
        model_key: impl Into<String>,
    ) -> Self {
        Self {
            inner,
            cache,
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
    /// stored before returning, so every finished batch of a long run is kept.
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<Vec<u8>> = texts.iter().map(|t| self.key(t)).collect();
        let mut found = self.cache.get_vectors(&keys).await?;
        if found.len() != keys.len() {
            return Err(Error::Other(format!(
                "embedding cache: {} answers for {} keys",
                found.len(),
                keys.len()
            )));
        }
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
            // A cache may forget: a write that fails costs a later run the
            // embedding, not this run its result.
            if let Err(e) = self.cache.put_vectors(&batch_keys, &vectors).await {
                tracing::warn!(error = %e, "the embedding cache could not store a batch");
            }
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
