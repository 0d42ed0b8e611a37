//! End-to-end tests of the `ragloom` binary on temporary folders: incremental
//! ingest (checked through `status`), `--json` output, the offline answer,
//! errors and exit codes; each store test runs again with every index in
//! PostgreSQL (module `postgres`) and in Qdrant (module `qdrant`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;

mod common;
use common::{json_of, postgres_mode, qdrant_mode, ragloom, ragloom_process, status};

/// What keyword retrieval is called in the running test's store mode.
fn keyword_retrieval() -> &'static str {
    if postgres_mode() {
        "fulltext"
    } else if qdrant_mode() {
        "sparse"
    } else {
        "bm25"
    }
}

fn corpus(dir: &Path) {
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    std::fs::write(
        dir.join("garden.md"),
        "# Garden\n\nThe tomatoes grow along the south fence.\nWe water them every morning before nine.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("notes/boat.txt"),
        "The boat is moored at the east pier.\nIts engine was serviced in March by the harbour mechanic.\n",
    )
    .unwrap();
}

#[test]
fn ingest_is_incremental() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);

    let out = ragloom(home.path())
        .args(["ingest", "--json"])
        .arg(&data)
        .assert()
        .success();
    let first = json_of(&out.get_output().stdout);
    assert_eq!(first["ingest"]["ingested"], 2, "{first}");
    assert_eq!(first["ingest"]["files"], 2, "{first}");

    // A second run over the unchanged folder does nothing.
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["last_ingest"]["ingested"], 0, "{s}");
    // Each file is skipped by its size and time, or (written in the second
    // the first ingest listed the folder: racy) read again and found unchanged.
    let l = &s["last_ingest"];
    assert_eq!(
        l["unchanged"].as_u64().unwrap() + l["files_unchanged"].as_u64().unwrap(),
        2,
        "{s}"
    );
    assert_eq!(s["last_ingest"]["nodes_written"], 0, "{s}");
    assert_eq!(s["documents"], 2, "{s}");
    if postgres_mode() {
        assert_eq!(s["store"]["kind"], "postgres", "{s}");
        assert!(
            s["store"]["path"].as_str().unwrap().contains("_docstore"),
            "{s}"
        );
    } else if qdrant_mode() {
        assert_eq!(s["store"]["kind"], "qdrant", "{s}");
        assert!(s["store"]["path"].as_str().unwrap().contains("_kv"), "{s}");
        // Nodes and key-value points.
        assert!(s["store"]["points"].as_u64().unwrap() > 2, "{s}");
    } else {
        assert_eq!(s["store"]["kind"], "sqlite", "{s}");
        let db = s["store"]["path"].as_str().unwrap();
        assert!(db.ends_with(".sqlite") && Path::new(db).exists(), "{s}");
    }
    if !qdrant_mode() {
        // Qdrant reports points, not bytes.
        assert!(s["store"]["size_bytes"].as_u64().unwrap() > 0, "{s}");
    }
    let nodes_before = s["nodes"].as_u64().unwrap();

    // An edited file is ingested again, alone.
    std::fs::write(
        data.join("garden.md"),
        "# Garden\n\nThe tomatoes moved to the north bed.\n",
    )
    .unwrap();
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["last_ingest"]["ingested"], 1, "{s}");
    // The other file is skipped by its size and time, or (written in the
    // second of a listing) read again and found unchanged.
    let l = &s["last_ingest"];
    assert_eq!(
        l["unchanged"].as_u64().unwrap() + l["files_unchanged"].as_u64().unwrap(),
        1,
        "{s}"
    );
    assert_eq!(s["nodes"].as_u64().unwrap(), nodes_before, "{s}");

    // The old text is gone from the index; the new one answers.
    let out = ragloom(home.path())
        .args(["query", "--json", "where are the tomatoes", "--files"])
        .arg(&data)
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    let top = a["sources"][0]["text"].as_str().unwrap();
    assert!(top.contains("north bed"), "{a}");
    let all = a["sources"].to_string();
    assert!(!all.contains("south fence"), "{a}");

    // A deleted file leaves the index.
    std::fs::remove_file(data.join("notes/boat.txt")).unwrap();
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["last_ingest"]["deleted"], 1, "{s}");
    assert_eq!(s["documents"], 1, "{s}");
}

#[test]
fn offline_rag_answers_with_passages_from_the_right_file() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    let out = ragloom(home.path())
        .args([
            "rag",
            "--question",
            "When was the boat engine serviced?",
            "--files",
        ])
        .arg(&data)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(
        stdout.contains("no LLM configured — most relevant passages"),
        "{stdout}"
    );
    let first = stdout.lines().find(|l| l.starts_with("[1]")).unwrap();
    assert!(first.contains("notes/boat.txt:1"), "{stdout}");
    assert!(stdout.contains("harbour mechanic"), "{stdout}");

    // `query` with no --files uses the folder used last; --json parses.
    let out = ragloom(home.path())
        .args(["query", "--json", "Where do the tomatoes grow?"])
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    assert_eq!(a["mode"], "passages");
    assert_eq!(a["retrieval"], keyword_retrieval());
    assert!(a["answer"].is_null());
    assert_eq!(a["sources"][0]["file"], "garden.md", "{a}");
    assert!(a["sources"][0]["score"].as_f64().unwrap() > 0.0);
}

#[test]
fn files_with_the_same_content_are_each_indexed() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    std::fs::copy(data.join("garden.md"), data.join("notes/garden-copy.md")).unwrap();
    let out = ragloom(home.path())
        .args(["ingest", "--json"])
        .arg(&data)
        .assert()
        .success();
    let j = json_of(&out.get_output().stdout);
    assert_eq!(j["ingest"]["ingested"], 3, "{j}");
    assert_eq!(status(home.path(), &data)["documents"], 3);

    // Deleting the copy removes it alone.
    std::fs::remove_file(data.join("notes/garden-copy.md")).unwrap();
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["documents"], 2, "{s}");
    assert_eq!(s["last_ingest"]["deleted"], 1, "{s}");
}

#[test]
fn clear_rebuilds_from_scratch() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let out = ragloom(home.path())
        .args(["rag", "--clear", "--json", "--files"])
        .arg(&data)
        .assert()
        .success();
    let j = json_of(&out.get_output().stdout);
    assert_eq!(j["ingest"]["ingested"], 2, "{j}");
    assert_eq!(j["ingest"]["unchanged"], 0, "{j}");
}

#[test]
fn globs_select_files() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    let glob = format!("{}/**/*.txt", data.display());
    let out = ragloom(home.path())
        .args(["ingest", "--json", &glob])
        .assert()
        .success();
    let j = json_of(&out.get_output().stdout);
    assert_eq!(j["ingest"]["files"], 1, "{j}");
}

#[test]
fn errors_are_one_line_with_a_hint_and_an_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let out = ragloom(home.path())
        .args(["ingest"])
        .arg(home.path().join("missing"))
        .assert()
        .code(4);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.starts_with("error: cannot read"), "{err}");
    assert!(err.contains("hint:"), "{err}");

    let out = ragloom(home.path())
        .args(["query", "anything"])
        .assert()
        .code(4);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("no folder is ingested yet"), "{err}");

    let out = ragloom(home.path())
        .args(["--llm", "gpt", "status"])
        .assert()
        .code(3);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("unknown LLM provider `gpt`"), "{err}");

    let cfg = home.path().join("bad.toml");
    std::fs::write(&cfg, "[llm\n").unwrap();
    ragloom(home.path())
        .arg("--config")
        .arg(&cfg)
        .arg("status")
        .assert()
        .code(3);

    // Usage errors are clap's (exit 2).
    ragloom(home.path()).arg("frobnicate").assert().code(2);
}

/// The value of `var`, which the `.ci/setup` script `script` sets for a
/// live test; `None` (with a notice) on a developer machine without it, a
/// failure under CI.
#[cfg(any(feature = "huggingface", feature = "openai", feature = "candle"))]
fn live_var(var: &str, script: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Some(v),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{var} is unset under CI: .ci/setup/{script} should have set it"
            );
            eprintln!("skipped: {var} is not set");
            None
        }
    }
}

/// The local embedding model folder `.ci/setup/minilm.sh` unpacks.
#[cfg(feature = "huggingface")]
fn minilm_dir() -> Option<String> {
    live_var("RAGLOOM_TEST_MINILM_DIR", "minilm.sh")
}

#[cfg(feature = "huggingface")]
#[test]
fn a_local_embedding_model_makes_retrieval_hybrid_and_is_not_rerun() {
    let Some(model) = minilm_dir() else { return };
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    let with_model = |cmd: &mut assert_cmd::Command| {
        cmd.args(["--embed", "huggingface", "--embed-model", &model]);
    };
    let mut first = ragloom(home.path());
    with_model(&mut first);
    let out = first
        .args(["ingest", "--json"])
        .arg(&data)
        .assert()
        .success();
    let j = json_of(&out.get_output().stdout);
    assert!(j["ingest"]["nodes_embedded"].as_u64().unwrap() >= 2, "{j}");

    let mut second = ragloom(home.path());
    with_model(&mut second);
    let out = second
        .args(["ingest", "--json"])
        .arg(&data)
        .assert()
        .success();
    let j = json_of(&out.get_output().stdout);
    assert_eq!(j["ingest"]["nodes_embedded"], 0, "{j}");

    let mut q = ragloom(home.path());
    with_model(&mut q);
    let out = q
        .args(["query", "--json", "who fixed the motor of the vessel?"])
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    assert_eq!(a["retrieval"], "hybrid", "{a}");
    assert_eq!(a["sources"][0]["file"], "notes/boat.txt", "{a}");

    // Without the model, the index answers with keywords alone and says why.
    let out = ragloom(home.path())
        .args(["query", "--json", "who serviced the engine?"])
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    assert_eq!(a["retrieval"], keyword_retrieval(), "{a}");
    assert_eq!(a["sources"][0]["file"], "notes/boat.txt", "{a}");
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("using keyword retrieval only"), "{err}");
}

/// The OpenAI-compatible server `.ci/setup/llm-server.sh` starts (llama.cpp
/// with SmolLM2); `None` (with a notice) when unset off CI.
#[cfg(feature = "openai")]
fn llm_server() -> Option<(String, String)> {
    let url = live_var("RAGLOOM_TEST_OPENAI_BASE_URL", "llm-server.sh")?;
    let model = std::env::var("RAGLOOM_TEST_OPENAI_MODEL")
        .unwrap_or_else(|_| "smollm2-135m-instruct".to_owned());
    Some((url, model))
}

#[cfg(feature = "openai")]
#[test]
fn a_configured_llm_generates_the_answer_with_its_sources() {
    let Some((url, model)) = llm_server() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    let out = ragloom(home.path())
        .args([
            "--llm",
            "openai-like",
            "--api-base",
            &url,
            "--model",
            &model,
        ])
        .args([
            "rag",
            "--json",
            "--question",
            "When was the boat engine serviced?",
            "--files",
        ])
        .arg(&data)
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    assert_eq!(a["mode"], "llm", "{a}");
    assert!(!a["answer"].as_str().unwrap().trim().is_empty(), "{a}");
    assert_eq!(a["sources"][0]["file"], "notes/boat.txt", "{a}");

    // In text mode the answer streams, then the sources follow.
    let out = ragloom(home.path())
        .args([
            "--llm",
            "openai-like",
            "--api-base",
            &url,
            "--model",
            &model,
        ])
        .args(["query", "When was the boat engine serviced?"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(
        text.contains("\nSources:\n  [1] notes/boat.txt:1"),
        "{text}"
    );
    assert!(!text.contains("no LLM configured"), "{text}");

    // A server that is down is a provider error (exit 5), and the index is intact.
    let out = ragloom(home.path())
        .args([
            "--llm",
            "openai-like",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--model",
            &model,
        ])
        .args(["query", "When was the boat engine serviced?"])
        .assert()
        .code(5);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.starts_with("error: "), "{err}");
    let s = status(home.path(), &data);
    assert_eq!(s["documents"], 2, "{s}");
}

#[cfg(feature = "candle")]
#[test]
fn a_local_gguf_model_answers_from_the_context() {
    let Some(gguf) = live_var("RAGLOOM_TEST_GGUF", "gguf.sh") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    // One short passage keeps the prompt small: candle runs this model slowly in a debug build.
    std::fs::write(data.join("atlas.txt"), "The capital of Zubrowka is Lutz.\n").unwrap();
    let out = ragloom(home.path())
        .args(["--llm", "candle", "--model", &gguf])
        .args([
            "rag",
            "--json",
            "--question",
            "What is the capital of Zubrowka?",
            "--files",
        ])
        .arg(&data)
        .assert()
        .success();
    let a = json_of(&out.get_output().stdout);
    assert_eq!(a["mode"], "llm", "{a}");
    assert!(a["answer"].as_str().unwrap().contains("Lutz"), "{a}");
    assert_eq!(a["sources"][0]["file"], "atlas.txt", "{a}");
}

#[test]
fn chat_answers_each_line_and_ends_at_end_of_input() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let out = ragloom(home.path())
        .args(["chat", "--json"])
        .write_stdin("Where is the boat moored?\n\nWhen do we water the tomatoes?\n")
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    let turns: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(turns.len(), 2, "{stdout}");
    assert_eq!(turns[0]["sources"][0]["file"], "notes/boat.txt", "{stdout}");
    assert_eq!(turns[1]["sources"][0]["file"], "garden.md", "{stdout}");
}

#[test]
fn a_closed_output_pipe_ends_quietly_with_its_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    corpus(&data);
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    // As `ragloom query ... | head -0`: the reader is gone before the answer is written.
    let mut child = ragloom_process(home.path())
        .args(["query", "Where is the boat moored?"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error"),
        "{stderr}"
    );
}

/// The same tests with every index in PostgreSQL (`--store postgres://...`,
/// a schema per test home), against the server `.ci/setup/postgres.sh` starts.
mod postgres {
    use crate::common::in_postgres;

    #[test]
    fn ingest_is_incremental() {
        in_postgres(super::ingest_is_incremental);
    }

    #[test]
    fn offline_rag_answers_with_passages_from_the_right_file() {
        in_postgres(super::offline_rag_answers_with_passages_from_the_right_file);
    }

    #[test]
    fn files_with_the_same_content_are_each_indexed() {
        in_postgres(super::files_with_the_same_content_are_each_indexed);
    }

    #[test]
    fn clear_rebuilds_from_scratch() {
        in_postgres(super::clear_rebuilds_from_scratch);
    }

    #[test]
    fn globs_select_files() {
        in_postgres(super::globs_select_files);
    }

    #[test]
    fn errors_are_one_line_with_a_hint_and_an_exit_code() {
        in_postgres(super::errors_are_one_line_with_a_hint_and_an_exit_code);
    }

    #[cfg(feature = "huggingface")]
    #[test]
    fn a_local_embedding_model_makes_retrieval_hybrid_and_is_not_rerun() {
        in_postgres(super::a_local_embedding_model_makes_retrieval_hybrid_and_is_not_rerun);
    }

    #[cfg(feature = "openai")]
    #[test]
    fn a_configured_llm_generates_the_answer_with_its_sources() {
        in_postgres(super::a_configured_llm_generates_the_answer_with_its_sources);
    }

    #[test]
    fn chat_answers_each_line_and_ends_at_end_of_input() {
        in_postgres(super::chat_answers_each_line_and_ends_at_end_of_input);
    }
}

/// The same tests with every index in Qdrant (`--store qdrant://...`, a
/// collection prefix per test home), each against a Qdrant test server of its own.
mod qdrant {
    use crate::common::in_qdrant;

    #[test]
    fn ingest_is_incremental() {
        in_qdrant(super::ingest_is_incremental);
    }

    #[test]
    fn offline_rag_answers_with_passages_from_the_right_file() {
        in_qdrant(super::offline_rag_answers_with_passages_from_the_right_file);
    }

    #[test]
    fn files_with_the_same_content_are_each_indexed() {
        in_qdrant(super::files_with_the_same_content_are_each_indexed);
    }

    #[test]
    fn clear_rebuilds_from_scratch() {
        in_qdrant(super::clear_rebuilds_from_scratch);
    }

    #[test]
    fn globs_select_files() {
        in_qdrant(super::globs_select_files);
    }

    #[test]
    fn errors_are_one_line_with_a_hint_and_an_exit_code() {
        in_qdrant(super::errors_are_one_line_with_a_hint_and_an_exit_code);
    }

    #[cfg(feature = "huggingface")]
    #[test]
    fn a_local_embedding_model_makes_retrieval_hybrid_and_is_not_rerun() {
        in_qdrant(super::a_local_embedding_model_makes_retrieval_hybrid_and_is_not_rerun);
    }

    #[cfg(feature = "openai")]
    #[test]
    fn a_configured_llm_generates_the_answer_with_its_sources() {
        in_qdrant(super::a_configured_llm_generates_the_answer_with_its_sources);
    }

    #[test]
    fn chat_answers_each_line_and_ends_at_end_of_input() {
        in_qdrant(super::chat_answers_each_line_and_ends_at_end_of_input);
    }
}
