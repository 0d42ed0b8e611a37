//! How an index's hybrid retrieval fuses keyword and dense results:
//! LlamaIndex's fusion modes and retriever weights, reciprocal rank by default.

use crate::error::{Error, Result};
use crate::retrievers::{FusionMode, QueryFusionRetriever, Retriever};
use std::sync::Arc;

/// The fusion of an index's dense and keyword results
/// ([`QueryFusionRetriever`]'s `mode` and `retriever_weights`).
///
/// The default, reciprocal rank with equal weights, is what a store that
/// fuses itself (Qdrant) does in one query; any other setting fuses in
/// process on every store, so all stores answer alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HybridFusion {
    /// How the two result lists combine.
    pub mode: FusionMode,
    /// The dense results' weight, the keyword results' being `1 - dense_weight`
    /// (used by the score-based modes, as LlamaIndex uses weights).
    pub dense_weight: f64,
}

impl Default for HybridFusion {
    fn default() -> Self {
        Self {
            mode: FusionMode::ReciprocalRank,
            dense_weight: 0.5,
        }
    }
}

impl HybridFusion {
    /// `mode` with the dense results weighted `dense_weight` (0 to 1); a
    /// weight outside that range is an error naming it.
    pub fn new(mode: FusionMode, dense_weight: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&dense_weight) {
            return Err(Error::InvalidInput(format!(
                "the dense weight of hybrid fusion must be between 0 and 1, not {dense_weight}"
            )));
        }
        Ok(Self { mode, dense_weight })
    }

    /// `base` with the mode named `mode` (LlamaIndex's names:
    /// `reciprocal_rerank`, `relative_score`, `dist_based_score`, `simple`)
    /// and the dense weight `dense_weight` (a number from 0 to 1), each when
    /// given: how front-ends read a setting from flags, the environment or a
    /// file. A value that cannot be used is an error naming it.
    pub fn parse(mode: Option<&str>, dense_weight: Option<&str>, base: Self) -> Result<Self> {
        let mode = match mode {
            Some(m) => m.trim().parse()?,
            None => base.mode,
        };
        let dense_weight = match dense_weight {
            Some(w) => w.trim().parse().map_err(|_| {
                Error::InvalidInput(format!(
                    "the dense weight of hybrid fusion must be a number from 0 to 1, not `{w}`"
                ))
            })?,
            None => base.dense_weight,
        };
        Self::new(mode, dense_weight)
    }

    /// Whether a store's own reciprocal-rank fusion gives the same result.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The fusing retriever of the `top_k` best of `dense` and `keyword`.
    pub(crate) fn retriever(
        &self,
        dense: Arc<dyn Retriever>,
        keyword: Arc<dyn Retriever>,
        top_k: usize,
    ) -> Result<Arc<dyn Retriever>> {
        Ok(Arc::new(
            QueryFusionRetriever::builder(vec![dense, keyword])
                .mode(self.mode)
                .retriever_weights(vec![self.dense_weight, 1.0 - self.dense_weight])
                .num_queries(1)
                .similarity_top_k(top_k)
                .build()?,
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_over_a_base_and_bad_values_name_themselves() {
        let base = HybridFusion::default();
        assert_eq!(HybridFusion::parse(None, None, base).unwrap(), base);
        let set = HybridFusion::parse(Some("relative_score"), Some(" 0.8"), base).unwrap();
        assert_eq!(
            (set.mode, set.dense_weight),
            (FusionMode::RelativeScore, 0.8)
        );
        let kept = HybridFusion::parse(Some("simple"), None, set).unwrap();
        assert_eq!((kept.mode, kept.dense_weight), (FusionMode::Simple, 0.8));
        for (mode, weight, named) in [
            (Some("rrf"), None, "rrf"),
            (None, Some("1.5"), "1.5"),
            (None, Some("heavy"), "heavy"),
            (None, Some("NaN"), "NaN"),
        ] {
            let e = HybridFusion::parse(mode, weight, base).unwrap_err();
            assert!(e.to_string().contains(named), "{e}");
        }
    }
}
