//! `BatchEvalRunner`: many evaluations at once, at most `workers` in
//! flight, each retried on failure, the results kept per evaluator.

use super::base::{EvaluationInput, EvaluationResult, Evaluator};
use super::qa_dataset::progress;
use futures::stream::{self, StreamExt, TryStreamExt};
use indexmap::IndexMap;
use ragloom_core::error::{Error, Result};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::{QueryBundle, Response};
use ragloom_core::utils::{read_json_file, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Each evaluator's results, in input order, by evaluator name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BatchEvalResults(pub IndexMap<String, Vec<EvaluationResult>>);

impl BatchEvalResults {
    /// The results of the evaluator named `name`.
    pub fn get(&self, name: &str) -> Option<&[EvaluationResult]> {
        self.0.get(name).map(Vec::as_slice)
    }

    /// The share of `name`'s results that passed, among those that decided.
    pub fn passing_rate(&self, name: &str) -> Option<f64> {
        let decided: Vec<bool> = self.get(name)?.iter().filter_map(|r| r.passing).collect();
        (!decided.is_empty())
            .then(|| decided.iter().filter(|p| **p).count() as f64 / decided.len() as f64)
    }

    /// The mean score of `name`'s scored results.
    pub fn mean_score(&self, name: &str) -> Option<f64> {
        let scores: Vec<f64> = self.get(name)?.iter().filter_map(|r| r.score).collect();
        (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
    }

    /// Writes the results as JSON, `{name: [EvaluationResult, ...]}` (atomically).
    pub fn save_json(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| {
            serde_json::to_writer_pretty(w, self).map_err(std::io::Error::other)
        })
    }

    /// Reads results `save_json` wrote.
    pub fn from_json(path: &Path) -> Result<Self> {
        read_json_file(path)
    }
}

/// Runs named evaluators over many inputs (LlamaIndex `BatchEvalRunner`).
#[derive(Debug, Clone)]
pub struct BatchEvalRunner {
    evaluators: Vec<(String, Arc<dyn Evaluator>)>,
    workers: usize,
    show_progress: bool,
    attempts: usize,
    backoff: Duration,
}

impl BatchEvalRunner {
    /// A runner with 2 workers, 3 attempts per evaluation and LlamaIndex's
    /// back-off between them (tenacity's `wait_exponential(min=4, max=10)`:
    /// 4 s, 4 s, then doubling up to 10 s). A name given twice keeps the
    /// last evaluator, in the first one's place (as a Python dict does).
    pub fn new<I, S>(evaluators: I) -> Self
    where
        I: IntoIterator<Item = (S, Arc<dyn Evaluator>)>,
        S: Into<String>,
    {
        let mut named: IndexMap<String, Arc<dyn Evaluator>> = IndexMap::new();
        for (name, e) in evaluators {
            named.insert(name.into(), e);
        }
        Self {
            evaluators: named.into_iter().collect(),
            workers: 2,
            show_progress: false,
            attempts: 3,
            backoff: Duration::from_secs(4),
        }
    }

    crate::base::concurrency_setters!("Evaluations (and queries) in flight at once (default 2).");

    /// Tries per evaluation or query (at least 1) and the shortest wait between
    /// them; waits grow as LlamaIndex's do, to 2.5 times the shortest.
    pub fn retries(mut self, attempts: usize, backoff: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.backoff = backoff;
        self
    }

    /// Evaluates every input with every evaluator (LlamaIndex
    /// `aevaluate_response_strs`; per-input extras such as `reference` ride in the input).
    pub async fn evaluate_inputs(&self, inputs: &[EvaluationInput]) -> Result<BatchEvalResults> {
        let jobs: Vec<(usize, &EvaluationInput)> = inputs
            .iter()
            .flat_map(|input| (0..self.evaluators.len()).map(move |e| (e, input)))
            .collect();
        let bar = progress(self.show_progress, jobs.len(), 0);
        let results: Vec<(usize, EvaluationResult)> =
            stream::iter(jobs.into_iter().map(|(e, input)| {
                let bar = bar.clone();
                async move {
                    let result = self.with_retries(&*self.evaluators[e].1, input).await;
                    bar.inc(1);
                    result.map(|r| (e, r))
                }
            }))
            .buffered(self.workers)
            .try_collect()
            .await?;
        bar.finish_and_clear();
        let mut out: IndexMap<String, Vec<EvaluationResult>> = self
            .evaluators
            .iter()
            .map(|(name, _)| (name.clone(), Vec::new()))
            .collect();
        for (e, result) in results {
            out[e].push(result);
        }
        Ok(BatchEvalResults(out))
    }

    /// Evaluates query engine responses, their sources as contexts
    /// (LlamaIndex `aevaluate_responses`).
    pub async fn evaluate_responses(
        &self,
        queries: &[String],
        responses: &[Response],
    ) -> Result<BatchEvalResults> {
        if queries.len() != responses.len() {
            return Err(Error::InvalidInput(
                "All inputs must have the same length.".into(),
            ));
        }
        let inputs: Vec<EvaluationInput> = queries
            .iter()
            .zip(responses)
            .map(|(q, r)| EvaluationInput::from_response(Some(q), r))
            .collect();
        self.evaluate_inputs(&inputs).await
    }

    /// Answers each query with `engine` (`workers` at a time), then evaluates
    /// the answers (LlamaIndex `aevaluate_queries`).
    pub async fn evaluate_queries(
        &self,
        engine: &dyn QueryEngine,
        queries: &[String],
    ) -> Result<BatchEvalResults> {
        let responses: Vec<Response> = stream::iter(queries.iter().map(|q| {
            self.retrying(move || async move { engine.query(&QueryBundle::new(q.as_str())).await })
        }))
        .buffered(self.workers)
        .try_collect()
        .await?;
        self.evaluate_responses(queries, &responses).await
    }

    async fn with_retries(
        &self,
        evaluator: &dyn Evaluator,
        input: &EvaluationInput,
    ) -> Result<EvaluationResult> {
        self.retrying(|| evaluator.evaluate(input)).await
    }

    /// Runs `call` until it succeeds, fails for good or runs out of tries.
    async fn retrying<T, F, Fut>(&self, call: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut attempt: u32 = 1;
        loop {
            match call().await {
                Ok(r) => return Ok(r),
                Err(e) if attempt as usize >= self.attempts || !retryable(&e) => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %e, attempt, "evaluation failed; retrying");
                    tokio::time::sleep(self.wait_after(attempt)).await;
                    attempt += 1;
                }
            }
        }
    }

    /// tenacity's `wait_exponential(multiplier=1, min=4, max=10)` after try
    /// `attempt`, scaled so that its 4 s is `backoff`: 2^(attempt-1) s,
    /// clamped between 4 and 10 s.
    fn wait_after(&self, attempt: u32) -> Duration {
        let unit = self.backoff / 4;
        let grown = unit.saturating_mul(1u32 << (attempt - 1).min(16));
        grown.clamp(self.backoff, self.backoff.mul_f64(2.5))
    }
}

/// Whether trying again could help: provider failures and unreadable
/// replies can; a missing input cannot.
fn retryable(e: &Error) -> bool {
    !(e.is_invalid_input() || matches!(e, Error::Unsupported(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_follow_tenacity_wait_exponential_min_4_max_10() {
        let runner = BatchEvalRunner::new(Vec::<(String, Arc<dyn Evaluator>)>::new());
        let secs: Vec<f64> = (1..=6)
            .map(|a| runner.wait_after(a).as_secs_f64())
            .collect();
        assert_eq!(secs, [4.0, 4.0, 4.0, 8.0, 10.0, 10.0]);
    }
}
