//! Metadata extractors against LlamaIndex 0.14.25's recorded prompts and
//! results (tests/data/extractors/gen_extractors.py).
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom_core::extractors::{
    KeywordExtractor, QuestionsAnsweredExtractor, SummaryExtractor, TitleExtractor,
};
use ragloom_core::ingestion::IngestionPipeline;
use ragloom_core::llms::{
    ChatMessage, ChatResponse, CompletionResponse, Llm, LlmMetadata, MessageRole,
};
use ragloom_core::node_parser::SentenceSplitter;
use ragloom_core::storage::docstore::json_to_doc;
use ragloom_core::{Node, Result, TransformComponent};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// Answers every prompt with "  reply-<characters in the prompt>  ", as the
/// recording did, and keeps the prompts.
#[derive(Debug, Default)]
struct RecordingLlm {
    prompts: Mutex<Vec<String>>,
}

impl RecordingLlm {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.prompts.lock().unwrap())
    }
}

#[async_trait]
impl Llm for RecordingLlm {
    fn metadata(&self) -> LlmMetadata {
        LlmMetadata::default()
    }
    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        let prompt = messages
            .iter()
            .map(|m| m.content.clone())
            .collect::<String>();
        let reply = self.complete(&prompt, true).await?;
        Ok(ChatResponse::new(ChatMessage::new(
            MessageRole::Assistant,
            reply.text,
        )))
    }
    async fn complete(&self, prompt: &str, _formatted: bool) -> Result<CompletionResponse> {
        self.prompts.lock().unwrap().push(prompt.to_string());
        Ok(CompletionResponse::new(format!(
            "  reply-{}  ",
            prompt.chars().count()
        )))
    }
}

fn recorded() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/extractors/extractors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn input_nodes(rec: &Value) -> Vec<Node> {
    rec["input_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json_to_doc(d.as_object().unwrap()).unwrap())
        .collect()
}

fn extractors(llm: &Arc<RecordingLlm>, workers: usize) -> Vec<Arc<dyn TransformComponent>> {
    vec![
        Arc::new(
            TitleExtractor::new(llm.clone())
                .nodes(2)
                .unwrap()
                .num_workers(workers),
        ),
        Arc::new(
            KeywordExtractor::new(llm.clone())
                .keywords(3)
                .unwrap()
                .num_workers(workers),
        ),
        Arc::new(
            QuestionsAnsweredExtractor::new(llm.clone())
                .questions(2)
                .unwrap()
                .num_workers(workers),
        ),
        Arc::new(
            SummaryExtractor::new(llm.clone())
                .summaries(&["prev", "self", "next"])
                .unwrap()
                .num_workers(workers),
        ),
    ]
}

fn check_nodes(step: &Value, nodes: &[Node]) {
    let expected = step["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), expected.len());
    for (node, exp) in nodes.iter().zip(expected) {
        assert_eq!(node.id_, exp["id"].as_str().unwrap());
        let exp_meta = exp["metadata"].as_object().unwrap();
        // Key order too: it decides how metadata is rendered into prompts.
        assert_eq!(
            node.metadata.keys().collect::<Vec<_>>(),
            exp_meta.keys().collect::<Vec<_>>()
        );
        assert_eq!(&node.metadata, exp_meta, "{}", step["extractor"]);
        assert_eq!(node.text_template, exp["text_template"].as_str().unwrap());
    }
}

#[tokio::test]
async fn prompts_and_metadata_equal_pythons() {
    let rec = recorded();
    let llm = Arc::new(RecordingLlm::default());
    let mut nodes = input_nodes(&rec);
    for (extractor, step) in extractors(&llm, 1)
        .iter()
        .zip(rec["steps"].as_array().unwrap())
    {
        assert_eq!(extractor.class_name(), step["extractor"].as_str().unwrap());
        nodes = extractor.transform(nodes).await.unwrap();
        let mut prompts = llm.take();
        let mut expected: Vec<&str> = step["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        // Python's run_jobs (tqdm's gather) does not keep the jobs' order;
        // the metadata each node gets is compared exactly below.
        prompts.sort();
        expected.sort();
        assert_eq!(prompts, expected, "prompts of {}", step["extractor"]);
        check_nodes(step, &nodes);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_extraction_gives_the_same_result() {
    let rec = recorded();
    let llm = Arc::new(RecordingLlm::default());
    let steps = rec["steps"].as_array().unwrap();
    let mut nodes = input_nodes(&rec);
    for extractor in extractors(&llm, 4) {
        nodes = extractor.transform(nodes).await.unwrap();
    }
    check_nodes(&steps[3], &nodes);
    let mut prompts = llm.take();
    let mut expected: Vec<String> = steps
        .iter()
        .flat_map(|s| {
            s["prompts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
        })
        .collect();
    prompts.sort();
    expected.sort();
    assert_eq!(prompts, expected);
}

#[tokio::test]
async fn documents_are_left_alone_by_text_node_extractors() {
    let llm = Arc::new(RecordingLlm::default());
    let doc = Node::document("A document, not a text node.");
    let out = KeywordExtractor::new(llm.clone())
        .transform(vec![doc.clone()])
        .await
        .unwrap();
    assert!(llm.take().is_empty());
    assert_eq!(out[0].metadata, doc.metadata);
    assert_eq!(
        out[0].text_template, doc.text_template,
        "Python rewrites TextNode templates only"
    );
    let err = SummaryExtractor::new(llm.clone())
        .transform(vec![doc.with_id("d1")])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("d1"), "{err}");
}

#[test]
fn bad_settings_are_errors() {
    let llm = Arc::new(RecordingLlm::default());
    assert!(TitleExtractor::new(llm.clone()).nodes(0).is_err());
    assert!(KeywordExtractor::new(llm.clone()).keywords(0).is_err());
    assert!(
        QuestionsAnsweredExtractor::new(llm.clone())
            .questions(0)
            .is_err()
    );
    let err = SummaryExtractor::new(llm)
        .summaries(&["self", "middle"])
        .unwrap_err();
    assert!(err.to_string().contains("middle"));
}

#[tokio::test]
async fn extractors_run_in_a_pipeline_per_document() {
    // In a pipeline each document goes through on its own: the first node
    // of a document has no `prev_section_summary` from another document.
    let llm = Arc::new(RecordingLlm::default());
    let docs = vec![
        Node::document("First document. It has two sentences.").with_id("a"),
        Node::document("Second document.").with_id("b"),
    ];
    let summary = SummaryExtractor::new(llm.clone())
        .summaries(&["prev", "self"])
        .unwrap();
    let pipeline =
        IngestionPipeline::new(vec![Arc::new(SentenceSplitter::new()), Arc::new(summary)]);
    let nodes = pipeline.run(docs).await.unwrap();
    assert_eq!(nodes.len(), 2);
    assert!(
        nodes
            .iter()
            .all(|n| n.metadata.contains_key("section_summary"))
    );
    assert!(!nodes[1].metadata.contains_key("prev_section_summary"));
    // A second run is answered from the cache: no LLM call.
    llm.take();
    let docs = vec![
        Node::document("First document. It has two sentences.").with_id("a"),
        Node::document("Second document.").with_id("b"),
    ];
    assert_eq!(pipeline.run(docs).await.unwrap(), nodes);
    assert!(llm.take().is_empty());
}
