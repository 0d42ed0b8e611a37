//! The HTTP API end to end over loopback: OpenAI routes (plain and
//! streamed), REST, auth, errors, limits, cancellation, shutdown, metrics.

#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use futures::StreamExt;
use ragloom::indices::VectorStoreIndex;
use ragloom::llms::{ChatResponse, ChatResponseStream, CompletionResponse, LlmMetadata, MockLlm};
use ragloom::{ChatMessage, HashEmbedding, Llm, Node};
use ragloom_server::{Server, ServerConfig, VectorIndexService};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const KEY: &str = "test-key-1";

/// An LLM that waits before each streamed word, and says when its stream is dropped.
#[derive(Debug)]
struct SlowLlm {
    inner: MockLlm,
    delay: Duration,
    dropped: Arc<AtomicBool>,
    started: Arc<AtomicUsize>,
}

struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl Llm for SlowLlm {
    fn metadata(&self) -> LlmMetadata {
        self.inner.metadata()
    }
    async fn chat(&self, messages: &[ChatMessage]) -> ragloom::Result<ChatResponse> {
        self.started.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay * 5).await;
        self.inner.chat(messages).await
    }
    async fn complete(&self, prompt: &str, formatted: bool) -> ragloom::Result<CompletionResponse> {
        self.started.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay * 5).await;
        self.inner.complete(prompt, formatted).await
    }
    async fn stream_chat(&self, messages: &[ChatMessage]) -> ragloom::Result<ChatResponseStream> {
        let inner = self.inner.stream_chat(messages).await?;
        Ok(self.slowed(inner))
    }
    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> ragloom::Result<ragloom::llms::CompletionResponseStream> {
        let inner = self.inner.stream_complete(prompt, formatted).await?;
        Ok(self.slowed(inner))
    }
}

impl SlowLlm {
    /// `inner` with a pause before each item, flagging `dropped` when it goes.
    fn slowed<T: Send + 'static>(
        &self,
        inner: futures::stream::BoxStream<'static, T>,
    ) -> futures::stream::BoxStream<'static, T> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let delay = self.delay;
        let flag = DropFlag(self.dropped.clone());
        inner
            .then(move |item| {
                let _held = &flag;
                async move {
                    tokio::time::sleep(delay).await;
                    item
                }
            })
            .boxed()
    }
}

struct Running {
    base: String,
    client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
    fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.client
            .post(self.url(path))
            .bearer_auth(KEY)
            .json(&body)
    }
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(KEY)
    }
}

const TEXTS: [(&str, &str); 3] = [
    (
        "alice.txt",
        "Alice was beginning to get very tired.\nThe White Rabbit ran by with a pocket watch.\nAlice followed the rabbit down the hole.",
    ),
    (
        "hatter.txt",
        "The Hatter held a tea party.\nThe March Hare poured the tea and the Dormouse slept.",
    ),
    (
        "queen.txt",
        "The Queen of Hearts shouted off with their heads.\nThe gardeners painted the roses red.",
    ),
];

async fn start(config: ServerConfig, llm: Option<Arc<dyn Llm>>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = Vec::new();
    for (name, text) in TEXTS {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        docs.push(
            Node::document(text)
                .with_id(path.display().to_string())
                .with_metadata("file_path", path.display().to_string())
                .with_metadata("file_name", name),
        );
    }
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(64)))
        .await
        .unwrap();
    let service = VectorIndexService::new("wonderland", index, llm).base(dir.path());
    let server = Server::new(config, vec![Arc::new(service)]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = rx.await;
            })
            .await
    });
    Running {
        base,
        client: reqwest::Client::new(),
        stop: Some(tx),
        done,
        _dir: dir,
    }
}

fn keyed() -> ServerConfig {
    ServerConfig {
        api_keys: vec!["other-key".into(), KEY.into()],
        ..ServerConfig::default()
    }
}

fn mock() -> Option<Arc<dyn Llm>> {
    Some(Arc::new(MockLlm::with_max_tokens(5)))
}

/// The `data:` payloads of an SSE body.
fn sse_data(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|event| {
            let lines: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
                .collect();
            (!lines.is_empty()).then(|| lines.join("\n"))
        })
        .collect()
}

#[tokio::test]
async fn keys_close_everything_but_health_and_the_page() {
    let s = start(keyed(), None).await;
    let r = s.client.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = s.client.get(s.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'")
    );
    for path in [
        "/v1/models",
        "/v1/status",
        "/metrics",
        "/openapi.json",
        "/v1/documents",
    ] {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_api_key", "{path}");
        assert_eq!(body["error"]["type"], "authentication_error");
    }
    let r = s
        .client
        .get(s.url("/v1/models"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = s
        .client
        .post(s.url("/mcp"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "MCP is closed too");
    let models: Value = s
        .get("/v1/models")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "wonderland");
    assert_eq!(models["object"], "list");
}

#[tokio::test]
async fn chat_completions_answer_with_usage_and_sources() {
    let s = start(keyed(), mock()).await;
    let r = s
        .post(
            "/v1/chat/completions",
            json!({
                "model": "wonderland",
                "messages": [{"role": "user", "content": "Who ran by with a pocket watch?"}],
            }),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "text text text text text"
    );
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let u = &body["usage"];
    assert!(u["prompt_tokens"].as_u64().unwrap() > 0);
    assert_eq!(u["completion_tokens"], 5);
    assert_eq!(
        u["total_tokens"].as_u64(),
        Some(u["prompt_tokens"].as_u64().unwrap() + 5)
    );
    let sources = body["sources"].as_array().unwrap();
    assert!(!sources.is_empty());
    assert!(
        sources
            .iter()
            .all(|p| p["file"].as_str().unwrap().ends_with(".txt"))
    );
    assert!(
        sources
            .iter()
            .any(|p| p["file"] == "alice.txt" && p["line"] == 2),
        "{sources:?}"
    );
}

#[tokio::test]
async fn streamed_chat_ends_with_sources_usage_and_done() {
    let s = start(keyed(), mock()).await;
    let r = s
        .post(
            "/v1/chat/completions",
            json!({
                "model": "wonderland",
                "messages": [
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": "Who held a tea party?"},
                    {"role": "assistant", "content": "The Hatter."},
                    {"role": "user", "content": [{"type": "text", "text": "And who slept?"}]},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
            }),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let data = sse_data(&r.text().await.unwrap());
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "text text text text text");
    let finishes: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["choices"][0]["finish_reason"] == "stop")
        .collect();
    assert_eq!(finishes.len(), 1);
    assert!(!finishes[0]["sources"].as_array().unwrap().is_empty());
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    // Two calls: the conversation condensed into a question, then the answer.
    assert_eq!(last["usage"]["completion_tokens"], 10);
    assert!(last["sources"].is_array());
}

#[tokio::test]
async fn without_an_llm_the_answer_is_the_labelled_passages() {
    let s = start(ServerConfig::default(), None).await;
    let body: Value = s
        .post(
            "/v1/chat/completions",
            json!({
                "model": "wonderland",
                "messages": [{"role": "user", "content": "roses painted red"}],
            }),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let content = body["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(content.contains("[1] queen.txt:2"), "{content}");
    assert!(body["usage"]["total_tokens"].as_u64().unwrap() > 0);
    let q: Value = s
        .post("/v1/query", json!({"query": "roses painted red"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(q["mode"], "passages");
    assert_eq!(q["answer"], Value::Null);
    assert_eq!(q["sources"][0]["file"], "queen.txt");
}

#[tokio::test]
async fn errors_use_openais_envelope_with_stable_codes() {
    let s = start(keyed(), mock()).await;
    let cases = [
        (
            json!({"model": "nope", "messages": [{"role": "user", "content": "hi"}]}),
            404,
            "model_not_found",
        ),
        (
            json!({"model": "wonderland", "messages": []}),
            400,
            "bad_request",
        ),
        (
            json!({"model": "wonderland", "messages": [{"role": "banana", "content": "hi"}]}),
            400,
            "bad_request",
        ),
        (
            json!({"model": "wonderland", "messages": [{"role": "assistant", "content": "hi"}]}),
            400,
            "bad_request",
        ),
        (json!({"model": "wonderland"}), 400, "bad_request"),
        (
            json!({"model": "wonderland", "messages": [{"role": "user", "content": "hi"}], "top_k": 0}),
            400,
            "bad_request",
        ),
    ];
    for (body, status, code) in cases {
        let r = s
            .post("/v1/chat/completions", body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "{body}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], code, "{body}");
        assert!(
            e["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let r = s
        .client
        .post(s.url("/v1/query"))
        .bearer_auth(KEY)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = s
        .post("/v1/query", json!({"query": "x", "index": "other"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "index_not_found"
    );
    let r = s.get("/v1/nowhere").send().await.unwrap();
    assert_eq!(r.status(), 404);
    let big = "x".repeat(3 * 1024 * 1024);
    let r = s
        .post("/v1/query", json!({"query": big}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "payload_too_large"
    );
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .bearer_auth(KEY)
        .multipart(reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(b"hi".to_vec()).file_name("a.txt"),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409, "an index without uploads refuses them");
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "unsupported"
    );
}

#[tokio::test]
async fn retrieve_honours_top_k_and_metadata_filters() {
    let s = start(keyed(), None).await;
    let r: Value = s
        .post("/v1/retrieve", json!({"query": "tea party", "top_k": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["nodes"].as_array().unwrap().len(), 2);
    let r: Value = s
        .post("/v1/retrieve", json!({
            "query": "tea party", "top_k": 3,
            "filters": {"filters": [{"key": "file_name", "value": "queen.txt", "operator": "=="}], "condition": "and"},
        }))
        .send().await.unwrap().json().await.unwrap();
    let nodes = r["nodes"].as_array().unwrap();
    assert!(!nodes.is_empty());
    assert!(nodes.iter().all(|n| n["file"] == "queen.txt"), "{nodes:?}");
    // The stored passage by id, its file and line.
    let id = nodes[0]["node_id"].as_str().unwrap();
    let n: Value = s
        .get(&format!("/v1/nodes/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(n["file"], "queen.txt");
    assert_eq!(n["line"], 1);
    assert!(n["text"].as_str().unwrap().contains("Queen of Hearts"));
    assert_eq!(
        s.get("/v1/nodes/missing").send().await.unwrap().status(),
        404
    );
    let docs: Value = s
        .get("/v1/documents?limit=2")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(docs["documents"].as_array().unwrap().len(), 2);
    assert_eq!(docs["documents"][0]["file"], "alice.txt");
    let more: Value = s
        .get(&format!(
            "/v1/documents?limit=2&cursor={}",
            docs["next_cursor"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(more["documents"][0]["file"], "queen.txt");
    assert_eq!(more["next_cursor"], Value::Null);
    let status: Value = s
        .get("/v1/status")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["indexes"][0]["name"], "wonderland");
    assert_eq!(status["indexes"][0]["documents"], 3);
}

#[tokio::test]
async fn a_busy_llm_queues_then_answers_429_with_retry_after() {
    let llm = Arc::new(SlowLlm {
        inner: MockLlm::with_max_tokens(3),
        delay: Duration::from_millis(150),
        dropped: Arc::default(),
        started: Arc::default(),
    });
    let config = ServerConfig {
        max_concurrent_llm: 1,
        max_queued_llm: 1,
        ..keyed()
    };
    let s = Arc::new(start(config, Some(llm.clone())).await);
    let ask = |s: Arc<Running>| async move {
        s.post("/v1/query", json!({"query": "tea"}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    let first = tokio::spawn(ask(s.clone()));
    while llm.started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let second = tokio::spawn(ask(s.clone()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = s
        .post("/v1/query", json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert!(
        r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "too_many_requests"
    );
    assert_eq!(first.await.unwrap(), 200);
    assert_eq!(second.await.unwrap(), 200, "the queued request is answered");
}

#[tokio::test]
async fn a_client_that_goes_away_stops_its_generation() {
    let llm = Arc::new(SlowLlm {
        inner: MockLlm::with_max_tokens(200),
        delay: Duration::from_millis(50),
        dropped: Arc::default(),
        started: Arc::default(),
    });
    let s = start(keyed(), Some(llm.clone())).await;
    // A raw connection, so the disconnect is real (a pooled client may keep it open).
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = json!({"model": "wonderland", "stream": true, "messages": [{"role": "user", "content": "tea"}]}).to_string();
    let mut sock = tokio::net::TcpStream::connect(s.base.trim_start_matches("http://"))
        .await
        .unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let mut seen = String::new();
    while !seen.contains("\"content\":\"text") {
        let n = sock.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(!llm.dropped.load(Ordering::SeqCst));
    drop(sock);
    // 200 words at 50 ms would take 10 s: the stream must be gone long before.
    let t = std::time::Instant::now();
    while !llm.dropped.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        llm.dropped.load(Ordering::SeqCst),
        "the LLM stream was not dropped"
    );
}

#[tokio::test]
async fn a_slow_request_times_out_with_504() {
    let llm = Arc::new(SlowLlm {
        inner: MockLlm::with_max_tokens(3),
        delay: Duration::from_millis(200),
        dropped: Arc::default(),
        started: Arc::default(),
    });
    let config = ServerConfig {
        request_timeout: Duration::from_millis(300),
        ..keyed()
    };
    let s = start(config, Some(llm)).await;
    let r = s
        .post("/v1/query", json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 504);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "timeout");
}

#[tokio::test]
async fn shutdown_finishes_the_answers_in_flight() {
    let llm = Arc::new(SlowLlm {
        inner: MockLlm::with_max_tokens(6),
        delay: Duration::from_millis(100),
        dropped: Arc::default(),
        started: Arc::default(),
    });
    let mut s = start(keyed(), Some(llm.clone())).await;
    let req = s.post(
        "/v1/chat/completions",
        json!({
            "model": "wonderland", "stream": true,
            "messages": [{"role": "user", "content": "tea"}],
        }),
    );
    let answer = tokio::spawn(async move { req.send().await.unwrap().text().await.unwrap() });
    while llm.started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    s.stop.take().unwrap().send(()).unwrap();
    let body = answer.await.unwrap();
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    let text: String = sse_data(&body)
        .iter()
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(text, "text text text text text text");
    tokio::time::timeout(Duration::from_secs(10), &mut s.done)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        s.client.get(s.url("/healthz")).send().await.is_err(),
        "no new connections after shutdown"
    );
}

#[tokio::test]
async fn metrics_and_the_openapi_document() {
    let s = start(keyed(), mock()).await;
    s.post("/v1/retrieve", json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    s.post(
        "/v1/chat/completions",
        json!({"model": "wonderland", "messages": [{"role": "user", "content": "tea"}]}),
    )
    .send()
    .await
    .unwrap();
    let m = s.get("/metrics").send().await.unwrap();
    assert!(
        m.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let m = m.text().await.unwrap();
    assert!(
        m.contains(
            "ragloom_http_requests_total{route=\"/v1/retrieve\",method=\"POST\",status=\"200\"} 1"
        ),
        "{m}"
    );
    assert!(
        m.contains("ragloom_http_request_duration_seconds_count{route=\"/v1/chat/completions\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("ragloom_llm_tokens_total{kind=\"completion\"} 5"),
        "{m}"
    );
    let doc: Value = s
        .get("/openapi.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["info"]["title"], "ragloom");
    assert!(doc["paths"]["/v1/retrieve"]["post"].is_object());
}

#[tokio::test]
async fn mcp_answers_initialize_over_http() {
    let s = start(keyed(), None).await;
    let r = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(KEY)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    let msg: Value = sse_data(&body)
        .iter()
        .find_map(|d| {
            serde_json::from_str::<Value>(d)
                .ok()
                .filter(|v| v["id"] == 1)
        })
        .unwrap_or_else(|| serde_json::from_str(&body).unwrap());
    assert_eq!(msg["result"]["serverInfo"]["name"], "ragloom");
    assert!(msg["result"]["capabilities"]["tools"].is_object());
    assert!(msg["result"]["capabilities"]["resources"].is_object());
}
