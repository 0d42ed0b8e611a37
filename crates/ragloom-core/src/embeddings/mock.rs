//! `MockEmbedding`: LlamaIndex's constant test embedding (every text maps to
//! `[0.5; dim]`), for tests and token counting without a model.

use super::Embedding;
use crate::error::Result;
use async_trait::async_trait;

/// Every text and query embeds to the same vector `[0.5; embed_dim]`, as
/// LlamaIndex's `MockEmbedding` (so every similarity ties).
#[derive(Clone, Debug, PartialEq)]
pub struct MockEmbedding {
    embed_dim: usize,
    embed_batch_size: usize,
    model_name: String,
}

impl MockEmbedding {
    /// A mock embedding of dimension `embed_dim`.
    pub fn new(embed_dim: usize) -> Self {
        Self {
            embed_dim,
            embed_batch_size: super::DEFAULT_EMBED_BATCH_SIZE,
            // LlamaIndex's BaseEmbedding default, which MockEmbedding keeps.
            model_name: "unknown".to_string(),
        }
    }

    /// Sets how many texts go in one call (at least 1).
    pub fn with_embed_batch_size(mut self, size: usize) -> Self {
        self.embed_batch_size = size.max(1);
        self
    }

    /// The dimension.
    pub fn embed_dim(&self) -> usize {
        self.embed_dim
    }

    fn vector(&self) -> Vec<f32> {
        vec![0.5; self.embed_dim]
    }
}

#[async_trait]
impl Embedding for MockEmbedding {
    fn model_name(&self) -> &str {
        &self.model_name
    }

    fn dimensions(&self) -> Option<usize> {
        Some(self.embed_dim)
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_batch_size
    }

    async fn embed_query(&self, _query: &str) -> Result<Vec<f32>> {
        Ok(self.vector())
    }

    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|_| self.vector()).collect())
    }
}
