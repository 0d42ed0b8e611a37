//! An agent choosing between two knowledge bases: one `QueryEngineTool` per
//! document set in `examples/data/` (Alice in Wonderland, As You Like It),
//! and a ReAct agent that asks each in turn, then answers from both.
//!
//! ```sh
//! cargo run -p ragloom-examples --example agent_two_query_engines
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, the agent's model
//! is a `MockLlm` playing the replies a capable model gives, and each query
//! engine answers with its own scripted `MockLlm`. What is real is the
//! retrieval behind each tool, the agent's loop, and the messages it sends,
//! printed at the end.

use ragloom::agent::legacy::ReActAgent;
use ragloom::chat_engine::ChatEngine;
use ragloom::llms::{MockLlm, WhenExhausted};
use ragloom::prelude::*;
use ragloom::tools::{QueryEngineTool, Tool};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// A query engine tool over one file of `examples/data/`.
async fn book_tool(
    file: &str,
    name: &str,
    description: &str,
    answer: &str,
) -> Result<Arc<dyn Tool>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(file);
    let documents = SimpleDirectoryReader::from_files([path])
        .load_data()
        .await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;
    // The engine's own model: one scripted answer, then echoes.
    let llm = Arc::new(MockLlm::scripted([answer]).when_exhausted(WhenExhausted::Echo));
    let engine = Arc::new(index.as_query_engine(llm)?);
    Ok(Arc::new(
        QueryEngineTool::from_defaults(engine)
            .with_name(name)
            .with_description(description),
    ))
}

async fn run() -> Result<()> {
    let alice = book_tool(
        "alice29.txt",
        "alice",
        "Answers questions about Lewis Carroll's Alice's Adventures in Wonderland.",
        "Alice follows the White Rabbit down the rabbit-hole.",
    )
    .await?;
    let play = book_tool(
        "asyoulik.txt",
        "as_you_like_it",
        "Answers questions about Shakespeare's play As You Like It.",
        "Rosalind flees to the Forest of Arden.",
    )
    .await?;

    let llm = Arc::new(MockLlm::scripted([
        "Thought: The current language of the user is: English. I need to use a tool to help me answer the question.\n\
         Action: alice\nAction Input: {\"input\": \"Where does Alice go at the start of the story?\"}",
        "Thought: Now the play.\nAction: as_you_like_it\nAction Input: {\"input\": \"Where does Rosalind flee to?\"}",
        "Thought: I can answer without using any more tools. I'll use the user's language to answer\n\
         Answer: Alice goes down the rabbit-hole after the White Rabbit; Rosalind flees to the Forest of Arden.",
    ]));
    let agent = ReActAgent::builder(llm.clone())
        .tools(vec![alice, play])
        .verbose(true)
        .build()?;

    let question = "Where does Alice go, and where does Rosalind flee to?";
    println!("Question: {question}\n");
    let answer = agent.chat(question).await?;
    println!("\nAnswer: {}", answer.response);
    for source in &answer.sources {
        println!("- from `{}`: {}", source.tool_name, source.content);
    }
    println!(
        "{} retrieved chunks back the answer.",
        answer.source_nodes.len()
    );
    println!("\nThe agent's last request to its model:");
    if let Some(last) = llm.last_request() {
        for m in last.messages.iter().skip(1) {
            println!("[{}] {}", m.role, m.content);
        }
    }
    println!("\nMemory: {} messages.", agent.chat_history().await?.len());
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
