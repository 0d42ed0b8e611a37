//! The server under hostile clients, over loopback: pages of other sites and
//! rebound names, slow and idle connections, floods of requests, sessions
//! and uploads, and malformed requests; each bounded and answered in the
//! error envelope.

#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom::indices::VectorStoreIndex;
use ragloom::{HashEmbedding, Node};
use ragloom_server::{
    IndexView, ServeError, ServedIndex, Server, ServerConfig, Uploads, VectorIndexService,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An index that takes uploads into a folder; its ingest only counts.
#[derive(Debug)]
struct Uploading {
    inner: VectorIndexService,
    uploads: Arc<Folder>,
}

#[derive(Debug)]
struct Folder {
    dir: PathBuf,
    ingests: AtomicUsize,
}

#[async_trait]
impl Uploads for Folder {
    fn dir(&self) -> &Path {
        &self.dir
    }
    async fn ingest(&self) -> Result<Value, ServeError> {
        self.ingests.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"ingested": true}))
    }
}

#[async_trait]
impl ServedIndex for Uploading {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn view(&self) -> Result<Arc<IndexView>, ServeError> {
        self.inner.view().await
    }
    async fn status(&self) -> Result<Value, ServeError> {
        self.inner.status().await
    }
    fn uploads(&self) -> Option<Arc<dyn Uploads>> {
        Some(self.uploads.clone())
    }
}

struct Running {
    addr: String,
    base: String,
    client: reqwest::Client,
    uploads: Arc<Folder>,
    _stop: tokio::sync::oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

async fn start(config: ServerConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let docs = vec![Node::document("The Hatter held a tea party.").with_id("hatter")];
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(16)))
        .await
        .unwrap();
    let uploads = Arc::new(Folder {
        dir: dir.path().join("uploads"),
        ingests: AtomicUsize::new(0),
    });
    let served = Uploading {
        inner: VectorIndexService::new("docs", index, None),
        uploads: uploads.clone(),
    };
    let server = Server::new(config, vec![Arc::new(served)]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = rx.await;
            })
            .await
    });
    Running {
        base: format!("http://{addr}"),
        addr,
        client: reqwest::Client::new(),
        uploads,
        _stop: tx,
        _dir: dir,
    }
}

fn file_form(name: &str, bytes: Vec<u8>) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
    )
}

async fn code(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(json!({}));
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_string(),
    )
}

/// Sends `raw` on a fresh connection and returns what comes back until the
/// server closes it or `wait` passes.
async fn raw(addr: &str, request: &[u8], wait: Duration) -> String {
    let mut sock = TcpStream::connect(addr).await.unwrap();
    sock.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(wait, sock.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the server closes `sock` within `within`.
async fn closed_within(sock: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let end = Instant::now() + within;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        match tokio::time::timeout(left, sock.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn pages_of_other_sites_cannot_write_and_rebound_names_cannot_read() {
    let s = start(ServerConfig::default()).await;
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let evil = format!("evil.example:{port}");
    // The probe's upload: a rebound name, a foreign origin.
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .header("host", &evil)
        .header("origin", format!("http://{evil}"))
        .multipart(file_form("x.txt", b"planted".to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (421, "host_not_allowed".into()));
    // A rebinding page reading answers, every route.
    for path in [
        "/v1/status",
        "/v1/documents",
        "/",
        "/healthz",
        "/v1/models",
        "/openapi.json",
    ] {
        let r = s
            .client
            .get(s.url(path))
            .header("host", &evil)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 421, "{path}");
    }
    let r = s
        .client
        .post(s.url("/v1/query"))
        .header("host", &evil)
        .json(&json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 421);
    // A cross-site page posting to the real address (a "simple" request).
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .header("origin", "http://evil.example")
        .multipart(file_form("x.txt", b"planted".to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (403, "cross_origin".into()));
    let r = s
        .client
        .delete(s.url("/v1/documents/hatter"))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (403, "cross_origin".into()));
    for origin in [
        "null",
        "http://127.0.0.1:1",
        "https://localhost.evil.example",
    ] {
        let r = s
            .client
            .post(s.url("/mcp"))
            .header("origin", origin)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{origin}");
    }
    assert!(!s.uploads.dir.exists(), "nothing was written");
    // The server's own page, and clients that are not browsers, still write.
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .header("origin", &s.base)
        .header("sec-fetch-site", "same-origin")
        .multipart(file_form("mine.txt", b"kept".to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let r = s
        .client
        .post(s.url("/v1/retrieve"))
        .header("host", format!("localhost:{port}"))
        .json(&json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(s.uploads.dir.join("mine.txt").exists());
}

#[tokio::test]
async fn allowed_hosts_and_origins_open_what_they_name() {
    let s = start(ServerConfig {
        allowed_hosts: vec!["docs.internal".into()],
        cors_origins: vec!["https://app.internal".into()],
        ..ServerConfig::default()
    })
    .await;
    let r = s
        .client
        .post(s.url("/v1/retrieve"))
        .header("host", "docs.internal:443")
        .header("origin", "https://app.internal")
        .json(&json!({"query": "tea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = s
        .client
        .get(s.url("/v1/status"))
        .header("host", "other.internal")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 421);
}

#[tokio::test]
async fn slow_headers_idle_connections_and_trickled_bodies_are_cut() {
    let s = start(ServerConfig {
        header_read_timeout: Duration::from_millis(600),
        request_timeout: Duration::from_millis(1200),
        ..ServerConfig::default()
    })
    .await;
    // Headers one byte at a time, never finished.
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut sock = TcpStream::connect(&s.addr).await.unwrap();
        sock.write_all(b"GET /v1/status HTTP/1.1\r\nHo")
            .await
            .unwrap();
        slow.push(sock);
    }
    for sock in &mut slow {
        assert!(
            closed_within(sock, Duration::from_secs(5)).await,
            "a slow header was kept"
        );
    }
    // A kept-alive connection left idle after its answer.
    let mut idle = TcpStream::connect(&s.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = idle.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    assert!(
        closed_within(&mut idle, Duration::from_secs(5)).await,
        "an idle connection was kept"
    );
    // A body sent a byte at a time ends with the request's time limit.
    let mut sock = TcpStream::connect(&s.addr).await.unwrap();
    sock.write_all(
        b"POST /v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    loop {
        let mut b = [0u8; 1024];
        tokio::select! {
            r = sock.read(&mut b) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&b[..n]),
            },
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                if sock.write_all(b" ").await.is_err() {
                    break;
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "the trickle was never cut"
        );
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("\"code\":\"timeout\""), "{answer}");
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_a_free_place() {
    let s = start(ServerConfig {
        max_connections: 4,
        header_read_timeout: Duration::from_millis(800),
        ..ServerConfig::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut sock = TcpStream::connect(&s.addr).await.unwrap();
        sock.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
        held.push(sock);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let answer = raw(
        &s.addr,
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Answered only once the held connections timed out and left.
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn requests_past_a_keys_share_get_429_and_other_keys_still_get_in() {
    let s = start(ServerConfig {
        api_keys: vec!["a".into(), "b".into()],
        max_concurrent_requests: 2,
        ..ServerConfig::default()
    })
    .await;
    // Two uploads whose bodies never finish hold key a's two places.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut sock = TcpStream::connect(&s.addr).await.unwrap();
        sock.write_all(
            b"POST /v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        )
        .await
        .unwrap();
        held.push(sock);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ask = |key: &'static str| {
        s.client
            .post(s.url("/v1/retrieve"))
            .bearer_auth(key)
            .json(&json!({"query": "tea"}))
            .send()
    };
    let r = ask("a").await.unwrap();
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(code(r).await, (429, "too_many_requests".into()));
    assert_eq!(ask("b").await.unwrap().status(), 200);
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ask("a").await.unwrap().status(), 200);
}

async fn mcp_initialize(s: &Running) -> (u16, Option<String>) {
    let r = s
        .client
        .post(s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    let id = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (r.status().as_u16(), id)
}

async fn mcp_ping(s: &Running, session: &str) -> u16 {
    s.client
        .post(s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn an_initialize_flood_keeps_the_newest_sessions_only() {
    let s = start(ServerConfig {
        max_mcp_sessions: 8,
        ..ServerConfig::default()
    })
    .await;
    let mut ids = Vec::new();
    for _ in 0..200 {
        let (status, id) = mcp_initialize(&s).await;
        assert_eq!(status, 200);
        ids.push(id.unwrap());
    }
    assert_eq!(
        mcp_ping(&s, &ids[0]).await,
        404,
        "the oldest session was ended"
    );
    assert_eq!(mcp_ping(&s, &ids[100]).await, 404);
    assert_eq!(
        mcp_ping(&s, &ids[199]).await,
        200,
        "the newest session lives"
    );
}

#[tokio::test]
async fn uploads_stream_to_disk_and_are_bounded_in_flight_and_per_minute() {
    let s = start(ServerConfig {
        max_uploads_in_flight: 1,
        max_upload_bytes_per_minute: 8 * 1024 * 1024,
        ..ServerConfig::default()
    })
    .await;
    // A 6 MB upload sent slowly: its bytes reach the disk while it is sent.
    let boundary = "XBOUNDARYX";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let size = 6 * 1024 * 1024;
    let total = head.len() + size + tail.len();
    let mut sock = TcpStream::connect(&s.addr).await.unwrap();
    sock.write_all(
        format!(
            "POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {total}\r\n\r\n{head}"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let chunk = vec![b'a'; 1024 * 1024];
    for _ in 0..4 {
        sock.write_all(&chunk).await.unwrap();
    }
    let mut on_disk = 0;
    // Up to 10 s: a loaded machine may take its time, a server that holds
    // the body in memory never gets there.
    for _ in 0..500 {
        on_disk = std::fs::read_dir(&s.uploads.dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
                    .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
                    .sum::<u64>()
            })
            .unwrap_or(0);
        if on_disk >= 3 * 1024 * 1024 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        on_disk >= 3 * 1024 * 1024,
        "only {on_disk} bytes on disk mid-upload"
    );
    // A second upload while this one runs: no place.
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .multipart(file_form("other.txt", b"x".to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (429, "too_many_requests".into()));
    for _ in 0..2 {
        sock.write_all(&chunk).await.unwrap();
    }
    sock.write_all(tail.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = sock.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert_eq!(
        std::fs::metadata(s.uploads.dir.join("big.txt"))
            .unwrap()
            .len(),
        size as u64
    );
    // 6 of the minute's 8 MB are taken: 3 more MB must wait.
    let r = s
        .client
        .post(s.url("/v1/documents"))
        .multipart(file_form("third.txt", vec![b'b'; 3 * 1024 * 1024]))
        .send()
        .await
        .unwrap();
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(code(r).await, (429, "too_many_requests".into()));
    assert!(!s.uploads.dir.join("third.txt").exists());
    let leftovers = std::fs::read_dir(&s.uploads.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .count();
    assert_eq!(leftovers, 0, "a refused upload leaves no temporary file");
}

#[tokio::test]
async fn every_error_is_in_the_envelope() {
    let s = start(ServerConfig::default()).await;
    let long = format!("/v1/documents?cursor={}", "9".repeat(20_000));
    let cases: Vec<(reqwest::RequestBuilder, u16)> = vec![
        (s.client.get(s.url("/v1/documents?limit=lots")), 400),
        (s.client.get(s.url("/v1/documents?limit=-1")), 400),
        (
            s.client
                .request(reqwest::Method::OPTIONS, s.url("/v1/query")),
            405,
        ),
        (s.client.put(s.url("/v1/query")), 405),
        (s.client.get(s.url(&long)), 414),
        (
            s.client
                .post(s.url("/mcp"))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body("{not json"),
            400,
        ),
        (
            s.client
                .post(s.url("/mcp"))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "text/plain")
                .body("hi"),
            415,
        ),
        (
            s.client
                .post(s.url("/v1/documents"))
                .header("content-type", "text/plain")
                .body("hi"),
            400,
        ),
        (s.client.get(s.url("/v1/nope")), 404),
        (s.client.delete(s.url("/v1/jobs/x")), 405),
    ];
    for (req, status) in cases {
        let r = req.send().await.unwrap();
        let got = r.status().as_u16();
        let ctype = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        let body = r.text().await.unwrap();
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{got}: {body}"));
        assert!(got == status, "{got} (wanted {status}): {body}");
        assert!(
            ctype.is_some_and(|c| c.starts_with("application/json")),
            "{body}"
        );
        assert!(
            v["error"]["code"].as_str().is_some_and(|c| !c.is_empty()),
            "{body}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_client_that_reads_nothing_loses_its_connection() {
    let s = start(ServerConfig {
        max_connections: 1,
        send_timeout: Duration::from_millis(500),
        ..ServerConfig::default()
    })
    .await;
    // Pipelined requests whose answers are never read fill the socket.
    let mut greedy = TcpStream::connect(&s.addr).await.unwrap();
    let one = b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let many: Vec<u8> = one.iter().copied().cycle().take(one.len() * 2000).collect();
    let _ = tokio::time::timeout(Duration::from_secs(2), greedy.write_all(&many)).await;
    let started = Instant::now();
    let answer = raw(
        &s.addr,
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "the only place stayed taken: {answer:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    drop(greedy);
}

#[tokio::test]
async fn event_streams_do_not_hold_request_places() {
    let s = start(ServerConfig {
        max_concurrent_requests: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut streams = Vec::new();
    for _ in 0..4 {
        let (_, id) = mcp_initialize(&s).await;
        let r = s
            .client
            .get(s.url("/mcp"))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", id.unwrap())
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        streams.push(r);
    }
    let r = s.client.get(s.url("/v1/status")).send().await.unwrap();
    assert_eq!(r.status(), 200, "four open streams took the two places");
}

#[tokio::test]
async fn ambiguous_hosts_are_refused() {
    let s = start(ServerConfig::default()).await;
    for request in [
        "GET /v1/status HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        "GET http://evil.example/v1/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    ] {
        let answer = raw(&s.addr, request.as_bytes(), Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{request:?}: {answer}");
        assert!(answer.contains("\"param\":\"host\""), "{answer}");
    }
    let answer = raw(
        &s.addr,
        b"GET /healthz HTTP/1.0\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"),
        "{answer}"
    );
}
