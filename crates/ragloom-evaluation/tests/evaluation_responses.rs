//! The response evaluators send llama-index-core 0.14.25's prompts and read
//! its replies as it does: every scenario tests/data/evaluation/gen_response_evaluators.py
//! recorded (scripted replies, the prompts sent, the result or the error) is replayed.

#![allow(clippy::unwrap_used)]

use ragloom_core::llms::{Llm, MockLlm};
use ragloom_core::{Error, MockEmbedding, Node, NodeWithScore, Response};
use ragloom_evaluation::{
    AnswerRelevancyEvaluator, ContextRelevancyEvaluator, CorrectnessEvaluator, EvaluationInput,
    EvaluationResult, Evaluator, FaithfulnessEvaluator, GuidelineEvaluator,
    PairwiseComparisonEvaluator, RelevancyEvaluator, SemanticSimilarityEvaluator,
};
use serde_json::Value;
use std::sync::Arc;

fn recorded() -> Vec<Value> {
    let text = include_str!("data/evaluation/response_evaluators.json");
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["llama_index_core"], "0.14.25");
    v["scenarios"].as_array().unwrap().clone()
}

fn evaluator(kind: &str, llm: Arc<dyn Llm>) -> Box<dyn Evaluator> {
    match kind {
        "faithfulness" => Box::new(FaithfulnessEvaluator::new(llm)),
        "relevancy" => Box::new(RelevancyEvaluator::new(llm)),
        "correctness" => Box::new(CorrectnessEvaluator::new(llm)),
        "guideline" => Box::new(
            GuidelineEvaluator::new(llm).guidelines("The response should name the object."),
        ),
        "pairwise" => Box::new(PairwiseComparisonEvaluator::new(llm)),
        "answer_relevancy" => Box::new(AnswerRelevancyEvaluator::new(llm)),
        "context_relevancy" => Box::new(ContextRelevancyEvaluator::new(llm)),
        other => panic!("unknown evaluator {other}"),
    }
}

fn input(v: &Value) -> EvaluationInput {
    serde_json::from_value(v.clone()).unwrap()
}

/// The recorded result as an `EvaluationResult` (the JSON shapes are the same).
fn result(v: &Value) -> EvaluationResult {
    serde_json::from_value(v.clone()).unwrap()
}

#[tokio::test]
async fn every_recorded_scenario_sends_the_same_prompts_and_gives_the_same_result() {
    let scenarios = recorded();
    assert_eq!(scenarios.len(), 22);
    let mut replayed = 0;
    for (i, s) in scenarios.iter().enumerate() {
        let kind = s["evaluator"].as_str().unwrap();
        if kind == "semantic_similarity" {
            continue;
        }
        let replies: Vec<String> = serde_json::from_value(s["replies"].clone()).unwrap();
        let mock = Arc::new(MockLlm::scripted(replies.clone()));
        let ev = evaluator(kind, mock.clone());
        let got = ev.evaluate(&input(&s["inputs"])).await;

        let sent: Vec<String> = mock.requests().iter().map(|r| r.prompt_text()).collect();
        let want: Vec<String> = s["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["prompt"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(sent, want, "scenario {i} ({kind} {replies:?}): prompts");

        match (&s["error"], got) {
            (Value::Null, Ok(got)) => {
                assert_eq!(
                    got,
                    result(&s["result"]),
                    "scenario {i} ({kind} {replies:?})"
                )
            }
            (Value::String(e), Err(got)) => {
                // Python's error is an unpacking failure; ours says what was expected.
                assert!(e.starts_with("ValueError"), "{e}");
                assert!(matches!(got, Error::OutputParse(_)), "scenario {i}: {got}");
            }
            (want, got) => panic!("scenario {i} ({kind} {replies:?}): want {want}, got {got:?}"),
        }
        replayed += 1;
    }
    assert_eq!(replayed, 21);
}

#[tokio::test]
async fn semantic_similarity_scores_as_python_to_the_last_digit() {
    let s = recorded()
        .into_iter()
        .find(|s| s["evaluator"] == "semantic_similarity")
        .unwrap();
    let ev = SemanticSimilarityEvaluator::new(Arc::new(MockEmbedding::new(8)));
    let got = ev.evaluate(&input(&s["inputs"])).await.unwrap();
    assert_eq!(got, result(&s["result"]));
    assert_eq!(
        got.feedback.as_deref(),
        Some("Similarity score: 0.9999999999999998")
    );

    let strict =
        SemanticSimilarityEvaluator::new(Arc::new(MockEmbedding::new(8))).similarity_threshold(1.0);
    let got = strict.evaluate(&input(&s["inputs"])).await.unwrap();
    assert_eq!(got.passing, Some(false), "0.9999999999999998 < 1.0");
}

#[tokio::test]
async fn missing_inputs_are_named_and_no_model_is_called() {
    let mock = Arc::new(MockLlm::scripted(Vec::<String>::new()));
    let only_query = EvaluationInput::query("q");
    for kind in [
        "faithfulness",
        "relevancy",
        "correctness",
        "guideline",
        "pairwise",
    ] {
        let err = evaluator(kind, mock.clone())
            .evaluate(&only_query)
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidInput(ref m) if m.contains("must be provided")),
            "{kind}: {err}"
        );
    }
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn raise_error_turns_a_failing_verdict_into_an_error() {
    let input = EvaluationInput::query("q")
        .with_response("r")
        .with_contexts(["c"]);
    let mock = Arc::new(MockLlm::scripted(["NO"]));
    let err = FaithfulnessEvaluator::new(mock)
        .raise_error(true)
        .evaluate(&input)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Evaluation(_)), "{err}");

    let mock = Arc::new(MockLlm::scripted(["no score"]));
    let err = AnswerRelevancyEvaluator::new(mock)
        .raise_error(true)
        .evaluate(&input)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Evaluation(_)), "{err}");
}

#[tokio::test]
async fn pairwise_returns_the_flipped_verdict_when_only_it_decides() {
    // Original order a tie, swapped order: B (the first answer) wins. As in
    // LlamaIndex, the swapped judge's result is returned with its own score.
    let mock = Arc::new(MockLlm::scripted(["[[C]]", "[[B]]"]));
    let input = EvaluationInput::query("q")
        .with_response("first")
        .with_second_response("second");
    let got = PairwiseComparisonEvaluator::new(mock)
        .evaluate(&input)
        .await
        .unwrap();
    assert_eq!(got.score, Some(0.0));
    assert_eq!(
        got.pairwise_source,
        Some(ragloom_evaluation::EvaluationSource::Flipped)
    );

    // Without consensus one call decides.
    let mock = Arc::new(MockLlm::scripted(["[[B]]"]));
    let got = PairwiseComparisonEvaluator::new(mock.clone())
        .enforce_consensus(false)
        .evaluate(&input)
        .await
        .unwrap();
    assert_eq!((got.passing, got.score), (Some(false), Some(0.0)));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn evaluate_response_reads_the_answer_and_its_sources() {
    let response = Response::new(
        "A watch.",
        vec![NodeWithScore::new(
            Node::text_node("It took a watch out.").with_metadata("file_name", "a.txt"),
            Some(0.9),
        )],
    );
    let mock = Arc::new(MockLlm::scripted(["YES"]));
    let got = FaithfulnessEvaluator::new(mock.clone())
        .evaluate_response(Some("What?"), &response)
        .await
        .unwrap();
    assert_eq!(got.contexts, Some(vec!["It took a watch out.".to_owned()]));
    assert_eq!(got.passing, Some(true));
    let prompt = mock.requests()[0].prompt_text();
    assert!(
        prompt.contains("Information: A watch.\nContext: It took a watch out."),
        "{prompt}"
    );
}

#[test]
fn evaluation_results_round_trip_through_json_as_python_writes_them() {
    let s = &recorded()[11]["result"];
    let r = result(s);
    assert_eq!(serde_json::to_value(&r).unwrap(), *s);
}

#[tokio::test]
async fn guideline_reads_booleans_as_pydantic_does_and_empty_values_mean_defaults() {
    let input = EvaluationInput::query("q").with_response("r");
    let mock = Arc::new(MockLlm::scripted([
        r#"{"passing": "yes", "feedback": "ok"}"#,
    ]));
    let got = GuidelineEvaluator::new(mock.clone())
        .guidelines("")
        .evaluate(&input)
        .await
        .unwrap();
    assert_eq!(got.passing, Some(true));
    let prompt = mock.requests()[0].prompt_text();
    assert!(
        prompt.contains(ragloom_evaluation::DEFAULT_GUIDELINES),
        "{prompt}"
    );

    let mock = Arc::new(MockLlm::scripted([
        r#"{"passing": "maybe", "feedback": "?"}"#,
    ]));
    let err = GuidelineEvaluator::new(mock)
        .evaluate(&input)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::OutputParse(_)), "{err}");

    // An empty reference is no reference, as Python's `reference or ...`.
    let mock = Arc::new(MockLlm::scripted(["4\nfine"]));
    CorrectnessEvaluator::new(mock.clone())
        .evaluate(&input.clone().with_reference(""))
        .await
        .unwrap();
    assert!(
        mock.requests()[0]
            .prompt_text()
            .contains("(NO REFERENCE ANSWER SUPPLIED)")
    );
}
