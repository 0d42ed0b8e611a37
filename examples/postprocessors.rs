//! Node postprocessors (LlamaIndex's "sentence window retrieval" recipe):
//! index single sentences, then show the LLM each hit's surrounding window
//! and let an LLM rerank the hits before the answer is synthesized.
//!
//! ```sh
//! cargo run -p ragloom-examples --example postprocessors
//! ```
//!
//! It runs offline: `HashEmbedding` embeds, and both LLMs are `MockLlm`s —
//! the reranker plays a scripted "Doc: n, Relevance: m" reply, the answering
//! one echoes its prompt — so this shows the flow, not a model's judgement.

use ragloom::llms::MockLlm;
use ragloom::node_parser::{NodeParser, SentenceWindowNodeParser};
use ragloom::postprocessor::{LLMRerank, MetadataReplacementPostProcessor};
use ragloom::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// The first `n` characters of `s`, on one line.
fn short(s: &str, n: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one_line.chars().take(n).collect();
    if cut.len() < one_line.len() {
        format!("{cut}...")
    } else {
        cut
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    println!("(Both LLMs are MockLlms: this shows the flow, not a model's answers.)\n");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/alice29.txt");
    let documents = SimpleDirectoryReader::from_files([path])
        .load_data()
        .await?;

    // 1. One node per sentence, three sentences each side kept in metadata.
    let parser = SentenceWindowNodeParser::new().build()?;
    let nodes = parser.get_nodes_from_documents(&documents)?;
    println!("SentenceWindowNodeParser: {} sentence nodes", nodes.len());
    if let Some(n) = nodes.get(40) {
        println!("  node 40 text:   {}", short(&n.text, 90));
        let window = n.metadata["window"].as_str().unwrap_or_default();
        println!("  node 40 window: {}\n", short(window, 200));
    }
    let index = VectorStoreIndex::builder(Arc::new(HashEmbedding::new(1024)))
        .from_nodes(nodes)
        .await?;

    // 2. Replace each hit's sentence by its window, then let an LLM rerank.
    let rerank_llm = Arc::new(MockLlm::scripted([
        "Doc: 3, Relevance: 9\nDoc: 1, Relevance: 6\nDoc: 12, Relevance: 10 (no such document: ignored)",
    ]));
    let answer_llm = Arc::new(MockLlm::new());
    let engine = index
        .query_engine_builder()
        .similarity_top_k(5)
        .llm(answer_llm.clone())
        .node_postprocessor(Arc::new(MetadataReplacementPostProcessor::new("window")))
        .node_postprocessor(Arc::new(LLMRerank::new(rerank_llm.clone()).top_n(2)))
        .build()?;

    let question: QueryBundle =
        "What did the White Rabbit take out of its waistcoat-pocket?".into();
    println!("Question: {}\n", question.query_str);
    let retrieved = engine.retriever().retrieve(&question).await?;
    println!("Retrieved sentences (top 5):");
    for (i, n) in retrieved.iter().enumerate() {
        println!(
            "  {}. {:.3}  {}",
            i + 1,
            n.get_score(),
            short(&n.node.text, 80)
        );
    }

    let response = engine.query(&question).await?;
    if let Some(request) = rerank_llm.requests().first() {
        let prompt = request.prompt_text();
        println!(
            "\nLLMRerank sent one batch ({} lines); the scripted reply picks documents 3 and 1.",
            prompt.lines().count()
        );
    }
    println!("Kept after rerank (score = relevance), text now the window:");
    for n in &response.source_nodes {
        println!("  {:.0}  {}", n.get_score(), short(&n.node.text, 110));
    }
    println!(
        "\nAnswer (the echoing MockLlm returns its prompt; {} characters): {}",
        response.response.as_deref().unwrap_or_default().len(),
        short(response.response.as_deref().unwrap_or_default(), 120)
    );
    Ok(())
}
