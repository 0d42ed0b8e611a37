//! The server's request parsing as a fuzz target: arbitrary query strings,
//! multipart bodies and JSON bodies sent through the whole router in process.
//!
//! Beyond not panicking, every error answer must be the JSON envelope: an
//! extractor that answers in plain text is a finding too.

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{Method, Request};
use ragloom::indices::VectorStoreIndex;
use ragloom::{HashEmbedding, Node};
use ragloom_server::{IndexView, ServeError, ServedIndex, Server, ServerConfig, Uploads};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tower::Service;

/// Uploads land in a scratch folder and are never ingested: the target is
/// the parsing, not the ingest.
#[derive(Debug)]
struct ScratchUploads(PathBuf);

#[async_trait]
impl Uploads for ScratchUploads {
    fn dir(&self) -> &Path {
        &self.0
    }
    async fn ingest(&self) -> Result<serde_json::Value, ServeError> {
        Ok(serde_json::Value::Null)
    }
}

#[derive(Debug)]
struct FuzzIndex {
    service: ragloom_server::VectorIndexService,
    uploads: Arc<ScratchUploads>,
}

#[async_trait]
impl ServedIndex for FuzzIndex {
    fn name(&self) -> &str {
        self.service.name()
    }
    async fn view(&self) -> Result<Arc<IndexView>, ServeError> {
        self.service.view().await
    }
    async fn status(&self) -> Result<serde_json::Value, ServeError> {
        self.service.status().await
    }
    fn uploads(&self) -> Option<Arc<dyn Uploads>> {
        Some(self.uploads.clone())
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn router() -> axum::Router {
    static ROUTER: OnceLock<axum::Router> = OnceLock::new();
    ROUTER
        .get_or_init(|| {
            runtime().block_on(async {
                let docs = vec![Node::document("The Hatter held a tea party.").with_id("hatter")];
                let index =
                    VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(8)))
                        .await
                        .expect("an index");
                let served = FuzzIndex {
                    service: ragloom_server::VectorIndexService::new("docs", index, None),
                    uploads: Arc::new(ScratchUploads(super::scratch().join("uploads"))),
                };
                Server::new(ServerConfig::default(), vec![Arc::new(served)])
                    .expect("a server")
                    .router()
            })
        })
        .clone()
}

/// The first byte picks a route, the rest is its query string or body.
pub fn http_request(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let query = || -> String {
        text.bytes()
            .filter(|b| b.is_ascii_graphic() && *b != b'#')
            .map(char::from)
            .collect()
    };
    let (method, uri, ctype, body): (Method, String, &str, Vec<u8>) = match pick % 8 {
        0 => (
            Method::POST,
            "/v1/query".into(),
            "application/json",
            rest.to_vec(),
        ),
        1 => (
            Method::POST,
            "/v1/retrieve".into(),
            "application/json",
            rest.to_vec(),
        ),
        2 => (
            Method::POST,
            "/v1/chat/completions".into(),
            "application/json",
            rest.to_vec(),
        ),
        3 => (
            Method::GET,
            format!("/v1/documents?{}", query()),
            "",
            Vec::new(),
        ),
        4 => (
            Method::POST,
            "/v1/documents".into(),
            "multipart/form-data; boundary=B",
            rest.to_vec(),
        ),
        5 => (
            Method::POST,
            "/mcp".into(),
            "application/json",
            rest.to_vec(),
        ),
        6 => (
            Method::GET,
            format!("/v1/nodes/{}", query()),
            "",
            Vec::new(),
        ),
        _ => (
            Method::DELETE,
            format!("/v1/documents/{}", query()),
            "",
            Vec::new(),
        ),
    };
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1")
        .header("accept", "application/json, text/event-stream");
    if !ctype.is_empty() {
        req = req.header("content-type", ctype);
    }
    // A target the http crate refuses never reaches a server.
    let Ok(req) = req.body(Body::from(body)) else {
        return;
    };
    let mut router = router();
    runtime().block_on(async {
        let Ok(response) = router.call(req).await;
        let status = response.status();
        let is_json = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        assert!(
            !(status.is_client_error() || status.is_server_error()) || is_json,
            "an error answered outside the envelope: {status}"
        );
        let _ = axum::body::to_bytes(response.into_body(), 1 << 20).await;
    });
}
