//! Splitting throughput on Paul Graham's essay: `SentenceSplitter` at the
//! defaults and at 512/50 (documents to nodes), and Punkt and the
//! tokenizer alone (counting, and tiktoken's encoding it replaced).
//! `benches/python/splitting.py` measures LlamaIndex on the same essay.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::node_parser::{NodeParser, PunktSentenceTokenizer, SentenceSplitter};
use ragloom_core::{Cl100kTokenizer, Node, Tokenizer};
use std::hint::black_box;

/// The essay from the shared corpus.
fn essay() -> String {
    let path = common::corpus_dir().join("paul_graham_essay.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn bench_splitting(c: &mut Criterion) {
    let text = essay();
    let doc = Node::document(text.clone()).with_id("essay");
    let docs = std::slice::from_ref(&doc);

    let default = SentenceSplitter::new();
    c.bench_function("sentence_splitter_default_essay", |b| {
        b.iter(|| default.get_nodes_from_documents(black_box(docs)))
    });

    let small = SentenceSplitter::new().chunk_size(512).chunk_overlap(50);
    c.bench_function("sentence_splitter_512_50_essay", |b| {
        b.iter(|| small.get_nodes_from_documents(black_box(docs)))
    });

    let tokenizer = Cl100kTokenizer::new();
    c.bench_function("cl100k_count_essay", |b| {
        b.iter(|| tokenizer.count(black_box(&text)))
    });

    // The counter before (tiktoken's encoding, then its length), for the ratio.
    c.bench_function("cl100k_encode_len_essay", |b| {
        b.iter(|| tokenizer.encode(black_box(&text)).len())
    });

    let punkt = PunktSentenceTokenizer::new();
    c.bench_function("punkt_span_tokenize_essay", |b| {
        b.iter(|| punkt.span_tokenize(black_box(&text)))
    });
}

criterion_group!(benches, bench_splitting);
criterion_main!(benches);
