//! HyDE (hypothetical document embeddings): a `TransformQueryEngine` with a
//! `HyDEQueryTransform` asks the LLM to write a passage answering the
//! question, and retrieves with that passage instead of the bare question.
//!
//! ```sh
//! cargo run -p ragloom-examples --example hyde
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the LLM is a
//! `MockLlm` playing scripted replies (the hypothetical passage and the
//! answer), so what this shows is the flow — the prompts sent, how the
//! passage changes what is retrieved — not a model's judgement.

use ragloom::indices::query::query_transform::HyDEQueryTransform;
use ragloom::llms::MockLlm;
use ragloom::prelude::*;
use ragloom::query_engine::TransformQueryEngine;
use std::path::Path;
use std::sync::Arc;

/// The file a node came from and its first words, on one line, marked when
/// it holds the scene the question is about.
fn describe(node: &NodeWithScore) -> String {
    let file = node
        .node
        .metadata
        .get("file_name")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let text = node.node.get_text();
    let words: Vec<&str> = text.split_whitespace().take(10).collect();
    let mark = if text.contains("DRINK ME") {
        "  <- the DRINK ME scene"
    } else {
        ""
    };
    format!(
        "{:.3}  {file}: \"{} ...\"{mark}",
        node.get_score(),
        words.join(" ")
    )
}

/// A prompt with long lines cut and a long middle elided, so the template
/// shows and the retrieved context does not flood the screen.
fn show_prompt(prompt: &str) {
    let lines: Vec<&str> = prompt.lines().collect();
    let print = |line: &str| {
        let shown: String = line.chars().take(90).collect();
        let cut = if shown.len() < line.len() { " ..." } else { "" };
        println!("    | {shown}{cut}");
    };
    if lines.len() <= 16 {
        lines.iter().for_each(|l| print(l));
        return;
    }
    lines[..8].iter().for_each(|l| print(l));
    println!("    | [... {} more lines of context ...]", lines.len() - 14);
    lines[lines.len() - 6..].iter().for_each(|l| print(l));
}

/// The hypothetical passage the scripted model writes: it uses the book's
/// words ("DRINK ME", "telescope", "ten inches high") where the question has
/// none of them.
const PASSAGE: &str = "Alice found a little bottle labelled DRINK ME on the glass table. \
It tasted of cherry-tart and toffee, and as she drank she felt herself shutting up like a \
telescope, until she was only ten inches high: the right size for the little door into the garden.";

#[tokio::main]
async fn main() -> Result<()> {
    println!(
        "(The model is a MockLlm playing scripted replies: this shows the flow, not a model's answers.)\n"
    );
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;

    // The transform is run twice below: once on its own to show the passage,
    // once inside the engine's query; then the engine answers.
    let llm = Arc::new(MockLlm::scripted([
        PASSAGE,
        PASSAGE,
        "(scripted) She drank from the bottle marked DRINK ME and shrank to ten inches.",
    ]));
    let inner: Arc<dyn QueryEngine> = Arc::new(
        index
            .query_engine_builder()
            .similarity_top_k(2)
            .llm(llm.clone())
            .build()?,
    );
    let hyde = HyDEQueryTransform::new(llm.clone()); // include_original(true), as in LlamaIndex
    let engine = TransformQueryEngine::new(inner.clone(), Arc::new(hyde));

    let question: QueryBundle = "Why did the heroine suddenly become so small?".into();
    println!("Question: {}\n", question.query_str);

    println!("Retrieved with the question alone:");
    for node in inner.retrieve(&question).await? {
        println!("  {}", describe(&node));
    }

    let transformed = engine.transform(&question).await?;
    println!("\nHyDE's query: the text is unchanged, the embedding strings are new:");
    println!("  query_str: {:?}", transformed.query_str);
    for (i, s) in transformed.embedding_strs().iter().enumerate() {
        println!("  embedding string {}: {s:?}", i + 1);
    }
    println!("  (retrieval embeds each string and uses their mean)");

    println!("\nRetrieved with the hypothetical passage and the question:");
    for node in inner.retrieve(&transformed).await? {
        println!("  {}", describe(&node));
    }
    llm.clear_requests();

    println!("\nengine.query(...) — the LLM calls it made:");
    let response = engine.query(&question).await?;
    for (i, request) in llm.requests().iter().enumerate() {
        println!("  call {}:", i + 1);
        show_prompt(&request.prompt_text());
    }
    println!("\nAnswer: {response}");
    println!("Sources:");
    for node in &response.source_nodes {
        println!("  {}", describe(node));
    }
    Ok(())
}
