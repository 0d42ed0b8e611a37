//! Question generation replays what llama-index-core 0.14.25's
//! `DatasetGenerator` and llama-index-finetuning's `generate_qa_embedding_pairs`
//! recorded (tests/data/evaluation/gen_question_generation.py); the batch
//! runner honours its concurrency limit and retries; the retriever evaluator
//! scores a real retriever.

#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom_core::llms::MockLlm;
use ragloom_core::retrievers::BM25Retriever;
use ragloom_core::{Error, Node, Result};
use ragloom_evaluation::{
    BatchEvalResults, BatchEvalRunner, DatasetGenerator, EmbeddingQAFinetuneDataset,
    EvaluationInput, EvaluationResult, Evaluator, FaithfulnessEvaluator, OnFailure,
    QaGenerationOptions, QueryResponseDataset, RetrieverEvaluator, generate_qa_embedding_pairs,
    mean_metrics,
};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn recorded() -> Value {
    serde_json::from_str(include_str!("data/evaluation/question_generation.json")).unwrap()
}

fn nodes() -> Vec<Node> {
    vec![
        Node::text_node(
            "Alice was beginning to get very tired of sitting by her sister on the bank.",
        )
        .with_id("n1")
        .with_metadata("file_name", "alice29.txt"),
        Node::text_node("The Rabbit actually took a watch out of its waistcoat-pocket.")
            .with_id("n2")
            .with_metadata("file_name", "alice29.txt"),
    ]
}

const GEN_REPLIES: [&str; 2] = [
    "1. Who was Alice sitting by?\n2) Where was she sitting?\n\n3 Why was she tired?\nExtra line",
    "  1. What did the Rabbit take out?  \n",
];

fn strings(v: &Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap()
}

#[tokio::test]
async fn dataset_generator_sends_and_keeps_what_python_does() {
    for case in recorded()["dataset_generator"].as_array().unwrap() {
        let with_answers = case["with_answers"].as_bool().unwrap();
        let num = case["num"].as_u64().map(|n| n as usize);
        let mut replies: Vec<String> = GEN_REPLIES.iter().map(|s| s.to_string()).collect();
        if with_answers {
            replies.extend((1..=5).map(|i| format!("Answer {i}.")));
        }
        let mock = Arc::new(MockLlm::scripted(replies));
        // One call at a time, so the scripted replies meet the nodes in order.
        let generator = DatasetGenerator::new(nodes(), mock.clone())
            .num_questions_per_chunk(3)
            .workers(1);
        let (questions, answers) = if with_answers {
            let ds = generator.generate_dataset_from_nodes(num).await.unwrap();
            let answers: Vec<String> = ds.queries.keys().map(|k| ds.responses[k].clone()).collect();
            (ds.questions(), Some(answers))
        } else {
            (
                generator.generate_questions_from_nodes(num).await.unwrap(),
                None,
            )
        };
        assert_eq!(questions, strings(&case["questions"]), "{case}");
        assert_eq!(
            answers,
            case["answers"]
                .as_array()
                .map(|_| strings(&case["answers"]))
        );
        let sent: Vec<String> = mock.requests().iter().map(|r| r.prompt_text()).collect();
        assert_eq!(
            sent,
            strings(&case["calls"]),
            "num {num:?}, answers {with_answers}"
        );
    }
}

#[tokio::test]
async fn qa_embedding_pairs_match_llama_index_finetuning() {
    for case in recorded()["qa_embedding_pairs"].as_array().unwrap() {
        let mock = Arc::new(MockLlm::scripted(strings(&case["replies"])));
        let options = QaGenerationOptions {
            num_questions_per_chunk: case["num_questions_per_chunk"].as_u64().unwrap() as usize,
            ..QaGenerationOptions::default()
        };
        let ds = generate_qa_embedding_pairs(&nodes(), mock.as_ref(), &options)
            .await
            .unwrap();
        assert_eq!(
            ds.queries.values().cloned().collect::<Vec<_>>(),
            strings(&case["questions"])
        );
        let relevant: Vec<Vec<String>> = ds
            .queries
            .keys()
            .map(|k| ds.relevant_docs[k].clone())
            .collect();
        assert_eq!(
            serde_json::to_value(relevant).unwrap(),
            case["relevant_docs"]
        );
        assert_eq!(serde_json::to_value(&ds.corpus).unwrap(), case["corpus"]);
        assert_eq!(ds.mode, case["mode"].as_str().unwrap());
        let sent: Vec<String> = mock.requests().iter().map(|r| r.prompt_text()).collect();
        assert_eq!(sent, strings(&case["calls"]));
        // The JSON has Python's keys, so either side reads the other's file.
        let mut keys: Vec<String> = serde_json::to_value(&ds)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        assert_eq!(keys, strings(&case["keys"]));
    }
}

#[tokio::test]
async fn qa_generation_resumes_from_its_file_and_skips_failing_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qa.json");
    let options = QaGenerationOptions {
        output_path: Some(path.clone()),
        retry_limit: 2,
        ..QaGenerationOptions::default()
    };
    // The first node's two tries fail: it is skipped.
    let mock = MockLlm::scripted(Vec::<String>::new());
    mock.push_error("down");
    mock.push_error("down");
    mock.push_reply("1. Q for n2?");
    let ds = generate_qa_embedding_pairs(&nodes(), &mock, &options)
        .await
        .unwrap();
    assert_eq!(ds.corpus.keys().collect::<Vec<_>>(), ["n2"]);
    assert_eq!(EmbeddingQAFinetuneDataset::from_json(&path).unwrap(), ds);

    // With one node already in the file, a second run starts at the second
    // node (LlamaIndex counts the corpus to know where it stopped).
    let mock = MockLlm::scripted(["1. Again for n2?"]);
    let ds = generate_qa_embedding_pairs(&nodes(), &mock, &options)
        .await
        .unwrap();
    assert_eq!(mock.requests().len(), 1);
    assert!(
        mock.requests()[0]
            .prompt_text()
            .contains("The Rabbit actually")
    );
    assert_eq!(ds.queries.len(), 2);

    let failing = MockLlm::scripted(Vec::<String>::new());
    let err = generate_qa_embedding_pairs(
        &nodes(),
        &failing,
        &QaGenerationOptions {
            on_failure: OnFailure::Fail,
            ..QaGenerationOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("Failed to query LLM after 3 retries"),
        "{err}"
    );
}

#[test]
fn query_response_datasets_round_trip_and_refuse_missing_responses() {
    let pairs = vec![
        ("q0".to_owned(), "r0".to_owned()),
        ("q1".to_owned(), "r1".to_owned()),
    ];
    let ds = QueryResponseDataset::from_qr_pairs(&pairs);
    assert_eq!(ds.qr_pairs().unwrap(), pairs);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qr.json");
    ds.save_json(&path).unwrap();
    assert_eq!(QueryResponseDataset::from_json(&path).unwrap(), ds);
    let mut missing = ds.clone();
    missing.responses.shift_remove("1");
    assert!(
        matches!(missing.qr_pairs(), Err(Error::InvalidInput(m)) if m == "Query id 1 not in responses")
    );
}

/// Counts evaluations in flight, fails the first `fail_first` calls.
#[derive(Debug, Default)]
struct Probe {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    calls: AtomicUsize,
    fail_first: usize,
}

#[async_trait]
impl Evaluator for Probe {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if call < self.fail_first {
            return Err(Error::Other("provider down".into()));
        }
        Ok(EvaluationResult {
            query: input.query.clone(),
            score: Some(input.query.as_deref().unwrap().len() as f64),
            passing: Some(true),
            ..EvaluationResult::default()
        })
    }
}

#[tokio::test]
async fn batch_runner_keeps_to_its_worker_limit_and_input_order() {
    // One probe under two names, so its counter sees every evaluation.
    let probe = Arc::new(Probe::default());
    let runner = BatchEvalRunner::new([
        ("probe", probe.clone() as Arc<dyn Evaluator>),
        ("other", probe.clone() as Arc<dyn Evaluator>),
    ])
    .workers(3);
    let inputs: Vec<EvaluationInput> = (0..12)
        .map(|i| EvaluationInput::query("x".repeat(i + 1)))
        .collect();
    let results = runner.evaluate_inputs(&inputs).await.unwrap();
    let peak = probe.peak.load(Ordering::SeqCst);
    assert_eq!(peak, 3, "3 in flight at most, and the limit was reached");
    assert_eq!(probe.calls.load(Ordering::SeqCst), 24);
    let scores: Vec<f64> = results
        .get("probe")
        .unwrap()
        .iter()
        .map(|r| r.score.unwrap())
        .collect();
    assert_eq!(scores, (1..=12).map(f64::from).collect::<Vec<_>>());
    assert_eq!(results.0.keys().collect::<Vec<_>>(), ["probe", "other"]);
    assert_eq!(results.passing_rate("other"), Some(1.0));
    assert_eq!(results.mean_score("probe"), Some(6.5));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    results.save_json(&path).unwrap();
    assert_eq!(BatchEvalResults::from_json(&path).unwrap(), results);
}

#[tokio::test]
async fn batch_runner_retries_a_failing_evaluation_then_gives_up() {
    let flaky = Arc::new(Probe {
        fail_first: 2,
        ..Probe::default()
    });
    let runner = BatchEvalRunner::new([("flaky", flaky.clone() as Arc<dyn Evaluator>)])
        .retries(3, Duration::from_millis(1));
    let results = runner
        .evaluate_inputs(&[EvaluationInput::query("q")])
        .await
        .unwrap();
    assert_eq!(results.get("flaky").unwrap().len(), 1);
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 3);

    let broken = Arc::new(Probe {
        fail_first: usize::MAX,
        ..Probe::default()
    });
    let runner = BatchEvalRunner::new([("broken", broken.clone() as Arc<dyn Evaluator>)])
        .retries(2, Duration::from_millis(1));
    let err = runner
        .evaluate_inputs(&[EvaluationInput::query("q")])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("provider down"));
    assert_eq!(broken.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn batch_runner_evaluates_a_query_engines_answers() {
    use ragloom_core::indices::SummaryIndex;
    use ragloom_core::query_engine::AsQueryEngine;
    let index = SummaryIndex::from_nodes(nodes()).await.unwrap();
    let answers = Arc::new(MockLlm::scripted(["A watch.", "Her sister."]));
    let engine = index.as_query_engine(answers).unwrap();
    let judge = Arc::new(MockLlm::scripted(["YES", "NO"]));
    let runner = BatchEvalRunner::new([(
        "faithfulness",
        Arc::new(FaithfulnessEvaluator::new(judge.clone())) as Arc<dyn Evaluator>,
    )])
    .workers(1);
    let queries = vec![
        "What did the Rabbit take out?".to_owned(),
        "Who?".to_owned(),
    ];
    let results = runner.evaluate_queries(&engine, &queries).await.unwrap();
    let r = results.get("faithfulness").unwrap();
    assert_eq!(r[0].response.as_deref(), Some("A watch."));
    assert_eq!(
        r[0].contexts.as_ref().unwrap().len(),
        2,
        "both nodes were the sources"
    );
    assert_eq!((r[0].passing, r[1].passing), (Some(true), Some(false)));
    assert!(
        judge.requests()[1]
            .prompt_text()
            .contains("Information: Her sister.")
    );
}

#[tokio::test]
async fn retriever_evaluator_scores_bm25_on_expected_ids() {
    let mut corpus = nodes();
    corpus.push(Node::text_node("The Queen shouted off with her head.").with_id("n3"));
    let retriever = Arc::new(
        BM25Retriever::builder()
            .similarity_top_k(2)
            .build(corpus)
            .unwrap(),
    );
    let ev = RetrieverEvaluator::from_metric_names(&["hit_rate", "mrr", "precision"], retriever)
        .unwrap();
    let hit = ev
        .evaluate("watch waistcoat pocket", &["n2".into()], None)
        .await
        .unwrap();
    assert_eq!(hit.retrieved_ids[0], "n2");
    assert_eq!(hit.metric_dict["hit_rate"], 1.0);
    assert_eq!(hit.metric_dict["mrr"], 1.0);
    let miss = ev
        .evaluate("queen head", &["n1".into()], None)
        .await
        .unwrap();
    assert_eq!(miss.metric_dict["hit_rate"], 0.0);
    // No term in common: nothing retrieved scores 0 instead of failing the run.
    let none = ev.evaluate("zebra", &["n1".into()], None).await.unwrap();
    assert!(none.retrieved_ids.is_empty());
    assert_eq!(none.metric_dict["mrr"], 0.0);
    let means = mean_metrics(&[hit, miss, none]);
    assert_eq!(means["hit_rate"], 1.0 / 3.0);

    let ds = EmbeddingQAFinetuneDataset {
        queries: [("a".to_owned(), "sister bank tired".to_owned())]
            .into_iter()
            .collect(),
        relevant_docs: [("a".to_owned(), vec!["n1".to_owned()])]
            .into_iter()
            .collect(),
        ..EmbeddingQAFinetuneDataset::default()
    };
    let results = ev.evaluate_dataset(&ds, 2).await.unwrap();
    assert_eq!(results[0].metric_dict["hit_rate"], 1.0);
    assert!(
        RetrieverEvaluator::from_metric_names(
            &["nope"],
            Arc::new(BM25Retriever::builder().build(nodes()).unwrap())
        )
        .is_err()
    );
}

#[tokio::test]
async fn a_name_given_twice_keeps_the_last_evaluator() {
    let first = Arc::new(Probe::default());
    let second = Arc::new(Probe::default());
    let runner = BatchEvalRunner::new([
        ("judge", first.clone() as Arc<dyn Evaluator>),
        ("judge", second.clone() as Arc<dyn Evaluator>),
    ]);
    let results = runner
        .evaluate_inputs(&[EvaluationInput::query("q")])
        .await
        .unwrap();
    assert_eq!(results.0.len(), 1);
    assert_eq!(results.get("judge").unwrap().len(), 1);
    assert_eq!(first.calls.load(Ordering::SeqCst), 0);
    assert_eq!(second.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn qa_generation_asks_once_per_node_id_and_not_at_all_with_no_tries() {
    let mut twice = nodes();
    twice.push(nodes()[0].clone());
    let mock = MockLlm::scripted(["1. A?", "1. B?"]);
    let ds = generate_qa_embedding_pairs(&twice, &mock, &QaGenerationOptions::default())
        .await
        .unwrap();
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(ds.corpus.keys().collect::<Vec<_>>(), ["n1", "n2"]);

    let mock = MockLlm::scripted(["1. A?"]);
    let options = QaGenerationOptions {
        retry_limit: 0,
        ..QaGenerationOptions::default()
    };
    let ds = generate_qa_embedding_pairs(&nodes(), &mock, &options)
        .await
        .unwrap();
    assert!(mock.requests().is_empty());
    assert!(ds.queries.is_empty());
}
