//! BM25 on 100k nodes made from the public-domain corpus sources: building
//! the index (tokenize, stem, postings) and answering a query (top 10).

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::Node;
use ragloom_core::retrievers::BM25Retriever;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

const NUM_NODES: usize = 100_000;

/// `sources/` of the shared corpus.
fn sources_dir() -> PathBuf {
    common::corpus_dir().join("sources")
}

/// 100k nodes of three lines each, the lines drawn from every source file in
/// a fixed pattern so that nodes differ.
fn corpus_nodes() -> Vec<Node> {
    let mut lines: Vec<String> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(sources_dir())
        .unwrap_or_else(|e| panic!("cannot list the corpus sources: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    names.sort();
    for p in names {
        let text = std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
        lines.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| l.len() > 20)
                .map(String::from),
        );
    }
    assert!(!lines.is_empty(), "the corpus sources hold no text");
    let n = lines.len();
    (0..NUM_NODES)
        .map(|i| {
            let text = format!(
                "{} {} {}",
                lines[i % n],
                lines[(i * 7 + 3) % n],
                lines[(i * 13 + 5) % n]
            );
            Node::text_node(text).with_id(format!("node-{i}"))
        })
        .collect()
}

fn bench_bm25(c: &mut Criterion) {
    let nodes = corpus_nodes();
    let mut group = c.benchmark_group("bm25");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("build_100k", |b| {
        b.iter(|| BM25Retriever::from_defaults(black_box(nodes.clone()), 10))
    });
    let retriever = match BM25Retriever::from_defaults(nodes, 10) {
        Ok(r) => r,
        Err(e) => panic!("building the index failed: {e}"),
    };
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(10));
    for (name, query) in [
        ("query_short_100k", "Alice rabbit"),
        (
            "query_long_100k",
            "what did the queen say to the king about the garden and the roses",
        ),
        ("query_rare_100k", "telegraphic electricity experiments"),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| retriever.retrieve_str(black_box(query)))
        });
    }
    // LlamaIndex's BM25 folder: persisting it and loading it back.
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("no temporary directory: {e}"),
    };
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("persist_100k", |b| b.iter(|| retriever.persist(dir.path())));
    group.bench_function("from_persist_dir_100k", |b| {
        b.iter(|| BM25Retriever::from_persist_dir(dir.path()))
    });
    group.finish();
}

criterion_group!(benches, bench_bm25);
criterion_main!(benches);
