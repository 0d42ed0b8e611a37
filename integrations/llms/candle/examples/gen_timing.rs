//! Times in-process generation on a GGUF file: prompt processing and decoding
//! separately, greedy, on a prompt cut to a given number of tokens. Prints one
//! JSON line per run; `benches/gen_vs_llamacpp.py` runs it beside llama.cpp.
//!
//! cargo run --release -p ragloom-llms-candle --example gen_timing -- GGUF TEXT PROMPT_TOKENS NEW_TOKENS RUNS [candle|llama-cpp]
//!
//! The llama.cpp engine needs `--features llama-cpp`.

use ragloom_core::llms::Llm;
use ragloom_llms_candle::{CandleLlm, Engine};
use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (engine, args) = match args.as_slice() {
        [rest @ .., last] if last == "llama-cpp" => (Engine::LlamaCpp, rest),
        [rest @ .., last] if last == "candle" => (Engine::Candle, rest),
        all => (Engine::Candle, all),
    };
    let [_, gguf, text, prompt_tokens, new_tokens, runs] = args else {
        return Err(
            "usage: gen_timing GGUF TEXT_FILE PROMPT_TOKENS NEW_TOKENS RUNS [candle|llama-cpp]"
                .into(),
        );
    };
    let (want, new_tokens): (usize, usize) = (prompt_tokens.parse()?, new_tokens.parse()?);
    let words: Vec<String> = std::fs::read_to_string(text)?
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let one = CandleLlm::builder(gguf)
        .engine(engine)
        .max_new_tokens(1)
        .temperature(0.0)
        .build()?;
    // The longest run of words of at most `want` tokens (a BOS, where the
    // model adds one, comes on top; the reply reports the count).
    let (mut lo, mut hi) = (1, words.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if one.tokenize(&words[..mid].join(" "))?.len() <= want {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let prompt = words[..lo].join(" ");
    let full = CandleLlm::builder(gguf)
        .engine(engine)
        .max_new_tokens(new_tokens)
        .temperature(0.0)
        .build()?;
    for _ in 0..runs.parse::<usize>()? {
        let started = Instant::now();
        let first = one.complete(&prompt, true).await?;
        let prompt_seconds = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let all = full.complete(&prompt, true).await?;
        let seconds = started.elapsed().as_secs_f64();
        let usage = all.usage.ok_or("no token usage")?;
        let prompt_n = first.usage.ok_or("no token usage")?.prompt_tokens;
        // The full run repeats the prompt: what it took beyond the one-token
        // run is the decoding of the remaining tokens.
        let decoded = usage.completion_tokens.saturating_sub(1);
        if decoded == 0 || seconds <= prompt_seconds {
            return Err(format!(
                "nothing to time: {} token(s) generated in {seconds:.3} s, the prompt took {prompt_seconds:.3} s",
                usage.completion_tokens
            )
            .into());
        }
        let decode_seconds = seconds - prompt_seconds;
        println!(
            "{}",
            serde_json::json!({
                "prompt": prompt,
                "prompt_tokens": prompt_n,
                "prompt_tokens_per_s": prompt_n as f64 / prompt_seconds,
                "completion_tokens": usage.completion_tokens,
                "decode_tokens_per_s": decoded as f64 / decode_seconds,
            })
        );
    }
    Ok(())
}
