//! Faults injected by a server on 127.0.0.1 in front of the Ollama embedding
//! client: one request each and an error that names Ollama.
#![allow(clippy::unwrap_used)]

use ragloom_core::Error;
use ragloom_core::embeddings::Embedding;
use ragloom_core::testing::{Fault, FaultServer};
use ragloom_embeddings_ollama::OllamaEmbedding;
use std::time::Duration;

#[tokio::test]
async fn each_fault_is_one_request_and_an_error_naming_ollama() {
    let faults = [
        Fault::Reset,
        Fault::Silence,
        Fault::raw_json(500, r#"{"error": "model crashed"}"#),
        Fault::raw_json(200, r#"{"embeddings": [[0.1, "#),
    ];
    for fault in faults {
        let server = FaultServer::start(vec![fault.clone()]).await.unwrap();
        let embed = OllamaEmbedding::builder("all-minilm")
            .base_url(server.url())
            .request_timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let err = embed.embed_query("q").await.unwrap_err();
        assert!(
            matches!(&err, Error::Provider { provider, .. } if provider == "ollama"),
            "{fault:?}: {err:?}"
        );
        assert_eq!(server.connections(), 1, "{fault:?}");
    }
}
