//! Embedding models: the [`Embedding`] trait (texts to vectors, in batches),
//! batching with progress, similarity functions, the mock and hash
//! embeddings, and a content-addressed cache in front of any model.

mod cache;
mod hash;
mod mock;
pub mod similarity;

pub use cache::{CachedEmbedding, EmbeddingCacheStore};
pub use hash::HashEmbedding;
pub use mock::MockEmbedding;
pub use similarity::{SimilarityMode, similarity, try_similarity};

use crate::error::{Error, Result};
use async_trait::async_trait;
use tracing::Instrument;

/// LlamaIndex's default `embed_batch_size`.
pub const DEFAULT_EMBED_BATCH_SIZE: usize = 10;

/// A model turning texts into vectors (LlamaIndex `BaseEmbedding`).
#[async_trait]
pub trait Embedding: Send + Sync + std::fmt::Debug {
    /// The model's name.
    fn model_name(&self) -> &str;
    /// Vectors' length, when known up front.
    fn dimensions(&self) -> Option<usize>;
    /// How many texts go in one call to `embed_texts` (LlamaIndex `embed_batch_size`, default 10).
    fn embed_batch_size(&self) -> usize {
        DEFAULT_EMBED_BATCH_SIZE
    }
    /// Embeds a query (some models embed queries and documents differently).
    async fn embed_query(&self, query: &str) -> Result<Vec<f32>>;
    /// Embeds one batch (implementors embed what they are given in one call).
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// Embeds any number of texts in batches of `embed_batch_size()`, with an optional progress bar.
///
/// A model that answers a batch with the wrong number of vectors is an error
/// naming the model.
pub async fn embed_in_batches(
    model: &dyn Embedding,
    texts: &[String],
    show_progress: bool,
) -> Result<Vec<Vec<f32>>> {
    let batch_size = model.embed_batch_size().max(1);
    let span = tracing::debug_span!(
        "embedding",
        model = model.model_name(),
        texts = texts.len(),
        batch_size
    );
    async move {
        let progress = if show_progress {
            let bar = indicatif::ProgressBar::new(texts.len() as u64);
            bar.set_message("Generating embeddings");
            Some(bar)
        } else {
            None
        };
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(batch_size) {
            let vectors = model.embed_texts(batch).await?;
            if vectors.len() != batch.len() {
                return Err(Error::Provider {
                    provider: model.model_name().to_string(),
                    message: format!(
                        "returned {} embeddings for a batch of {} texts",
                        vectors.len(),
                        batch.len()
                    ),
                    source: None,
                });
            }
            out.extend(vectors);
            if let Some(bar) = &progress {
                bar.inc(batch.len() as u64);
            }
        }
        if let Some(bar) = progress {
            bar.finish_and_clear();
        }
        Ok(out)
    }
    .instrument(span)
    .await
}
