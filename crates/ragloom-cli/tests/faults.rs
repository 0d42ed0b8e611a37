//! An embedding server that fails part-way through an ingest: the ingest
//! fails, the stored index and its answers stay as they were, and the next
//! ingest reuses the embeddings already made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{json_of, ollama_embeddings as embeddings, ragloom, status};
use ragloom_core::testing::{Fault, FaultServer};
use serde_json::Value;
use std::path::Path;

fn run(
    home: &Path,
    server: &FaultServer,
    args: &[&str],
    data: &Path,
) -> assert_cmd::assert::Assert {
    ragloom(home)
        .env("OLLAMA_HOST", server.url())
        .args(args)
        .arg(data)
        .assert()
}

fn answer(home: &Path, server: &FaultServer, data: &Path) -> Value {
    let out = run(
        home,
        server,
        &["query", "--json", "the harbour boat", "--files"],
        data,
    )
    .success();
    json_of(&out.get_output().stdout)
}

#[test]
fn an_embedding_server_failing_midway_leaves_the_index_unchanged() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FaultServer::start(vec![embeddings()])).unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("boat.txt"),
        "The boat engine was serviced by the harbour mechanic.",
    )
    .unwrap();
    std::fs::write(data.join("bees.txt"), "The bees swarmed in June.").unwrap();
    let ingest = ["ingest", "--embed", "ollama", "--embed-model", "m"];
    run(home.path(), &server, &ingest, &data).success();
    let before = status(home.path(), &data);
    let answer_before = answer(home.path(), &server, &data);

    // Enough new files for several embedding requests; the second one fails.
    for i in 0..40 {
        std::fs::write(
            data.join(format!("note{i:02}.txt")),
            format!("Note {i} on the tides."),
        )
        .unwrap();
    }
    std::fs::write(data.join("bees.txt"), "The bees left in July.").unwrap();
    for fault in [
        Fault::Reset,
        Fault::status(503, None),
        Fault::raw_json(200, "{\"embeddings\": [[1,"),
    ] {
        server.script(vec![embeddings(), fault.clone()]);
        let out = run(home.path(), &server, &ingest, &data).failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_lowercase();
        assert!(err.contains("ollama"), "{fault:?}: {err}");
        let after = status(home.path(), &data);
        assert_eq!(after["nodes"], before["nodes"], "{fault:?}: {after}");
        assert_eq!(
            after["documents"], before["documents"],
            "{fault:?}: {after}"
        );
        server.script(vec![embeddings()]);
        assert_eq!(
            answer(home.path(), &server, &data),
            answer_before,
            "{fault:?}"
        );
    }

    // The server is back: the ingest completes, reusing the cached batches.
    server.script(vec![embeddings()]);
    let sent_before = server.requests().len();
    run(home.path(), &server, &ingest, &data).success();
    let after = status(home.path(), &data);
    assert_eq!(after["documents"], 42, "{after}");
    let inputs: usize = server.requests()[sent_before..]
        .iter()
        .map(|r| r.json()["input"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(inputs < 41, "{inputs} texts embedded again");
}
