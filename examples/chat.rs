//! Chat over `examples/data/`: index the books, then talk with a
//! condense-plus-context chat engine (LlamaIndex's `index.as_chat_engine()`),
//! stream an answer, and count the tokens every call cost.
//!
//! ```sh
//! cargo run --release -p ragloom-examples --example chat
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding`, and the model is a
//! `MockLlm` playing scripted replies (the condensed questions and the
//! answers), so what you see is what the engine does around the model: the
//! standalone question it retrieves with, the sources, the messages it
//! sends, the history it keeps. Put a real model (e.g. `ragloom-llms-openai`)
//! in its place to chat for real.

use futures::StreamExt;
use ragloom::callbacks::TokenCountingHandler;
use ragloom::chat_engine::{ChatEngine, ChatMode};
use ragloom::prelude::*;
use std::path::Path;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<()> {
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;

    // The model's lines, in the order the engine asks for them: turn 1 has no
    // history, so it is not condensed; later turns first ask for a
    // standalone question, then for the answer.
    let model = Arc::new(
        MockLlm::scripted([
            "Alice follows the White Rabbit.",
            "What did the White Rabbit take out of its waistcoat-pocket?",
            "He took a watch out of his waistcoat-pocket.",
            "Where did Rosalind go when she was banished?",
            "Rosalind went to the Forest of Arden, disguised as Ganymede.",
        ])
        .chat_model(true),
    );

    // Every LLM call and every embedded text is counted by the same handler.
    let tokens = TokenCountingHandler::new();
    let embed_model = tokens.wrap_embedding(Arc::new(HashEmbedding::new(1024)));
    let llm = tokens.wrap_llm(model.clone());
    let index = VectorStoreIndex::from_documents(&documents, embed_model).await?;
    println!(
        "Indexed {} documents ({} embedding tokens)\n",
        documents.len(),
        tokens.total_embedding_token_count()
    );

    // The default mode condenses the conversation into a standalone question,
    // retrieves with it and answers with the context in the system prompt.
    let engine: Arc<dyn ChatEngine> = index.as_chat_engine(ChatMode::default(), llm)?;

    for message in [
        "Who does Alice follow down the rabbit hole?",
        "What did he take out of his pocket?",
    ] {
        model.clear_requests();
        let response = engine.chat(message).await?;
        println!("User:      {message}");
        println!("Retrieved: {}", response.sources[0].raw_input["message"]);
        for n in &response.source_nodes {
            let file = n.node.metadata.get("file_name").and_then(|v| v.as_str());
            println!(
                "           {} (score {:.3})",
                file.unwrap_or("?"),
                n.get_score()
            );
        }
        let last = model.last_request();
        let sent = last
            .as_ref()
            .map(|r| r.messages.as_slice())
            .unwrap_or_default();
        let roles: Vec<&str> = sent.iter().map(|m| m.role.as_str()).collect();
        println!(
            "Sent:      {} calls; the answer's messages: {roles:?}",
            model.requests().len()
        );
        println!("Assistant: {response}\n");
    }

    // Streaming: deltas arrive as the model writes; the turn joins the
    // history once the stream ends.
    let message = "And where did Rosalind go?";
    let mut stream = engine.stream_chat(message).await?;
    println!("User:      {message}");
    print!("Assistant: ");
    while let Some(delta) = stream.response_gen.next().await {
        print!("{}", delta?);
    }
    println!("\n");

    println!("History: {} messages", engine.chat_history().await?.len());
    println!(
        "LLM tokens: {} prompt + {} completion = {} over {} calls",
        tokens.prompt_llm_token_count(),
        tokens.completion_llm_token_count(),
        tokens.total_llm_token_count(),
        tokens.llm_token_counts().len()
    );
    Ok(())
}
