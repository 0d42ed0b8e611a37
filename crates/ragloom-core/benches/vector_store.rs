//! SimpleVectorStore query speed: top-10 over 10,000, 100,000 and 1,000,000
//! vectors of dimension 384, unfiltered and with a filter keeping ~10%, and
//! (at 100,000) against a memory floor.
//!
//! The floor sums the same 154 MB of f32 once: no scan that reads every
//! vector can beat it, so `query / floor` is the overhead of scoring and
//! ranking. Data come from a fixed-seed xorshift, so every run sees the same.

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::Node;
use ragloom_core::vector_stores::{
    MetadataFilter, MetadataFilters, SimpleVectorStore, VectorStore, VectorStoreQuery,
};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Duration;

const DIM: usize = 384;

/// Marsaglia's xorshift64: tiny, seeded, deterministic.
struct XorShift(u64);

impl XorShift {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // 24 random bits into [-1, 1).
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn vector(&mut self) -> Vec<f32> {
        (0..DIM).map(|_| self.next_f32()).collect()
    }
}

fn build_store(rng: &mut XorShift, n: usize) -> SimpleVectorStore {
    let store = SimpleVectorStore::new();
    // Added in slices, so the nodes' own copies of the vectors never all
    // coexist with the store's.
    for start in (0..n).step_by(10_000) {
        let nodes: Vec<Node> = (start..n.min(start + 10_000))
            .map(|i| {
                Node::text_node("")
                    .with_id(format!("node-{i:07}"))
                    .with_metadata("bucket", i % 10)
                    .with_embedding(rng.vector())
            })
            .collect();
        futures::executor::block_on(store.add(&nodes)).unwrap_or_default();
    }
    store
}

/// Top-10, plain and with a filter keeping 10% of the nodes, over `n` vectors.
fn top_k(c: &mut Criterion, n: usize, label: &str) {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let store = build_store(&mut rng, n);
    assert_eq!(store.len(), n, "the bench store was not built");
    let query = rng.vector();

    let mut group = c.benchmark_group(format!("simple_vector_store_{label}_x_384"));
    group.sample_size(if n >= 1_000_000 { 10 } else { 30 });
    group.measurement_time(Duration::from_secs(if n >= 1_000_000 { 4 } else { 3 }));

    let plain = VectorStoreQuery::new(query.clone(), 10);
    group.bench_function("top10", |b| {
        b.iter(|| futures::executor::block_on(store.query(black_box(&plain))))
    });

    let filtered = VectorStoreQuery::new(query.clone(), 10)
        .with_filters(MetadataFilters::from_pairs([("bucket", 3)]));
    group.bench_function("top10_filter_10pct", |b| {
        b.iter(|| futures::executor::block_on(store.query(black_box(&filtered))))
    });

    // Alternating filters miss the store's one-entry cache of filtered
    // rows. An equality finds its rows in the store's index of `bucket`
    // (built by the first query); a range is evaluated on every row.
    let alternating = [3, 4].map(|bucket| {
        VectorStoreQuery::new(query.clone(), 10)
            .with_filters(MetadataFilters::from_pairs([("bucket", bucket)]))
    });
    let mut turn = 0usize;
    group.bench_function("top10_filter_10pct_uncached", |b| {
        b.iter(|| {
            turn += 1;
            futures::executor::block_on(store.query(black_box(&alternating[turn % 2])))
        })
    });
    let ranges = [3, 4].map(|bucket| {
        VectorStoreQuery::new(query.clone(), 10).with_filters(MetadataFilters::and([
            MetadataFilter::gte("bucket", bucket),
            MetadataFilter::lt("bucket", bucket + 1),
        ]))
    });
    group.bench_function("top10_range_filter_10pct_uncached", |b| {
        b.iter(|| {
            turn += 1;
            futures::executor::block_on(store.query(black_box(&ranges[turn % 2])))
        })
    });

    if n == 100_000 {
        // The floor: one pass over a buffer of the same size.
        let buffer: Vec<f32> = (0..n * DIM).map(|_| rng.next_f32()).collect();
        group.bench_function("memory_floor_sum_1_thread", |b| {
            b.iter(|| sum(black_box(&buffer)))
        });
        group.bench_function("memory_floor_sum_all_threads", |b| {
            b.iter(|| {
                black_box(&buffer)
                    .par_chunks(DIM * 1024)
                    .map(sum)
                    .sum::<f32>()
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    top_k(c, 10_000, "10k");
    top_k(c, 100_000, "100k");
    // Set RAGLOOM_BENCH_SKIP_1M to leave out the 1.5 GB store.
    if std::env::var_os("RAGLOOM_BENCH_SKIP_1M").is_none() {
        top_k(c, 1_000_000, "1m");
    }
}

/// A sum with independent lanes, so it runs at memory speed, not at the
/// latency of one dependent add chain.
fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = values.chunks_exact(16);
    let rest: f32 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    lanes.iter().sum::<f32>() + rest
}

criterion_group!(vector_store, benches);
criterion_main!(vector_store);
