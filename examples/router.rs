//! Routing: two indexes (Alice in Wonderland, As You Like It) behind a
//! `RouterQueryEngine` that lets an LLM pick the right one for each question.
//!
//! ```sh
//! cargo run -p ragloom-examples --example router
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the LLM is a
//! `MockLlm` playing scripted replies — the selector's JSON choice and the
//! answers — so what this shows is the flow (which prompt went where, which
//! engine ran, which passages it read), not a model's judgement.

use ragloom::llms::MockLlm;
use ragloom::prelude::*;
use ragloom::query_engine::RouterQueryEngine;
use ragloom::response_synthesizers::get_response_synthesizer;
use ragloom::selectors::{LLMMultiSelector, LLMSingleSelector};
use ragloom::tools::QueryEngineTool;
use std::path::Path;
use std::sync::Arc;

/// A query engine over one file of `examples/data`, as a tool the router can choose.
async fn file_tool(
    file: &str,
    name: &str,
    description: &str,
    llm: Arc<dyn Llm>,
) -> Result<QueryEngineTool> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(file);
    let documents = SimpleDirectoryReader::from_files([path])
        .load_data()
        .await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;
    let engine = index
        .query_engine_builder()
        .similarity_top_k(2)
        .llm(llm)
        .build()?;
    Ok(QueryEngineTool::from_defaults(Arc::new(engine))
        .with_name(name)
        .with_description(description))
}

fn show_calls(llm: &MockLlm) {
    for (i, request) in llm.requests().iter().enumerate() {
        let prompt = request.prompt_text();
        let first_line = prompt.lines().next().unwrap_or_default();
        println!(
            "  LLM call {}: {} characters, starting \"{first_line}\"",
            i + 1,
            prompt.chars().count()
        );
    }
    llm.clear_requests();
}

fn show_response(response: &Response) {
    if let Some(selection) = response.metadata.get("selector_result") {
        println!("  selector chose: {selection}");
    }
    println!("  answer: {response}");
    for source in &response.source_nodes {
        let file = source
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        println!("  source: {file}, score {:.3}", source.get_score());
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let llm = Arc::new(MockLlm::scripted([
        // 1. single selection, then the chosen engine's answer
        r#"[{"choice": 1, "reason": "The White Rabbit is a character of Alice's Adventures in Wonderland."}]"#,
        "(scripted) It took a watch out of its waistcoat-pocket.",
        // 2. multi selection, both engines' answers, then the combined answer
        r#"```json
[{"choice": 1, "reason": "Alice falls asleep and dreams."}, {"choice": 2, "reason": "The play is set in the forest of Arden."}]
```"#,
        "(scripted) Alice dreams of a rabbit-hole.",
        "(scripted) The exiled duke lives in the forest of Arden.",
        "(scripted) One story happens in a dream, the other in a forest.",
    ]));
    let alice = file_tool(
        "alice29.txt",
        "alice",
        "Lewis Carroll's Alice's Adventures in Wonderland: Alice, the White Rabbit, the Queen of Hearts.",
        llm.clone(),
    )
    .await?;
    let play = file_tool(
        "asyoulik.txt",
        "as_you_like_it",
        "Shakespeare's As You Like It: Rosalind, Orlando and the forest of Arden.",
        llm.clone(),
    )
    .await?;

    println!("One engine per question (LLMSingleSelector):");
    let router = RouterQueryEngine::builder(vec![alice.clone(), play.clone()])
        .selector(Arc::new(LLMSingleSelector::new(llm.clone())))
        .build()?;
    let response = router
        .query(&"What did the White Rabbit take out of its waistcoat-pocket?".into())
        .await?;
    show_calls(&llm);
    show_response(&response);

    println!("\nSeveral engines, answers combined (LLMMultiSelector):");
    // The answers are combined by tree summarize, as in LlamaIndex (the
    // builder's default when given `.llm`; named here since we pass a selector).
    let summarizer = get_response_synthesizer(llm.clone(), ResponseMode::TreeSummarize)?;
    let router = RouterQueryEngine::builder(vec![alice, play])
        .selector(Arc::new(LLMMultiSelector::new(llm.clone())))
        .summarizer(summarizer)
        .build()?;
    let response = router
        .query(&"Where do the two stories take place?".into())
        .await?;
    show_calls(&llm);
    show_response(&response);
    Ok(())
}
