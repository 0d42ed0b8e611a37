//! What the end-to-end tests share: the binary with no provider configured,
//! its state in a temporary home, and JSON output parsed.

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
];

/// The binary with no provider configured, its state under `home`.
pub fn ragloom(home: &Path) -> Command {
    Command::from_std(ragloom_process(home))
}

/// [`ragloom`] as a plain process, for tests that handle its pipes themselves.
pub fn ragloom_process(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ragloom"));
    for v in PROVIDER_VARS {
        cmd.env_remove(v);
    }
    cmd.env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HOME", home)
        .arg("--persist-dir")
        .arg(home.join("store"));
    cmd
}

pub fn json_of(out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `status --json` of the index of `data`.
pub fn status(home: &Path, data: &Path) -> Value {
    let out = ragloom(home)
        .args(["status", "--json", "--files"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout)
}

/// The live build's file under the persist dir `home/store`.
pub fn live_db(home: &Path) -> PathBuf {
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
pub fn ollama_embeddings() -> Fault {
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
