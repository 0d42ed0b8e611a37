//! The server's memory and descriptors under hostile clients, each scenario in
//! a process of its own: MCP `initialize` floods with and without the session
//! cap, slow-header floods with and without the connection bounds, and
//! concurrent large uploads. `cargo xtask bench --serve` runs it in release.

use async_trait::async_trait;
use ragloom::indices::VectorStoreIndex;
use ragloom::{HashEmbedding, Node};
use ragloom_server::{
    IndexView, ServeError, ServedIndex, Server, ServerConfig, Uploads, VectorIndexService,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

#[derive(Debug)]
struct Folder(PathBuf);

#[async_trait]
impl Uploads for Folder {
    fn dir(&self) -> &Path {
        &self.0
    }
    async fn ingest(&self) -> Result<Value, ServeError> {
        Ok(json!({}))
    }
}

/// An index whose uploads go to a folder and are not ingested: the bench
/// measures receiving them.
#[derive(Debug)]
struct Served(VectorIndexService, Arc<Folder>);

#[async_trait]
impl ServedIndex for Served {
    fn name(&self) -> &str {
        self.0.name()
    }
    async fn view(&self) -> Result<Arc<IndexView>, ServeError> {
        self.0.view().await
    }
    async fn status(&self) -> Result<Value, ServeError> {
        self.0.status().await
    }
    fn uploads(&self) -> Option<Arc<dyn Uploads>> {
        Some(self.1.clone())
    }
}

/// A line of /proc/self/status, in MB.
fn status_mb(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

async fn start(config: ServerConfig, dir: &Path) -> String {
    let docs = vec![Node::document("The Hatter held a tea party.").with_id("hatter")];
    let index = VectorStoreIndex::from_documents(&docs, Arc::new(HashEmbedding::new(16)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let served = Served(
        VectorIndexService::new("docs", index, None),
        Arc::new(Folder(dir.join("uploads"))),
    );
    let server = Server::new(config, vec![Arc::new(served)]).unwrap_or_else(|e| panic!("{e}"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    addr
}

async fn sessions(capped: bool, n: usize) -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = if capped {
        ServerConfig::default()
    } else {
        // main's behaviour before the cap: rmcp's default, 300 s, no count.
        ServerConfig {
            max_mcp_sessions: usize::MAX,
            ..ServerConfig::default()
        }
    };
    let addr = start(config, dir.path()).await;
    let client = reqwest::Client::new();
    let before = status_mb("VmRSS");
    let t = Instant::now();
    for _ in 0..n {
        let r = client
            .post(format!("http://{addr}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "flood", "version": "1"}}}),
            )
            .send()
            .await;
        if let Ok(r) = r {
            let _ = r.bytes().await;
        }
    }
    let after = status_mb("VmRSS");
    format!(
        "mcp initialize x{n} ({}): RSS {before:.0} -> {after:.0} MB, {:.1} KB per initialize, {:.1} s",
        if capped { "capped at 256" } else { "no cap" },
        (after - before) * 1024.0 / n as f64,
        t.elapsed().as_secs_f64()
    )
}

async fn slow_headers(bounded: bool, n: usize) -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = if bounded {
        ServerConfig {
            header_read_timeout: Duration::from_secs(2),
            ..ServerConfig::default()
        }
    } else {
        ServerConfig {
            header_read_timeout: Duration::from_secs(3600),
            max_connections: usize::MAX >> 4,
            ..ServerConfig::default()
        }
    };
    let addr = start(config, dir.path()).await;
    let base = open_fds();
    let mut held = Vec::new();
    for _ in 0..n {
        if let Ok(mut s) = tokio::net::TcpStream::connect(&addr).await {
            let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHo").await;
            held.push(s);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let at_once = open_fds().saturating_sub(base + held.len());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = open_fds().saturating_sub(base + held.len());
    format!(
        "{n} half-sent requests ({}): server-side connections after 0.5 s {at_once}, after 3.5 s {later}",
        if bounded {
            "header timeout 2 s, 512 connections"
        } else {
            "no bounds"
        }
    )
}

static MEGABYTE: [u8; 1 << 20] = [b'a'; 1 << 20];

async fn uploads(n: usize, mb: usize) -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = ServerConfig {
        max_uploads_in_flight: n,
        max_upload_bytes_per_minute: (n * mb * 2 * 1024 * 1024) as u64,
        ..ServerConfig::default()
    };
    let addr = start(config, dir.path()).await;
    let before = status_mb("VmRSS");
    let client = reqwest::Client::new();
    let t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..n {
        let (client, addr) = (client.clone(), addr.clone());
        tasks.push(tokio::spawn(async move {
            // Sent from one static megabyte, so the clients hold no copies.
            let chunks = futures::stream::iter(
                (0..mb).map(|_| Ok::<_, std::io::Error>(axum::body::Bytes::from_static(&MEGABYTE))),
            );
            let part = reqwest::multipart::Part::stream_with_length(
                reqwest::Body::wrap_stream(chunks),
                (mb * MEGABYTE.len()) as u64,
            )
            .file_name(format!("f{i}.txt"));
            client
                .post(format!("http://{addr}/v1/documents"))
                .multipart(reqwest::multipart::Form::new().part("file", part))
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }));
    }
    let mut ok = 0;
    for t in tasks {
        if t.await.unwrap_or(0) == 202 {
            ok += 1;
        }
    }
    format!(
        "{n} uploads of {mb} MB at once: {ok} accepted in {:.1} s; RSS {before:.0} MB before, peak {:.0} MB (clients included)",
        t.elapsed().as_secs_f64(),
        status_mb("VmHWM"),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(scenario) = args
        .iter()
        .position(|a| a == "--scenario")
        .and_then(|i| args.get(i + 1))
    {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let line = rt.block_on(async {
            match scenario.as_str() {
                "sessions-capped" => sessions(true, 5000).await,
                "sessions-uncapped" => sessions(false, 5000).await,
                "slow-bounded" => slow_headers(true, 400).await,
                "slow-unbounded" => slow_headers(false, 400).await,
                "uploads" => uploads(16, 60).await,
                other => format!("no scenario {other}"),
            }
        });
        println!("{line}");
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let me = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "hostile clients, one process per scenario, load {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for s in [
        "sessions-uncapped",
        "sessions-capped",
        "slow-unbounded",
        "slow-bounded",
        "uploads",
    ] {
        match std::process::Command::new(&me)
            .args(["--scenario", s])
            .output()
        {
            Ok(o) => print!("{}", String::from_utf8_lossy(&o.stdout)),
            Err(e) => println!("{s}: {e}"),
        }
    }
}
