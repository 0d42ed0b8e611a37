//! LoadAndSearchToolSpec: a tool whose output is too big for a prompt is
//! split into a load tool (indexes the output) and `read_<name>` (searches it).
//!
//! ```sh
//! cargo run -p ragloom-examples --example load_and_search -- "What did the White Rabbit take out of its waistcoat-pocket?"
//! ```
//!
//! It runs offline: the wrapped tool reads a book from `examples/data/`,
//! embeddings come from `HashEmbedding` and the "LLM" is `MockLlm`, which
//! echoes its prompt, so the answer printed is the retrieved context.
//! An agent would call the two tools in the same order.

use ragloom::prelude::*;
use ragloom::tool;
use ragloom::tools::{LoadAndSearchToolSpec, ToolSpec, source_nodes_of};
use serde_json::json;
use std::sync::Arc;

/// Returns the full text of one of the example books (`alice29` or `asyoulik`).
#[tool]
fn fetch_book(
    /// The book's file name without `.txt`.
    name: String,
) -> std::result::Result<String, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(format!("{name}.txt"));
    std::fs::read_to_string(&path)
        .map_err(|e| format!("no book `{name}` ({}): {e}", path.display()))
}

#[tokio::main]
async fn main() -> Result<()> {
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "What did the White Rabbit take out of its waistcoat-pocket?".to_string()
    });
    let spec = LoadAndSearchToolSpec::from_defaults(
        Arc::new(fetch_book_tool()),
        Arc::new(HashEmbedding::new(1024)),
        Arc::new(MockLlm::new()),
    );
    let tools = spec.to_tool_list();
    for tool in &tools {
        println!(
            "tool `{}`: {}",
            tool.name(),
            tool.metadata().fn_schema_str()
        );
    }

    // Step 1, as a model would call it: the whole book goes into an index, not the prompt.
    let loaded = tools[0].call(json!({"name": "alice29"})).await?;
    println!("\n{} -> {}", tools[0].name(), loaded.content);

    // Step 2: a question over what was loaded.
    let answer = tools[1].call(json!({"query": question})).await?;
    println!(
        "\n{} -> {} characters (MockLlm echoes its prompt: the question and the retrieved passages)",
        tools[1].name(),
        answer.content.chars().count()
    );
    for source in source_nodes_of(&answer) {
        let passage: String = source.node.get_text().chars().take(300).collect();
        println!(
            "\n[score {:.3}] {passage}...",
            source.score.unwrap_or_default()
        );
    }
    Ok(())
}
