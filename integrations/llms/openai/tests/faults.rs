//! Faults injected by a server on 127.0.0.1 in front of the OpenAI-compatible
//! client: resets, silence, malformed replies, cut streams, endless 429s.
//! Retries stay bounded in count and time, errors name the provider and the
//! cause, and a chat's memory is unchanged by a turn that failed.
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::chat_engine::{ChatEngine, SimpleChatEngine};
use ragloom_core::llms::{ChatMessage, Llm};
use ragloom_core::testing::{Fault, FaultServer};
use ragloom_llms_openai::{OpenAILike, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn llm(server: &FaultServer, retries: usize) -> OpenAILike {
    OpenAILike::builder("m")
        .api_base(format!("{}/v1", server.url()))
        .api_key("sk-test")
        .is_chat_model(true)
        .timeout(Duration::from_millis(400))
        .retry_policy(
            RetryPolicy::new(retries)
                .with_initial_backoff(Duration::from_millis(10))
                .with_jitter(false),
        )
        .build()
        .unwrap()
}

fn reply(text: &str) -> Fault {
    Fault::json(
        200,
        &json!({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"}]}),
    )
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn partial_stream() -> Vec<Value> {
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Half an"}), Value::Null),
        chunk(json!({"content": " answer"}), Value::Null),
    ]
}

fn assert_openai_error(err: &Error, cause: &str) {
    match err {
        Error::Provider {
            provider, message, ..
        } => {
            assert_eq!(provider, "openai", "{err}");
            assert!(
                message.to_lowercase().contains(cause),
                "want `{cause}` in: {message}"
            );
        }
        other => panic!("want a provider error naming `{cause}`, got {other:?}"),
    }
}

#[tokio::test]
async fn reset_connections_are_retried_then_answered() {
    let server = FaultServer::start(vec![Fault::Reset, Fault::Reset, reply("ok")])
        .await
        .unwrap();
    let reply = llm(&server, 3)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap();
    assert_eq!(reply.message.content, "ok");
    assert_eq!(server.connections(), 3);
}

#[tokio::test]
async fn endless_resets_stop_after_the_retries() {
    let server = FaultServer::start(vec![Fault::Reset]).await.unwrap();
    let err = llm(&server, 2)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert_openai_error(&err, "127.0.0.1");
    assert_eq!(server.connections(), 3);
}

#[tokio::test]
async fn rate_limits_without_retry_after_back_off_and_give_up() {
    let server = FaultServer::start(vec![Fault::status(429, None)])
        .await
        .unwrap();
    let err = llm(&server, 3)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert_openai_error(&err, "429");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_huge_retry_after_is_capped() {
    let server = FaultServer::start(vec![Fault::status(429, Some("3600"))])
        .await
        .unwrap();
    let mut policy = RetryPolicy::new(2)
        .with_initial_backoff(Duration::from_millis(10))
        .with_jitter(false);
    policy.max_retry_after = Duration::from_millis(100);
    let llm = OpenAILike::builder("m")
        .api_base(format!("{}/v1", server.url()))
        .is_chat_model(true)
        .retry_policy(policy)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    assert_openai_error(&err, "429");
    assert_eq!(server.requests().len(), 3);
    // Two capped waits of 100 ms, not two hours (an upper bound with room
    // for a loaded machine).
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_burst_of_503_then_an_answer() {
    let server = FaultServer::start(vec![
        Fault::status(503, None),
        Fault::status(500, None),
        Fault::status(503, Some("0")),
        reply("back"),
    ])
    .await
    .unwrap();
    let reply = llm(&server, 3)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap();
    assert_eq!(reply.message.content, "back");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_within_the_retry_budget() {
    let server = FaultServer::start(vec![Fault::Silence]).await.unwrap();
    let started = Instant::now();
    let err = llm(&server, 1)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert_openai_error(&err, "timed out");
    assert_eq!(server.connections(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn malformed_json_is_an_error_and_not_retried() {
    let server = FaultServer::start(vec![Fault::raw_json(200, "{\"choices\": [ {\"mess")])
        .await
        .unwrap();
    let err = llm(&server, 3)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, .. } if provider == "openai"),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

/// The last item of a streamed chat served by `fault`.
async fn last_stream_item(fault: Fault) -> ragloom_core::Result<ragloom_core::llms::ChatResponse> {
    let server = FaultServer::start(vec![fault]).await.unwrap();
    let stream = llm(&server, 0)
        .stream_chat(&[ChatMessage::user("hi")])
        .await
        .unwrap();
    stream.collect::<Vec<_>>().await.pop().unwrap()
}

#[tokio::test]
async fn a_stream_reset_midway_ends_in_an_error() {
    let chunks = partial_stream()
        .iter()
        .map(|c| format!("data: {c}\n\n").into_bytes())
        .collect();
    let err = last_stream_item(Fault::ResetAfter {
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        chunks,
    })
    .await
    .unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, .. } if provider == "openai"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_cut_before_done_ends_in_an_error() {
    let err = last_stream_item(Fault::sse(&partial_stream(), false))
        .await
        .unwrap_err();
    assert_openai_error(&err, "[done]");
}

#[tokio::test]
async fn a_failed_turn_leaves_the_chat_memory_unchanged() {
    let server = FaultServer::start(vec![reply("first answer"), Fault::status(503, None)])
        .await
        .unwrap();
    let engine = SimpleChatEngine::from_defaults(Arc::new(llm(&server, 1))).unwrap();
    engine.chat("first").await.unwrap();
    let before = engine.chat_history().await.unwrap();
    assert_eq!(before.len(), 2);
    // A turn that fails outright.
    engine.chat("second").await.unwrap_err();
    assert_eq!(engine.chat_history().await.unwrap(), before);
    // A streamed turn cut midway.
    server.script(vec![Fault::sse(&partial_stream(), false)]);
    let streamed = engine.stream_chat("third").await.unwrap();
    streamed.get_response().await.unwrap_err();
    assert_eq!(engine.chat_history().await.unwrap(), before);
    // The next good turn is remembered after the first.
    server.script(vec![reply("fourth answer")]);
    engine.chat("fourth").await.unwrap();
    let after = engine.chat_history().await.unwrap();
    assert_eq!(after.len(), 4);
    assert_eq!(after[..2], before[..]);
    assert_eq!(after[3].content, "fourth answer");
}
