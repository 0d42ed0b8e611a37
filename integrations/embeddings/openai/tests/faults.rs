//! Faults injected by a server on 127.0.0.1 in front of the OpenAI-compatible
//! embedding client: resets retried within the policy, malformed and cut
//! replies reported as errors naming the provider.
#![allow(clippy::unwrap_used)]

use ragloom_common_openai::RetryPolicy;
use ragloom_core::Error;
use ragloom_core::embeddings::Embedding;
use ragloom_core::testing::{Fault, FaultServer};
use ragloom_embeddings_openai::OpenAIEmbedding;
use serde_json::json;
use std::time::Duration;

fn embedder(server: &FaultServer) -> OpenAIEmbedding {
    OpenAIEmbedding::builder()
        .model("local-embedder")
        .api_base(format!("{}/v1", server.url()))
        .api_key("sk-test")
        .timeout(Duration::from_millis(400))
        .retry_policy(
            RetryPolicy::new(2)
                .with_initial_backoff(Duration::from_millis(10))
                .with_jitter(false),
        )
        .build()
        .unwrap()
}

fn vectors() -> Fault {
    Fault::respond(|request| {
        let inputs = request.json()["input"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let data: Vec<_> = (0..inputs.len())
            .map(|i| json!({"object": "embedding", "index": i, "embedding": [i as f32, 1.0]}))
            .collect();
        Fault::json(
            200,
            &json!({"object": "list", "data": data, "model": "m",
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
        )
    })
}

fn is_openai_error(err: &Error) -> bool {
    matches!(err, Error::Provider { provider, .. } if provider == "openai")
}

#[tokio::test]
async fn resets_and_503s_are_retried_then_answered() {
    let server = FaultServer::start(vec![Fault::Reset, Fault::status(503, None), vectors()])
        .await
        .unwrap();
    let got = embedder(&server)
        .embed_texts(&["a".into(), "b".into()])
        .await
        .unwrap();
    assert_eq!(got, vec![vec![0.0, 1.0], vec![1.0, 1.0]]);
    assert_eq!(server.connections(), 3);
}

#[tokio::test]
async fn endless_faults_stop_after_the_retries() {
    for fault in [Fault::Reset, Fault::Silence, Fault::status(500, None)] {
        let server = FaultServer::start(vec![fault.clone()]).await.unwrap();
        let err = embedder(&server).embed_query("q").await.unwrap_err();
        assert!(is_openai_error(&err), "{fault:?}: {err:?}");
        assert_eq!(server.connections(), 3, "{fault:?}");
    }
}

#[tokio::test]
async fn a_cut_or_malformed_reply_is_an_error() {
    let cut = Fault::ResetAfter {
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            ("Content-Length".into(), "500".into()),
        ],
        chunks: vec![br#"{"object": "list", "data": [{"#.to_vec()],
    };
    for fault in [
        Fault::raw_json(200, r#"{"data": [{"embedding": [0.1,"#),
        cut,
    ] {
        let server = FaultServer::start(vec![fault.clone()]).await.unwrap();
        let err = embedder(&server).embed_query("q").await.unwrap_err();
        assert!(is_openai_error(&err), "{fault:?}: {err:?}");
    }
}
