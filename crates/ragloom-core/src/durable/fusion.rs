//! How an index's hybrid retrieval fuses keyword and dense results:
//! LlamaIndex's fusion modes and retriever weights, reciprocal rank by default.

use crate::error::{Error, Result};
use crate::retrievers::{FusionMode, FusionResults, QueryFusionRetriever, Retriever, fuse_results};
use crate::schema::NodeWithScore;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// The fusion of an index's dense and keyword results
/// ([`QueryFusionRetriever`]'s `mode` and `retriever_weights`).
///
/// The default, reciprocal rank with equal weights, is what a store that
/// fuses itself (Qdrant) does in one query; any other setting fuses in
/// process on every store, so all stores answer alike. Written to JSON (an
/// index's recorded setting) as `{"mode": "relative_score", "dense_weight": 0.7}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Written", into = "Written")]
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

    /// The settings worth comparing on a labelled set: reciprocal rank and
    /// simple fusion (which weigh nothing), and the two score-based modes
    /// at each of `dense_weights`.
    pub fn candidates(dense_weights: &[f64]) -> Result<Vec<Self>> {
        let mut all = vec![Self::default(), Self::new(FusionMode::Simple, 0.5)?];
        for mode in [FusionMode::RelativeScore, FusionMode::DistBasedScore] {
            for &w in dense_weights {
                all.push(Self::new(mode, w)?);
            }
        }
        Ok(all)
    }

    /// Whether the mode uses the weights at all.
    pub fn is_weighted(&self) -> bool {
        matches!(
            self.mode,
            FusionMode::RelativeScore | FusionMode::DistBasedScore
        )
    }

    /// The `top_k` best of the lists `dense` and `keyword` already
    /// retrieved for one question, as the fusing retriever would return them.
    pub fn fuse(
        &self,
        dense: Vec<NodeWithScore>,
        keyword: Vec<NodeWithScore>,
        top_k: usize,
    ) -> Result<Vec<NodeWithScore>> {
        let results: FusionResults = [((String::new(), 0), dense), ((String::new(), 1), keyword)]
            .into_iter()
            .collect();
        fuse_results(self.mode, &results, &self.weights(), 1, top_k)
    }

    fn weights(&self) -> Vec<f64> {
        vec![self.dense_weight, 1.0 - self.dense_weight]
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
                .retriever_weights(self.weights())
                .num_queries(1)
                .similarity_top_k(top_k)
                .build()?,
        ))
    }
}

/// A fusion setting given in part, as front-ends read one from flags, the
/// environment or a file: what it names replaces that part of the setting
/// it is laid [`over`](Self::over) (the index's recorded one, or the
/// default), the rest stays.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FusionChoice {
    /// The mode, when given.
    pub mode: Option<FusionMode>,
    /// The dense weight (0 to 1), when given.
    pub dense_weight: Option<f64>,
}

impl FusionChoice {
    /// `base` with the mode named `mode` (LlamaIndex's names:
    /// `reciprocal_rerank`, `relative_score`, `dist_based_score`, `simple`)
    /// and the dense weight `dense_weight` (a number from 0 to 1), each when
    /// given. A value that cannot be used is an error naming it.
    pub fn parse(mode: Option<&str>, dense_weight: Option<&str>, base: Self) -> Result<Self> {
        let mode = match mode {
            Some(m) => Some(m.trim().parse()?),
            None => base.mode,
        };
        let dense_weight = match dense_weight {
            Some(w) => {
                let w = w.trim().parse().map_err(|_| {
                    Error::InvalidInput(format!(
                        "the dense weight of hybrid fusion must be a number from 0 to 1, not `{w}`"
                    ))
                })?;
                Some(HybridFusion::new(FusionMode::default(), w)?.dense_weight)
            }
            None => base.dense_weight,
        };
        Ok(Self { mode, dense_weight })
    }

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.mode.is_none() && self.dense_weight.is_none()
    }

    /// `base` with the parts this choice gives replaced.
    pub fn over(&self, base: HybridFusion) -> HybridFusion {
        HybridFusion {
            mode: self.mode.unwrap_or(base.mode),
            dense_weight: self.dense_weight.unwrap_or(base.dense_weight),
        }
    }
}

impl From<HybridFusion> for FusionChoice {
    fn from(f: HybridFusion) -> Self {
        Self {
            mode: Some(f.mode),
            dense_weight: Some(f.dense_weight),
        }
    }
}

impl From<Option<HybridFusion>> for FusionChoice {
    fn from(f: Option<HybridFusion>) -> Self {
        f.map(Self::from).unwrap_or_default()
    }
}

impl fmt::Display for HybridFusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_weighted() {
            write!(f, "{} (dense weight {})", self.mode, self.dense_weight)
        } else {
            f.write_str(self.mode.as_str())
        }
    }
}

/// [`HybridFusion`] as JSON holds it.
#[derive(Serialize, Deserialize)]
struct Written {
    mode: String,
    dense_weight: f64,
}

impl From<HybridFusion> for Written {
    fn from(f: HybridFusion) -> Self {
        Self {
            mode: f.mode.as_str().to_owned(),
            dense_weight: f.dense_weight,
        }
    }
}

impl TryFrom<Written> for HybridFusion {
    type Error = Error;

    fn try_from(w: Written) -> Result<Self> {
        Self::new(w.mode.parse()?, w.dense_weight)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_over_a_base_lay_over_a_setting_and_bad_values_name_themselves() {
        let none = FusionChoice::default();
        assert!(FusionChoice::parse(None, None, none).unwrap().is_empty());
        let set = FusionChoice::parse(Some("relative_score"), Some(" 0.8"), none).unwrap();
        assert_eq!(
            set.over(HybridFusion::default()),
            HybridFusion::new(FusionMode::RelativeScore, 0.8).unwrap()
        );
        let kept = FusionChoice::parse(Some("simple"), None, set).unwrap();
        assert_eq!(kept.dense_weight, Some(0.8));
        // A weight alone keeps the mode of the setting it is laid over.
        let recorded = HybridFusion::new(FusionMode::DistBasedScore, 0.3).unwrap();
        let weight = FusionChoice::parse(None, Some("0.4"), none).unwrap();
        assert_eq!(
            weight.over(recorded),
            HybridFusion::new(FusionMode::DistBasedScore, 0.4).unwrap()
        );
        for (mode, weight, named) in [
            (Some("rrf"), None, "rrf"),
            (None, Some("1.5"), "1.5"),
            (None, Some("heavy"), "heavy"),
            (None, Some("NaN"), "NaN"),
        ] {
            let e = FusionChoice::parse(mode, weight, none).unwrap_err();
            assert!(e.to_string().contains(named), "{e}");
        }
    }

    #[test]
    fn the_written_setting_reads_back_and_a_bad_one_is_refused() {
        let f = HybridFusion::new(FusionMode::DistBasedScore, 0.3).unwrap();
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, r#"{"mode":"dist_based_score","dense_weight":0.3}"#);
        assert_eq!(serde_json::from_str::<HybridFusion>(&json).unwrap(), f);
        for bad in [
            r#"{"mode":"rrf","dense_weight":0.3}"#,
            r#"{"mode":"simple","dense_weight":2}"#,
        ] {
            assert!(serde_json::from_str::<HybridFusion>(bad).is_err(), "{bad}");
        }
        assert_eq!(f.to_string(), "dist_based_score (dense weight 0.3)");
        assert_eq!(HybridFusion::default().to_string(), "reciprocal_rerank");
    }

    #[test]
    fn candidates_weigh_only_the_score_based_modes() {
        let all = HybridFusion::candidates(&[0.2, 0.8]).unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(all.iter().filter(|f| f.is_weighted()).count(), 4);
        assert!(HybridFusion::candidates(&[1.2]).is_err());
    }
}
