//! Postprocessor costs: `SentenceWindowNodeParser` on Paul Graham's essay
//! (documents to window nodes), the LLM-rerank reply parser, and the
//! reorder / recency / keyword postprocessors on 100 scored nodes.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ragloom_core::node_parser::{NodeParser, SentenceWindowNodeParser};
use ragloom_core::postprocessor::{
    FixedRecencyPostprocessor, KeywordNodePostprocessor, LongContextReorder, NodePostprocessor,
    default_parse_choice_select_answer_fn,
};
use ragloom_core::{Node, NodeWithScore};
use std::hint::black_box;

/// The essay from the shared corpus.
fn essay() -> String {
    let path = common::corpus_dir().join("paul_graham_essay.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn scored_nodes(n: usize) -> Vec<NodeWithScore> {
    (0..n)
        .map(|i| {
            let node = Node::text_node(format!(
                "Chunk {i} says the White Rabbit took a watch out of its waistcoat-pocket."
            ))
            .with_id(format!("n{i}"))
            .with_metadata("date", format!("2024-{:02}-{:02}", 1 + i % 12, 1 + i % 28));
            NodeWithScore::new(node, Some(((i * 37) % 100) as f32 / 100.0))
        })
        .collect()
}

fn bench_postprocessors(c: &mut Criterion) {
    let doc = Node::document(essay()).with_id("essay");
    let docs = std::slice::from_ref(&doc);
    let parser = SentenceWindowNodeParser::new();
    c.bench_function("sentence_window_essay", |b| {
        b.iter(|| parser.get_nodes_from_documents(black_box(docs)))
    });

    let reply: String = (1..=10)
        .map(|i| format!("Doc: {i}, Relevance: {}\n", 11 - i))
        .collect::<String>()
        + "Some closing remark the model added.";
    c.bench_function("parse_choice_select_10", |b| {
        b.iter(|| default_parse_choice_select_answer_fn(black_box(&reply), 10))
    });

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let nodes = scored_nodes(100);
    let run = |p: &dyn NodePostprocessor| {
        rt.block_on(p.postprocess_nodes(nodes.clone(), None))
            .map(|v| v.len())
    };
    c.bench_function("long_context_reorder_100", |b| {
        b.iter(|| run(black_box(&LongContextReorder::new())))
    });
    let recency = FixedRecencyPostprocessor::new().top_k(10);
    c.bench_function("fixed_recency_100", |b| b.iter(|| run(black_box(&recency))));
    let keyword = KeywordNodePostprocessor::new()
        .required_keywords(["White Rabbit", "watch"])
        .exclude_keywords(["Queen"]);
    c.bench_function("keyword_100", |b| b.iter(|| run(black_box(&keyword))));
}

criterion_group!(benches, bench_postprocessors);
criterion_main!(benches);
