//! Retrieval metrics (LlamaIndex `evaluation.retrieval.metrics`): how well a
//! retriever's ranked ids match the ids known to answer a question.
//!
//! Scores are LlamaIndex 0.14.25's to the last bit on the same ids
//! (tests/evaluation_metrics.rs replays its recorded values), including its
//! choices: duplicates in the retrieved list count again for hit rate, AP and
//! NDCG, and NDCG's ideal gain assumes every expected id could be retrieved.

use ragloom_core::error::{Error, Result};
use ragloom_core::schema::NodeWithScore;
use std::collections::HashSet;

/// One metric's value for one query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetrievalMetricResult {
    /// The metric's value.
    pub score: f64,
}

/// A retrieval metric: a score from the expected and the retrieved ids (in
/// rank order). Both lists must be non-empty, as in LlamaIndex.
pub trait RetrievalMetric: Send + Sync + std::fmt::Debug {
    /// Its name in reports and in [`resolve_metrics`] (`"hit_rate"`, `"mrr"`, ...).
    fn metric_name(&self) -> &'static str;
    /// The score of `retrieved_ids` against `expected_ids`.
    fn compute(
        &self,
        expected_ids: &[String],
        retrieved_ids: &[String],
    ) -> Result<RetrievalMetricResult>;

    /// The score of `retrieved` nodes when what answers a question is known
    /// by a predicate (the file and the text that hold the answer), not by
    /// ids: the expected ids are the retrieved nodes it accepts. Retrieving
    /// none it accepts (or nothing) scores 0, where `compute` would have no
    /// expected ids.
    fn compute_relevant(
        &self,
        retrieved: &[NodeWithScore],
        is_relevant: &dyn Fn(&NodeWithScore) -> bool,
    ) -> Result<RetrievalMetricResult> {
        let retrieved_ids: Vec<String> = retrieved
            .iter()
            .map(|n| n.node.node_id().to_string())
            .collect();
        let expected: Vec<String> = retrieved
            .iter()
            .filter(|n| is_relevant(n))
            .map(|n| n.node.node_id().to_string())
            .collect();
        if expected.is_empty() {
            return result(0.0);
        }
        self.compute(&expected, &retrieved_ids)
    }
}

fn check<'a>(expected_ids: &'a [String], retrieved_ids: &[String]) -> Result<HashSet<&'a str>> {
    if expected_ids.is_empty() || retrieved_ids.is_empty() {
        return Err(Error::InvalidInput(
            "Retrieved ids and expected ids must be provided".into(),
        ));
    }
    Ok(expected_ids.iter().map(String::as_str).collect())
}

fn result(score: f64) -> Result<RetrievalMetricResult> {
    Ok(RetrievalMetricResult { score })
}

/// Whether any retrieved id is expected (1 or 0); granular: retrieved ids
/// that are expected, over the number of expected ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct HitRate {
    /// Counts every relevant node retrieved, not only the first.
    pub use_granular_hit_rate: bool,
}

impl RetrievalMetric for HitRate {
    fn metric_name(&self) -> &'static str {
        "hit_rate"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let hits = retrieved
            .iter()
            .filter(|id| set.contains(id.as_str()))
            .count();
        if self.use_granular_hit_rate {
            return result(hits as f64 / expected.len() as f64);
        }
        result(if hits > 0 { 1.0 } else { 0.0 })
    }
}

/// The reciprocal rank of the first expected id retrieved; granular: the
/// mean reciprocal rank of every expected id retrieved.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mrr {
    /// Averages the reciprocal ranks of every relevant node, not only the first.
    pub use_granular_mrr: bool,
}

impl RetrievalMetric for Mrr {
    fn metric_name(&self) -> &'static str {
        "mrr"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let ranks = retrieved
            .iter()
            .enumerate()
            .filter(|(_, id)| set.contains(id.as_str()))
            .map(|(i, _)| 1.0 / (i + 1) as f64);
        if !self.use_granular_mrr {
            return result(ranks.take(1).sum());
        }
        let (mut sum, mut count) = (0.0, 0usize);
        for r in ranks {
            sum += r;
            count += 1;
        }
        result(if count > 0 { sum / count as f64 } else { 0.0 })
    }
}

/// Distinct retrieved ids that are expected, over the distinct retrieved ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct Precision;

impl RetrievalMetric for Precision {
    fn metric_name(&self) -> &'static str {
        "precision"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let got: HashSet<&str> = retrieved.iter().map(String::as_str).collect();
        result(got.intersection(&set).count() as f64 / got.len() as f64)
    }
}

/// Distinct retrieved ids that are expected, over the distinct expected ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recall;

impl RetrievalMetric for Recall {
    fn metric_name(&self) -> &'static str {
        "recall"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let got: HashSet<&str> = retrieved.iter().map(String::as_str).collect();
        result(got.intersection(&set).count() as f64 / set.len() as f64)
    }
}

/// Average precision: the precision at each rank holding an expected id,
/// summed, over the number of distinct expected ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct AveragePrecision;

impl RetrievalMetric for AveragePrecision {
    fn metric_name(&self) -> &'static str {
        "ap"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let (mut relevant, mut total) = (0usize, 0.0);
        for (i, id) in retrieved.iter().enumerate() {
            if set.contains(id.as_str()) {
                relevant += 1;
                total += relevant as f64 / (i + 1) as f64;
            }
        }
        result(total / set.len() as f64)
    }
}

/// How NDCG weighs a relevant item (the same for LlamaIndex's binary relevance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiscountedGainMode {
    /// Gain of a relevant node is 1.
    #[default]
    Linear,
    /// Gain of a relevant node is 2^rel - 1.
    Exponential,
}

fn discounted_gain(rel: f64, i: usize, mode: DiscountedGainMode) -> f64 {
    if rel == 0.0 {
        return 0.0;
    }
    let discount = ((i + 1) as f64).log2();
    if rel == 1.0 {
        return 1.0 / discount;
    }
    match mode {
        DiscountedGainMode::Linear => rel / discount,
        DiscountedGainMode::Exponential => (2f64.powf(rel) - 1.0) / discount,
    }
}

/// Normalised discounted cumulative gain with binary relevance: the ideal
/// ranking puts all expected ids first (as many as there are expected ids).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ndcg {
    /// How gains are counted.
    pub mode: DiscountedGainMode,
}

impl RetrievalMetric for Ndcg {
    fn metric_name(&self) -> &'static str {
        "ndcg"
    }

    fn compute(&self, expected: &[String], retrieved: &[String]) -> Result<RetrievalMetricResult> {
        let set = check(expected, retrieved)?;
        let dcg: f64 = retrieved
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let rel = if set.contains(id.as_str()) { 1.0 } else { 0.0 };
                discounted_gain(rel, i + 1, self.mode)
            })
            .sum();
        let idcg: f64 = (1..=expected.len())
            .map(|i| discounted_gain(1.0, i, self.mode))
            .sum();
        result(dcg / idcg)
    }
}

/// The metrics named (LlamaIndex's `resolve_metrics`, with its defaults):
/// `hit_rate`, `mrr`, `precision`, `recall`, `ap`, `ndcg`.
pub fn resolve_metrics<S: AsRef<str>>(names: &[S]) -> Result<Vec<Box<dyn RetrievalMetric>>> {
    names
        .iter()
        .map(|name| -> Result<Box<dyn RetrievalMetric>> {
            Ok(match name.as_ref() {
                "hit_rate" => Box::new(HitRate::default()),
                "mrr" => Box::new(Mrr::default()),
                "precision" => Box::new(Precision),
                "recall" => Box::new(Recall),
                "ap" => Box::new(AveragePrecision),
                "ndcg" => Box::new(Ndcg::default()),
                other => {
                    return Err(Error::InvalidInput(format!("Invalid metric name: {other}")));
                }
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ragloom_core::schema::Node;

    #[test]
    fn a_relevance_predicate_scores_as_the_ids_it_accepts() {
        let nodes: Vec<NodeWithScore> = ["a", "b heron", "c heron"]
            .iter()
            .map(|t| NodeWithScore {
                node: Node::text_node(*t),
                score: None,
            })
            .collect();
        let heron = |n: &NodeWithScore| n.node.get_text().contains("heron");
        let mrr = Mrr::default().compute_relevant(&nodes, &heron).unwrap();
        assert_eq!(mrr.score, 0.5);
        let hit = HitRate::default().compute_relevant(&nodes, &heron).unwrap();
        assert_eq!(hit.score, 1.0);
        let none = |_: &NodeWithScore| false;
        assert_eq!(
            Mrr::default()
                .compute_relevant(&nodes, &none)
                .unwrap()
                .score,
            0.0
        );
        assert_eq!(
            HitRate::default()
                .compute_relevant(&[], &heron)
                .unwrap()
                .score,
            0.0
        );
    }
}
