//! Storage throughput: a document store of 10,000 nodes (about 16 MB of
//! `docstore.json`): adding, persisting, loading, decoding; and a whole
//! `VectorStoreIndex` of 100,000 nodes with 384-dimensional embeddings
//! (about 0.9 GB on disk): persisting its storage context and loading it back.
//! `benches/python/storage.py` times the same index in LlamaIndex.
#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::indices::{VectorStoreIndex, load_index_from_storage};
use ragloom_core::storage::kvstore::KvData;
use ragloom_core::storage::{DocStore, SimpleDocumentStore, StorageContext};
use ragloom_core::{MockEmbedding, Node, NodeRelationship};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const NODES: usize = 10_000;
const INDEX_NODES: usize = 100_000;
const DIM: usize = 384;

fn nodes() -> Vec<Node> {
    nodes_of(NODES, 0)
}

/// `n` nodes of ~90 words, one source document per 10 nodes, with
/// `dim`-dimensional embeddings (none when 0): the shape of
/// `benches/python/storage.py`'s nodes.
fn nodes_of(n: usize, dim: usize) -> Vec<Node> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let words = [
        "alpha", "beta", "gamma", "délta", "epsilon", "zeta", "eta", "thêta",
    ];
    let docs: Vec<Node> = (0..n / 10)
        .map(|d| {
            Node::document(format!("document {d}"))
                .with_id(format!("doc-{d}"))
                .with_metadata("file_name", format!("file_{d}.txt"))
        })
        .collect();
    (0..n)
        .map(|i| {
            let text: Vec<&str> = (0..90)
                .map(|w| words[(i * 7 + w * 3) % words.len()])
                .collect();
            let node = Node::text_node(text.join(" "))
                .with_id(format!("node-{i:06}"))
                .with_metadata("file_name", format!("file_{}.txt", i / 10))
                .with_metadata("page", i as u64 % 40)
                .with_relationship(
                    NodeRelationship::Source,
                    docs[i / 10].as_related_node_info(),
                );
            if dim == 0 {
                node
            } else {
                node.with_embedding((0..dim).map(|_| next()).collect())
            }
        })
        .collect()
}

/// Persisting and loading a whole index of 100,000 embedded nodes.
fn index_bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let embed = Arc::new(MockEmbedding::new(DIM));
    let index = rt
        .block_on(VectorStoreIndex::builder(embed.clone()).from_nodes(nodes_of(INDEX_NODES, DIM)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(index.storage_context().persist(dir.path()))
        .unwrap();
    let mut total = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        let len = entry.metadata().unwrap().len();
        eprintln!("{}: {len} bytes", entry.file_name().to_string_lossy());
        total += len;
    }
    eprintln!("index folder: {total} bytes");

    let mut g = c.benchmark_group("index_100k_x_384");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("persist", |b| {
        b.iter(|| {
            rt.block_on(index.storage_context().persist(dir.path()))
                .unwrap()
        })
    });
    g.bench_function("load", |b| {
        b.iter(|| {
            rt.block_on(async {
                let sc = StorageContext::from_persist_dir(dir.path()).await.unwrap();
                load_index_from_storage(sc, embed.clone(), None)
                    .await
                    .unwrap()
            })
        })
    });
    // How serde_json reads the docstore: the file read at once and parsed
    // from the slice (what ragloom does), or parsed through a BufReader.
    let docstore = dir.path().join("docstore.json");
    g.bench_function("docstore_parse_from_slice", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&docstore).unwrap();
            serde_json::from_slice::<KvData>(&bytes).unwrap().len()
        })
    });
    g.bench_function("docstore_parse_from_reader", |b| {
        b.iter(|| {
            let file = std::io::BufReader::new(std::fs::File::open(&docstore).unwrap());
            serde_json::from_reader::<_, KvData>(file).unwrap().len()
        })
    });
    g.finish();
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

criterion_group!(benches, bench, index_bench);
criterion_main!(benches);
