//! Faults injected by a server on 127.0.0.1 in front of the Ollama client:
//! each is one request (LlamaIndex's Ollama does not retry either) and an
//! error that names Ollama and the cause.
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::llms::{ChatMessage, Llm};
use ragloom_core::testing::{Fault, FaultServer};
use ragloom_llms_ollama::Ollama;
use serde_json::json;
use std::time::Duration;

fn llm(server: &FaultServer) -> Ollama {
    Ollama::builder("llama3.2")
        .base_url(server.url())
        .request_timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

fn assert_ollama_error(err: &Error, cause: &str) {
    match err {
        Error::Provider {
            provider, message, ..
        } => {
            assert_eq!(provider, "ollama", "{err}");
            assert!(
                message.to_lowercase().contains(cause),
                "want `{cause}` in: {message}"
            );
        }
        other => panic!("want a provider error naming `{cause}`, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reset_connection_is_one_request_and_a_clear_error() {
    let server = FaultServer::start(vec![Fault::Reset]).await.unwrap();
    let err = llm(&server)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert_ollama_error(&err, "127.0.0.1");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn an_overloaded_server_is_reported_with_its_status() {
    let server = FaultServer::start(vec![Fault::raw_json(503, r#"{"error":"server busy"}"#)])
        .await
        .unwrap();
    let err = llm(&server)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert_ollama_error(&err, "server busy");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_is_an_error() {
    let server = FaultServer::start(vec![Fault::raw_json(200, r#"{"message": {"role": "ass"#)])
        .await
        .unwrap();
    let err = llm(&server)
        .chat(&[ChatMessage::user("hi")])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, .. } if provider == "ollama"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_reset_midway_ends_in_an_error() {
    let line = json!({"model": "llama3.2", "created_at": "2023-08-04T08:52:19Z",
        "message": {"role": "assistant", "content": "The"}, "done": false});
    let server = FaultServer::start(vec![Fault::ResetAfter {
        headers: vec![("Content-Type".into(), "application/x-ndjson".into())],
        chunks: vec![format!("{line}\n").into_bytes()],
    }])
    .await
    .unwrap();
    let items: Vec<_> = llm(&server)
        .stream_chat(&[ChatMessage::user("hi")])
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(items[0].as_ref().unwrap().delta.as_deref(), Some("The"));
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert!(
        matches!(err, Error::Provider { provider, .. } if provider == "ollama"),
        "{err:?}"
    );
}
