//! PGVectorStore against the live server at `RAGLOOM_TEST_PG_URL` (skipped
//! when unset): adding 1,000 nodes of dimension 384, and top-10 queries over
//! 20,000 such nodes — exact scan, HNSW, a filter keeping ~10%, full text.
//!
//! Data come from a fixed-seed xorshift. The tables live in the schema
//! `rl_bench` (dropped first); figures include the round trip to the server.

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::Node;
use ragloom_core::vector_stores::{
    MetadataFilter, MetadataFilters, VectorStore, VectorStoreQuery, VectorStoreQueryMode,
};
use ragloom_vector_stores_postgres::{HnswOptions, PGVectorStore};
use std::hint::black_box;
use std::time::Duration;

const N: usize = 20_000;
const DIM: usize = 384;
const WORDS: [&str; 8] = [
    "fox", "dog", "cat", "rust", "table", "vector", "river", "stone",
];

struct XorShift(u64);

impl XorShift {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn vector(&mut self) -> Vec<f32> {
        (0..DIM)
            .map(|_| (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
            .collect()
    }
}

fn nodes(rng: &mut XorShift, start: usize, n: usize) -> Vec<Node> {
    (start..start + n)
        .map(|i| {
            let text = format!(
                "node {i} about the {} and the {}",
                WORDS[i % 8],
                WORDS[(i / 8) % 8]
            );
            Node::text_node(text)
                .with_id(format!("node-{i:06}"))
                .with_metadata("bucket", i % 10)
                .with_embedding(rng.vector())
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let Some(url) = std::env::var("RAGLOOM_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!("skipped: RAGLOOM_TEST_PG_URL is unset (source .ci/setup/postgres.sh)");
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
    let ok = |what: &str, r: ragloom_core::Result<()>| {
        if let Err(e) = r {
            panic!("{what}: {e}");
        }
    };
    let make = |table: &str, hnsw: bool| {
        let _guard = rt.enter();
        let mut b = PGVectorStore::from_url(url.clone())
            .schema_name("rl_bench")
            .table_name(table)
            .embed_dim(DIM)
            .hybrid_search(true);
        if hnsw {
            b = b.hnsw(HnswOptions::default());
        }
        b.build().unwrap_or_else(|e| panic!("{e}"))
    };
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        sqlx::query("DROP SCHEMA IF EXISTS rl_bench CASCADE")
            .execute(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    });
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);

    let scratch = make("scratch", false);
    let batch = nodes(&mut rng, 0, 1000);
    let mut g = c.benchmark_group("pgvector_add");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("add_1000_nodes_dim384", |b| {
        b.iter(|| ok("add", rt.block_on(scratch.add(&batch)).map(|_| ())))
    });
    g.finish();

    let exact = make("exact", false);
    let hnsw = make("hnsw", true);
    for start in (0..N).step_by(2000) {
        let chunk = nodes(&mut rng, start, 2000);
        ok("fill", rt.block_on(exact.add(&chunk)).map(|_| ()));
        ok("fill", rt.block_on(hnsw.add(&chunk)).map(|_| ()));
    }
    let query = VectorStoreQuery::new(rng.vector(), 10);
    let filtered = query
        .clone()
        .with_filters(MetadataFilters::and([MetadataFilter::eq("bucket", 3)]));
    let text = VectorStoreQuery {
        similarity_top_k: 10,
        ..Default::default()
    }
    .with_query_str("rust vector")
    .with_mode(VectorStoreQueryMode::TextSearch);
    let mut g = c.benchmark_group("pgvector_query_20k_dim384");
    g.sample_size(20);
    for (name, store, q) in [
        ("top10_exact", &exact, &query),
        ("top10_hnsw", &hnsw, &query),
        ("top10_exact_filter_10pct", &exact, &filtered),
        ("top10_text_search", &exact, &text),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let r = rt.block_on(store.query(black_box(q)));
                black_box(r.map(|r| r.ids.len()).unwrap_or_else(|e| panic!("{e}")))
            })
        });
    }
    g.finish();
}

criterion_group!(pgvector, benches);
criterion_main!(pgvector);
