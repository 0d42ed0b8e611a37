//! `ragloom eval`: retrieval modes side by side on a labelled set (table,
//! JSON, the HTML report opened in headless Chromium), a cross-encoder mode,
//! answers judged by an LLM, and clear errors for bad question sets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[cfg(feature = "sbert-rerank")]
use common::ollama_embeddings;
use common::{json_of, ragloom};
use ragloom_core::testing::{Fault, FaultServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const TEXTS: [(&str, &str); 3] = [
    (
        "boats.txt",
        "The harbour boat was repaired by the old mechanic.\nIts engine ran again by June.",
    ),
    (
        "bees.txt",
        "The bees swarmed in the orchard.\nThe keeper caught the swarm in a straw skep.",
    ),
    (
        "tides.txt",
        "Spring tides come twice a month.\nThe moon and the sun pull together then.",
    ),
];

fn folder(home: &Path) -> PathBuf {
    let data = home.join("docs");
    std::fs::create_dir_all(&data).unwrap();
    for (name, text) in TEXTS {
        std::fs::write(data.join(name), text).unwrap();
    }
    data
}

fn dataset(home: &Path) -> PathBuf {
    let rows = [
        json!({"question": "Who repaired the harbour boat?", "file": "boats.txt",
               "answer_span": "repaired by the old\n mechanic", "reference_answer": "The old mechanic."}),
        json!({"question": "Where did the keeper put the swarm?", "file": "bees.txt",
               "answer_span": "in a straw skep"}),
        // Shares no word with its answer: keyword search misses it.
        json!({"question": "How often do the strongest ocean surges occur?", "file": "tides.txt",
               "answer_span": "Spring tides come twice a month.", "paraphrased": true}),
        // The span is in another file than the one named: never a hit.
        json!({"question": "When did the engine run again?", "file": "bees.txt",
               "answer_span": "by June"}),
    ];
    let path = home.join("set.jsonl");
    let text: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n\n").unwrap();
    path
}

#[cfg(feature = "sbert-rerank")]
fn tiny_reranker() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../integrations/postprocessor/sbert_rerank/tests/data/tiny_cross_encoder")
}

#[test]
fn bm25_alone_prints_a_table_and_json_with_hits_where_the_span_is() {
    let home = tempfile::tempdir().unwrap();
    let data = folder(home.path());
    let set = dataset(home.path());
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();

    let out = ragloom(home.path())
        .args(["eval", "--dataset"])
        .arg(&set)
        .args(["--at", "1,3"])
        .assert()
        .success();
    let table = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(table.contains("4 questions"), "{table}");
    assert!(table.contains("hit rate"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("bm25") && l.contains(" 3 ")),
        "{table}"
    );

    let out = ragloom(home.path())
        .args(["--json", "eval", "--dataset"])
        .arg(&set)
        .args(["--at", "1,3"])
        .assert()
        .success();
    let report = json_of(&out.get_output().stdout);
    assert_eq!(report["questions"], 4);
    let modes: Vec<(String, u64)> = report["retrieval"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["mode"].as_str().unwrap().to_owned(),
                m["top_k"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(modes, [("bm25".to_owned(), 1), ("bm25".to_owned(), 3)]);
    let q = &report["per_question"];
    // The span crosses a line break in the set and in the file: still a hit, first.
    assert_eq!(q[0]["runs"][0]["rank"], 1, "{}", q[0]);
    assert_eq!(q[1]["runs"][0]["rank"], 1);
    assert!(
        q[2]["runs"][1]["rank"].is_null(),
        "no shared word: {}",
        q[2]
    );
    assert!(q[3]["runs"][1]["rank"].is_null(), "wrong file: {}", q[3]);
    assert_eq!(q[3]["misses"], 2);
    let at3 = &report["retrieval"][1];
    assert_eq!(at3["hit_rate"], 0.5);
    assert_eq!(at3["mrr"], 0.5);
    assert!(at3["latency_ms_p50"].as_f64().unwrap() >= 0.0);
    assert!(report["judged"].is_null());
}

/// Needs the command's `local-models` feature (the reranker); CI tests with every feature.
#[cfg(feature = "sbert-rerank")]
#[test]
fn hybrid_reranked_and_judged_with_a_report_a_browser_renders() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let embeddings = rt
        .block_on(FaultServer::start(vec![ollama_embeddings()]))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = folder(home.path());
    let set = dataset(home.path());
    let ragloom_with = |server: &FaultServer| {
        let mut cmd = ragloom(home.path());
        cmd.env("OLLAMA_HOST", server.url())
            .args(["--embed", "ollama", "--embed-model", "m"]);
        cmd
    };
    ragloom_with(&embeddings)
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let report = home.path().join("out/report.html");
    let out = ragloom_with(&embeddings)
        .args(["--json", "eval", "--at", "2,4", "--dataset"])
        .arg(&set)
        .arg("--reranker")
        .arg(tiny_reranker())
        .arg("--report")
        .arg(&report)
        .assert()
        .success();
    let json = json_of(&out.get_output().stdout);
    let modes: Vec<&str> = json["retrieval"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mode"].as_str().unwrap())
        .collect();
    assert_eq!(
        modes,
        [
            "bm25",
            "bm25",
            "vector",
            "vector",
            "hybrid",
            "hybrid",
            "hybrid+rerank",
            "hybrid+rerank"
        ]
    );
    // At top_k 4 the reranker keeps all three passages of the folder (not its default 2).
    let reranked_at_4 = &json["retrieval"][7];
    assert_eq!(reranked_at_4["top_k"], 4);
    assert_eq!(reranked_at_4["mean_retrieved"], 3.0, "{reranked_at_4}");
    for m in json["retrieval"].as_array().unwrap() {
        let hit = m["hit_rate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&hit), "{m}");
        assert!(m["mrr"].as_f64().unwrap() <= hit, "{m}");
    }

    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for outside in ["src=", "<link", "<script", "@import"] {
        assert!(!html.contains(outside), "self-contained, yet has {outside}");
    }
    assert!(html.contains("hybrid+rerank @2"));
    if let Some(chromium) = common::chromium() {
        let dom = std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
            .arg(format!("file://{}", report.display()))
            .output()
            .unwrap();
        assert!(
            dom.status.success(),
            "{}",
            String::from_utf8_lossy(&dom.stderr)
        );
        let dom = String::from_utf8_lossy(&dom.stdout);
        for id in [
            "chart-hit-rate",
            "chart-mrr",
            "chart-latency",
            "summary",
            "worst",
        ] {
            assert!(dom.contains(&format!("id=\"{id}\"")), "{id} not in the DOM");
        }
        assert_eq!(
            dom.matches("<rect").count(),
            3 * 8,
            "a bar per mode and top_k in each chart"
        );
        assert!(dom.contains("class=\"worst\""), "worst-question rows");
        assert!(
            dom.contains("When did the engine run again?"),
            "the always-missed question"
        );
    }

    // With an LLM: answers are judged (faithfulness, relevancy, correctness).
    let llm = rt
        .block_on(FaultServer::start(vec![Fault::respond(|request| {
            if request.path.contains("/api/embed") {
                return ollama_embeddings_reply(request);
            }
            Fault::json(
                200,
                &json!({"model": "m", "created_at": "2024-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "4.0\nYES, the context supports it."},
                "done": true}),
            )
        })]))
        .unwrap();
    let out = ragloom_with(&llm)
        .args([
            "--llm",
            "ollama",
            "--model",
            "m",
            "--json",
            "eval",
            "--at",
            "2",
            "--judge",
            "2",
            "--dataset",
        ])
        .arg(&set)
        .assert()
        .success();
    let json = json_of(&out.get_output().stdout);
    let judged = &json["judged"];
    assert_eq!(judged["questions"], 2, "{json}");
    assert_eq!(judged["mode"], "hybrid");
    assert_eq!(judged["faithfulness"], 1.0);
    assert_eq!(judged["relevancy"], 1.0);
    assert_eq!(judged["correctness_score"], 4.0);
    // 2 answers, then 3 judges for each.
    let chats = llm
        .requests()
        .iter()
        .filter(|r| r.path.contains("/api/chat"))
        .count();
    assert_eq!(chats, 2 + 2 * 3);
}

#[cfg(feature = "sbert-rerank")]
fn ollama_embeddings_reply(request: &ragloom_core::testing::Recorded) -> Fault {
    match ollama_embeddings() {
        Fault::Respond(f) => f(request),
        other => other,
    }
}

#[test]
fn bad_question_sets_and_missing_options_are_clear_errors() {
    let home = tempfile::tempdir().unwrap();
    let data = folder(home.path());
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let bad = home.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"question\": \"q\", \"file\": \"a\", \"answer_span\": \"x\"}\n{\"question\": 1}\n",
    )
    .unwrap();
    let out = ragloom(home.path())
        .args(["eval", "--dataset"])
        .arg(&bad)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(err.contains("line 2"), "{err}");

    let out = ragloom(home.path())
        .args(["eval", "--dataset"])
        .arg(home.path().join("none.jsonl"))
        .assert()
        .code(4);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("cannot read"));

    let out = ragloom(home.path()).args(["eval"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--dataset"));

    let out = ragloom(home.path())
        .args(["eval", "--generate", "4"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("needs an LLM"));

    let set = dataset(home.path());
    let out = ragloom(home.path())
        .args(["eval", "--dataset"])
        .arg(&set)
        .args(["--at", "0"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("at least 1"));
}

#[test]
fn generated_questions_are_scored_against_the_passage_they_were_written_from() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The LLM writes two questions about each passage it is shown.
    let llm = rt
        .block_on(FaultServer::start(vec![Fault::respond(|_| {
            Fault::json(200, &json!({"model": "m", "created_at": "2024-01-01T00:00:00Z",
                "message": {"role": "assistant",
                            "content": "1. Who repaired the harbour boat?\n2) When did the bees swarm?"},
                "done": true}))
        })]))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = folder(home.path());
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .success();
    let out = ragloom(home.path())
        .env("OLLAMA_HOST", llm.url())
        .args([
            "--llm",
            "ollama",
            "--model",
            "m",
            "--json",
            "eval",
            "--generate",
            "4",
            "--at",
            "3",
        ])
        .assert()
        .success();
    let report = json_of(&out.get_output().stdout);
    assert_eq!(report["questions"], 4, "{report}");
    assert!(
        report["dataset"]
            .as_str()
            .unwrap()
            .starts_with("generated by")
    );
    let q = &report["per_question"][0];
    assert_eq!(q["question"], "Who repaired the harbour boat?");
    assert_eq!(q["node_ids"].as_array().unwrap().len(), 1, "{q}");
    // Two passages were asked about.
    let chats = llm
        .requests()
        .iter()
        .filter(|r| r.path.contains("/api/chat"))
        .count();
    assert_eq!(chats, 2);
    let hit_rate = report["retrieval"][0]["hit_rate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&hit_rate));
    // Each pair of questions was written from one passage: that passage is its answer.
    let per = report["per_question"].as_array().unwrap();
    assert_eq!(per[0]["node_ids"], per[1]["node_ids"]);
    assert_ne!(per[0]["node_ids"], per[2]["node_ids"]);
}
