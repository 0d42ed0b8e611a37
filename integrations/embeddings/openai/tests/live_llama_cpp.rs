//! Live tests against a real OpenAI-compatible `/v1/embeddings`: llama.cpp (PyPI
//! `xllamacpp`) serving SmolLM2-135M-Instruct with mean pooling, started by `.ci/setup/llm-server.sh`.
//!
//! The server's base URL comes from `RAGLOOM_TEST_OPENAI_BASE_URL`. Unset,
//! the tests fail under CI (the setup script should have set it) and are
//! skipped elsewhere.
#![allow(clippy::unwrap_used)]

use ragloom_core::embeddings::{Embedding, SimilarityMode, embed_in_batches, similarity};
use ragloom_embeddings_openai::OpenAIEmbedding;

fn live_server() -> Option<(String, String)> {
    match std::env::var("RAGLOOM_TEST_OPENAI_BASE_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let model = std::env::var("RAGLOOM_TEST_OPENAI_MODEL")
                .unwrap_or_else(|_| "smollm2-135m-instruct".to_owned());
            Some((url, model))
        }
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_OPENAI_BASE_URL is unset under CI: .ci/setup/llm-server.sh should have \
                 started llama.cpp and exported it"
            );
            eprintln!(
                "skipped: RAGLOOM_TEST_OPENAI_BASE_URL is unset (source .ci/setup/llm-server.sh to run the live tests)"
            );
            None
        }
    }
}

#[tokio::test]
async fn live_embeddings_have_the_right_count_and_dimension_and_similar_texts_are_closer() {
    let Some((url, model)) = live_server() else {
        return;
    };
    let embed_model = OpenAIEmbedding::builder()
        .api_base(url)
        .model(model)
        .embed_batch_size(2)
        .build()
        .unwrap();
    let texts: Vec<String> = [
        "The cat sat on the mat.",
        "A kitten is sitting on a rug.",
        "Quarterly revenue grew by 12 percent.",
        "Paris is the capital of France.",
        "France's capital city is Paris.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let vectors = embed_in_batches(&embed_model, &texts, false).await.unwrap();
    assert_eq!(vectors.len(), texts.len());
    let dim = vectors[0].len();
    assert!(dim > 0);
    assert!(
        vectors.iter().all(|v| v.len() == dim),
        "one dimension for all"
    );

    let sim = |a: &[f32], b: &[f32]| similarity(a, b, SimilarityMode::default());
    assert!(sim(&vectors[0], &vectors[1]) > sim(&vectors[0], &vectors[2]));
    assert!(sim(&vectors[3], &vectors[4]) > sim(&vectors[3], &vectors[2]));

    // A query embeds like the same text in a batch.
    let query = embed_model
        .embed_query("The cat sat on the mat.")
        .await
        .unwrap();
    assert_eq!(query.len(), dim);
    assert!(
        sim(&query, &vectors[0]) > 0.999,
        "{}",
        sim(&query, &vectors[0])
    );
}
