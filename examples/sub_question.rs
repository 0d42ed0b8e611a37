//! Sub-questions: a `SubQuestionQueryEngine` splits a comparison into one
//! question per book, asks each book's query engine concurrently, and answers
//! from the sub-answers.
//!
//! ```sh
//! cargo run -p ragloom-examples --example sub_question
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and each LLM is a
//! `MockLlm` playing scripted replies (the planner's JSON sub-questions, each
//! book's answer, the final answer), so the output shows the flow and the
//! prompts, not a model's judgement.

use ragloom::llms::MockLlm;
use ragloom::prelude::*;
use ragloom::query_engine::SubQuestionQueryEngine;
use ragloom::tools::QueryEngineTool;
use std::path::Path;
use std::sync::Arc;

/// A query engine over one file of `examples/data`, answering with its own scripted LLM.
async fn book_tool(
    file: &str,
    name: &str,
    description: &str,
    answer: &str,
) -> Result<QueryEngineTool> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(file);
    let documents = SimpleDirectoryReader::from_files([path])
        .load_data()
        .await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;
    let llm = Arc::new(MockLlm::scripted([answer]));
    let engine = index
        .query_engine_builder()
        .similarity_top_k(2)
        .llm(llm)
        .build()?;
    Ok(QueryEngineTool::from_defaults(Arc::new(engine))
        .with_name(name)
        .with_description(description))
}

#[tokio::main]
async fn main() -> Result<()> {
    let tools = vec![
        book_tool(
            "alice29.txt",
            "alice",
            "Alice's Adventures in Wonderland by Lewis Carroll",
            "(scripted) Alice follows the White Rabbit down a rabbit-hole.",
        )
        .await?,
        book_tool(
            "asyoulik.txt",
            "as_you_like_it",
            "As You Like It by William Shakespeare",
            "(scripted) Rosalind flees to the forest of Arden in disguise.",
        )
        .await?,
    ];
    let planner = Arc::new(MockLlm::scripted([
        r#"```json
{"items": [
  {"sub_question": "How does Alice's adventure begin?", "tool_name": "alice"},
  {"sub_question": "How does Rosalind's journey begin?", "tool_name": "as_you_like_it"}
]}
```"#,
        "(scripted) Both heroines leave home by following or fleeing: Alice a rabbit, Rosalind a duke.",
    ]));
    let engine = SubQuestionQueryEngine::builder(tools)
        .llm(planner.clone())
        .verbose(true)
        .build()?;
    let question = "Compare how the journeys of Alice and Rosalind begin.";
    println!("Question: {question}\n");
    let response = engine.query(&question.into()).await?;

    let requests = planner.requests();
    if let Some(last) = requests.last() {
        println!(
            "\nThe final prompt, built from the sub-answers:\n{}",
            last.prompt_text()
        );
    }
    println!("\nAnswer: {response}");
    println!("Sources:");
    for source in &response.source_nodes {
        let origin = source
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("sub-answer");
        let text = source.node.get_text();
        let preview: String = text.chars().take(70).collect();
        println!("  [{origin}] {}", preview.replace('\n', " "));
    }
    if let Some(failed) = response.metadata.get("failed_sub_questions") {
        println!("Skipped sub-questions: {failed}");
    }
    Ok(())
}
