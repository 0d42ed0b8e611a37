//! Chat engines, chat memory and token counting, compared with what
//! LlamaIndex 0.14.25 sends and keeps (`tests/data/chat/gen_chat.py`), driven
//! by a scripted `MockLlm` that records every request.
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::callbacks::{TokenCounter, TokenCountingHandler};
use ragloom_core::chat_engine::{
    ChatEngine, CondensePlusContextChatEngine, CondenseQuestionChatEngine, ContextChatEngine,
    SimpleChatEngine,
};
use ragloom_core::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, Llm, LlmMetadata,
    MessageRole, MockLlm, MockRequestKind, TokenUsage, ToolCall,
};
use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
use ragloom_core::prelude::*;
use ragloom_core::retrievers::Retriever;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/chat/chat_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Returns the recorded nodes for every query, and remembers the queries.
#[derive(Debug)]
struct FixedRetriever {
    nodes: Vec<NodeWithScore>,
    queries: Mutex<Vec<String>>,
}

impl FixedRetriever {
    fn from_reference(r: &Value) -> Arc<Self> {
        let nodes = r["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(r["scores"].as_array().unwrap())
            .map(|(n, s)| {
                let mut node =
                    Node::text_node(n["text"].as_str().unwrap()).with_id(n["id"].as_str().unwrap());
                for (k, v) in n["metadata"].as_object().unwrap() {
                    node = node.with_metadata(k.clone(), v.clone());
                }
                NodeWithScore::new(node, Some(s.as_f64().unwrap() as f32))
            })
            .collect();
        Arc::new(Self {
            nodes,
            queries: Mutex::new(Vec::new()),
        })
    }

    fn queries(&self) -> Vec<String> {
        self.queries.lock().unwrap().clone()
    }
}

#[async_trait]
impl Retriever for FixedRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        self.queries.lock().unwrap().push(query.query_str.clone());
        Ok(self.nodes.clone())
    }
}

fn replies() -> Vec<String> {
    (1..10).map(|i| format!("reply {i}")).collect()
}

fn engine_for(
    mode: &str,
    llm: Arc<MockLlm>,
    retriever: Arc<FixedRetriever>,
    system_prompt: &str,
) -> Arc<dyn ChatEngine> {
    match mode {
        "simple" => Arc::new(
            SimpleChatEngine::builder(llm)
                .system_prompt(system_prompt)
                .build()
                .unwrap(),
        ),
        "condense_question" => {
            let qe = RetrieverQueryEngine::builder(retriever)
                .llm(llm.clone())
                .build()
                .unwrap();
            Arc::new(CondenseQuestionChatEngine::from_defaults(Arc::new(qe), llm).unwrap())
        }
        "context" => Arc::new(
            ContextChatEngine::builder(retriever, llm)
                .system_prompt(system_prompt)
                .build()
                .unwrap(),
        ),
        "condense_plus_context" => Arc::new(
            CondensePlusContextChatEngine::builder(retriever, llm)
                .system_prompt(system_prompt)
                .build()
                .unwrap(),
        ),
        other => panic!("unknown mode {other}"),
    }
}

/// Scripted replies for `answers`, one per turn, with a condensed question
/// before every turn after the first for the modes that condense.
fn script(mode: &str, answers: &[&str]) -> Vec<String> {
    let condenses = mode.starts_with("condense");
    let mut out = Vec::new();
    for (i, a) in answers.iter().enumerate() {
        if condenses && i > 0 {
            out.push(format!("standalone question {i}"));
        }
        out.push((*a).to_owned());
    }
    out
}

fn messages_json(messages: &[ChatMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect(),
    )
}

#[tokio::test]
async fn every_mode_sends_what_llama_index_sends() {
    let r = reference();
    let system_prompt = r["system_prompt"].as_str().unwrap();
    for (kind, chat_model) in [("chat_model", true), ("completion_model", false)] {
        for mode in [
            "simple",
            "condense_question",
            "context",
            "condense_plus_context",
        ] {
            let expected = &r["modes"][kind][mode];
            let llm = Arc::new(MockLlm::scripted(replies()).chat_model(chat_model));
            let retriever = FixedRetriever::from_reference(&r);
            let engine = engine_for(mode, llm.clone(), retriever.clone(), system_prompt);
            for (i, turn) in expected["turns"].as_array().unwrap().iter().enumerate() {
                let at = format!("{kind}/{mode} turn {i}");
                llm.clear_requests();
                let response = engine
                    .chat(turn["message"].as_str().unwrap())
                    .await
                    .unwrap();
                let requests = llm.requests();
                let want = turn["requests"].as_array().unwrap();
                assert_eq!(requests.len(), want.len(), "{at}: number of LLM calls");
                for (got, want) in requests.iter().zip(want) {
                    match want["kind"].as_str().unwrap() {
                        "chat" => {
                            assert_eq!(got.kind, MockRequestKind::Chat, "{at}");
                            assert_eq!(messages_json(&got.messages), want["messages"], "{at}");
                        }
                        _ => {
                            assert_eq!(got.kind, MockRequestKind::Complete, "{at}");
                            assert_eq!(got.prompt.as_deref(), want["prompt"].as_str(), "{at}");
                            assert_eq!(got.formatted, want["formatted"].as_bool().unwrap(), "{at}");
                        }
                    }
                }
                assert_eq!(
                    response.response,
                    turn["response"].as_str().unwrap(),
                    "{at}"
                );
                let ids: Vec<&str> = response.source_nodes.iter().map(|n| n.node_id()).collect();
                assert_eq!(json!(ids), turn["source_node_ids"], "{at}");
                let tools: Vec<&str> = response
                    .sources
                    .iter()
                    .map(|s| s.tool_name.as_str())
                    .collect();
                assert_eq!(json!(tools), turn["source_tool_names"], "{at}");
                let inputs: Vec<&Value> = response.sources.iter().map(|s| &s.raw_input).collect();
                assert_eq!(json!(inputs), turn["source_raw_inputs"], "{at}");
            }
            assert_eq!(
                json!(retriever.queries()),
                expected["retriever_queries"],
                "{kind}/{mode}"
            );
            let history = engine.chat_history().await.unwrap();
            assert_eq!(
                messages_json(&history),
                expected["history"],
                "{kind}/{mode}"
            );
        }
    }
}

#[tokio::test]
async fn condense_prompts_carry_the_history() {
    let r = reference();
    let llm = Arc::new(
        MockLlm::scripted([
            "Paris.",
            "How many people live in Paris?",
            "About two million.",
        ])
        .chat_model(true),
    );
    let retriever = FixedRetriever::from_reference(&r);
    let engine =
        CondensePlusContextChatEngine::from_defaults(retriever.clone(), llm.clone()).unwrap();
    engine.chat("What is the capital of France?").await.unwrap();
    engine.chat("How many people live there?").await.unwrap();
    let condense = &llm.requests()[1];
    let prompt = condense.prompt.as_deref().unwrap();
    assert!(
        prompt.contains(
            "Chat History:\n  user: What is the capital of France?\nassistant: Paris.\n  Follow Up Input: How many people live there?"
        ),
        "{prompt}"
    );
    // The standalone question retrieves; the user's own words are answered.
    assert_eq!(retriever.queries()[1], "How many people live in Paris?");
    let answer = &llm.requests()[2].messages;
    assert_eq!(
        answer.last().unwrap().content,
        "How many people live there?"
    );

    // Condense-question: the first turn is not condensed, the second is.
    let llm = Arc::new(MockLlm::scripted(["Paris.", "standalone?", "Two million."]));
    let qe = RetrieverQueryEngine::builder(retriever.clone())
        .llm(llm.clone())
        .build()
        .unwrap();
    let engine = CondenseQuestionChatEngine::from_defaults(Arc::new(qe), llm.clone()).unwrap();
    engine.chat("What is the capital of France?").await.unwrap();
    let response = engine.chat("How many people live there?").await.unwrap();
    let prompt = llm.requests()[1].prompt_text();
    assert!(
        prompt.contains("<Chat History>\nuser: What is the capital of France?\nassistant: Paris.\n\n<Follow Up Message>\nHow many people live there?"),
        "{prompt}"
    );
    assert_eq!(
        response.sources[0].raw_input,
        json!({"query": "standalone?"})
    );
    assert_eq!(response.response, "Two million.");
    // A given history stands in for the memory without replacing it.
    let llm2 = Arc::new(MockLlm::scripted(["q", "a"]));
    let qe = RetrieverQueryEngine::builder(retriever)
        .llm(llm2.clone())
        .build()
        .unwrap();
    let engine = CondenseQuestionChatEngine::from_defaults(Arc::new(qe), llm2.clone()).unwrap();
    engine
        .chat_with_history(
            "And?",
            Some(vec![
                ChatMessage::user("Earlier"),
                ChatMessage::assistant("Yes"),
            ]),
        )
        .await
        .unwrap();
    assert!(
        llm2.requests()[0]
            .prompt_text()
            .contains("user: Earlier\nassistant: Yes")
    );
    assert_eq!(engine.chat_history().await.unwrap().len(), 2);
}

fn window_of(history: &[ChatMessage], kept: usize) -> &[ChatMessage] {
    &history[history.len() - kept..]
}

#[tokio::test]
async fn memory_keeps_what_llama_index_keeps_and_tool_rounds_whole() {
    let r = reference();
    let mut compared = 0;
    let mut extended = 0;
    for case in r["memory_cases"].as_array().unwrap() {
        let name = case["history"].as_str().unwrap();
        let history: Vec<ChatMessage> =
            serde_json::from_value(r["memory_histories"][name].clone()).unwrap();
        let limit = case["token_limit"].as_u64().unwrap() as usize;
        let initial = case["initial_token_count"].as_u64().unwrap() as usize;
        let python_kept = case["kept"].as_u64().unwrap() as usize;
        let memory = ChatMemoryBuffer::builder()
            .token_limit(limit)
            .chat_history(history.clone())
            .build()
            .unwrap();
        let got = memory.get(initial).await.unwrap();
        let python_window = window_of(&history, python_kept);
        let at = format!("{name} limit {limit} initial {initial}");
        if python_window[0].role == MessageRole::Tool {
            // LlamaIndex sends the tool result without its call; ragloom
            // keeps the call and every result of that round with it.
            assert!(got.len() > python_kept, "{at}");
            assert!(
                !got[0].tool_calls.is_empty(),
                "{at}: window opens on the call"
            );
            assert!(got[1..].iter().all(|m| m.role == MessageRole::Tool), "{at}");
            assert_eq!(&got[got.len() - python_kept..], python_window, "{at}");
            extended += 1;
        } else {
            assert_eq!(got, python_window, "{at}");
            compared += 1;
        }
        // Whatever is kept, no tool result is separated from its call.
        if let Some(first) = got.first() {
            assert_ne!(first.role, MessageRole::Tool, "{at}");
        }
    }
    assert!(
        compared > 200 && extended > 10,
        "{compared} equal, {extended} extended"
    );
    // The whole history stays stored; only the window shrinks.
    let history: Vec<ChatMessage> =
        serde_json::from_value(r["memory_histories"]["plain"].clone()).unwrap();
    let memory = ChatMemoryBuffer::builder()
        .token_limit(12)
        .chat_history(history.clone())
        .build()
        .unwrap();
    assert_eq!(memory.get(0).await.unwrap().len(), 3);
    assert_eq!(memory.get_all().await.unwrap(), history);
    assert!(memory.get(13).await.is_err());
}

#[tokio::test]
async fn memory_defaults_follow_llama_index() {
    let r = reference();
    assert_eq!(
        ChatMemoryBuffer::from_defaults().token_limit() as u64,
        r["memory_defaults"]["no_llm"].as_u64().unwrap()
    );
    let llm = MockLlm::new();
    assert_eq!(
        ChatMemoryBuffer::builder()
            .llm(&llm)
            .build()
            .unwrap()
            .token_limit() as u64,
        r["memory_defaults"]["llm_3900"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn engines_default_to_the_context_window_less_256_tokens() {
    // 300 - 256 = 44 tokens of history: a long earlier exchange is left out.
    let llm = Arc::new(MockLlm::scripted(["ok"]).context_window(300));
    let long = "word ".repeat(60);
    let engine = SimpleChatEngine::builder(llm.clone())
        .chat_history(vec![
            ChatMessage::user(long.clone()),
            ChatMessage::assistant(long),
        ])
        .build()
        .unwrap();
    engine.chat("Short question?").await.unwrap();
    let sent = &llm.requests()[0].messages;
    assert_eq!(sent, &vec![ChatMessage::user("Short question?")]);
    assert_eq!(engine.chat_history().await.unwrap().len(), 4);
    let tiny = Arc::new(MockLlm::new().context_window(256));
    assert!(SimpleChatEngine::from_defaults(tiny).is_err_and(|e| e.to_string().contains("256")));
}

#[tokio::test]
async fn reset_forgets_and_given_history_replaces_memory() {
    let r = reference();
    let retriever = FixedRetriever::from_reference(&r);
    let llm = Arc::new(MockLlm::scripted(replies()).chat_model(true));
    let engine = ContextChatEngine::from_defaults(retriever, llm.clone()).unwrap();
    engine.chat("one").await.unwrap();
    assert_eq!(engine.chat_history().await.unwrap().len(), 2);
    engine.reset().await.unwrap();
    assert!(engine.chat_history().await.unwrap().is_empty());
    let given = vec![
        ChatMessage::user("earlier"),
        ChatMessage::assistant("noted"),
    ];
    engine
        .chat_with_history("two", Some(given.clone()))
        .await
        .unwrap();
    let history = engine.chat_history().await.unwrap();
    assert_eq!(history[..2], given[..]);
    assert_eq!(history.len(), 4);
    let sent = llm.requests().last().unwrap().messages.clone();
    assert_eq!(sent[1..3], given[..]);
}

async fn collect(
    stream: ragloom_core::chat_engine::StreamingAgentChatResponse,
) -> (Vec<String>, usize) {
    let sources = stream.sources.len();
    let deltas: Vec<String> = stream.response_gen.map(|d| d.unwrap()).collect().await;
    (deltas, sources)
}

#[tokio::test]
async fn streaming_deltas_concatenate_and_history_is_written_at_the_end() {
    let r = reference();
    for mode in [
        "simple",
        "condense_question",
        "context",
        "condense_plus_context",
    ] {
        let answer = "Ragloom is a Rust port of LlamaIndex.";
        let llm = Arc::new(MockLlm::scripted(script(mode, &["first answer", answer])));
        let retriever = FixedRetriever::from_reference(&r);
        let engine = engine_for(mode, llm.clone(), retriever, "Be brief.");
        engine.chat("Hello").await.unwrap();
        let stream = engine.stream_chat("What is ragloom?").await.unwrap();
        // Nothing of the turn is remembered before the answer is complete.
        assert_eq!(engine.chat_history().await.unwrap().len(), 2, "{mode}");
        let (deltas, sources) = collect(stream).await;
        assert!(deltas.len() > 3, "{mode}: {deltas:?}");
        assert_eq!(deltas.concat(), answer, "{mode}");
        assert_eq!(sources, usize::from(mode != "simple"), "{mode}");
        let history = engine.chat_history().await.unwrap();
        assert_eq!(
            history[2..],
            [
                ChatMessage::user("What is ragloom?"),
                ChatMessage::assistant(answer)
            ],
            "{mode}"
        );
        assert!(
            llm.requests().last().unwrap().stream,
            "{mode}: the answer was streamed"
        );
    }
}

#[tokio::test]
async fn a_dropped_stream_leaves_history_unchanged() {
    let r = reference();
    for mode in [
        "simple",
        "condense_question",
        "context",
        "condense_plus_context",
    ] {
        let llm = Arc::new(MockLlm::scripted(script(
            mode,
            &[
                "first answer",
                "a long streamed answer of many words",
                "second answer",
            ],
        )));
        let engine = engine_for(mode, llm, FixedRetriever::from_reference(&r), "Be brief.");
        engine.chat("Hello").await.unwrap();
        let before = engine.chat_history().await.unwrap();
        let mut stream = engine.stream_chat("Tell me more").await.unwrap();
        let first = stream.response_gen.next().await.unwrap().unwrap();
        assert_eq!(first, "a ", "{mode}");
        drop(stream);
        assert_eq!(engine.chat_history().await.unwrap(), before, "{mode}");
        // The engine goes on as if the turn had not happened.
        let response = engine
            .stream_chat("Again")
            .await
            .unwrap()
            .get_response()
            .await
            .unwrap();
        assert!(
            response.response.ends_with("answer"),
            "{mode}: {}",
            response.response
        );
        assert_eq!(engine.chat_history().await.unwrap().len(), 4, "{mode}");
    }
}

/// A model whose stream fails after one delta, and whose replies report usage.
#[derive(Debug)]
struct FlakyLlm;

#[async_trait]
impl Llm for FlakyLlm {
    fn metadata(&self) -> LlmMetadata {
        LlmMetadata {
            is_chat_model: true,
            ..LlmMetadata::default()
        }
    }
    async fn chat(&self, _messages: &[ChatMessage]) -> Result<ChatResponse> {
        Ok(ChatResponse {
            usage: Some(TokenUsage::new(1000, 7)),
            ..ChatResponse::new(ChatMessage::assistant("fine"))
        })
    }
    async fn complete(&self, _prompt: &str, _formatted: bool) -> Result<CompletionResponse> {
        Ok(CompletionResponse::new("fine"))
    }
    async fn stream_chat(&self, _messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        let items: Vec<Result<ChatResponse>> = vec![
            Ok(ChatResponse {
                delta: Some("partial ".into()),
                ..ChatResponse::new(ChatMessage::assistant("partial "))
            }),
            Err(Error::Other("connection reset".into())),
        ];
        Ok(futures::stream::iter(items).boxed())
    }
}

#[tokio::test]
async fn a_failed_stream_leaves_history_unchanged() {
    let engine = SimpleChatEngine::from_defaults(Arc::new(FlakyLlm)).unwrap();
    let stream = engine.stream_chat("Hi").await.unwrap();
    let items: Vec<Result<String>> = stream.response_gen.collect().await;
    assert_eq!(items.len(), 2);
    assert!(
        items[1]
            .as_ref()
            .is_err_and(|e| e.to_string().contains("connection reset"))
    );
    assert!(engine.chat_history().await.unwrap().is_empty());
}

#[tokio::test]
async fn engines_are_shareable_across_tasks() {
    let llm = Arc::new(MockLlm::scripted(["a", "b"]));
    let engine: Arc<dyn ChatEngine> = Arc::new(SimpleChatEngine::from_defaults(llm).unwrap());
    let tasks: Vec<_> = ["one", "two"]
        .into_iter()
        .map(|m| {
            let engine = engine.clone();
            tokio::spawn(async move { engine.chat(m).await.unwrap().response })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    answers.sort();
    assert_eq!(answers, ["a", "b"]);
    let history = engine.chat_history().await.unwrap();
    assert_eq!(history.len(), 4);
    // Each turn is written whole: a question is always followed by its answer.
    assert_eq!(history[0].role, MessageRole::User);
    assert_eq!(history[1].role, MessageRole::Assistant);
}

#[tokio::test]
async fn context_sources_name_the_retriever_and_its_nodes() {
    let r = reference();
    let llm = Arc::new(MockLlm::scripted(["answer"]));
    let engine = ContextChatEngine::from_defaults(FixedRetriever::from_reference(&r), llm).unwrap();
    let response = engine.chat("What is ragloom?").await.unwrap();
    let source = &response.sources[0];
    assert_eq!(source.tool_name, "retriever");
    assert_eq!(source.raw_input, json!({"message": "What is ragloom?"}));
    assert_eq!(source.raw_output[0]["node"]["id_"], "node-1");
    assert_eq!(source.raw_output[1]["score"], json!(0.5));
    assert!(
        source
            .content
            .starts_with("Node ID: node-1\nText: Ragloom ports LlamaIndex to Rust.\nScore:  0.900"),
        "{}",
        source.content
    );
    // A template without its variable is refused when the engine is built.
    let llm = Arc::new(MockLlm::new());
    let err = ContextChatEngine::builder(FixedRetriever::from_reference(&r), llm)
        .context_template("no context here")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("{context_str}"), "{err}");
}

#[tokio::test]
async fn braces_in_the_conversation_reach_the_model_verbatim() {
    let r = reference();
    let llm = Arc::new(MockLlm::scripted(["It prints {}.", "Yes."]).chat_model(true));
    let engine = ContextChatEngine::builder(FixedRetriever::from_reference(&r), llm.clone())
        .system_prompt("Answer about code like fn main() { }.")
        .build()
        .unwrap();
    engine
        .chat("What does println!(\"{}\", x) print? {query_str}")
        .await
        .unwrap();
    engine.chat("Sure?").await.unwrap();
    let sent = &llm.requests()[1].messages;
    assert!(
        sent[0]
            .content
            .ends_with("Answer about code like fn main() { }.")
    );
    assert_eq!(
        sent[1].content,
        "What does println!(\"{}\", x) print? {query_str}"
    );
    assert_eq!(sent[2].content, "It prints {}.");
}

#[tokio::test]
async fn token_counts_match_llama_index() {
    let r = reference();
    let expected = &r["token_counting"];
    let handler = TokenCountingHandler::new();
    let llm = handler.wrap_llm(Arc::new(
        MockLlm::scripted(["The answer is 42.", "Short reply."]).chat_model(true),
    ));
    llm.chat(&[
        ChatMessage::system("Be brief."),
        ChatMessage::user("What is the answer to everything?"),
    ])
    .await
    .unwrap();
    llm.complete("Complete this sentence: the sky is", false)
        .await
        .unwrap();
    let events = handler.llm_token_counts();
    for (got, want) in events.iter().zip(expected["events"].as_array().unwrap()) {
        assert_eq!(got.prompt, want["prompt"].as_str().unwrap());
        assert_eq!(got.completion, want["completion"].as_str().unwrap());
        assert_eq!(
            got.prompt_token_count as u64,
            want["prompt_token_count"].as_u64().unwrap()
        );
        assert_eq!(
            got.completion_token_count as u64,
            want["completion_token_count"].as_u64().unwrap()
        );
    }
    assert_eq!(events.len(), 2);
    assert_eq!(
        handler.prompt_llm_token_count() as u64,
        expected["prompt_llm_token_count"].as_u64().unwrap()
    );
    assert_eq!(
        handler.completion_llm_token_count() as u64,
        expected["completion_llm_token_count"].as_u64().unwrap()
    );
    assert_eq!(
        handler.total_llm_token_count() as u64,
        expected["total_llm_token_count"].as_u64().unwrap()
    );

    // Per-message estimates, tool calls included.
    let counter = TokenCounter::default();
    for (name, estimates) in r["message_token_estimates"].as_object().unwrap() {
        let history: Vec<ChatMessage> =
            serde_json::from_value(r["memory_histories"][name].clone()).unwrap();
        for (m, want) in history.iter().zip(estimates.as_array().unwrap()) {
            assert_eq!(
                counter.estimate_tokens_in_messages(std::slice::from_ref(m)) as u64,
                want.as_u64().unwrap(),
                "{name}: {m}"
            );
        }
    }
    handler.reset_counts();
    assert_eq!(handler.total_llm_token_count(), 0);
}

#[tokio::test]
async fn token_counting_covers_streams_usage_embeddings_and_budgets() {
    let handler = TokenCountingHandler::new();
    let plain = handler.wrap_llm(Arc::new(MockLlm::scripted([
        "one two three four",
        "one two three four",
    ])));
    let messages = [ChatMessage::user("Count to four.")];
    plain.chat(&messages).await.unwrap();
    let stream = plain.stream_chat(&messages).await.unwrap();
    let deltas: Vec<_> = stream.collect().await;
    assert_eq!(deltas.len(), 4);
    let events = handler.llm_token_counts();
    assert_eq!(events[0].prompt_token_count, events[1].prompt_token_count);
    assert_eq!(
        events[0].completion, events[1].completion,
        "a stream counts as its whole answer"
    );
    assert_eq!(
        events[0].completion_token_count,
        events[1].completion_token_count
    );

    // A stream dropped early counts what arrived.
    handler.reset_counts();
    let partial = handler.wrap_llm(Arc::new(MockLlm::scripted(["alpha beta gamma delta"])));
    let mut stream = partial.stream_chat(&messages).await.unwrap();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    assert_eq!(
        handler.llm_token_counts()[0].completion,
        "assistant: alpha "
    );

    // Reported usage wins over counting.
    handler.reset_counts();
    let reported = handler.wrap_llm(Arc::new(FlakyLlm));
    reported.chat(&messages).await.unwrap();
    assert_eq!(handler.prompt_llm_token_count(), 1000);
    assert_eq!(handler.completion_llm_token_count(), 7);

    // Embeddings: one event per text, queries included.
    let embed = handler.wrap_embedding(Arc::new(HashEmbedding::new(64)));
    let documents = vec![Document::document("Alice was beginning to get very tired.")];
    let index = VectorStoreIndex::from_documents(&documents, embed)
        .await
        .unwrap();
    index
        .as_retriever()
        .retrieve(&"Who was tired?".into())
        .await
        .unwrap();
    let embedded = handler.embedding_token_counts();
    assert_eq!(embedded.len(), 2);
    assert_eq!(embedded[1].prompt, "Who was tired?");
    assert_eq!(
        handler.total_embedding_token_count(),
        embedded[0].prompt_token_count + 4
    );

    // A budget fails the call that overspends it and refuses the next one.
    let budget = TokenCountingHandler::new().token_budget(10);
    let llm = budget.wrap_llm(Arc::new(MockLlm::scripted(["a b c d e f g h i j k l"; 2])));
    let err = llm.chat(&messages).await.unwrap_err();
    assert!(err.to_string().contains("token budget exceeded"), "{err}");
    assert!(llm.chat(&messages).await.is_err());
    assert_eq!(budget.llm_token_counts().len(), 1);

    // A chat engine over a counted model is counted turn by turn.
    let counted = TokenCountingHandler::new();
    let llm = counted.wrap_llm(Arc::new(MockLlm::scripted(["Hi!", "Bye!"])));
    let engine = SimpleChatEngine::from_defaults(llm).unwrap();
    engine.chat("Hello").await.unwrap();
    engine
        .stream_chat("Goodbye")
        .await
        .unwrap()
        .get_response()
        .await
        .unwrap();
    let events = counted.llm_token_counts();
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[1].prompt,
        "user: Hello\nassistant: Hi!\nuser: Goodbye"
    );
    assert_eq!(events[1].completion, "assistant: Bye!");
}

#[tokio::test]
async fn a_tool_round_in_memory_goes_or_stays_whole() {
    let call = ToolCall::new("c1", "add", json!({"a": 1, "b": 2}));
    let history = vec![
        ChatMessage::user("Please add one and two, and explain the answer in detail."),
        ChatMessage::assistant_with_tool_calls("", vec![call]),
        ChatMessage::tool_result("c1", "add", "3"),
    ];
    for (limit, kept) in [(100, 3), (14, 0)] {
        let memory = Arc::new(
            ChatMemoryBuffer::builder()
                .token_limit(limit)
                .chat_history(history.clone())
                .build()
                .unwrap(),
        );
        let llm = Arc::new(MockLlm::scripted(["The sum is 3."]));
        let engine = SimpleChatEngine::builder(llm.clone())
            .memory(memory)
            .build()
            .unwrap();
        engine.chat("So?").await.unwrap();
        let sent = &llm.requests()[0].messages;
        // With room for all, all is sent; without room for the question, its
        // tool round goes with it rather than arriving without its call.
        assert_eq!(sent[..kept], history[..kept], "limit {limit}");
        assert_eq!(sent[kept..], [ChatMessage::user("So?")], "limit {limit}");
    }
}
