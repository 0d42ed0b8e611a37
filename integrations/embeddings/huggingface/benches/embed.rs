//! Embedding throughput: 64 sentences through all-MiniLM-L6-v2 (folder from
//! `RAGLOOM_TEST_MINILM_DIR`), or through the tiny test model when that is unset.
#![allow(clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_embeddings_huggingface::HuggingFaceEmbedding;
use std::hint::black_box;
use std::path::PathBuf;

fn sentences() -> Vec<String> {
    let subjects = [
        "The cat",
        "A data framework",
        "Alice",
        "The rabbit",
        "An index",
        "The query engine",
        "A small model",
        "The retriever",
    ];
    let verbs = [
        "reads", "embeds", "finds", "splits", "ranks", "loads", "answers", "stores",
    ];
    let mut out = Vec::new();
    for (i, s) in subjects.iter().enumerate() {
        for (j, v) in verbs.iter().enumerate() {
            // Lengths from a few words to a few dozen, like real chunks.
            let tail = " and then it goes on for a while".repeat((i + j) % 6);
            out.push(format!(
                "{s} {v} the documents in the folder number {i}{j}{tail}."
            ));
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let (folder, label) = match std::env::var_os("RAGLOOM_TEST_MINILM_DIR") {
        Some(dir) => (PathBuf::from(dir), "all-MiniLM-L6-v2"),
        None => {
            eprintln!("RAGLOOM_TEST_MINILM_DIR unset: benchmarking the tiny test model instead");
            (
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny_bert"),
                "tiny_bert",
            )
        }
    };
    let texts = sentences();
    assert_eq!(texts.len(), 64);
    let mut group = c.benchmark_group("huggingface_embedding");
    group.sample_size(10);
    for batch in [10, 32] {
        let embed = HuggingFaceEmbedding::builder(&folder)
            .embed_batch_size(batch)
            .build()
            .unwrap();
        group.bench_function(format!("{label}/64_sentences/batch_{batch}"), |b| {
            b.iter(|| black_box(embed.embed_blocking(&texts, "").unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
