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
use crate::schema::{MetadataMode, Node, QueryBundle};
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

/// Embeds the nodes that have no embedding yet (their text as the model
/// sees it, `MetadataMode::Embed`), in the model's batches.
pub async fn embed_missing(
    model: &dyn Embedding,
    nodes: &mut [Node],
    show_progress: bool,
) -> Result<()> {
    let missing: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].embedding.is_none())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let texts: Vec<String> = missing
        .iter()
        .map(|&i| nodes[i].get_content(MetadataMode::Embed))
        .collect();
    let span = tracing::info_span!("embedding", model = model.model_name(), texts = texts.len());
    let vectors = embed_in_batches(model, &texts, show_progress)
        .instrument(span)
        .await?;
    for (i, v) in missing.into_iter().zip(vectors) {
        nodes[i].embedding = Some(v);
    }
    Ok(())
}

/// The query's own embedding, else the mean of its embedding strings'
/// embeddings (LlamaIndex `get_agg_embedding_from_queries`).
pub async fn query_embedding(model: &dyn Embedding, query: &QueryBundle) -> Result<Vec<f32>> {
    if let Some(e) = &query.embedding {
        return Ok(e.clone());
    }
    let strs = query.embedding_strs();
    let mut sum: Vec<f32> = Vec::new();
    for s in &strs {
        let e = model.embed_query(s).await?;
        if sum.is_empty() {
            sum = e;
        } else if sum.len() == e.len() {
            sum.iter_mut().zip(&e).for_each(|(a, b)| *a += b);
        } else {
            return Err(Error::Other("query embeddings of different lengths".into()));
        }
    }
    let n = strs.len().max(1) as f32;
    sum.iter_mut().for_each(|x| *x /= n);
    Ok(sum)
}
