//! `ragloom serve` under load: many clients over the benchmark corpus, the
//! latency and throughput of `/v1/retrieve` and of chat, and the server's memory.
//!
//! Whole processes, as a user runs them: the release binary ingests the corpus
//! (BM25, the embedded store), then serves it with an OpenAI-compatible mock
//! LLM that answers at once (so chat's figures are the server's own work);
//! this process is the clients and the mock. With `--python`, the same load
//! then goes to the Python reference, `benches/python/llamaindex_serve.py`
//! (FastAPI and LlamaIndex over the same corpus, the same mock LLM). Run by
//! `cargo xtask bench --serve`:
//!
//! ```text
//! cargo bench -p ragloom-cli --bench serve_load -- --ragloom target/release/ragloom \
//!     --corpus /tmp/ragloom-store-bench/corpus-2000f-50mb-s42 [--python PY]
//! ```
//!
//! Phases: retrieve, chat and streamed chat, each from every client at once,
//! first 1,000 requests in all (the warm-up), then 9,000 more; the server's
//! resident memory is read after the warm-up and at the end, and the run fails
//! if ragloom's grew by more than 10%.

#![allow(clippy::unwrap_used)]

use axum::Json;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What every mock answer says: 40 words, streamed a word at a time.
const ANSWER: &str = "The passages say what the question asks about, and this answer \
stands for a model's reply of forty words, long enough that streaming it costs the \
server forty chunks and counting it costs a real tokenizer pass over every word.";

/// Questions drawn from the corpus's vocabulary, so each retrieval scores real postings.
const QUESTIONS: &[&str] = &[
    "What did the author work on before college?",
    "How does the storage engine recover after a crash?",
    "Who wrote about the history of the printing press?",
    "Why do rivers change their course over time?",
    "What is the role of the committee in the proposal?",
    "When was the bridge across the river finished?",
    "What happened to the ship during the storm?",
    "Which methods measure the speed of light?",
    "How are the accounts kept by the treasurer?",
    "What did the queen say to the gardeners?",
    "Where did the travellers stop for the night?",
    "What makes the garden grow in early spring?",
];

struct Args {
    ragloom: PathBuf,
    corpus: PathBuf,
    work: PathBuf,
    clients: usize,
    requests: usize,
    /// The Python reference's interpreter; its rows are skipped without one.
    python: Option<PathBuf>,
}

fn args() -> Args {
    let mut a = Args {
        ragloom: PathBuf::new(),
        corpus: PathBuf::new(),
        work: std::env::temp_dir().join("ragloom-store-bench"),
        clients: 200,
        requests: 10_000,
        python: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--ragloom" => a.ragloom = value().into(),
            "--corpus" => a.corpus = value().into(),
            "--work" => a.work = value().into(),
            "--clients" => a.clients = value().parse().unwrap(),
            "--requests" => a.requests = value().parse().unwrap(),
            "--python" => a.python = Some(value().into()),
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(
        a.ragloom.is_file(),
        "--ragloom must name the release binary"
    );
    assert!(a.corpus.is_dir(), "--corpus must name the corpus folder");
    a
}

fn main() {
    let a = args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Err(e) = rt.block_on(run(&a)) {
        eprintln!("serve bench failed: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------- the mock LLM

fn chunk(object: &str, choice: Value) -> String {
    let body = json!({
        "id": "mock", "object": object, "created": 0, "model": "mock",
        "choices": [choice],
    });
    format!("data: {body}\n\n")
}

/// A reply in the shape of `/v1/chat/completions` or `/v1/completions`, whole or as SSE.
fn reply(chat: bool, body: &Value) -> Response {
    let words: Vec<String> = ANSWER.split_inclusive(' ').map(str::to_owned).collect();
    let usage = json!({"prompt_tokens": 100, "completion_tokens": words.len(), "total_tokens": 100 + words.len()});
    if body["stream"].as_bool() != Some(true) {
        let choice = if chat {
            json!({"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop", "logprobs": null})
        } else {
            json!({"index": 0, "text": ANSWER, "finish_reason": "stop", "logprobs": null})
        };
        let object = if chat {
            "chat.completion"
        } else {
            "text_completion"
        };
        return Json(json!({
            "id": "mock", "object": object, "created": 0, "model": "mock",
            "choices": [choice], "usage": usage,
        }))
        .into_response();
    }
    let mut sse = String::new();
    for w in &words {
        if chat {
            sse += &chunk(
                "chat.completion.chunk",
                json!({"index": 0, "delta": {"role": "assistant", "content": w}, "finish_reason": null}),
            );
        } else {
            sse += &chunk(
                "text_completion",
                json!({"index": 0, "text": w, "finish_reason": null, "logprobs": null}),
            );
        }
    }
    let last = if chat {
        json!({"index": 0, "delta": {}, "finish_reason": "stop"})
    } else {
        json!({"index": 0, "text": "", "finish_reason": "stop", "logprobs": null})
    };
    let object = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    sse += &chunk(object, last);
    sse += "data: [DONE]\n\n";
    ([("content-type", "text/event-stream")], sse).into_response()
}

async fn mock_llm() -> String {
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            post(|Json(b): Json<Value>| async move { reply(true, &b) }),
        )
        .route(
            "/v1/completions",
            post(|Json(b): Json<Value>| async move { reply(false, &b) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

// ---------------------------------------------------------------- the server

/// A running `ragloom serve`, killed on drop.
struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// The server's resident and peak resident memory in MB (10^6 bytes).
    fn memory_mb(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb = |key: &str| -> f64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        (kb("VmRSS:") * 1024.0 / 1e6, kb("VmHWM:") * 1024.0 / 1e6)
    }
}

fn base_command(a: &Args, llm: &str) -> Command {
    let mut c = Command::new(&a.ragloom);
    // Only these flags steer it: nothing from the caller's environment.
    for (k, _) in std::env::vars() {
        if k.starts_with("RAGLOOM_") || k == "OPENAI_API_KEY" || k == "OLLAMA_HOST" {
            c.env_remove(k);
        }
    }
    c.arg("--persist-dir")
        .arg(a.work.join("ragloom-store"))
        .args(["--embed", "none", "--llm", "openai-like", "--model", "mock"])
        .args(["--api-base", llm]);
    c
}

fn ingest(a: &Args, llm: &str) -> Result<(), String> {
    let out = base_command(a, llm)
        .arg("ingest")
        .arg(&a.corpus)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("ragloom ingest: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ragloom ingest failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

fn serve(a: &Args, llm: &str) -> Result<Served, String> {
    let mut child = base_command(a, llm)
        .args(["serve", "--port", "0", "--insecure-no-auth"])
        .arg("--files")
        .arg(format!("corpus={}", a.corpus.display()))
        // The clients wait for the mock LLM, never for a 429.
        .args(["--max-concurrent-llm", &a.clients.to_string()])
        .args(["--max-queued-llm", &a.clients.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("ragloom serve: {e}"))?;
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.strip_prefix("ragloom serving at ") {
                    break rest
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string();
                }
            }
            _ => return Err("ragloom serve ended before it listened".into()),
        }
    };
    // Keep reading its log so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    Ok(Served { child, base })
}

// ---------------------------------------------------------------- the clients

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Retrieve,
    Chat,
    ChatStream,
}

/// Latencies of one phase's answered requests, and its failures.
struct Phase {
    wall: Duration,
    latencies: Vec<Duration>,
    first_token: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
}

/// An error with its causes (reqwest's own message is only the outermost).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text += &format!(": {s}");
        source = s.source();
    }
    text
}

async fn one(
    http: &reqwest::Client,
    base: &str,
    kind: Kind,
    n: usize,
) -> Result<Option<Duration>, String> {
    let q = QUESTIONS[n % QUESTIONS.len()];
    let started = Instant::now();
    let (path, body) = match kind {
        Kind::Retrieve => ("/v1/retrieve", json!({"query": q, "top_k": 4})),
        Kind::Chat | Kind::ChatStream => (
            "/v1/chat/completions",
            json!({"model": "corpus", "messages": [{"role": "user", "content": q}],
                   "stream": kind == Kind::ChatStream}),
        ),
    };
    let mut r = http
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{path}: {}", chain(&e)))?;
    if !r.status().is_success() {
        let status = r.status();
        return Err(format!(
            "{path}: {status}: {}",
            r.text().await.unwrap_or_default()
        ));
    }
    let mut first = None;
    let mut all = Vec::new();
    while let Some(bytes) = r
        .chunk()
        .await
        .map_err(|e| format!("{path}: {}", chain(&e)))?
    {
        if first.is_none() && kind == Kind::ChatStream && has_text(&bytes) {
            first = Some(started.elapsed());
        }
        all.extend_from_slice(&bytes);
    }
    let text = String::from_utf8_lossy(&all);
    let ok = match kind {
        Kind::Retrieve => text.contains("\"node_id\""),
        Kind::Chat => text.contains("chat.completion") && text.contains("\"sources\""),
        Kind::ChatStream => text.trim_end().ends_with("data: [DONE]"),
    };
    if !ok {
        return Err(format!(
            "{path}: unexpected reply: {}",
            &text[..text.len().min(300)]
        ));
    }
    Ok(first)
}

/// `total` requests of `kinds` (in turn) from `clients` concurrent clients.
async fn phase(
    http: &reqwest::Client,
    base: &str,
    clients: usize,
    total: usize,
    kinds: &[Kind],
) -> Result<Phase, String> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, base, next, kinds) =
            (http.clone(), base.to_string(), next.clone(), kinds.to_vec());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut first = Vec::new();
            let mut errors = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    return (lat, first, errors);
                }
                let t = Instant::now();
                match one(&http, &base, kinds[n % kinds.len()], n).await {
                    Ok(f) => {
                        first.extend(f);
                        lat.push(t.elapsed());
                    }
                    Err(e) => errors.push(e),
                }
            }
        }));
    }
    let mut p = Phase {
        wall: Duration::ZERO,
        latencies: Vec::new(),
        first_token: Vec::new(),
        errors: 0,
        first_error: None,
    };
    for t in tasks {
        let (lat, first, errors) = t.await.map_err(|e| e.to_string())?;
        p.latencies.extend(lat);
        p.first_token.extend(first);
        p.errors += errors.len();
        if p.first_error.is_none() {
            p.first_error = errors.into_iter().next();
        }
    }
    p.wall = started.elapsed();
    Ok(p)
}

fn percentile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn row(name: &str, p: &mut Phase) -> String {
    p.latencies.sort();
    p.first_token.sort();
    let first = if p.first_token.is_empty() {
        "—".to_string()
    } else {
        format!(
            "{:.1} / {:.1}",
            percentile(&p.first_token, 0.5),
            percentile(&p.first_token, 0.99)
        )
    };
    format!(
        "| {name} | {} | {} | {:.1} | {:.1} | {:.1} | {first} |",
        p.latencies.len(),
        p.errors,
        percentile(&p.latencies, 0.5),
        percentile(&p.latencies, 0.99),
        p.latencies.len() as f64 / p.wall.as_secs_f64(),
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// What one server did under the load.
struct Figures {
    retrieve: Phase,
    chat: Phase,
    stream: Phase,
    rss_start: f64,
    rss_warm: f64,
    rss_end: f64,
    peak: f64,
}

async fn load(a: &Args, server: &Served) -> Result<Figures, String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(a.clients)
        // Below uvicorn's 5 s keep-alive: a connection the server is closing is never reused.
        .pool_idle_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(300))
        .build()
        .map_err(|e| e.to_string())?;
    let base = server.base.as_str();
    let (rss_start, _) = server.memory_mb();
    // The warm-up is the measured load in small: each kind of request in turn
    // from every client, so that what is compared after it is growth, not the
    // first time 200 chats are in flight at once.
    let warm = a.requests / 10;
    let split = |n: usize| (n / 2, n / 4, n - n / 2 - n / 4);
    let (w_retrieve, w_chat, w_stream) = split(warm);
    eprintln!(
        "  warm-up: {w_retrieve} retrieve, {w_chat} chat, {w_stream} streamed chat from {} clients ...",
        a.clients
    );
    for (n, kind, name) in [
        (w_retrieve, Kind::Retrieve, "retrieve"),
        (w_chat, Kind::Chat, "chat"),
        (w_stream, Kind::ChatStream, "streamed chat"),
    ] {
        let p = phase(&http, base, a.clients, n, &[kind]).await?;
        report(name, &p, server);
    }
    let (rss_warm, _) = server.memory_mb();
    let (n_retrieve, n_chat, n_stream) = split(a.requests - warm);
    eprintln!("  measured: {n_retrieve} retrieve, {n_chat} chat, {n_stream} streamed chat ...");
    let retrieve = phase(&http, base, a.clients, n_retrieve, &[Kind::Retrieve]).await?;
    report("retrieve", &retrieve, server);
    let chat = phase(&http, base, a.clients, n_chat, &[Kind::Chat]).await?;
    report("chat", &chat, server);
    let stream = phase(&http, base, a.clients, n_stream, &[Kind::ChatStream]).await?;
    report("streamed chat", &stream, server);
    let (rss_end, peak) = server.memory_mb();
    Ok(Figures {
        retrieve,
        chat,
        stream,
        rss_start,
        rss_warm,
        rss_end,
        peak,
    })
}

/// One phase's outcome on stderr, with the server's memory after it.
fn report(name: &str, p: &Phase, server: &Served) {
    eprintln!(
        "    {name}: {} answered, {} failed in {:.1} s; server RSS {:.1} MB{}",
        p.latencies.len(),
        p.errors,
        p.wall.as_secs_f64(),
        server.memory_mb().0,
        p.first_error
            .as_deref()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );
}

/// The Python reference server over the store bench's persisted LlamaIndex
/// store (made here when that bench has not run).
fn serve_python(a: &Args, python: &Path, llm: &str) -> Result<Served, String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python");
    let store = a.work.join("python-store");
    if !store.join("bm25").is_dir() {
        eprintln!("ingesting with Python LlamaIndex ...");
        let ok = Command::new(python)
            .arg(here.join("llamaindex_ingest.py"))
            .args(["ingest".as_ref(), a.corpus.as_os_str(), store.as_os_str()])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?
            .success();
        if !ok {
            return Err("llamaindex_ingest.py failed".into());
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let child = Command::new(python)
        .arg(here.join("llamaindex_serve.py"))
        .arg(&store)
        .arg(port.to_string())
        .arg(llm)
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("llamaindex_serve.py: {e}"))?;
    let mut served = Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = served.child.try_wait() {
            return Err(format!("llamaindex_serve.py ended: {status}"));
        }
        if Instant::now() > deadline {
            return Err("llamaindex_serve.py did not listen within 120 s".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(served)
}

fn print_table(a: &Args, ours: &mut Figures, theirs: Option<&mut Figures>) {
    let warm = a.requests / 10;
    println!("| | answered | failed | p50 ms | p99 ms | per second | first token p50 / p99 ms |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    let mut rows = vec![("ragloom", ours)];
    if let Some(t) = theirs {
        rows.push(("Python", t));
    }
    for which in [
        "`POST /v1/retrieve` (top 4)",
        "chat, `stream: false`",
        "chat, `stream: true`",
    ] {
        for (name, f) in rows.iter_mut() {
            let p = match which.as_bytes()[0] {
                b'`' => &mut f.retrieve,
                _ if which.contains("false") => &mut f.chat,
                _ => &mut f.stream,
            };
            println!("{}", row(&format!("{which}, {name}"), p));
        }
    }
    println!();
    println!(
        "| server memory (RSS), MB | at start | after {warm} requests | after {} | ratio | peak |",
        a.requests
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, f) in rows {
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.3}× | {:.1} |",
            f.rss_start,
            f.rss_warm,
            f.rss_end,
            f.rss_end / f.rss_warm,
            f.peak
        );
    }
}

async fn run(a: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&a.work).map_err(|e| e.to_string())?;
    let llm = mock_llm().await;
    // The store bench's index when it ran first (then this is an unchanged re-ingest).
    eprintln!("ingesting {} ...", a.corpus.display());
    ingest(a, &llm)?;
    let load_before = load_average();
    eprintln!("ragloom serve:");
    let mut ours = {
        let server = serve(a, &llm)?;
        load(a, &server).await?
    };
    let mut theirs = None;
    if let Some(py) = &a.python {
        eprintln!("Python (FastAPI + LlamaIndex):");
        let server = serve_python(a, py, &llm)?;
        theirs = Some(load(a, &server).await?);
    }
    let load_after = load_average();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "## ragloom serve under load — {} clients, {}",
        a.clients,
        a.corpus.display()
    );
    println!();
    println!(
        "BM25 over the embedded store. {cores} cores; load average {load_before} before, \
         {load_after} after. Clients, mock LLM and server share the machine."
    );
    println!();
    print_table(a, &mut ours, theirs.as_mut());
    let failed = ours.retrieve.errors + ours.chat.errors + ours.stream.errors;
    if failed > 0 {
        return Err(format!("ragloom serve failed {failed} requests"));
    }
    let ratio = ours.rss_end / ours.rss_warm;
    if ratio > 1.1 {
        return Err(format!(
            "ragloom serve's memory grew {ratio:.3}x between {} and {} requests (the target is at most 1.1x)",
            a.requests / 10,
            a.requests
        ));
    }
    Ok(())
}

/// Whether an SSE piece carries a delta with text (the role chunk carries none).
fn has_text(bytes: &[u8]) -> bool {
    const KEY: &[u8] = b"\"content\":";
    let mut rest = bytes;
    while let Some(at) = rest.windows(KEY.len()).position(|w| w == KEY) {
        rest = &rest[at + KEY.len()..];
        let value = rest.strip_prefix(b" ").unwrap_or(rest);
        if value.starts_with(b"\"") && value.get(1).is_some_and(|&c| c != b'"') {
            return true;
        }
    }
    false
}
