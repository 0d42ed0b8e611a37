//! Ollama end to end: index `examples/data/` with an Ollama embedding model,
//! answer a question over it with an Ollama LLM, then stream a follow-up.
//!
//! ```sh
//! ollama pull llama3.2 && ollama pull nomic-embed-text
//! cargo run -p ragloom-examples --features ollama --example ollama -- "What did the White Rabbit take out of its waistcoat-pocket?"
//! ```
//!
//! `OLLAMA_HOST` says where the server is (default `127.0.0.1:11434`);
//! `RAGLOOM_OLLAMA_MODEL` and `RAGLOOM_OLLAMA_EMBED_MODEL` pick other models.
//! Without a reachable server it says so and exits with status 1.

use futures::StreamExt;
use ragloom::ollama::{Ollama, OllamaEmbedding};
use ragloom::prelude::*;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "What did the White Rabbit take out of its waistcoat-pocket?".to_string()
    });
    let llm_model = std::env::var("RAGLOOM_OLLAMA_MODEL").unwrap_or_else(|_| "llama3.2".into());
    let embed_model =
        std::env::var("RAGLOOM_OLLAMA_EMBED_MODEL").unwrap_or_else(|_| "nomic-embed-text".into());

    let embed = OllamaEmbedding::builder(&embed_model)
        .embed_batch_size(32)
        .request_timeout(Duration::from_secs(120))
        .build()?;
    // A one-word embedding answers fast and tells whether the server and model are there.
    if let Err(e) = embed.embed_query("ping").await {
        eprintln!(
            "Ollama is not usable at {} ({e}).\n\
             Start it with `ollama serve`, pull the models (`ollama pull {llm_model}`, \
             `ollama pull {embed_model}`), or set OLLAMA_HOST to your server's address.",
            embed.host()
        );
        std::process::exit(1);
    }
    let llm = Ollama::builder(&llm_model)
        .temperature(0.1)
        .request_timeout(Duration::from_secs(300))
        .build()?;
    println!(
        "Ollama at {}: LLM `{llm_model}`, embeddings `{embed_model}`",
        llm.host()
    );

    // 1. Load and index: every chunk is embedded by Ollama, in batches of 32.
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let index = VectorStoreIndex::builder(Arc::new(embed))
        .show_progress(true)
        .from_documents(&documents)
        .await?;

    // 2. Ask: retrieve the closest chunks, let the LLM answer from them.
    let engine = index.as_query_engine(Arc::new(llm.clone()))?;
    let response = engine.query(&QueryBundle::new(question.as_str())).await?;
    println!(
        "\nQ: {question}\nA: {}",
        response.response.unwrap_or_default()
    );
    for source in &response.source_nodes {
        let file = source
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        println!(
            "   source: {file} (score {:.3})",
            source.score.unwrap_or(0.0)
        );
    }

    // 3. Stream a follow-up straight from the LLM, token by token.
    print!("\nIn one sentence, who is the White Rabbit?\n> ");
    let mut stream = llm
        .stream_chat(&[ChatMessage::user(
            "In one sentence, who is the White Rabbit in Alice's Adventures in Wonderland?",
        )])
        .await?;
    let mut usage = None;
    while let Some(item) = stream.next().await {
        let item = item?;
        print!("{}", item.delta.unwrap_or_default());
        std::io::stdout().flush().ok();
        usage = item.usage.or(usage);
    }
    if let Some(u) = usage {
        println!(
            "\n({} prompt tokens, {} completion tokens)",
            u.prompt_tokens, u.completion_tokens
        );
    }
    Ok(())
}
