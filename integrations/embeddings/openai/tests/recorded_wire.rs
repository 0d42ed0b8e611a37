//! Recorded-wire tests: a wiremock server answers `/v1/embeddings` in OpenAI's
//! exact wire format (the embedding object list of OpenAI's API reference:
//! `object`, `data[].object/index/embedding`, `model`, `usage`), so these run
//! everywhere, with no server or key.
#![allow(clippy::unwrap_used)]

use ragloom_common_openai::RetryPolicy;
use ragloom_core::Error;
use ragloom_core::embeddings::{Embedding, embed_in_batches};
use ragloom_embeddings_openai::{OpenAIEmbedding, OpenAIEmbeddingBuilder};
use serde_json::{Value, json};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-embed-0123456789abcdef";

/// Embeds text `tN` as `[N, len]`, listing the items in reverse order (with
/// their `index`), as a server is allowed to: the client must put them back.
struct NumberedEmbeddings;

impl Respond for NumberedEmbeddings {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap();
        let inputs = body["input"].as_array().unwrap();
        let mut data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let text = text.as_str().unwrap();
                let n: f32 = text
                    .trim_start_matches('t')
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                json!({"object": "embedding", "index": i, "embedding": [n, text.len() as f32]})
            })
            .collect();
        data.reverse();
        ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 8, "total_tokens": 8}
        }))
    }
}

fn builder(server: &MockServer) -> OpenAIEmbeddingBuilder {
    OpenAIEmbedding::builder()
        .api_base(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .retry_policy(
            RetryPolicy::new(2)
                .with_initial_backoff(Duration::from_millis(10))
                .with_jitter(false),
        )
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

#[tokio::test]
async fn batches_of_two_over_five_texts_make_three_requests_in_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(NumberedEmbeddings)
        .mount(&server)
        .await;
    let model = builder(&server)
        .model("some-local-embedder")
        .embed_batch_size(2)
        .build()
        .unwrap();
    let texts: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
    let vectors = embed_in_batches(&model, &texts, false).await.unwrap();
    let firsts: Vec<f32> = vectors.iter().map(|v| v[0]).collect();
    assert_eq!(firsts, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3);
    let sizes: Vec<usize> = sent
        .iter()
        .map(|b| b["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![2, 2, 1]);
    assert_eq!(sent[0]["model"], "some-local-embedder");
    assert!(sent[0].get("dimensions").is_none());

    // embed_texts batches too when handed more than a batch.
    server.reset().await;
    Mock::given(method("POST"))
        .respond_with(NumberedEmbeddings)
        .mount(&server)
        .await;
    let vectors = model.embed_texts(&texts).await.unwrap();
    assert_eq!(vectors.len(), 5);
    assert_eq!(vectors[4][0], 4.0);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn query_newlines_and_dimensions_go_out_as_llamaindex_sends_them() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.25, -0.5, 0.75]}],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 4, "total_tokens": 4}
        })))
        .mount(&server)
        .await;
    let model = builder(&server)
        .model("text-embedding-3-small")
        .dimensions(3)
        .build()
        .unwrap();
    assert_eq!(model.dimensions(), Some(3));
    assert_eq!(model.embed_batch_size(), 100);
    let v = model.embed_query("line one\nline two").await.unwrap();
    assert_eq!(v, vec![0.25, -0.5, 0.75]);
    let sent = &bodies(&server).await[0];
    assert_eq!(sent["input"], json!(["line one line two"]));
    assert_eq!(sent["dimensions"], json!(3));
    assert_eq!(sent["model"], "text-embedding-3-small");
}

#[tokio::test]
async fn wrong_length_vectors_for_a_known_model_are_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
            "model": "text-embedding-3-large"
        })))
        .mount(&server)
        .await;
    let model = builder(&server)
        .model("text-embedding-3-large")
        .build()
        .unwrap();
    let err = model.embed_query("x").await.unwrap_err().to_string();
    assert!(err.contains("2 dimensions, expected 3072"), "{err}");
}

#[tokio::test]
async fn missing_items_and_bad_indexes_are_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"index": 5, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]
        })))
        .mount(&server)
        .await;
    let model = builder(&server).model("m").build().unwrap();
    let err = model
        .embed_texts(&["a".into(), "b".into()])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("out of range"), "{err}");
    let err = model
        .embed_texts(&["a".into(), "b".into(), "c".into()])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 embeddings for a batch of 3"), "{err}");
}

#[tokio::test]
async fn server_errors_are_retried_with_the_shared_policy() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(502).set_body_string("bad gateway"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(NumberedEmbeddings)
        .mount(&server)
        .await;
    let model = builder(&server).model("m").build().unwrap();
    let v = model.embed_query("t7").await.unwrap();
    assert_eq!(v[0], 7.0);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn unauthorized_is_a_provider_error_without_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})))
        .mount(&server)
        .await;
    let model = builder(&server).build().unwrap();
    let err = model.embed_query("hi").await.unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, .. } if provider == "openai"),
        "{err:?}"
    );
    assert!(err.to_string().contains("401"), "{err}");
    assert!(!err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY));
    assert!(!format!("{model:?}").contains(KEY));
}

#[tokio::test]
async fn timeouts_are_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(
                    json!({"object": "list", "data": [{"index": 0, "embedding": [1.0]}]}),
                )
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let model = builder(&server)
        .timeout(Duration::from_millis(200))
        .max_retries(0)
        .build()
        .unwrap();
    let err = model.embed_query("t1").await.unwrap_err().to_string();
    assert!(err.contains("timed out"), "{err}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[test]
fn builder_refuses_bad_settings() {
    let err = OpenAIEmbedding::builder()
        .api_key(KEY)
        .embed_batch_size(0)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("embed_batch_size"), "{err}");
    let err = OpenAIEmbedding::builder()
        .api_key(KEY)
        .embed_batch_size(5000)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("2048"), "{err}");
    let err = OpenAIEmbedding::builder()
        .api_key(KEY)
        .dimensions(256)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("text-embedding-3"), "{err}");
    let ok = OpenAIEmbedding::builder()
        .api_key(KEY)
        .model("text-embedding-3-large")
        .build()
        .unwrap();
    assert_eq!(ok.dimensions(), Some(3072));
    assert_eq!(ok.client().retry_policy().max_retries, 10);
}
