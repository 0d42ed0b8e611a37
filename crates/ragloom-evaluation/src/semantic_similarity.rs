//! `SemanticSimilarityEvaluator`: how close is the answer to a reference
//! answer in embedding space? No LLM; passing at similarity 0.8 by default.

use super::base::{EvaluationInput, EvaluationResult, Evaluator};
use async_trait::async_trait;
use ragloom_core::embeddings::{Embedding, SimilarityMode};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::float_repr;
use std::sync::Arc;

/// Scores the similarity of the response's and the reference's embeddings.
#[derive(Debug, Clone)]
pub struct SemanticSimilarityEvaluator {
    embed_model: Arc<dyn Embedding>,
    similarity_mode: SimilarityMode,
    similarity_threshold: f64,
}

impl SemanticSimilarityEvaluator {
    /// An evaluator comparing embeddings made with `embed_model`.
    pub fn new(embed_model: Arc<dyn Embedding>) -> Self {
        Self {
            embed_model,
            similarity_mode: SimilarityMode::Cosine,
            similarity_threshold: 0.8,
        }
    }

    /// How similarity is measured (default cosine).
    pub fn similarity_mode(mut self, mode: SimilarityMode) -> Self {
        self.similarity_mode = mode;
        self
    }

    /// Passing is a similarity at or above this (default 0.8).
    pub fn similarity_threshold(mut self, threshold: f64) -> Self {
        self.similarity_threshold = threshold;
        self
    }
}

/// The similarity in double precision, as LlamaIndex computes it with numpy,
/// so scores agree with Python's to the precision of the f32 vectors.
fn similarity_f64(a: &[f32], b: &[f32], mode: SimilarityMode) -> Result<f64> {
    if a.len() != b.len() {
        return Err(Error::InvalidInput(format!(
            "embeddings of different lengths ({} and {})",
            a.len(),
            b.len()
        )));
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    Ok(match mode {
        SimilarityMode::Cosine => dot / (norm(a) * norm(b)),
        SimilarityMode::DotProduct => dot,
        SimilarityMode::Euclidean => -a
            .iter()
            .zip(b)
            .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
            .sum::<f64>()
            .sqrt(),
    })
}

#[async_trait]
impl Evaluator for SemanticSimilarityEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(response), Some(reference)) = (&input.response, &input.reference) else {
            return Err(Error::InvalidInput(
                "Must specify both response and reference".into(),
            ));
        };
        let vectors = self
            .embed_model
            .embed_texts(&[response.clone(), reference.clone()])
            .await?;
        let [a, b] = vectors.as_slice() else {
            return Err(Error::Provider {
                provider: self.embed_model.model_name().to_owned(),
                message: format!("returned {} vectors for 2 texts", vectors.len()),
                source: None,
            });
        };
        let score = similarity_f64(a, b, self.similarity_mode)?;
        Ok(EvaluationResult {
            score: Some(score),
            passing: Some(score >= self.similarity_threshold),
            feedback: Some(format!("Similarity score: {}", float_repr(score))),
            ..EvaluationResult::default()
        })
    }
}
