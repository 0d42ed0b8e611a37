//! SimpleDirectoryReader throughput: many small files and the shared corpus,
//! loaded serially and concurrently.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::readers::{Reader, SimpleDirectoryReader};
use std::hint::black_box;

fn bench_readers(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..500 {
        let dir = tmp.path().join(format!("d{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!("File {i}. ").repeat(200);
        std::fs::write(dir.join(format!("f{i:03}.txt")), text).unwrap();
    }
    let mut group = c.benchmark_group("simple_directory_reader");
    group.sample_size(20);
    for workers in [1, 8] {
        let reader = SimpleDirectoryReader::new(tmp.path())
            .recursive(true)
            .num_workers(workers);
        group.bench_function(format!("500_small_files/workers_{workers}"), |b| {
            b.iter(|| black_box(rt.block_on(reader.load_data()).unwrap().len()))
        });
    }
    let listing = SimpleDirectoryReader::new(tmp.path()).recursive(true);
    group.bench_function("500_small_files/list_only", |b| {
        b.iter(|| black_box(listing.input_files().unwrap().len()))
    });
    if let Some(corpus) = common::find_corpus_dir() {
        for workers in [1, 8] {
            let reader = SimpleDirectoryReader::new(&corpus)
                .recursive(true)
                .required_exts([".txt"])
                .num_workers(workers);
            group.bench_function(format!("corpus/workers_{workers}"), |b| {
                b.iter(|| black_box(rt.block_on(reader.load_data()).unwrap().len()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_readers);
criterion_main!(benches);
