//! The retriever query engine (LlamaIndex's `index.as_query_engine(...)`):
//! retrieve the nearest chunks, drop the weak ones with a postprocessor,
//! synthesize an answer — then the same question streamed.
//!
//! ```sh
//! cargo run -p ragloom-examples --example query_engine
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the LLM is a
//! `MockLlm` playing scripted replies, so what this shows is the flow — what
//! was retrieved and kept, the prompt sent, the sources — not a model's
//! judgement.

use futures::StreamExt;
use ragloom::llms::MockLlm;
use ragloom::postprocessor::SimilarityPostprocessor;
use ragloom::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// The file a node came from, its score and its first words, on one line.
fn describe(node: &NodeWithScore) -> String {
    let file = node
        .node
        .metadata
        .get("file_name")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let words: Vec<&str> = node.node.get_text().split_whitespace().take(9).collect();
    format!(
        "{:.3}  {file}: \"{} ...\"",
        node.get_score(),
        words.join(" ")
    )
}

#[tokio::main]
async fn main() -> Result<()> {
    println!(
        "(The model is a MockLlm playing scripted replies: this shows the flow, not a model's answers.)\n"
    );
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;

    let answer = "(scripted) A watch: the White Rabbit took a watch out of its waistcoat-pocket.";
    let llm = Arc::new(MockLlm::scripted([answer, answer]));
    let cutoff = 0.125;
    let engine = index
        .query_engine_builder()
        .similarity_top_k(4)
        .llm(llm.clone())
        .response_mode(ResponseMode::Compact) // the default, named for the reader
        .node_postprocessor(Arc::new(SimilarityPostprocessor::new(cutoff)))
        .build()?;

    let question: QueryBundle =
        "What did the White Rabbit take out of its waistcoat-pocket?".into();
    println!("Question: {}\n", question.query_str);

    // The three steps of `query`, one at a time: `retrieve` already applies
    // the postprocessors, so ask the retriever itself for what came before.
    let retrieved = engine.retriever().retrieve(&question).await?;
    println!("Retrieved (top 4):");
    retrieved.iter().for_each(|n| println!("  {}", describe(n)));
    let kept = engine.retrieve(&question).await?;
    println!(
        "Kept by SimilarityPostprocessor({cutoff}): {} of {}",
        kept.len(),
        retrieved.len()
    );

    let response = engine.query(&question).await?;
    let requests = llm.requests();
    println!(
        "\nLLM calls: {} (compact packs the kept chunks into one prompt)",
        requests.len()
    );
    if let Some(request) = requests.first() {
        let prompt = request.prompt_text();
        let lines: Vec<&str> = prompt.lines().collect();
        for line in lines.iter().take(4) {
            println!("    | {line}");
        }
        println!(
            "    | [... {} more lines ...]",
            lines.len().saturating_sub(7)
        );
        for line in lines.iter().skip(lines.len().saturating_sub(3)) {
            println!("    | {line}");
        }
    }
    println!("\nAnswer: {response}");
    println!("Sources:");
    response
        .source_nodes
        .iter()
        .for_each(|n| println!("  {}", describe(n)));

    // Streaming: the sources are known before the first delta.
    let streaming = engine.stream_query(&question).await?;
    println!(
        "\nStreamed ({} sources up front):",
        streaming.source_nodes.len()
    );
    print!("  ");
    let mut deltas = streaming.response_gen;
    while let Some(delta) = deltas.next().await {
        print!("{}", delta?);
    }
    println!();
    Ok(())
}
