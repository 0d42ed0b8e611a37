//! The starter with a real LLM: load `examples/data/`, index it, and answer a
//! question with any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, OpenAI itself).
//!
//! ```sh
//! # e.g. the llama.cpp server the CI uses:  source .ci/setup/llm-server.sh
//! OPENAI_API_BASE=http://127.0.0.1:18439/v1 \
//!   cargo run -p ragloom-examples --features openai --example openai_like -- "Who is the White Rabbit?"
//! ```
//!
//! Configuration, from the environment:
//! - `OPENAI_API_BASE` (required): the server's base URL, ending in `/v1`.
//! - `OPENAI_API_KEY`: its key, if it wants one.
//! - `OPENAI_MODEL`: the model name (default `local-model`; llama.cpp ignores it).
//! - `OPENAI_CONTEXT_WINDOW`: the model's context window in tokens (default 2048).
//!
//! Embeddings come from `HashEmbedding` (offline, word overlap), so only the
//! answer needs the server. The answer streams as it is generated.

use futures::StreamExt;
use ragloom::openai::OpenAILike;
use ragloom::prelude::*;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(api_base) = std::env::var("OPENAI_API_BASE")
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        eprintln!(
            "OPENAI_API_BASE is not set: point it at an OpenAI-compatible server, e.g.\n  \
             OPENAI_API_BASE=http://127.0.0.1:8080/v1 cargo run -p ragloom-examples --features openai --example openai_like\n\
             (`source .ci/setup/llm-server.sh` starts a local llama.cpp server and exports \
             RAGLOOM_TEST_OPENAI_BASE_URL, which you can use as OPENAI_API_BASE)."
        );
        return ExitCode::from(2);
    };
    match run(&api_base).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(api_base: &str) -> Result<()> {
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "What did the White Rabbit take out of its waistcoat-pocket?".to_string()
    });
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "local-model".to_string());
    let context_window: usize = match std::env::var("OPENAI_CONTEXT_WINDOW") {
        Ok(v) => v.trim().parse().map_err(|_| {
            Error::InvalidInput(format!(
                "OPENAI_CONTEXT_WINDOW must be a number of tokens, got {v:?}"
            ))
        })?,
        Err(_) => 2048,
    };

    // 1. Load and index. Chunks of 256 tokens, so two of them and the answer
    //    fit a small model's window in one call.
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let splitter: Arc<dyn TransformComponent> = Arc::new(
        SentenceSplitter::new()
            .chunk_size(256)
            .chunk_overlap(20)
            .build()?,
    );
    let index = VectorStoreIndex::builder(Arc::new(HashEmbedding::new(1024)))
        .transformations(vec![splitter])
        .from_documents(&documents)
        .await?;
    println!(
        "Indexed {} documents from {}",
        documents.len(),
        data_dir.display()
    );

    // 2. The LLM: any OpenAI-compatible chat endpoint.
    let llm = OpenAILike::builder(model)
        .api_base(api_base)
        .is_chat_model(true)
        .context_window(context_window)
        .max_tokens(256)
        .build()?;

    // 3. Ask, streaming the answer.
    let engine = RetrieverQueryEngine::builder(Arc::new(index.as_retriever().similarity_top_k(2)))
        .llm(Arc::new(llm))
        .build()?;
    println!("Question: {question}\n\nAnswer:");
    let mut streaming = engine
        .stream_query(&QueryBundle::new(question.as_str()))
        .await?;
    while let Some(delta) = streaming.response_gen.next().await {
        print!("{}", delta?);
        let _ = std::io::stdout().flush();
    }
    println!("\n\nSources:");
    for (rank, n) in streaming.source_nodes.iter().enumerate() {
        let file = n
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let preview: String = n.node.get_text().chars().take(120).collect();
        println!(
            "[{}] {:.3} {file}: {}…",
            rank + 1,
            n.get_score(),
            preview.replace('\n', " ")
        );
    }
    Ok(())
}
