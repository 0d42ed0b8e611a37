//! Retrieval modes side by side on labelled questions: hit rate, MRR and
//! latency per mode and `top_k`, and an LLM's judgement of one mode's answers.

use super::labelled::{LabelledQuestion, Relevance, squash};
use super::qa_dataset::progress;
use super::retrieval_metrics::{HitRate, Mrr, RetrievalMetric};
use super::{
    BatchEvalRunner, CorrectnessEvaluator, EvaluationInput, EvaluationResult, Evaluator,
    FaithfulnessEvaluator, RelevancyEvaluator,
};
use ragloom_core::durable::IndexRetrievers;
use ragloom_core::llms::Llm;
use ragloom_core::postprocessor::NodePostprocessor;
use ragloom_core::query_engine::passage::file_path;
use ragloom_core::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom_core::retrievers::Retriever;
use ragloom_core::schema::{MetadataMode, NodeWithScore, QueryBundle};
use ragloom_core::{Error, Result};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// A reranker keeping the given number of nodes.
pub type MakeRerank = Arc<dyn Fn(usize) -> Arc<dyn NodePostprocessor> + Send + Sync>;

type MakeRetriever = Arc<dyn Fn(usize) -> Result<Arc<dyn Retriever>> + Send + Sync>;

/// A named way to retrieve at any `top_k`, optionally reranked.
#[derive(Clone)]
pub struct RetrievalMode {
    /// The name reports show (`bm25`, `vector`, `hybrid+rerank`, ...).
    pub name: String,
    make: MakeRetriever,
    rerank: Option<MakeRerank>,
}

impl fmt::Debug for RetrievalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetrievalMode")
            .field("name", &self.name)
            .field("rerank", &self.rerank.is_some())
            .finish()
    }
}

impl RetrievalMode {
    /// A mode named `name` whose retriever for a `top_k` `make` builds.
    pub fn new(
        name: impl Into<String>,
        make: impl Fn(usize) -> Result<Arc<dyn Retriever>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            make: Arc::new(make),
            rerank: None,
        }
    }

    /// The retriever at `top_k`.
    pub fn retriever(&self, top_k: usize) -> Result<Arc<dyn Retriever>> {
        (self.make)(top_k)
    }

    /// The reranker keeping `top_k` nodes, if the mode reranks.
    pub fn reranker(&self, top_k: usize) -> Option<Arc<dyn NodePostprocessor>> {
        self.rerank.as_ref().map(|r| r(top_k))
    }

    /// The modes a durable index offers: its keyword search; with vectors,
    /// `vector` and `hybrid`; with `rerank`, the best of those reranked from
    /// three times the candidates it keeps. The last mode is the strongest.
    pub fn for_index(retrievers: &Arc<IndexRetrievers>, rerank: Option<MakeRerank>) -> Vec<Self> {
        let keyword = retrievers.build().keyword_kind().to_owned();
        let r = retrievers.clone();
        let mut modes = vec![Self::new(keyword.clone(), move |k| r.keyword(k))];
        let dense = retrievers.vector(1).is_some();
        if dense {
            let r = retrievers.clone();
            modes.push(Self::new("vector", move |k| {
                r.vector(k).ok_or_else(|| {
                    Error::InvalidInput("the index has no vectors for this model".to_owned())
                })
            }));
            let r = retrievers.clone();
            modes.push(Self::new("hybrid", move |k| r.retriever(k, None)));
        }
        if let Some(rerank) = rerank {
            let base = if dense { "hybrid".to_owned() } else { keyword };
            let r = retrievers.clone();
            let mut mode = Self::new(format!("{base}+rerank"), move |k| {
                if dense {
                    r.retriever(3 * k, None)
                } else {
                    r.keyword(3 * k)
                }
            });
            mode.rerank = Some(rerank);
            modes.push(mode);
        }
        modes
    }

    async fn run(
        &self,
        retriever: &dyn Retriever,
        rerank: Option<&Arc<dyn NodePostprocessor>>,
        question: &str,
    ) -> Result<Vec<NodeWithScore>> {
        let bundle = QueryBundle::new(question);
        let nodes = retriever.retrieve(&bundle).await?;
        match rerank {
            Some(rerank) => rerank.postprocess_nodes(nodes, Some(&bundle)).await,
            None => Ok(nodes),
        }
    }
}

/// One retrieval mode at one `top_k`, over every question.
#[derive(Clone, Debug, Serialize)]
pub struct ModeSummary {
    /// The mode's name.
    pub mode: String,
    /// Nodes kept per question.
    pub top_k: usize,
    /// Share of questions with a relevant node retrieved.
    pub hit_rate: f64,
    /// Mean reciprocal rank of the first relevant node.
    pub mrr: f64,
    /// Median latency of one retrieval.
    pub latency_ms_p50: f64,
    /// 95th-percentile latency.
    pub latency_ms_p95: f64,
    /// Nodes returned per question, on average (fewer than `top_k` when
    /// few match, as in keyword search).
    pub mean_retrieved: f64,
}

/// Where one mode ranked one question's first hit.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// The mode's name.
    pub mode: String,
    /// Nodes kept.
    pub top_k: usize,
    /// 1-based rank of the first relevant node; `null`: a miss.
    pub rank: Option<usize>,
    /// How long the retrieval took.
    pub latency_ms: f64,
}

/// A node one mode retrieved, as a report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Retrieved {
    /// Its file, relative to the source's root when inside it.
    pub file: String,
    /// Its first 300 characters.
    pub excerpt: String,
    /// Whether it answers the question.
    pub hit: bool,
}

/// One question's results.
#[derive(Clone, Debug, Serialize)]
pub struct QuestionResult {
    /// The question and its labels.
    #[serde(flatten)]
    pub question: LabelledQuestion,
    /// Runs (mode and top_k) that missed it.
    pub misses: usize,
    /// Every mode's run at every top_k.
    pub runs: Vec<Run>,
    /// What the first mode retrieved at the largest top_k.
    pub retrieved: Vec<Retrieved>,
}

/// The LLM judges' verdicts on answers from one mode.
#[derive(Clone, Debug, Serialize)]
pub struct JudgeSummary {
    /// The mode that retrieved for the answers.
    pub mode: String,
    /// Nodes it kept.
    pub top_k: usize,
    /// Questions answered.
    pub questions: usize,
    /// Share of answers the faithfulness judge passed.
    pub faithfulness: Option<f64>,
    /// Share of answers the relevancy judge passed.
    pub relevancy: Option<f64>,
    /// Share the correctness judge passed (score at least 4); only with reference answers.
    pub correctness: Option<f64>,
    /// Mean correctness score (1 to 5).
    pub correctness_score: Option<f64>,
}

/// Everything a comparison measured (the report's data).
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// What was indexed (a folder, a file, a glob).
    pub source: String,
    /// The question set: a file, or `generated by <llm>`.
    pub dataset: String,
    /// How many questions.
    pub questions: usize,
    /// One row per mode and top_k.
    pub retrieval: Vec<ModeSummary>,
    /// The judges' verdicts, when answers were judged.
    pub judged: Option<JudgeSummary>,
    /// Per-question detail.
    pub per_question: Vec<QuestionResult>,
}

impl fmt::Display for EvalReport {
    /// The summary as a table: one row per mode and top_k, then the judges'.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} questions ({}) over {}",
            self.questions, self.dataset, self.source
        )?;
        write!(
            f,
            "{:<16} {:>5} {:>9} {:>7} {:>9} {:>9}",
            "mode", "top_k", "hit rate", "MRR", "p50 ms", "p95 ms"
        )?;
        for m in &self.retrieval {
            write!(
                f,
                "\n{:<16} {:>5} {:>9.3} {:>7.3} {:>9.2} {:>9.2}",
                m.mode, m.top_k, m.hit_rate, m.mrr, m.latency_ms_p50, m.latency_ms_p95
            )?;
        }
        if let Some(j) = &self.judged {
            let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.0}%", v * 100.0));
            write!(
                f,
                "\nanswers ({} at top_k {}, {} questions): faithful {}, relevant {}, correct {}",
                j.mode,
                j.top_k,
                j.questions,
                pct(j.faithfulness),
                pct(j.relevancy),
                pct(j.correctness)
            )?;
        }
        Ok(())
    }
}

/// Runs every mode at every `top_k` over `questions`. `root` (the indexed
/// folder) shortens the file paths shown for retrieved nodes. `top_ks` are
/// sorted and deduplicated; each must be at least 1.
pub async fn compare_retrieval(
    modes: &[RetrievalMode],
    questions: &[LabelledQuestion],
    top_ks: &[usize],
    root: &str,
    show_progress: bool,
) -> Result<(Vec<ModeSummary>, Vec<QuestionResult>)> {
    let mut top_ks = top_ks.to_vec();
    top_ks.sort_unstable();
    top_ks.dedup();
    let Some(&largest) = top_ks.last().filter(|_| top_ks[0] >= 1) else {
        return Err(Error::InvalidInput(
            "comparing retrieval needs top_k values of at least 1 (e.g. 2,4,8)".to_owned(),
        ));
    };
    let mut per_question: Vec<QuestionResult> = questions
        .iter()
        .map(|q| QuestionResult {
            question: q.clone(),
            misses: 0,
            runs: Vec::new(),
            retrieved: Vec::new(),
        })
        .collect();
    let relevance: Vec<Relevance> = questions.iter().map(LabelledQuestion::relevance).collect();
    let bar = progress(
        show_progress,
        modes.len() * top_ks.len() * questions.len(),
        0,
    );
    bar.set_message("retrieving");
    let mut summaries = Vec::new();
    for (m, mode) in modes.iter().enumerate() {
        for &k in &top_ks {
            let retriever = mode.retriever(k)?;
            let rerank = mode.reranker(k);
            let (mut hits, mut rrs, mut latencies, mut returned) = (0.0, 0.0, Vec::new(), 0);
            for (i, q) in questions.iter().enumerate() {
                let start = Instant::now();
                let nodes = mode
                    .run(retriever.as_ref(), rerank.as_ref(), &q.question)
                    .await?;
                let ms = start.elapsed().as_secs_f64() * 1000.0;
                returned += nodes.len();
                let (hit, rr, rank) = score(&nodes, &relevance[i])?;
                hits += hit;
                rrs += rr;
                latencies.push(ms);
                let result = &mut per_question[i];
                result.misses += usize::from(rank.is_none());
                result.runs.push(Run {
                    mode: mode.name.clone(),
                    top_k: k,
                    rank,
                    latency_ms: ms,
                });
                if m == 0 && k == largest {
                    result.retrieved = shown(&nodes, &relevance[i], root);
                }
                bar.inc(1);
            }
            latencies.sort_by(f64::total_cmp);
            let n = questions.len().max(1) as f64;
            summaries.push(ModeSummary {
                mode: mode.name.clone(),
                top_k: k,
                hit_rate: hits / n,
                mrr: rrs / n,
                latency_ms_p50: percentile(&latencies, 0.5),
                latency_ms_p95: percentile(&latencies, 0.95),
                mean_retrieved: returned as f64 / n,
            });
        }
    }
    bar.finish_and_clear();
    Ok((summaries, per_question))
}

/// Hit (1 or 0), reciprocal rank and 1-based rank of the first relevant
/// node: [`HitRate`] and [`Mrr`] (LlamaIndex's, not granular) given which
/// nodes hold the answer; nothing retrieved is a miss.
pub(crate) fn score(
    nodes: &[NodeWithScore],
    relevance: &Relevance,
) -> Result<(f64, f64, Option<usize>)> {
    let relevant = |n: &NodeWithScore| relevance.is_relevant(n);
    let hit = HitRate::default().compute_relevant(nodes, &relevant)?.score;
    let rr = Mrr::default().compute_relevant(nodes, &relevant)?.score;
    let rank = nodes.iter().position(relevant).map(|p| p + 1);
    Ok((hit, rr, rank))
}

fn shown(nodes: &[NodeWithScore], relevance: &Relevance, root: &str) -> Vec<Retrieved> {
    let root = root.trim_end_matches('/');
    nodes
        .iter()
        .map(|n| {
            let path = file_path(&n.node.metadata);
            let file = path
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(path);
            let text = squash(&n.node.get_content(MetadataMode::None));
            let excerpt = match text.char_indices().nth(300) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text,
            };
            Retrieved {
                file: file.to_owned(),
                excerpt,
                hit: relevance.is_relevant(n),
            }
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Answers `questions` through `mode` at `top_k` with `llm` and has the same
/// LLM judge the answers: faithfulness and relevancy always, correctness when
/// some question has a reference answer. A judge's unreadable verdict counts
/// as an invalid result rather than ending the run.
pub async fn judge_answers(
    questions: &[LabelledQuestion],
    mode: &RetrievalMode,
    top_k: usize,
    llm: Arc<dyn Llm>,
    show_progress: bool,
) -> Result<JudgeSummary> {
    let mut builder = RetrieverQueryEngine::builder(mode.retriever(top_k)?).llm(llm.clone());
    if let Some(rerank) = mode.reranker(top_k) {
        builder = builder.node_postprocessor(rerank);
    }
    let engine = builder.build()?;
    let bar = progress(show_progress, questions.len(), 0);
    bar.set_message("answering");
    let mut inputs = Vec::new();
    for q in questions {
        let response = engine.query(&QueryBundle::new(q.question.as_str())).await?;
        let mut input = EvaluationInput::from_response(Some(&q.question), &response);
        input.reference = q.reference_answer.clone();
        inputs.push(input);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let lenient = |e: Arc<dyn Evaluator>| -> Arc<dyn Evaluator> { Arc::new(Lenient(e)) };
    let mut evaluators: Vec<(&str, Arc<dyn Evaluator>)> = vec![
        (
            "faithfulness",
            lenient(Arc::new(FaithfulnessEvaluator::new(llm.clone()))),
        ),
        (
            "relevancy",
            lenient(Arc::new(RelevancyEvaluator::new(llm.clone()))),
        ),
    ];
    if questions.iter().any(|q| q.reference_answer.is_some()) {
        evaluators.push((
            "correctness",
            lenient(Arc::new(CorrectnessEvaluator::new(llm.clone()))),
        ));
    }
    let results = BatchEvalRunner::new(evaluators)
        .workers(2)
        .show_progress(show_progress)
        .evaluate_inputs(&inputs)
        .await?;
    Ok(JudgeSummary {
        mode: mode.name.clone(),
        top_k,
        questions: questions.len(),
        faithfulness: results.passing_rate("faithfulness"),
        relevancy: results.passing_rate("relevancy"),
        correctness: results.passing_rate("correctness"),
        correctness_score: results.mean_score("correctness"),
    })
}

/// A judge whose unreadable reply counts as an invalid result instead of
/// ending the run (the model is still retried when it fails outright).
#[derive(Debug)]
struct Lenient(Arc<dyn Evaluator>);

#[async_trait::async_trait]
impl Evaluator for Lenient {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        match self.0.evaluate(input).await {
            Err(e @ (Error::OutputParse(_) | Error::Evaluation(_))) => Ok(EvaluationResult {
                query: input.query.clone(),
                response: input.response.clone(),
                invalid_result: true,
                invalid_reason: Some(e.to_string()),
                ..EvaluationResult::default()
            }),
            other => other,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ragloom_core::retrievers::BM25Retriever;
    use ragloom_core::schema::Node;
    use serde_json::json;

    fn corpus() -> Vec<Node> {
        [
            (
                "/docs/boat.txt",
                "The boat was repainted in July by the harbour crew.",
            ),
            (
                "/docs/bees.txt",
                "The bees swarmed in May and settled in the old oak.",
            ),
            (
                "/docs/heron.txt",
                "A heron waits in the reeds for fish at dawn.",
            ),
        ]
        .iter()
        .map(|(path, text)| {
            let mut node = Node::text_node(*text);
            node.metadata.insert("file_path".into(), json!(path));
            node
        })
        .collect()
    }

    fn question(q: &str, file: &str, span: &str) -> LabelledQuestion {
        serde_json::from_value(json!({"question": q, "file": file, "answer_span": span})).unwrap()
    }

    #[tokio::test]
    async fn modes_are_scored_per_top_k_with_ranks_and_the_first_modes_nodes() {
        let nodes = corpus();
        let bm25 = RetrievalMode::new("bm25", move |k| {
            Ok(Arc::new(BM25Retriever::from_defaults(nodes.clone(), k)?) as Arc<dyn Retriever>)
        });
        let questions = [
            question(
                "When was the boat repainted?",
                "boat.txt",
                "repainted in July",
            ),
            question(
                "Where did the bees settle?",
                "bees.txt",
                "settled in the old oak",
            ),
            question("What colour is the sky?", "sky.txt", "blue"),
        ];
        let (rows, per_question) =
            compare_retrieval(&[bm25], &questions, &[2, 1, 2], "/docs", false)
                .await
                .unwrap();
        assert_eq!(rows.iter().map(|r| r.top_k).collect::<Vec<_>>(), [1, 2]);
        for row in &rows {
            assert!((row.hit_rate - 2.0 / 3.0).abs() < 1e-9, "{row:?}");
            assert!((row.mrr - 2.0 / 3.0).abs() < 1e-9, "{row:?}");
        }
        assert_eq!(per_question[0].runs[0].rank, Some(1));
        assert_eq!(per_question[2].misses, 2);
        assert_eq!(per_question[0].retrieved[0].file, "boat.txt");
        assert!(per_question[0].retrieved[0].hit);
        let html = EvalReport {
            source: "/docs".into(),
            dataset: "test <set>".into(),
            questions: 3,
            retrieval: rows,
            judged: None,
            per_question,
        }
        .to_html();
        assert!(
            html.contains("test &lt;set&gt;") && html.contains("<svg"),
            "{html}"
        );
        let none = compare_retrieval(&[], &questions, &[0, 2], "/docs", false).await;
        assert!(matches!(none, Err(Error::InvalidInput(_))));
    }

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
    }
}
