//! The four chat modes side by side: the same two-turn conversation with
//! `Simple`, `CondenseQuestion`, `Context` and `CondensePlusContext`
//! engines (LlamaIndex's `index.as_chat_engine(chat_mode=...)`), printing
//! every message each one sends to the model.
//!
//! ```sh
//! cargo run -p ragloom-examples --example chat_modes
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the model is a
//! `MockLlm` playing scripted replies (the answers, and the standalone
//! questions the condensing modes ask for), so what this shows is what each
//! engine does around the model — which calls it makes, what it retrieves
//! with, what it puts in the messages — not a model's judgement.

use ragloom::chat_engine::{ChatEngine, ChatMode};
use ragloom::llms::{MockLlm, MockRequest, MockRequestKind};
use ragloom::prelude::*;
use std::path::Path;
use std::sync::Arc;

const TURNS: [&str; 2] = [
    "Who does Alice follow down the rabbit hole?",
    "What did he take out of his pocket?",
];

/// The model's lines for one mode, in the order the engine asks for them.
fn script(mode: ChatMode) -> Vec<&'static str> {
    let first = "(scripted) She follows the White Rabbit.";
    let second = "(scripted) A watch, out of his waistcoat-pocket.";
    let standalone = "What did the White Rabbit take out of his pocket?";
    match mode {
        // No condensing: one call per turn.
        ChatMode::Simple | ChatMode::Context => vec![first, second],
        // The first turn has no history, so nothing to condense; the second
        // asks for a standalone question first.
        _ => vec![first, standalone, second],
    }
}

/// One line per message (or one for a completion's prompt): its role, its
/// start, and its length when it is long; with `full`, every line of it.
fn show_request(i: usize, request: &MockRequest, full: bool) {
    let kind = match request.kind {
        MockRequestKind::Complete => "complete",
        _ => "chat",
    };
    println!("    call {i} ({kind}):");
    let parts: Vec<(&str, &str)> = match &request.prompt {
        Some(prompt) => vec![("prompt", prompt.as_str())],
        None => request
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect(),
    };
    for (role, text) in parts {
        if full {
            println!("      {role:>9}:");
            for line in text.lines() {
                println!("           | {line}");
            }
            continue;
        }
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let shown: String = flat.chars().take(76).collect();
        let length = text.chars().count();
        if shown.chars().count() < flat.chars().count() {
            println!("      {role:>9}: {shown} ... ({length} characters)");
        } else {
            println!("      {role:>9}: {shown}");
        }
    }
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

    for mode in [
        ChatMode::Simple,
        ChatMode::CondenseQuestion,
        ChatMode::Context,
        ChatMode::CondensePlusContext,
    ] {
        println!("== ChatMode::{mode:?} (\"{}\") ==", mode.as_str());
        let model = Arc::new(MockLlm::scripted(script(mode)).chat_model(true));
        let engine: Arc<dyn ChatEngine> = index.as_chat_engine(mode, model.clone())?;
        for message in TURNS {
            model.clear_requests();
            let response = engine.chat(message).await?;
            println!("  User: {message}");
            // What the engine looked up: the retriever's message, or the
            // question it put to the query engine.
            for source in &response.sources {
                println!(
                    "    {} called with {}, {} nodes",
                    source.tool_name,
                    source.raw_input,
                    response.source_nodes.len()
                );
            }
            // A turn of two calls is a condensing one: the first call asks
            // for the standalone question, and shows how the history is sent.
            let requests = model.requests();
            for (i, request) in requests.iter().enumerate() {
                show_request(i + 1, request, i == 0 && requests.len() == 2);
            }
            println!("  Assistant: {response}");
        }
        println!(
            "  History kept: {} messages\n",
            engine.chat_history().await?.len()
        );
    }
    Ok(())
}
