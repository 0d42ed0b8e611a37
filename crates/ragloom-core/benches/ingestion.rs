//! IngestionPipeline on Alice in Wonderland (12 chapters, SentenceSplitter
//! 512/32 + HashEmbedding 256): cold (no cache), fully cached, and skipped
//! by the docstore — what a re-run of an unchanged folder costs.

#![allow(clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::ingestion::{DocstoreStrategy, IngestionPipeline};
use ragloom_core::storage::docstore::SimpleDocumentStore;
use ragloom_core::{Document, HashEmbedding, SentenceSplitter, SimpleVectorStore};
use std::sync::Arc;

fn chapters() -> Vec<Document> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/alice29.txt"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .split("CHAPTER")
        .enumerate()
        .map(|(i, t)| Document::document(t).with_id(format!("chapter-{i}")))
        .collect()
}

fn pipeline() -> IngestionPipeline {
    IngestionPipeline::new(vec![Arc::new(
        SentenceSplitter::new().chunk_size(512).chunk_overlap(32),
    )])
    .embedding(Arc::new(HashEmbedding::new(256)))
}

fn bench_ingestion(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let docs = chapters();

    let cold = pipeline().disable_cache(true);
    c.bench_function("ingestion_alice_cold", |b| {
        b.iter(|| rt.block_on(cold.run(docs.clone())).unwrap())
    });
    let cold4 = pipeline().disable_cache(true).num_workers(4);
    c.bench_function("ingestion_alice_cold_4_workers", |b| {
        b.iter(|| rt.block_on(cold4.run(docs.clone())).unwrap())
    });

    let cached = pipeline();
    rt.block_on(cached.run(docs.clone())).unwrap();
    c.bench_function("ingestion_alice_all_cache_hits", |b| {
        b.iter(|| rt.block_on(cached.run(docs.clone())).unwrap())
    });

    let skipping = pipeline()
        .docstore(Arc::new(SimpleDocumentStore::new()))
        .vector_store(Arc::new(SimpleVectorStore::new()))
        .docstore_strategy(DocstoreStrategy::Upserts);
    rt.block_on(skipping.run(docs.clone())).unwrap();
    c.bench_function("ingestion_alice_docstore_skips_all", |b| {
        b.iter(|| rt.block_on(skipping.run(docs.clone())).unwrap())
    });
}

criterion_group!(benches, bench_ingestion);
criterion_main!(benches);
