//! `RetrieverEvaluator`: runs a retriever (and optional postprocessors) on a
//! query and scores the retrieved ids against the expected ones.

use super::qa_dataset::EmbeddingQAFinetuneDataset;
use super::retrieval_metrics::{RetrievalMetric, resolve_metrics};
use futures::stream::{self, StreamExt, TryStreamExt};
use ragloom_core::error::Result;
use ragloom_core::postprocessor::NodePostprocessor;
use ragloom_core::retrievers::Retriever;
use ragloom_core::schema::{MetadataMode, QueryBundle};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// One query's retrieval and its metrics (LlamaIndex `RetrievalEvalResult`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrievalEvalResult {
    /// The question.
    pub query: String,
    /// The ids that answer it.
    pub expected_ids: Vec<String>,
    /// The texts that answer it, when given.
    pub expected_texts: Option<Vec<String>>,
    /// The ids retrieved, in rank order.
    pub retrieved_ids: Vec<String>,
    /// The texts retrieved, in rank order.
    pub retrieved_texts: Vec<String>,
    /// Metric name → score.
    pub metric_dict: BTreeMap<String, f64>,
    /// Wall time of the retrieval and postprocessing, in seconds.
    #[serde(default)]
    pub latency_s: f64,
}

impl std::fmt::Display for RetrievalEvalResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Query: {}", self.query)?;
        writeln!(f, "Metrics: {:?}", self.metric_dict)
    }
}

/// Scores a retriever with a set of metrics.
#[derive(Debug, Clone)]
pub struct RetrieverEvaluator {
    retriever: Arc<dyn Retriever>,
    metrics: Vec<Arc<dyn RetrievalMetric>>,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

impl RetrieverEvaluator {
    /// An evaluator of `retriever` with `metrics`.
    pub fn new(retriever: Arc<dyn Retriever>, metrics: Vec<Arc<dyn RetrievalMetric>>) -> Self {
        Self {
            retriever,
            metrics,
            node_postprocessors: Vec::new(),
        }
    }

    /// An evaluator with the metrics named (`"hit_rate"`, `"mrr"`, `"precision"`,
    /// `"recall"`, `"ap"`, `"ndcg"`; LlamaIndex `from_metric_names`).
    pub fn from_metric_names<S: AsRef<str>>(
        names: &[S],
        retriever: Arc<dyn Retriever>,
    ) -> Result<Self> {
        let metrics = resolve_metrics(names)?.into_iter().map(Arc::from).collect();
        Ok(Self::new(retriever, metrics))
    }

    /// Applies `p` to the retrieved nodes before scoring (a reranker, a cutoff).
    pub fn node_postprocessor(mut self, p: Arc<dyn NodePostprocessor>) -> Self {
        self.node_postprocessors.push(p);
        self
    }

    /// Retrieves for `query` and scores the ids against `expected_ids`.
    pub async fn evaluate(
        &self,
        query: &str,
        expected_ids: &[String],
        expected_texts: Option<&[String]>,
    ) -> Result<RetrievalEvalResult> {
        let start = Instant::now();
        let bundle = QueryBundle::new(query);
        let mut nodes = self.retriever.retrieve(&bundle).await?;
        for p in &self.node_postprocessors {
            nodes = p.postprocess_nodes(nodes, Some(&bundle)).await?;
        }
        let latency_s = start.elapsed().as_secs_f64();
        let retrieved_ids: Vec<String> =
            nodes.iter().map(|n| n.node.node_id().to_owned()).collect();
        let mut metric_dict = BTreeMap::new();
        for metric in &self.metrics {
            // Nothing retrieved scores 0 on every metric: LlamaIndex raises,
            // which would end a whole dataset's run on one query without hits.
            let score = if retrieved_ids.is_empty() && !expected_ids.is_empty() {
                0.0
            } else {
                metric.compute(expected_ids, &retrieved_ids)?.score
            };
            metric_dict.insert(metric.metric_name().to_owned(), score);
        }
        Ok(RetrievalEvalResult {
            query: query.to_owned(),
            expected_ids: expected_ids.to_vec(),
            expected_texts: expected_texts.map(<[String]>::to_vec),
            retrieved_ids,
            retrieved_texts: nodes
                .iter()
                .map(|n| n.node.get_content(MetadataMode::None))
                .collect(),
            metric_dict,
            latency_s,
        })
    }

    /// Evaluates every query of `dataset` against its relevant ids, `workers`
    /// at a time, in the dataset's order.
    pub async fn evaluate_dataset(
        &self,
        dataset: &EmbeddingQAFinetuneDataset,
        workers: usize,
    ) -> Result<Vec<RetrievalEvalResult>> {
        let jobs = dataset.queries.iter().map(|(id, query)| async move {
            let expected = dataset.relevant_docs.get(id).ok_or_else(|| {
                ragloom_core::Error::InvalidInput(format!("query {id} has no relevant_docs"))
            })?;
            self.evaluate(query, expected, None).await
        });
        stream::iter(jobs)
            .buffered(workers.max(1))
            .try_collect()
            .await
    }
}

/// The mean of each metric over `results` (metric name → mean score).
pub fn mean_metrics(results: &[RetrievalEvalResult]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for r in results {
        for (name, score) in &r.metric_dict {
            let e = sums.entry(name.clone()).or_default();
            e.0 += score;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, sum / n as f64))
        .collect()
}
