//! The compact and refine synthesizers, the prompt helper and prompts through
//! the query engine, driven by a scripted `MockLlm` that records every prompt.
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::indices::PromptHelper;
use ragloom_core::llms::{MessageRole, MockLlm, MockRequestKind};
use ragloom_core::prelude::*;
use ragloom_core::prompts::default_prompts::{TEXT_QA_SYSTEM_PROMPT, text_qa_prompt};
use ragloom_core::prompts::{BasePromptTemplate, PromptDictType, PromptMixin};
use ragloom_core::response_synthesizers::{CompactAndRefine, EMPTY_RESPONSE, Refine, Synthesizer};
use ragloom_core::tokenizer::default_tokenizer;
use std::sync::Arc;

/// Distinct chunks of about `words` tokens each.
fn chunks(n: usize, words: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            (0..words)
                .map(|w| format!("c{i}w{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn replies(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("answer {i}")).collect()
}

#[tokio::test]
async fn compact_packs_chunks_and_refines_within_the_window() {
    // Compact packs keep LlamaIndex's 500-token response padding free.
    let (window, num_output) = (1100, 100);
    let llm = Arc::new(
        MockLlm::scripted(replies(50))
            .context_window(window)
            .num_output(num_output),
    );
    let synth = CompactAndRefine::new(llm.clone());
    let chunks = chunks(12, 40);
    let answer = synth.get_response("What is it?", &chunks).await.unwrap();
    let requests = llm.requests();
    let calls = requests.len();
    // 12 chunks of ~120 tokens cannot fit one ~400-token pack, but packing
    // needs far fewer calls than one per chunk.
    assert!(calls > 1 && calls < 12, "{calls} calls");
    assert_eq!(answer, format!("answer {calls}"));
    let tok = default_tokenizer();
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.kind, MockRequestKind::Complete);
        let prompt = r.prompt_text();
        assert!(
            tok.count(&prompt) <= window - num_output as usize,
            "call {i} overflows the window"
        );
        if i == 0 {
            assert!(
                prompt.starts_with("Context information is below."),
                "{prompt}"
            );
        } else {
            assert!(
                prompt.starts_with("The original query is as follows: What is it?"),
                "{prompt}"
            );
            assert!(prompt.contains(&format!(
                "We have provided an existing answer: answer {i}\n"
            )));
        }
    }
    // Every chunk reached the model, in order.
    let all: String = requests.iter().map(|r| r.prompt_text()).collect();
    let mut last = 0;
    for c in &chunks {
        let first_word = c.split(' ').next().unwrap();
        let at = all[last..].find(first_word).map(|p| p + last);
        assert!(at.is_some(), "{first_word} never sent");
        last = at.unwrap();
    }
}

#[tokio::test]
async fn refine_makes_one_call_per_chunk_qa_then_refine() {
    let llm = Arc::new(MockLlm::scripted(replies(3)));
    let synth = Refine::new(llm.clone());
    let answer = synth.get_response("Q?", &chunks(3, 5)).await.unwrap();
    assert_eq!(answer, "answer 3");
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].prompt_text().contains("c0w0"));
    assert!(
        requests[0]
            .prompt_text()
            .starts_with("Context information is below.")
    );
    assert!(
        requests[1]
            .prompt_text()
            .contains("existing answer: answer 1")
    );
    assert!(
        requests[2]
            .prompt_text()
            .contains("existing answer: answer 2")
    );
    assert!(requests[2].prompt_text().contains("c2w0"));
}

#[tokio::test]
async fn chat_models_get_the_chat_prompts() {
    let llm = Arc::new(MockLlm::scripted(replies(1)).chat_model(true));
    let synth = CompactAndRefine::new(llm.clone());
    synth.get_response("Q?", &chunks(2, 5)).await.unwrap();
    let r = llm.last_request().unwrap();
    assert_eq!(r.kind, MockRequestKind::Chat);
    assert_eq!(r.messages[0].role, MessageRole::System);
    assert_eq!(r.messages[0].content, TEXT_QA_SYSTEM_PROMPT);
    assert_eq!(r.messages[1].role, MessageRole::User);
    assert!(r.messages[1].content.contains("c1w4"));
}

#[tokio::test]
async fn streaming_streams_the_last_call_and_concatenates_to_it() {
    let llm = Arc::new(MockLlm::scripted([
        "first draft",
        "the final refined answer",
    ]));
    let synth = Refine::new(llm.clone());
    let stream = synth.stream_response("Q?", &chunks(2, 5)).await.unwrap();
    let deltas: Vec<String> = stream.map(|d| d.unwrap()).collect().await;
    assert!(deltas.len() > 1, "the answer arrives in pieces");
    assert_eq!(deltas.concat(), "the final refined answer");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].stream && requests[1].stream);
}

#[tokio::test]
async fn no_nodes_means_no_call_and_the_empty_response() {
    let llm = Arc::new(MockLlm::scripted(Vec::<String>::new()));
    let synth = CompactAndRefine::new(llm.clone());
    let r = synth
        .synthesize(&"Q?".into(), vec![], vec![])
        .await
        .unwrap();
    assert_eq!(r.to_string(), EMPTY_RESPONSE);
    assert!(llm.requests().is_empty());
}

#[test]
fn prompt_helper_packs_to_the_available_size_and_refuses_impossible_windows() {
    let prompt = text_qa_prompt();
    let helper = PromptHelper::new(300, 50);
    let tok = default_tokenizer();
    let prompt_tokens = helper.prompt_tokens(&prompt, false);
    let available = helper.available_chunk_size(&prompt, 1, 5, false).unwrap();
    assert_eq!(available, 300 - prompt_tokens - 50 - 5);
    let packed = helper.repack(&prompt, &chunks(10, 30), false).unwrap();
    assert!(packed.len() > 1);
    assert!(packed.iter().all(|p| tok.count(p) <= available));
    let truncated = helper.truncate(&prompt, &chunks(4, 200), false).unwrap();
    let per_chunk = helper.available_chunk_size(&prompt, 4, 5, false).unwrap();
    assert!(
        truncated
            .iter()
            .all(|t| tok.count(t) <= per_chunk && !t.is_empty())
    );
    let err = PromptHelper::new(40, 30)
        .available_chunk_size(&prompt, 1, 5, false)
        .unwrap_err();
    assert!(err.to_string().contains("context window"), "{err}");
}

#[tokio::test]
async fn query_engine_prompts_are_keyed_and_updatable() {
    let docs = vec![Document::document("Rust guarantees memory safety.").with_id("d")];
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(64)))
        .await
        .unwrap();
    let llm = Arc::new(MockLlm::scripted(["ok"]));
    let mut engine = index.as_query_engine(llm.clone()).unwrap();
    let prompts = engine.get_prompts();
    let keys: Vec<&str> = prompts.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "response_synthesizer:refine_template",
            "response_synthesizer:text_qa_template"
        ]
    );

    let custom: BasePromptTemplate = "CUSTOM {context_str} // {query_str}".into();
    let update =
        PromptDictType::from([("response_synthesizer:text_qa_template".to_string(), custom)]);
    engine.update_prompts(&update).unwrap();
    engine.query(&"What is guaranteed?".into()).await.unwrap();
    let prompt = llm.last_request().unwrap().prompt_text();
    assert!(
        prompt.starts_with("CUSTOM Rust guarantees memory safety."),
        "{prompt}"
    );
    assert!(prompt.ends_with("// What is guaranteed?"), "{prompt}");

    let bad: BasePromptTemplate = "no variables".into();
    let update = PromptDictType::from([("response_synthesizer:text_qa_template".to_string(), bad)]);
    assert!(
        engine
            .update_prompts(&update)
            .is_err_and(|e| e.to_string().contains("context_str"))
    );
}
