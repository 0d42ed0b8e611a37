//! Embeddings: MockEmbedding and HashEmbedding behaviour, batching, and the
//! similarity function against values recorded from llama-index-core 0.14.25.
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom_core::Result;
use ragloom_core::embeddings::{
    Embedding, HashEmbedding, MockEmbedding, SimilarityMode, embed_in_batches, similarity,
};
use serde_json::Value;
use std::sync::Mutex;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/vector_stores/");

#[test]
fn similarity_matches_python() {
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}similarity.json")).unwrap())
            .unwrap();
    let mut compared = 0;
    for row in &rows {
        let vec = |k: &str| -> Vec<f32> {
            row[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect()
        };
        let (a, b) = (vec("a"), vec("b"));
        for (mode, key) in [
            (SimilarityMode::Cosine, "cosine"),
            (SimilarityMode::DotProduct, "dot_product"),
            (SimilarityMode::Euclidean, "euclidean"),
        ] {
            let got = similarity(&a, &b, mode);
            match row[key].as_f64() {
                Some(want) => {
                    let tol = 1e-5 * want.abs().max(1.0);
                    assert!(
                        (f64::from(got) - want).abs() < tol,
                        "{mode:?} {a:?} {b:?}: {got} vs {want}"
                    );
                    compared += 1;
                }
                // Python's NaN for a zero vector: ragloom answers 0.0.
                None => assert_eq!(got, 0.0, "{mode:?} {a:?} {b:?}"),
            }
        }
    }
    assert!(compared >= 19, "{compared}");
}

#[tokio::test]
async fn mock_embedding_is_llamaindex_constant() {
    let m = MockEmbedding::new(3);
    assert_eq!(m.embed_query("anything").await.unwrap(), [0.5, 0.5, 0.5]);
    let texts: Vec<String> = (0..25).map(|i| format!("t{i}")).collect();
    let all = embed_in_batches(&m, &texts, false).await.unwrap();
    assert_eq!(all.len(), 25);
    assert!(all.iter().all(|v| v == &[0.5, 0.5, 0.5]));
    assert_eq!(m.dimensions(), Some(3));
    assert_eq!(m.embed_batch_size(), 10);
    assert_eq!(m.model_name(), "unknown");
}

#[tokio::test]
async fn hash_embedding_ranks_shared_words_higher() {
    let h = HashEmbedding::new(256);
    let base = h
        .embed_query("The quick brown fox jumps over the lazy dog")
        .await
        .unwrap();
    let close = h
        .embed_query("a quick brown fox, jumping over dogs")
        .await
        .unwrap();
    let far = h
        .embed_query("Quarterly earnings beat analyst expectations")
        .await
        .unwrap();
    let s_close = similarity(&base, &close, SimilarityMode::Cosine);
    let s_far = similarity(&base, &far, SimilarityMode::Cosine);
    assert!(s_close > 0.4, "{s_close}");
    assert!(s_close > s_far + 0.3, "{s_close} vs {s_far}");
    for v in [&base, &close, &far] {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6, "{norm}");
        assert_eq!(v.len(), 256);
    }
    // Case and Unicode-aware lower-casing: the same words, the same vector.
    assert_eq!(
        h.embed("ÉCOLE Straße").unwrap(),
        h.embed("école straße").unwrap()
    );
    assert_eq!(h.embed("école").unwrap(), h.embed("école!").unwrap());
}

#[derive(Debug, Default)]
struct Recorder {
    batches: Mutex<Vec<usize>>,
    drop_one: bool,
}

#[async_trait]
impl Embedding for Recorder {
    fn model_name(&self) -> &str {
        "recorder"
    }
    fn dimensions(&self) -> Option<usize> {
        Some(1)
    }
    fn embed_batch_size(&self) -> usize {
        4
    }
    async fn embed_query(&self, _query: &str) -> Result<Vec<f32>> {
        Ok(vec![0.0])
    }
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.batches.lock().unwrap().push(texts.len());
        let n = texts.len() - usize::from(self.drop_one);
        Ok(texts[..n].iter().map(|t| vec![t.len() as f32]).collect())
    }
}

#[tokio::test]
async fn batches_follow_embed_batch_size_and_keep_order() {
    let r = Recorder::default();
    let texts: Vec<String> = (0..10).map(|i| "x".repeat(i)).collect();
    let out = embed_in_batches(&r, &texts, true).await.unwrap();
    assert_eq!(*r.batches.lock().unwrap(), [4, 4, 2]);
    assert_eq!(
        out.iter().map(|v| v[0] as usize).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    let bad = Recorder {
        drop_one: true,
        ..Default::default()
    };
    let err = embed_in_batches(&bad, &texts, false).await.unwrap_err();
    assert!(err.to_string().contains("recorder"), "{err}");
}
