//! What the end-to-end tests share: the binary with no provider configured,
//! its state in a temporary home, JSON output parsed, and the PostgreSQL and
//! Qdrant modes that run the same tests with every index on a server.

#![allow(dead_code, clippy::unwrap_used)]

use assert_cmd::Command;
use ragloom_core::testing::Fault;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const PROVIDER_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OLLAMA_HOST",
    "RAGLOOM_LLM",
    "RAGLOOM_LLM_MODEL",
    "RAGLOOM_LLM_API_BASE",
    "RAGLOOM_LLM_GGUF",
    "RAGLOOM_EMBED",
    "RAGLOOM_EMBED_MODEL",
    "RAGLOOM_EMBED_API_BASE",
    "RAGLOOM_EMBED_MODEL_DIR",
    "RAGLOOM_PERSIST_DIR",
    "RAGLOOM_CONFIG",
    "RAGLOOM_STORE",
];

thread_local! {
    /// The PostgreSQL server of the test running on this thread, if it runs
    /// in PostgreSQL mode, and the schemas it made (dropped at its end).
    static PG: std::cell::RefCell<Option<(String, Vec<String>)>> = const { std::cell::RefCell::new(None) };
}

/// The server the tests use in PostgreSQL mode: `RAGLOOM_TEST_PG_URL` (from
/// `.ci/setup/postgres.sh`); `None` (after saying so) when unset outside CI.
pub(crate) fn pg_url() -> Option<String> {
    match std::env::var("RAGLOOM_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_PG_URL is unset: .ci/setup/postgres.sh should have started PostgreSQL"
            );
            eprintln!("skipped: RAGLOOM_TEST_PG_URL is unset (source .ci/setup/postgres.sh)");
            None
        }
    }
}

/// Runs `test` with every `ragloom` it starts keeping its indexes in
/// PostgreSQL, a schema per home folder; the schemas are dropped afterwards.
/// Skips (outside CI) without a server.
pub(crate) fn in_postgres(test: fn()) {
    let Some(url) = pg_url() else { return };
    PG.with(|p| *p.borrow_mut() = Some((url.clone(), Vec::new())));
    struct Cleanup(String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let schemas = PG.with(|p| p.borrow_mut().take().map(|(_, s)| s).unwrap_or_default());
            // Best effort, and never a second panic while the test unwinds.
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use sqlx::Connection;
                if let Ok(mut conn) = sqlx::PgConnection::connect(&self.0).await {
                    for schema in schemas {
                        let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
                        let _ = sqlx::raw_sql(&drop).execute(&mut conn).await;
                    }
                    let _ = conn.close().await;
                }
            });
        }
    }
    let _cleanup = Cleanup(url);
    test();
}

thread_local! {
    /// The Qdrant test server of the test running on this thread, in Qdrant mode.
    static QD: std::cell::RefCell<Option<QdrantServer>> = const { std::cell::RefCell::new(None) };
}

/// A Qdrant test server process (Qdrant's engine behind its gRPC API),
/// stopped when dropped.
pub(crate) struct QdrantServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    child: std::process::Child,
}

impl Drop for QdrantServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test server binary: `RAGLOOM_TEST_QDRANT_SERVER`, else the one
/// `cargo test --workspace` builds beside this test; `None` (after saying
/// so) when absent outside CI.
pub(crate) fn qdrant_server_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RAGLOOM_TEST_QDRANT_SERVER") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "RAGLOOM_TEST_QDRANT_SERVER={} is no file",
            p.display()
        );
        return Some(p);
    }
    let exe = std::env::current_exe().unwrap();
    let beside = exe.parent().and_then(Path::parent).map(|d| {
        d.join(format!(
            "ragloom-qdrant-test-server{}",
            std::env::consts::EXE_SUFFIX
        ))
    });
    match beside.filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "the Qdrant test server is not built: cargo build -p ragloom-qdrant-test-server"
            );
            eprintln!(
                "skipped: build the Qdrant test server (cargo build -p ragloom-qdrant-test-server)"
            );
            None
        }
    }
}

/// Starts a Qdrant test server; `None` when its binary is absent (outside CI).
pub(crate) fn start_qdrant() -> Option<QdrantServer> {
    use std::io::BufRead;
    let bin = qdrant_server_binary()?;
    let mut child = std::process::Command::new(bin)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the Qdrant test server said {line:?}"))
        .to_string();
    Some(QdrantServer { url, child })
}

/// Runs `test` with every `ragloom` it starts keeping its indexes in a
/// Qdrant test server of its own (collections prefixed per home folder).
/// Skips (outside CI) without the server binary.
pub(crate) fn in_qdrant(test: fn()) {
    let Some(server) = start_qdrant() else { return };
    QD.with(|q| *q.borrow_mut() = Some(server));
    struct Cleanup;
    impl Drop for Cleanup {
        fn drop(&mut self) {
            QD.with(|q| q.borrow_mut().take());
        }
    }
    let _cleanup = Cleanup;
    test();
}

/// Whether the running test is in Qdrant mode.
pub(crate) fn qdrant_mode() -> bool {
    QD.with(|q| q.borrow().is_some())
}

/// The Qdrant server of the running test (`http://...`), in Qdrant mode.
pub(crate) fn current_qdrant_url() -> Option<String> {
    QD.with(|q| q.borrow().as_ref().map(|s| s.url.clone()))
}

/// The collection prefix of `home`'s indexes in Qdrant mode (with its `_`).
pub(crate) fn qdrant_prefix(home: &Path) -> String {
    format!("{}_", schema_for(home))
}

/// Whether the running test is in PostgreSQL mode.
pub(crate) fn postgres_mode() -> bool {
    PG.with(|p| p.borrow().is_some())
}

/// The `--store` value for `home` in PostgreSQL mode (its schema recorded for cleanup).
pub(crate) fn store_for(home: &Path) -> Option<String> {
    if let Some(url) = current_qdrant_url() {
        let prefix = qdrant_prefix(home);
        return Some(format!(
            "{}?prefix={}",
            url.replacen("http://", "qdrant://", 1),
            prefix.trim_end_matches('_')
        ));
    }
    PG.with(|p| {
        let mut p = p.borrow_mut();
        let (url, schemas) = p.as_mut()?;
        let schema = schema_for(home);
        if !schemas.contains(&schema) {
            schemas.push(schema.clone());
        }
        let sep = if url.contains('?') { '&' } else { '?' };
        Some(format!("{url}{sep}schema={schema}"))
    })
}

/// The schema the indexes of `home` live in, in PostgreSQL mode.
pub(crate) fn schema_for(home: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(home.display().to_string().as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("rl_cli_{hash}")
}

/// Runs `sql` (several statements allowed) on the server at `url`.
pub(crate) fn pg_execute(url: &str, sql: &str) {
    let (rt, mut conn) = pg_connect(url);
    rt.block_on(sqlx::raw_sql(sql).execute(&mut conn)).unwrap();
}

/// A connection to `url` and the runtime to drive it on.
pub(crate) fn pg_connect(url: &str) -> (tokio::runtime::Runtime, sqlx::PgConnection) {
    use sqlx::Connection;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let conn = rt.block_on(sqlx::PgConnection::connect(url)).unwrap();
    (rt, conn)
}

/// The PostgreSQL URL of the running test's server, in PostgreSQL mode.
pub(crate) fn current_pg_url() -> Option<String> {
    PG.with(|p| p.borrow().as_ref().map(|(u, _)| u.clone()))
}

/// The binary with no provider configured, its state under `home`.
pub(crate) fn ragloom(home: &Path) -> Command {
    Command::from_std(ragloom_process(home))
}

/// [`ragloom`] as a plain process, for tests that handle its pipes themselves.
pub(crate) fn ragloom_process(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ragloom"));
    for v in PROVIDER_VARS {
        cmd.env_remove(v);
    }
    cmd.env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HOME", home)
        .arg("--persist-dir")
        .arg(home.join("store"));
    if let Some(store) = store_for(home) {
        cmd.arg("--store").arg(store);
    }
    cmd
}

pub(crate) fn json_of(out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `status --json` of the index of `data`.
pub(crate) fn status(home: &Path, data: &Path) -> Value {
    let out = ragloom(home)
        .args(["status", "--json", "--files"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout)
}

/// The live build's file under the persist dir `home/store`.
pub(crate) fn live_db(home: &Path) -> PathBuf {
    let indexes = home.join("store/indexes");
    let dir = std::fs::read_dir(&indexes)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let current: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("current.json")).unwrap()).unwrap();
    dir.join(current["db"].as_str().unwrap())
}

/// Ollama's `/api/embed` reply, for a `FaultServer` standing in for Ollama:
/// a small vector counted from each input's letters.
pub(crate) fn ollama_embeddings() -> Fault {
    Fault::respond(|request| {
        let inputs = request.json()["input"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let vectors: Vec<Value> = inputs
            .iter()
            .map(|t| {
                let t = t.as_str().unwrap_or("");
                let count = |set: &str| t.chars().filter(|c| set.contains(*c)).count() as f32;
                json!([count("aeiou"), count("rst"), count("lmn"), 1.0])
            })
            .collect();
        Fault::json(200, &json!({"model": "m", "embeddings": vectors}))
    })
}

/// Headless Chromium for tests that open a page: `RAGLOOM_TEST_CHROMIUM`
/// (from `.ci/setup/chromium.sh`); `None` (after saying so) when unset outside CI.
pub(crate) fn chromium() -> Option<PathBuf> {
    match std::env::var_os("RAGLOOM_TEST_CHROMIUM") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_CHROMIUM is unset: .ci/setup/chromium.sh should have installed Chromium"
            );
            eprintln!("skipped the browser check: RAGLOOM_TEST_CHROMIUM is unset");
            None
        }
    }
}
