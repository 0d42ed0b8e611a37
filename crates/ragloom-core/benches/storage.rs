//! Document store throughput: adding, persisting, loading and decoding a
//! store of 10,000 nodes (about 16 MB of `docstore.json`).
#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::storage::{DocStore, SimpleDocumentStore};
use ragloom_core::{Node, NodeRelationship};
use std::hint::black_box;

const NODES: usize = 10_000;

fn nodes() -> Vec<Node> {
    let words = [
        "alpha", "beta", "gamma", "délta", "epsilon", "zeta", "eta", "thêta",
    ];
    let docs: Vec<Node> = (0..NODES / 10)
        .map(|d| {
            Node::document(format!("document {d}"))
                .with_id(format!("doc-{d}"))
                .with_metadata("file_name", format!("file_{d}.txt"))
        })
        .collect();
    (0..NODES)
        .map(|i| {
            let text: Vec<&str> = (0..90)
                .map(|w| words[(i * 7 + w * 3) % words.len()])
                .collect();
            Node::text_node(text.join(" "))
                .with_id(format!("node-{i:05}"))
                .with_metadata("file_name", format!("file_{}.txt", i / 10))
                .with_metadata("page", i as u64 % 40)
                .with_relationship(
                    NodeRelationship::Source,
                    docs[i / 10].as_related_node_info(),
                )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let nodes = nodes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("docstore.json");
    let store = SimpleDocumentStore::new();
    rt.block_on(store.add_documents(&nodes, true, true))
        .unwrap();
    rt.block_on(store.persist(&path)).unwrap();
    eprintln!(
        "docstore.json: {} bytes",
        std::fs::metadata(&path).unwrap().len()
    );

    let mut g = c.benchmark_group("docstore_10k");
    g.sample_size(10);
    g.bench_function("add_documents", |b| {
        b.iter(|| {
            let s = SimpleDocumentStore::new();
            rt.block_on(s.add_documents(black_box(&nodes), true, true))
                .unwrap();
            s
        })
    });
    g.bench_function("persist", |b| {
        b.iter(|| rt.block_on(store.persist(&path)).unwrap())
    });
    g.bench_function("from_persist_path", |b| {
        b.iter(|| SimpleDocumentStore::from_persist_path(black_box(&path)).unwrap())
    });
    g.bench_function("docs", |b| {
        b.iter(|| rt.block_on(store.docs()).unwrap().len())
    });
    g.bench_function("delete_ref_doc_x100", |b| {
        b.iter_batched(
            || SimpleDocumentStore::from_persist_path(&path).unwrap(),
            |s| {
                for d in 0..100 {
                    rt.block_on(s.delete_ref_doc(&format!("doc-{}", d * 10)))
                        .unwrap();
                }
                s
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
