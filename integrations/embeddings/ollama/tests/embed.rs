//! Recorded-wire tests of the Ollama embedding: a wiremock server answers in
//! Ollama's `/api/embed` wire format (written from Ollama's API reference,
//! `docs/api.md` of the ollama repository, section "Generate Embeddings"),
//! and the requests ragloom sends are checked against the documented shape.
#![allow(clippy::unwrap_used)]

use ragloom_core::Error;
use ragloom_core::embeddings::{Embedding, embed_in_batches};
use ragloom_embeddings_ollama::{KeepAlive, OllamaEmbedding};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// docs/api.md, "Generate Embeddings", "Request (Multiple input)", response.
const TWO_EMBEDDINGS: &str = r#"{
  "model": "all-minilm",
  "embeddings": [[
    0.010071029, -0.0017594862, 0.05007221, 0.04692972, 0.054916814,
    0.008599704, 0.105441414, -0.025878139, 0.12958129, 0.031952348
  ],[
    -0.0098027075, 0.06042469, 0.025257962, -0.006364387, 0.07272725,
    0.017194884, 0.09032035, -0.051705178, 0.09951512, 0.09072481
  ]]
}"#;

/// Ollama's reply for a model it does not have: HTTP 404 with `{"error": ...}`.
const NOT_FOUND: &str = r#"{"error": "model 'x' not found"}"#;

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

/// Answers each `/api/embed` request in Ollama's shape, one vector per input:
/// `[number in the text, its length]`, so the test can tell which is which.
fn echo_vectors(request: &Request) -> ResponseTemplate {
    let body: Value = request.body_json().unwrap();
    let embeddings: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|text| {
            let text = text.as_str().unwrap();
            let n: f64 = text.rsplit(' ').next().unwrap().parse().unwrap();
            json!([n, text.len() as f64])
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "model": body["model"],
        "embeddings": embeddings,
        "total_duration": 14143917,
        "load_duration": 1019500,
        "prompt_eval_count": 8
    }))
}

#[tokio::test]
async fn five_texts_in_batches_of_two_take_three_requests_in_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(echo_vectors)
        .expect(3)
        .mount(&server)
        .await;
    let embed = OllamaEmbedding::builder("all-minilm")
        .base_url(server.uri())
        .embed_batch_size(2)
        .build()
        .unwrap();
    let texts: Vec<String> = (0..5).map(|i| format!("text number {i}")).collect();
    let vectors = embed_in_batches(&embed, &texts, false).await.unwrap();

    let expected: Vec<Vec<f32>> = (0..5).map(|i| vec![i as f32, 13.0]).collect();
    assert_eq!(vectors, expected);
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3);
    let inputs: Vec<Value> = sent.iter().map(|b| b["input"].clone()).collect();
    assert_eq!(
        inputs,
        vec![
            json!(["text number 0", "text number 1"]),
            json!(["text number 2", "text number 3"]),
            json!(["text number 4"]),
        ]
    );
    assert!(sent.iter().all(|b| b["model"] == "all-minilm"));
    // Nothing is sent that was not asked for.
    assert!(
        sent.iter().all(|b| b.as_object().unwrap().len() == 2),
        "{sent:?}"
    );
}

#[tokio::test]
async fn the_documented_reply_is_read_and_the_request_carries_the_settings() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(TWO_EMBEDDINGS, "application/json"))
        .mount(&server)
        .await;
    let embed = OllamaEmbedding::builder("all-minilm")
        .base_url(server.uri())
        .keep_alive(KeepAlive::UnloadOnCompletion)
        .additional_kwarg("num_ctx", 512)
        .dimensions(10)
        .truncate(false)
        .text_instruction("search_document:")
        .build()
        .unwrap();
    let texts = vec![
        "  Why is the sky blue?".to_string(),
        "Why is the grass green?\n".to_string(),
    ];
    let vectors = embed.embed_texts(&texts).await.unwrap();
    assert_eq!(vectors.len(), 2);
    assert_eq!(vectors[0].len(), 10);
    assert_eq!(vectors[0][0], 0.010071029);
    assert_eq!(vectors[1][9], 0.09072481);
    assert_eq!(embed.dimensions(), Some(10));

    let body = &bodies(&server).await[0];
    assert_eq!(
        body,
        &json!({
            "model": "all-minilm",
            "input": ["search_document: Why is the sky blue?", "search_document: Why is the grass green?"],
            "truncate": false,
            "options": {"num_ctx": 512},
            "keep_alive": 0,
            "dimensions": 10
        })
    );
}

#[tokio::test]
async fn queries_get_the_query_instruction() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(echo_vectors)
        .mount(&server)
        .await;
    let embed = OllamaEmbedding::builder("nomic-embed-text")
        .base_url(server.uri())
        .query_instruction(" search_query: ")
        .text_instruction("search_document:")
        .build()
        .unwrap();
    let vector = embed.embed_query("  which is 7").await.unwrap();
    assert_eq!(vector, vec![7.0, 24.0]);
    assert_eq!(
        bodies(&server).await[0]["input"],
        json!(["search_query: which is 7"])
    );
    assert!(embed.embed_texts(&[]).await.unwrap().is_empty());
    assert_eq!(bodies(&server).await.len(), 1, "no request for no texts");
}

#[tokio::test]
async fn errors_name_ollama_and_keep_the_servers_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(ResponseTemplate::new(404).set_body_raw(NOT_FOUND, "application/json"))
        .mount(&server)
        .await;
    let embed = OllamaEmbedding::builder("x")
        .base_url(server.uri())
        .build()
        .unwrap();
    let err = embed.embed_query("hi").await.unwrap_err();
    match &err {
        Error::Provider {
            provider,
            message,
            source,
        } => {
            assert_eq!(provider, "ollama");
            assert!(message.contains("model 'x' not found"), "{message}");
            assert!(message.contains("model `x`"), "{message}");
            assert!(source.is_some());
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reply_with_the_wrong_number_of_vectors_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(TWO_EMBEDDINGS, "application/json"))
        .mount(&server)
        .await;
    let embed = OllamaEmbedding::builder("all-minilm")
        .base_url(server.uri())
        .build()
        .unwrap();
    let texts: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
    let err = embed.embed_texts(&texts).await.unwrap_err().to_string();
    assert!(err.contains("returned 2 embeddings for 3 inputs"), "{err}");
}

#[test]
fn settings_are_checked_at_build_time() {
    let base = || OllamaEmbedding::builder("m").base_url("127.0.0.1:1");
    assert_eq!(base().build().unwrap().embed_batch_size(), 10);
    assert!(base().embed_batch_size(0).build().is_err());
    assert!(base().embed_batch_size(2049).build().is_err());
    assert_eq!(
        base()
            .embed_batch_size(2048)
            .build()
            .unwrap()
            .embed_batch_size(),
        2048
    );
    assert!(base().keep_alive_str("later").build().is_err());
    assert!(OllamaEmbedding::builder("").build().is_err());
    let built = base().build().unwrap();
    assert_eq!(built.base_url(), "http://127.0.0.1:1/");
    assert_eq!(built.model_name(), "m");
    assert_eq!(built.dimensions(), None);
    let shown = format!("{built:?}");
    assert!(
        shown.contains("OllamaEmbedding") && shown.contains("127.0.0.1:1"),
        "{shown}"
    );
}
