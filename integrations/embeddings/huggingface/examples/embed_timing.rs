//! Times embedding a list of texts (one per line of a file) with a
//! sentence-transformers folder, several times; prints one JSON line per run.
//! `embed_vs_st.py` runs it interleaved with sentence-transformers.
//!
//! cargo run --release -p ragloom-embeddings-huggingface --example embed_timing -- FOLDER TEXTS RUNS BATCH

use ragloom_embeddings_huggingface::HuggingFaceEmbedding;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, folder, texts, runs, batch] = args.as_slice() else {
        return Err("usage: embed_timing FOLDER TEXTS_FILE RUNS BATCH".into());
    };
    let texts: Vec<String> = std::fs::read_to_string(texts)?
        .lines()
        .map(str::to_owned)
        .collect();
    let embed = HuggingFaceEmbedding::builder(folder)
        .embed_batch_size(batch.parse()?)
        .build()?;
    embed.embed_blocking(&texts[..texts.len().min(4)], "")?;
    for _ in 0..runs.parse::<usize>()? {
        let start = Instant::now();
        let vectors = embed.embed_blocking(&texts, "")?;
        let seconds = start.elapsed().as_secs_f64();
        println!("{{\"seconds\": {seconds}, \"texts\": {}}}", vectors.len());
    }
    Ok(())
}
