//! Similarity between two embeddings in LlamaIndex's three modes
//! (`base/embeddings/base.py` `similarity`), computed with simsimd's SIMD kernels.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use simsimd::SpatialSimilarity;

/// How two embeddings are compared (LlamaIndex `SimilarityMode`). Higher is
/// always more similar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SimilarityMode {
    /// Cosine of the angle: `a·b / (|a| |b|)`, in [-1, 1].
    #[default]
    #[serde(rename = "cosine")]
    Cosine,
    /// The dot product `a·b`.
    #[serde(rename = "dot_product")]
    DotProduct,
    /// The negated Euclidean distance `-|a - b|`, so that nearer ranks higher.
    #[serde(rename = "euclidean")]
    Euclidean,
}

/// The similarity of `a` and `b` in `mode`, as LlamaIndex defines it.
///
/// Differences from numpy: the cosine of a zero vector with anything is 0.0
/// (Python divides by zero and gets NaN, which then orders arbitrarily), and
/// vectors of different lengths give NaN (Python raises); use
/// [`try_similarity`] to get an error instead.
pub fn similarity(a: &[f32], b: &[f32], mode: SimilarityMode) -> f32 {
    try_similarity(a, b, mode).unwrap_or(f32::NAN)
}

/// [`similarity`], with an error when the lengths differ.
pub fn try_similarity(a: &[f32], b: &[f32], mode: SimilarityMode) -> Result<f32> {
    if a.len() != b.len() {
        return Err(Error::InvalidInput(format!(
            "cannot compare embeddings of lengths {} and {}",
            a.len(),
            b.len()
        )));
    }
    let value = match mode {
        SimilarityMode::Cosine => {
            // simsimd calls two zero vectors identical (distance 0); ragloom
            // gives any zero vector no similarity at all.
            if is_zero(a) || is_zero(b) {
                0.0
            } else {
                1.0 - <f32 as SpatialSimilarity>::cos(a, b).unwrap_or(1.0)
            }
        }
        SimilarityMode::DotProduct => <f32 as SpatialSimilarity>::dot(a, b).unwrap_or(0.0),
        SimilarityMode::Euclidean => -<f32 as SpatialSimilarity>::l2(a, b).unwrap_or(0.0),
    };
    Ok(value as f32)
}

fn is_zero(v: &[f32]) -> bool {
    v.iter().all(|x| *x == 0.0)
}

/// The dot product of two equally long slices, in f64 (simsimd).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f64 {
    <f32 as SpatialSimilarity>::dot(a, b).unwrap_or(f64::NAN)
}

/// The Euclidean distance of two equally long slices, in f64 (simsimd).
pub(crate) fn l2(a: &[f32], b: &[f32]) -> f64 {
    <f32 as SpatialSimilarity>::l2(a, b).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_follow_llamaindex() {
        let (a, b) = ([1.0, 2.0, 3.0], [4.0, -5.0, 6.0]);
        assert!((similarity(&a, &b, SimilarityMode::Cosine) - 0.365_486_94).abs() < 1e-5);
        assert!((similarity(&a, &b, SimilarityMode::DotProduct) - 12.0).abs() < 1e-5);
        assert!((similarity(&a, &b, SimilarityMode::Euclidean) + 8.185_353).abs() < 1e-5);
        assert_eq!(
            similarity(&[0.0, 0.0], &[0.0, 0.0], SimilarityMode::Cosine),
            0.0
        );
        assert!(similarity(&[1.0], &[1.0, 2.0], SimilarityMode::Cosine).is_nan());
        assert!(try_similarity(&[1.0], &[1.0, 2.0], SimilarityMode::Cosine).is_err());
    }
}
