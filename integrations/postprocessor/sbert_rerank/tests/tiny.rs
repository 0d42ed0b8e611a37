//! Always-run parity tests on a tiny random cross-encoder committed under
//! tests/data/tiny_cross_encoder: scores, truncation and LlamaIndex's
//! reranking against what tests/data/gen_tiny_cross_encoder.py recorded from
//! sentence-transformers 6.2 and llama-index-core 0.14.25.
#![allow(clippy::unwrap_used)]

use ragloom_core::postprocessor::NodePostprocessor;
use ragloom_core::{Error, Node, NodeWithScore, QueryBundle};
use ragloom_postprocessor_sbert_rerank::{CrossEncoder, SentenceTransformerRerank};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(data().join("tiny_reference.json")).unwrap())
        .unwrap()
}

fn folder() -> PathBuf {
    data().join("tiny_cross_encoder")
}

fn pairs(r: &Value) -> Vec<(String, String)> {
    let q = r["query"].as_str().unwrap();
    r["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (q.to_owned(), t.as_str().unwrap().to_owned()))
        .collect()
}

fn assert_close(got: &[f32], want: &Value, what: &str) {
    let want: Vec<f64> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (*g as f64 - w).abs() < 1e-4,
            "{what} {i}: got {g}, want {w}"
        );
    }
}

#[test]
fn scores_equal_sentence_transformers_cross_encoder() {
    let r = reference();
    assert_eq!(r["activation_fn"], "Sigmoid()");
    let model = CrossEncoder::from_folder(folder()).unwrap();
    assert_eq!(model.max_length(), 512);
    // The fourth text is longer than 512 tokens: cut, longest side first.
    assert_close(&model.predict(&pairs(&r)).unwrap(), &r["scores"], "scores");
    let short = CrossEncoder::with_max_length(folder(), 24).unwrap();
    assert_close(
        &short.predict(&pairs(&r)).unwrap(),
        &r["scores_max_length_24"],
        "max_length 24",
    );
    assert!(model.predict(&[]).unwrap().is_empty());
}

#[test]
fn batches_do_not_change_scores() {
    let r = reference();
    let model = CrossEncoder::from_folder(folder()).unwrap();
    let many: Vec<(String, String)> = pairs(&r).into_iter().cycle().take(70).collect();
    let scores = model.predict(&many).unwrap();
    let once = model.predict(&pairs(&r)).unwrap();
    for (i, s) in scores.iter().enumerate() {
        assert!((s - once[i % once.len()]).abs() < 1e-5, "pair {i}");
    }
}

#[tokio::test]
async fn rerank_keeps_top_n_as_llama_index_does() {
    let r = reference();
    let nodes: Vec<NodeWithScore> = r["texts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            NodeWithScore::new(
                Node::text_node(t.as_str().unwrap())
                    .with_id(format!("n{i}"))
                    .with_metadata("k", i),
                Some(1.0 - i as f32 / 10.0),
            )
        })
        .collect();
    let rerank = SentenceTransformerRerank::from_folder(folder())
        .unwrap()
        .top_n(3)
        .keep_retrieval_score(true);
    let query = QueryBundle::new(r["query"].as_str().unwrap());
    let kept = rerank.postprocess_nodes(nodes, Some(&query)).await.unwrap();
    let want = r["rerank_top_3"].as_array().unwrap();
    assert_eq!(kept.len(), 3);
    for (got, want) in kept.iter().zip(want) {
        assert_eq!(got.node.node_id(), want["id"].as_str().unwrap());
        assert!((got.score.unwrap() as f64 - want["score"].as_f64().unwrap()).abs() < 1e-4);
        let kept_score = got.node.metadata["retrieval_score"].as_f64().unwrap();
        assert!((kept_score - want["retrieval_score"].as_f64().unwrap()).abs() < 1e-6);
    }
    assert!(
        rerank
            .postprocess_nodes(Vec::new(), Some(&query))
            .await
            .unwrap()
            .is_empty()
    );
    let err = rerank
        .postprocess_nodes(vec![NodeWithScore::new(Node::text_node("x"), None)], None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)));
}

#[test]
fn folders_it_cannot_run_are_clear_errors() {
    let dir = std::env::temp_dir().join(format!("sbert-rerank-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(folder().join(f), dir.join(f)).unwrap();
    }
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(folder().join("config.json")).unwrap())
            .unwrap();
    let write = |v: &Value| std::fs::write(dir.join("config.json"), v.to_string()).unwrap();

    let mut two = config.clone();
    two["id2label"] = serde_json::json!({"0": "a", "1": "b"});
    write(&two);
    let err = CrossEncoder::from_folder(&dir).unwrap_err();
    assert!(
        matches!(err, Error::Unsupported(ref m) if m.contains("2 labels")),
        "{err}"
    );

    let mut roberta = config.clone();
    roberta["model_type"] = "roberta".into();
    write(&roberta);
    assert!(matches!(
        CrossEncoder::from_folder(&dir).unwrap_err(),
        Error::Unsupported(_)
    ));

    write(&config);
    std::fs::write(dir.join("model.safetensors"), b"not weights").unwrap();
    let err = CrossEncoder::from_folder(&dir).unwrap_err();
    assert!(matches!(err, Error::CorruptFile { .. }), "{err}");

    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    assert!(matches!(
        CrossEncoder::from_folder(&dir).unwrap_err(),
        Error::NotFound(_)
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_identity_activation_in_the_folder_gives_the_logits() {
    let r = reference();
    let dir = std::env::temp_dir().join(format!("sbert-rerank-identity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(folder().join(f), dir.join(f)).unwrap();
    }
    std::fs::write(
        dir.join("config_sentence_transformers.json"),
        r#"{"activation_fn": "torch.nn.modules.linear.Identity"}"#,
    )
    .unwrap();
    let model = CrossEncoder::from_folder(&dir).unwrap();
    assert_close(&model.predict(&pairs(&r)).unwrap(), &r["logits"], "logits");

    std::fs::write(
        dir.join("config_sentence_transformers.json"),
        r#"{"activation_fn": "torch.nn.modules.activation.Tanh"}"#,
    )
    .unwrap();
    assert!(matches!(
        CrossEncoder::from_folder(&dir).unwrap_err(),
        Error::Unsupported(_)
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
