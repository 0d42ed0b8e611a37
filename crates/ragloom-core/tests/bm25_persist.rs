//! `BM25Retriever` folders shared with LlamaIndex's BM25 retriever
//! (llama-index-retrievers-bm25 0.8.0, bm25s 0.3.16): a folder Python
//! persisted loads here and answers as Python answered; a folder persisted
//! here loads in Python (with `RAGLOOM_PYTHON`, as `cargo xtask ci` sets it)
//! and answers the same.
#![allow(clippy::unwrap_used)]

mod common;

use ragloom_core::Node;
use ragloom_core::retrievers::bm25::BM25Retriever;
use ragloom_core::schema::MetadataMode;
use ragloom_core::vector_stores::{MetadataFilter, MetadataFilters};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bm25_persist")
}

/// What `tests/py/bm25_fixture.py` recorded: the corpus and, by query,
/// Python's hits with a positive score.
struct Expected {
    texts: Vec<String>,
    answers: serde_json::Map<String, Value>,
}

fn expected() -> Expected {
    let text = std::fs::read_to_string(fixture().join("expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    Expected {
        texts: serde_json::from_value(v["texts"].clone()).unwrap(),
        answers: v["answers"].as_object().unwrap().clone(),
    }
}

/// Hits as (id, score), best first, ties by id (bm25s orders ties arbitrarily).
fn canonical(mut hits: Vec<(String, f32)>) -> Vec<(String, f32)> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits
}

fn from_json(hits: &Value) -> Vec<(String, f32)> {
    canonical(
        hits.as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h[0].as_str().unwrap().to_string(),
                    h[1].as_f64().unwrap() as f32,
                )
            })
            .collect(),
    )
}

fn answers(r: &BM25Retriever, q: &str) -> Vec<(String, f32)> {
    canonical(
        r.retrieve_str(q)
            .into_iter()
            .map(|n| (n.node_id().to_string(), n.score.unwrap()))
            .collect(),
    )
}

#[test]
fn a_folder_python_persisted_answers_as_python_did() {
    let expected = expected();
    let r = BM25Retriever::from_persist_dir(fixture().join("python")).unwrap();
    assert_eq!(r.len(), expected.texts.len());
    assert_eq!(r.similarity_top_k(), 4);
    let loaded = r.retrieve_str("Größe Gartens");
    assert_eq!(
        loaded[0].node.get_content(MetadataMode::None),
        expected.texts[5]
    );
    for (q, hits) in &expected.answers {
        assert_eq!(answers(&r, q), from_json(hits), "{q}");
    }
    // Python's filter mask came along: node 2 (n == 2) is never returned.
    assert!(
        answers(&r, "bird in the hand")
            .iter()
            .all(|(id, _)| id != "node-2")
    );
}

#[test]
fn a_folder_persisted_here_loads_in_python() {
    let expected = expected();
    let nodes: Vec<Node> = expected
        .texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Node::text_node(t.as_str())
                .with_id(format!("node-{i}"))
                .with_metadata("n", i as i64)
                .with_metadata("lang", if i == 5 { "de" } else { "en" })
        })
        .collect();
    let r = BM25Retriever::builder()
        .similarity_top_k(4)
        .filters(MetadataFilters::and([MetadataFilter::ne("n", 2)]))
        .build(nodes)
        .unwrap();
    // Built here, the index already answers as Python's did.
    for (q, hits) in &expected.answers {
        assert_eq!(answers(&r, q), from_json(hits), "{q}");
    }
    let dir = tempfile::tempdir().unwrap();
    r.persist(dir.path()).unwrap();

    let Some(python) = common::reference_python("llama-index-retrievers-bm25 0.8.0") else {
        return;
    };
    let mut args = vec![dir.path().as_os_str().to_owned()];
    args.extend(expected.answers.keys().map(Into::into));
    let out = common::run_script(&python, "bm25_load.py", args);
    let got: serde_json::Map<String, Value> = serde_json::from_slice(&out).unwrap();
    for (q, hits) in &expected.answers {
        assert_eq!(from_json(&got[q]), from_json(hits), "{q}");
        for h in got[q].as_array().unwrap() {
            let i: usize = h[0].as_str().unwrap()["node-".len()..].parse().unwrap();
            assert_eq!(h[2], expected.texts[i], "Python read the node's text back");
        }
    }
}
