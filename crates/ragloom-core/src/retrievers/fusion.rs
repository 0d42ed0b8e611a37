//! `QueryFusionRetriever`: asks several retrievers (and optionally several
//! LLM-written variants of the query) and fuses their results, as LlamaIndex does.
//!
//! The fusion functions are public and pure so that their output can be
//! checked against Python's on the same inputs. Scores are fused in `f64`, as
//! Python computes them, and rounded to `f32` once at the end.

use super::Retriever;
use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;
use futures::future::try_join_all;
use indexmap::IndexMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// LlamaIndex's `QUERY_GEN_PROMPT`, verbatim.
pub const QUERY_GEN_PROMPT: &str = "You are a helpful assistant that generates multiple search queries based on a single input query. Generate {num_queries} search queries, one on each line, related to the following input query:\nQuery: {query}\nQueries:\n";

/// The `k` of reciprocal rank fusion (the value the RRF paper recommends).
pub const RRF_K: f64 = 60.0;

/// Each retriever's results for each query, keyed by `(query text, retriever
/// position)` in the order they were asked (Python's results dict; a
/// generated query equal to an earlier one replaces its results, as there).
pub type FusionResults = IndexMap<(String, usize), Vec<NodeWithScore>>;

/// How results are fused (LlamaIndex `FUSION_MODES`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusionMode {
    /// `"reciprocal_rerank"`: sum of `1 / (rank + 60)` over the result lists.
    ReciprocalRank,
    /// `"relative_score"`: min-max scaled scores, weighted by retriever, summed.
    RelativeScore,
    /// `"dist_based_score"`: like `RelativeScore`, scaled to mean ± 3 std devs.
    DistBasedScore,
    /// `"simple"`: each node once, with its highest score.
    #[default]
    Simple,
}

impl FusionMode {
    /// LlamaIndex's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReciprocalRank => "reciprocal_rerank",
            Self::RelativeScore => "relative_score",
            Self::DistBasedScore => "dist_based_score",
            Self::Simple => "simple",
        }
    }
}

impl fmt::Display for FusionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FusionMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "reciprocal_rerank" => Self::ReciprocalRank,
            "relative_score" => Self::RelativeScore,
            "dist_based_score" => Self::DistBasedScore,
            "simple" => Self::Simple,
            other => {
                return Err(Error::InvalidInput(format!(
                    "Invalid fusion mode: {other} (expected reciprocal_rerank, relative_score, \
                     dist_based_score or simple)"
                )));
            }
        })
    }
}

fn with_score(mut n: NodeWithScore, score: f64) -> NodeWithScore {
    n.score = Some(score as f32);
    n
}

/// Simple fusion (`_simple_fusion`): each node (by content hash) once, with
/// the highest score it got, best first; equal scores keep first-seen order.
pub fn simple_fusion(results: &FusionResults) -> Vec<NodeWithScore> {
    let mut all: IndexMap<String, (NodeWithScore, f64)> = IndexMap::new();
    for list in results.values() {
        for n in list {
            let score = f64::from(n.get_score());
            match all.get_mut(&n.node.hash()) {
                Some(entry) => entry.1 = entry.1.max(score),
                None => {
                    all.insert(n.node.hash(), (n.clone(), score));
                }
            }
        }
    }
    sorted(all.into_values().collect())
}

/// Reciprocal rank fusion (`_reciprocal_rerank_fusion`, k = 60): each list is
/// ranked by score, a node gets `1 / (rank + k)` from each list it is in.
/// As in Python, the node kept is the one seen last.
pub fn reciprocal_rerank_fusion(results: &FusionResults) -> Vec<NodeWithScore> {
    let mut fused: IndexMap<String, (NodeWithScore, f64)> = IndexMap::new();
    for list in results.values() {
        let mut ranked: Vec<&NodeWithScore> = list.iter().collect();
        // Stable, like Python's sorted(..., reverse=True).
        ranked.sort_by(|a, b| b.get_score().total_cmp(&a.get_score()));
        for (rank, n) in ranked.into_iter().enumerate() {
            let add = 1.0 / (rank as f64 + RRF_K);
            let entry = fused
                .entry(n.node.hash())
                .or_insert_with(|| (n.clone(), 0.0));
            entry.0 = n.clone();
            entry.1 += add;
        }
    }
    sorted(fused.into_values().collect())
}

/// Relative-score fusion (`_relative_score_fusion`): each list's scores are
/// scaled to [0, 1] (min-max, or mean ± 3 standard deviations when
/// `dist_based`), multiplied by the retriever's weight (`retriever_weights`,
/// normalised to sum 1) and divided by `num_queries`; a node's scaled scores
/// are summed.
pub fn relative_score_fusion(
    results: &FusionResults,
    retriever_weights: &[f64],
    num_queries: usize,
    dist_based: bool,
) -> Result<Vec<NodeWithScore>> {
    let mut all: IndexMap<String, (NodeWithScore, f64)> = IndexMap::new();
    for ((query, retriever), list) in results {
        let weight = retriever_weights.get(*retriever).copied().ok_or_else(|| {
            Error::InvalidInput(format!(
                "results for query {query:?} come from retriever {retriever}, which has no weight"
            ))
        })?;
        let scores: Vec<f64> = list.iter().map(|n| f64::from(n.get_score())).collect();
        let (min, max) = if scores.is_empty() {
            (0.0, 0.0)
        } else if dist_based {
            let len = scores.len() as f64;
            let mean = scores.iter().sum::<f64>() / len;
            let var = scores.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / len;
            let std = var.sqrt();
            (mean - 3.0 * std, mean + 3.0 * std)
        } else {
            (
                scores.iter().copied().fold(f64::INFINITY, f64::min),
                scores.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        for (n, s) in list.iter().zip(scores) {
            let scaled = if max == min {
                if max > 0.0 { 1.0 } else { 0.0 }
            } else {
                (s - min) / (max - min)
            };
            let score = scaled * weight / num_queries as f64;
            match all.get_mut(&n.node.hash()) {
                Some(entry) => entry.1 += score,
                None => {
                    all.insert(n.node.hash(), (n.clone(), score));
                }
            }
        }
    }
    Ok(sorted(all.into_values().collect()))
}

/// `results` fused by `mode` (weights and `num_queries` as
/// [`relative_score_fusion`] takes them), the `top_k` best kept: what
/// [`QueryFusionRetriever::fuse`] does, for callers that hold the lists.
pub fn fuse_results(
    mode: FusionMode,
    results: &FusionResults,
    retriever_weights: &[f64],
    num_queries: usize,
    top_k: usize,
) -> Result<Vec<NodeWithScore>> {
    let mut fused = match mode {
        FusionMode::ReciprocalRank => reciprocal_rerank_fusion(results),
        FusionMode::RelativeScore => {
            relative_score_fusion(results, retriever_weights, num_queries, false)?
        }
        FusionMode::DistBasedScore => {
            relative_score_fusion(results, retriever_weights, num_queries, true)?
        }
        FusionMode::Simple => simple_fusion(results),
    };
    fused.truncate(top_k);
    Ok(fused)
}

/// Best first; a stable sort, so equal scores keep their order (as Python's
/// `sorted(..., reverse=True)`).
fn sorted(mut scored: Vec<(NodeWithScore, f64)>) -> Vec<NodeWithScore> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().map(|(n, s)| with_score(n, s)).collect()
}

/// Retrieves with several retrievers, for the query and (with an LLM and
/// `num_queries` > 1) LLM-generated variants of it, and fuses the results
/// (LlamaIndex `QueryFusionRetriever`).
#[derive(Clone, Debug)]
pub struct QueryFusionRetriever {
    retrievers: Vec<Arc<dyn Retriever>>,
    llm: Option<Arc<dyn Llm>>,
    query_gen_prompt: String,
    mode: FusionMode,
    similarity_top_k: usize,
    num_queries: usize,
    use_async: bool,
    verbose: bool,
    retriever_weights: Vec<f64>,
}

/// Options of a [`QueryFusionRetriever`].
#[derive(Debug)]
pub struct QueryFusionRetrieverBuilder {
    retrievers: Vec<Arc<dyn Retriever>>,
    llm: Option<Arc<dyn Llm>>,
    query_gen_prompt: Option<String>,
    mode: FusionMode,
    similarity_top_k: usize,
    num_queries: usize,
    use_async: bool,
    verbose: bool,
    retriever_weights: Option<Vec<f64>>,
}

impl QueryFusionRetrieverBuilder {
    /// The LLM that writes query variants (needed when `num_queries` > 1).
    pub fn llm(mut self, llm: Arc<dyn Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// Replaces [`QUERY_GEN_PROMPT`] (fields `{num_queries}` and `{query}`).
    pub fn query_gen_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.query_gen_prompt = Some(prompt.into());
        self
    }

    /// The fusion mode (default [`FusionMode::Simple`]).
    pub fn mode(mut self, mode: FusionMode) -> Self {
        self.mode = mode;
        self
    }

    /// How many fused nodes to return (default 2).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }

    /// Queries in all, the original included (default 4; 1 asks no LLM).
    pub fn num_queries(mut self, n: usize) -> Self {
        self.num_queries = n;
        self
    }

    /// Ask the retrievers concurrently (default true) or one after another.
    pub fn use_async(mut self, yes: bool) -> Self {
        self.use_async = yes;
        self
    }

    /// Print the generated queries.
    pub fn verbose(mut self, yes: bool) -> Self {
        self.verbose = yes;
        self
    }

    /// Per-retriever weights for the relative-score modes (normalised to sum
    /// 1; default equal).
    pub fn retriever_weights(mut self, weights: Vec<f64>) -> Self {
        self.retriever_weights = Some(weights);
        self
    }

    /// Checks the options and builds the retriever.
    pub fn build(self) -> Result<QueryFusionRetriever> {
        let n = self.retrievers.len();
        if n == 0 {
            return Err(Error::InvalidInput(
                "QueryFusionRetriever needs at least one retriever".into(),
            ));
        }
        if self.num_queries == 0 {
            return Err(Error::InvalidInput(
                "QueryFusionRetriever: num_queries must be at least 1 (the query itself)".into(),
            ));
        }
        if self.num_queries > 1 && self.llm.is_none() {
            return Err(Error::InvalidInput(format!(
                "QueryFusionRetriever: num_queries is {} but no llm is set to generate queries; \
                 set .llm(...) or .num_queries(1)",
                self.num_queries
            )));
        }
        let retriever_weights = match self.retriever_weights {
            None => vec![1.0 / n as f64; n],
            Some(w) => {
                let total: f64 = w.iter().sum();
                if w.len() != n || !(total.is_finite() && total > 0.0) {
                    return Err(Error::InvalidInput(format!(
                        "retriever_weights: {} weights summing to {total} for {n} retrievers; \
                         give one positive weight per retriever",
                        w.len()
                    )));
                }
                w.iter().map(|x| x / total).collect()
            }
        };
        Ok(QueryFusionRetriever {
            retrievers: self.retrievers,
            llm: self.llm,
            query_gen_prompt: self
                .query_gen_prompt
                .unwrap_or_else(|| QUERY_GEN_PROMPT.to_string()),
            mode: self.mode,
            similarity_top_k: self.similarity_top_k,
            num_queries: self.num_queries,
            use_async: self.use_async,
            verbose: self.verbose,
            retriever_weights,
        })
    }
}

impl QueryFusionRetriever {
    /// A builder fusing `retrievers`, with LlamaIndex's defaults.
    pub fn builder(retrievers: Vec<Arc<dyn Retriever>>) -> QueryFusionRetrieverBuilder {
        QueryFusionRetrieverBuilder {
            retrievers,
            llm: None,
            query_gen_prompt: None,
            mode: FusionMode::Simple,
            similarity_top_k: super::bm25::DEFAULT_SIMILARITY_TOP_K,
            num_queries: 4,
            use_async: true,
            verbose: false,
            retriever_weights: None,
        }
    }

    /// The normalised retriever weights.
    pub fn retriever_weights(&self) -> &[f64] {
        &self.retriever_weights
    }

    /// The LLM-generated variants of `query` (at most `num_queries - 1`).
    pub async fn generate_queries(&self, query: &str) -> Result<Vec<QueryBundle>> {
        let Some(llm) = &self.llm else {
            return Ok(Vec::new());
        };
        let wanted = (self.num_queries - 1).to_string();
        let prompt = crate::utils::format_named(&self.query_gen_prompt, &|k| match k {
            "num_queries" => Some(wanted.as_str()),
            "query" => Some(query),
            _ => None,
        })?;
        let reply = llm.complete(&prompt, false).await?;
        let queries: Vec<&str> = reply
            .text
            .trim_matches('`')
            .split('\n')
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .collect();
        if self.verbose {
            println!("Generated queries:\n{}", queries.join("\n"));
        }
        Ok(queries
            .into_iter()
            .take(self.num_queries - 1)
            .map(QueryBundle::new)
            .collect())
    }

    /// Every retriever's results for every query.
    pub async fn run_queries(&self, queries: &[QueryBundle]) -> Result<FusionResults> {
        let mut keys = Vec::new();
        let mut lists = Vec::new();
        if self.use_async {
            let mut runs = Vec::new();
            for q in queries {
                for (i, r) in self.retrievers.iter().enumerate() {
                    keys.push((q.query_str.clone(), i));
                    runs.push(r.retrieve(q));
                }
            }
            lists = try_join_all(runs).await?;
        } else {
            for q in queries {
                for (i, r) in self.retrievers.iter().enumerate() {
                    keys.push((q.query_str.clone(), i));
                    lists.push(r.retrieve(q).await?);
                }
            }
        }
        Ok(keys.into_iter().zip(lists).collect())
    }

    /// Fuses `results` with this retriever's mode and keeps the top k.
    pub fn fuse(&self, results: &FusionResults) -> Result<Vec<NodeWithScore>> {
        fuse_results(
            self.mode,
            results,
            &self.retriever_weights,
            self.num_queries,
            self.similarity_top_k,
        )
    }
}

#[async_trait]
impl Retriever for QueryFusionRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let mut queries = vec![query.clone()];
        if self.num_queries > 1 {
            queries.extend(self.generate_queries(&query.query_str).await?);
        }
        let results = self.run_queries(&queries).await?;
        self.fuse(&results)
    }
}

impl PromptMixin for QueryFusionRetriever {
    fn own_prompts(&self) -> PromptDictType {
        let mut d = PromptDictType::new();
        d.insert(
            "query_gen_prompt".into(),
            BasePromptTemplate::from(PromptTemplate::new(self.query_gen_prompt.clone())),
        );
        d
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("query_gen_prompt") {
            match p {
                BasePromptTemplate::Text(t) => self.query_gen_prompt = t.template.clone(),
                _ => {
                    return Err(Error::InvalidInput(
                        "query_gen_prompt must be a text prompt template".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llms::MockLlm;
    use crate::schema::Node;

    #[derive(Debug)]
    struct Fixed(Vec<(&'static str, f32)>);

    #[async_trait]
    impl Retriever for Fixed {
        async fn retrieve(&self, _q: &QueryBundle) -> Result<Vec<NodeWithScore>> {
            Ok(self
                .0
                .iter()
                .map(|(t, s)| NodeWithScore::new(Node::text_node(*t).with_id(*t), Some(*s)))
                .collect())
        }
    }

    #[tokio::test]
    async fn one_query_asks_no_llm_and_generated_queries_are_trimmed() {
        let a: Arc<dyn Retriever> = Arc::new(Fixed(vec![("x", 0.5), ("y", 0.9)]));
        let b: Arc<dyn Retriever> = Arc::new(Fixed(vec![("x", 0.7)]));
        let r = QueryFusionRetriever::builder(vec![a.clone(), b.clone()])
            .num_queries(1)
            .build()
            .unwrap();
        let got = r.retrieve(&"q".into()).await.unwrap();
        let ids: Vec<(&str, f32)> = got.iter().map(|n| (n.node_id(), n.get_score())).collect();
        assert_eq!(ids, [("y", 0.9), ("x", 0.7)]);

        let llm = Arc::new(MockLlm::scripted(["```\nq1\n\n  q2 \nq3\nq4\n```"]));
        let r = QueryFusionRetriever::builder(vec![a])
            .llm(llm.clone())
            .build()
            .unwrap();
        let qs = r.generate_queries("orig").await.unwrap();
        let qs: Vec<&str> = qs.iter().map(|q| q.query_str.as_str()).collect();
        assert_eq!(qs, ["q1", "q2", "q3"]);
        let prompt = llm.requests()[0].prompt_text();
        assert!(prompt.contains("Generate 3 search queries") && prompt.contains("Query: orig"));
    }

    #[test]
    fn options_are_checked() {
        let a: Arc<dyn Retriever> = Arc::new(Fixed(vec![]));
        assert!(QueryFusionRetriever::builder(vec![]).build().is_err());
        assert!(
            QueryFusionRetriever::builder(vec![a.clone()])
                .build()
                .is_err()
        );
        let r = QueryFusionRetriever::builder(vec![a.clone(), a.clone()])
            .num_queries(1)
            .retriever_weights(vec![1.0, 3.0])
            .build()
            .unwrap();
        assert_eq!(r.retriever_weights(), [0.25, 0.75]);
        assert!(
            QueryFusionRetriever::builder(vec![a])
                .num_queries(1)
                .retriever_weights(vec![1.0, 3.0])
                .build()
                .is_err()
        );
        assert_eq!(
            "dist_based_score".parse::<FusionMode>().unwrap(),
            FusionMode::DistBasedScore
        );
        assert!("nope".parse::<FusionMode>().is_err());
    }
}
