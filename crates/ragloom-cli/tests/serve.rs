//! `ragloom serve` and `ragloom mcp` end to end: the official Python clients
//! (openai, mcp) against the binary, uploads and deletions, an ingest by
//! another process seen without a restart, and queries under an ingest.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ragloom, ragloom_process};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "serve-test-key";

/// A running `ragloom serve`, killed on drop.
struct Served {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(home: &Path, args: &[&str]) -> Served {
    let mut child = ragloom_process(home)
        .args(["serve", "--port", "0", "--api-key", KEY])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = Arc::new(Mutex::new(String::new()));
    let base = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("serve ended: {}", log.lock().unwrap()))
            .unwrap();
        {
            let mut l = log.lock().unwrap();
            l.push_str(&line);
            l.push('\n');
        }
        if let Some(rest) = line.strip_prefix("ragloom serving at ") {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let mut l = sink.lock().unwrap();
            l.push_str(&line);
            l.push('\n');
        }
    });
    Served { child, base, log }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

fn folder(home: &Path, files: &[(&str, &str)]) -> PathBuf {
    let data = home.join("docs");
    std::fs::create_dir_all(&data).unwrap();
    for (name, text) in files {
        std::fs::write(data.join(name), text).unwrap();
    }
    data
}

const ALICE: &str = "Alice was beginning to get very tired of sitting by her sister.\nThe White Rabbit took a watch out of its waistcoat pocket.\n";
const HATTER: &str = "The Mad Hatter held a tea party with the March Hare.\n";

fn ingest(home: &Path, data: &Path) {
    ragloom(home).arg("ingest").arg(data).assert().success();
}

/// A home whose `docs/` folder holds `files`, ingested.
fn ingested(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let data = folder(home.path(), files);
    ingest(home.path(), &data);
    (home, data)
}

/// The Python of `.ci/setup/python-clients.sh`; `None` (after saying so) outside CI.
fn clients_python() -> Option<String> {
    match std::env::var("RAGLOOM_TEST_CLIENTS_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_CLIENTS_PYTHON is unset: .ci/setup/python-clients.sh should have installed the clients"
            );
            eprintln!(
                "skipped: RAGLOOM_TEST_CLIENTS_PYTHON is unset (source .ci/setup/python-clients.sh)"
            );
            None
        }
    }
}

fn script(name: &str) -> String {
    format!(
        "{}/../ragloom-server/tests/python/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run_python(py: &str, args: &[&str], envs: &[(&str, &str)]) {
    let out = std::process::Command::new(py)
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{args:?} failed:\n{text}");
    eprintln!("{text}");
}

#[test]
fn the_official_openai_and_mcp_clients_work_against_serve_and_mcp() {
    let Some(py) = clients_python() else { return };
    let (home, data) = ingested(&[("alice.txt", ALICE), ("hatter.txt", HATTER)]);
    let s = serve(
        home.path(),
        &["--files", &format!("wonderland={}", data.display())],
    );
    run_python(
        &py,
        &[
            &script("openai_client.py"),
            &format!("{}/v1", s.base),
            "wonderland",
            KEY,
            "Who took a watch out of its pocket?",
        ],
        &[],
    );
    run_python(
        &py,
        &[
            &script("mcp_client.py"),
            "http",
            &format!("{}/mcp", s.base),
            KEY,
        ],
        &[("RAGLOOM_TEST_QUESTION", "Who held a tea party?")],
    );
    drop(s);
    // Over stdio: the same checks, the server a child of the client.
    let bin = assert_cmd::cargo::cargo_bin("ragloom");
    let persist = home.path().join("store");
    run_python(
        &py,
        &[
            &script("mcp_client.py"),
            "stdio",
            bin.to_str().unwrap(),
            "--persist-dir",
            persist.to_str().unwrap(),
            "mcp",
            "--files",
            data.to_str().unwrap(),
        ],
        &[("RAGLOOM_TEST_QUESTION", "Who held a tea party?")],
    );
}

#[test]
fn the_official_openai_client_chats_through_a_live_llm() {
    let Some(py) = clients_python() else { return };
    let (Ok(base), Ok(model)) = (
        std::env::var("RAGLOOM_TEST_OPENAI_BASE_URL"),
        std::env::var("RAGLOOM_TEST_OPENAI_MODEL"),
    ) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the LLM server of .ci/setup/llm-server.sh is not running"
        );
        eprintln!("skipped: RAGLOOM_TEST_OPENAI_BASE_URL is unset");
        return;
    };
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let s = serve(
        home.path(),
        &[
            "--llm",
            "openai-like",
            "--api-base",
            &base,
            "--model",
            &model,
            // Three generations on one loaded core: more than the default 120 s may pass.
            "--request-timeout",
            "600",
            "--files",
            data.to_str().unwrap(),
        ],
    );
    let name = data.file_name().unwrap().to_str().unwrap().to_string();
    run_python(
        &py,
        &[
            &script("openai_client.py"),
            &format!("{}/v1", s.base),
            &name,
            KEY,
            "What did the White Rabbit take out of its pocket?",
        ],
        &[],
    );
}

#[test]
fn mcp_over_stdio_writes_nothing_but_frames_to_stdout() {
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let mut child = ragloom_process(home.path())
        .args(["--verbose", "mcp", "--files"])
        .arg(&data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "watch", "top_k": 1}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"top_k": "x"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/list"}),
    ];
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for r in &requests {
        writeln!(stdin, "{r}").unwrap();
        stdin.flush().unwrap();
        if r.get("id").is_some() {
            // Every line is a JSON-RPC frame; notifications may come between answers.
            loop {
                let line = out.next().unwrap().unwrap();
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a frame ({e}): {line}"));
                assert_eq!(v["jsonrpc"], "2.0", "{line}");
                if v.get("id") == r.get("id") {
                    answers.push(v);
                    break;
                }
            }
        }
    }
    drop(stdin);
    for line in out {
        let line = line.unwrap();
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a frame ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0");
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "ragloom");
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 3);
    let found = &answers[2]["result"];
    assert_eq!(found["isError"], false);
    assert_eq!(found["structuredContent"]["nodes"][0]["file"], "alice.txt");
    assert_eq!(found["structuredContent"]["nodes"][0]["line"], 2);
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert_eq!(
        answers[4]["result"]["resources"].as_array().unwrap().len(),
        1
    );
    // The verbose logs went to stderr.
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!err.is_empty(), "--verbose wrote nothing to stderr");
}

async fn get_json(c: &reqwest::Client, url: &str) -> Value {
    let r = c.get(url).bearer_auth(KEY).send().await.unwrap();
    assert!(r.status().is_success(), "{url}: {}", r.status());
    r.json().await.unwrap()
}

async fn wait_job(c: &reqwest::Client, base: &str, id: &str) -> Value {
    let t = Instant::now();
    loop {
        let j = get_json(c, &format!("{base}/v1/jobs/{id}")).await;
        if j["state"] == "succeeded" || j["state"] == "failed" {
            return j;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "job stuck: {j}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn retrieve(c: &reqwest::Client, base: &str, q: &str, k: usize) -> Vec<Value> {
    let r = c
        .post(format!("{base}/v1/retrieve"))
        .bearer_auth(KEY)
        .json(&json!({"query": q, "top_k": k}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    body["nodes"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_ingest_survive_other_ingests_and_delete() {
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let s = serve(home.path(), &["--files", data.to_str().unwrap()]);
    let c = client();
    let base = &s.base;
    // A hostile name is reduced to its last part, inside the uploads folder.
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(
            b"The Cheshire Cat grinned from the branches of a tree.\n".to_vec(),
        )
        .file_name("../../../escape.txt"),
    );
    let r = c
        .post(format!("{base}/v1/documents"))
        .bearer_auth(KEY)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let accepted: Value = r.json().await.unwrap();
    assert_eq!(accepted["files"], json!(["escape.txt"]));
    let job = wait_job(&c, base, accepted["job_id"].as_str().unwrap()).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert!(!home.path().join("escape.txt").exists() && !data.join("escape.txt").exists());
    let hits = retrieve(&c, base, "Cheshire Cat grinned", 1).await;
    assert_eq!(hits[0]["file"], "uploads/escape.txt", "{hits:?}");

    // Another process ingests the folder: the upload stays, and the server
    // sees the new file without a restart.
    std::fs::write(data.join("hatter.txt"), HATTER).unwrap();
    ingest(home.path(), &data);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let hits = retrieve(&c, base, "Mad Hatter tea party", 1).await;
    assert_eq!(hits[0]["file"], "hatter.txt", "{hits:?}");
    let docs = get_json(&c, &format!("{base}/v1/documents")).await;
    let docs = docs["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 3, "{docs:?}");
    let upload = docs.iter().find(|d| d["uploaded"] == true).unwrap();
    let folder_doc = docs.iter().find(|d| d["file"] == "alice.txt").unwrap();

    // Only uploads can be deleted here.
    let id = folder_doc["id"].as_str().unwrap();
    let r = c
        .delete(format!("{base}/v1/documents/{id}"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "not_uploaded"
    );
    let id = upload["id"].as_str().unwrap();
    let r = c
        .delete(format!("{base}/v1/documents/{id}"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let job = wait_job(
        &c,
        base,
        r.json::<Value>().await.unwrap()["job_id"].as_str().unwrap(),
    )
    .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let hits = retrieve(&c, base, "Cheshire Cat grinned", 3).await;
    assert!(
        hits.iter().all(|h| h["file"] != "uploads/escape.txt"),
        "{hits:?}"
    );
    let r = c
        .delete(format!("{base}/v1/documents/nope"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let metrics = c
        .get(format!("{base}/metrics"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("ragloom_ingests_total{outcome=\"succeeded\"} 2"),
        "{metrics}"
    );
    assert!(
        s.log.lock().unwrap().contains("/v1/retrieve"),
        "request logs on stderr"
    );
}

#[test]
fn serve_refuses_other_machines_without_a_key() {
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let out = ragloom_process(home.path())
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--files"])
        .arg(&data)
        .env_remove("RAGLOOM_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no API key") && err.contains("--insecure-no-auth"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_give_one_object_per_request() {
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let s = serve(
        home.path(),
        &[
            "--log-format",
            "json",
            "--files",
            &format!("wonderland={}", data.display()),
        ],
    );
    let r = client()
        .get(format!("{}/v1/models", s.base))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let log = s.log.lock().unwrap().clone();
        let found = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["route"] == "/v1/models");
        if let Some(v) = found {
            break v;
        }
        assert!(Instant::now() < deadline, "no JSON request line in:\n{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(line["status"], 200, "{line}");
    assert_eq!(line["method"], "GET", "{line}");
    assert_eq!(line["level"], "INFO", "{line}");
    assert!(line["millis"].is_u64(), "{line}");
    assert!(
        !s.log.lock().unwrap().contains('\u{1b}'),
        "no colour codes off a terminal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_query_while_an_ingest_rewrites_every_file() {
    let home = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("f{i:03}.txt"),
                format!("Record {i} of the ledger. The marker is v1 for this record.\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let data = folder(home.path(), &refs);
    ingest(home.path(), &data);
    let s = Arc::new(serve(home.path(), &["--files", data.to_str().unwrap()]));
    for (name, text) in &files {
        std::fs::write(data.join(name), text.replace("v1", "v2")).unwrap();
    }
    let c = client();
    let writer = {
        let home = home.path().to_path_buf();
        let data = data.clone();
        tokio::task::spawn_blocking(move || ingest(&home, &data))
    };
    let mut clients = Vec::new();
    for n in 0..50 {
        let (c, base) = (c.clone(), s.base.clone());
        clients.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..6 {
                let nodes = retrieve(
                    &c,
                    &base,
                    &format!("ledger record {} marker", (n * 7 + i) % 200),
                    4,
                )
                .await;
                let markers: std::collections::BTreeSet<String> = nodes
                    .iter()
                    .map(|p| {
                        if p["text"].as_str().unwrap().contains("v2") {
                            "v2".into()
                        } else {
                            "v1".into()
                        }
                    })
                    .collect();
                assert_eq!(markers.len(), 1, "one answer mixed the ingests: {nodes:?}");
                seen.extend(markers);
            }
            seen
        }));
    }
    let mut all = Vec::new();
    for c in clients {
        all.extend(c.await.unwrap());
    }
    writer.await.unwrap();
    assert_eq!(all.len(), 300);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let after = retrieve(&c, &s.base, "ledger record marker", 4).await;
    assert!(
        after
            .iter()
            .all(|p| p["text"].as_str().unwrap().contains("v2")),
        "{after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_upload_survives_a_killed_server() {
    let (home, data) = ingested(&[("alice.txt", ALICE)]);
    let c = client();
    let mut form = reqwest::multipart::Form::new();
    for i in 0..15 {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(
                format!("Upload number {i} speaks of the Gryphon and the Mock Turtle.\n")
                    .into_bytes(),
            )
            .file_name(format!("up{i}.txt")),
        );
    }
    let job_id = {
        let s = serve(home.path(), &["--files", data.to_str().unwrap()]);
        let r = c
            .post(format!("{}/v1/documents", s.base))
            .bearer_auth(KEY)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        let accepted: Value = r.json().await.unwrap();
        // Dropping `s` is kill -9, as soon as the upload is accepted.
        accepted["job_id"].as_str().unwrap().to_string()
    };
    let s = serve(home.path(), &["--files", data.to_str().unwrap()]);
    let job = wait_job(&c, &s.base, &job_id).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let docs = get_json(&c, &format!("{}/v1/documents", s.base)).await;
    let uploaded = docs["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["uploaded"] == true)
        .count();
    assert_eq!(uploaded, 15, "{docs}");
}
