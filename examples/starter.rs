//! The starter: load `examples/data/`, build a vector index, persist it,
//! load it back, and ask a question — LlamaIndex's starter tutorial in Rust.
//!
//! ```sh
//! cargo run --release -p ragloom-examples --example starter -- "What did the White Rabbit take out of its waistcoat-pocket?"
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding` (word overlap, not
//! meaning). With no LLM configured it does not pretend to answer: it prints
//! the retrieved context, labelled as such, with each passage's score.

use ragloom::prelude::*;
use std::path::Path;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<()> {
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "What did the White Rabbit take out of its waistcoat-pocket?".to_string()
    });
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let persist_dir = Path::new("./storage");

    // 1. Load: every file of the folder becomes a Document with file metadata.
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    println!(
        "Loaded {} documents from {}",
        documents.len(),
        data_dir.display()
    );

    // 2. Index: split into nodes (SentenceSplitter, 1024 tokens), embed, store.
    let embed_model: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(1024));
    let index = VectorStoreIndex::builder(embed_model.clone())
        .show_progress(true)
        .from_documents(&documents)
        .await?;

    // 3. Persist in LlamaIndex's on-disk format, then load it back.
    index.storage_context().persist(persist_dir).await?;
    let storage_context = StorageContext::from_persist_dir(persist_dir).await?;
    let index = load_index_from_storage(storage_context, embed_model, None).await?;
    println!("Persisted to and reloaded from {}\n", persist_dir.display());

    // 4. Query. No LLM is configured here, so the retrieved context is the output.
    let retriever = index.as_retriever().similarity_top_k(3);
    let nodes = retriever
        .retrieve(&QueryBundle::new(question.as_str()))
        .await?;
    println!("Question: {question}\n");
    println!(
        "No LLM configured: this is the retrieved context, not an answer. Most relevant first:\n"
    );
    for (rank, n) in nodes.iter().enumerate() {
        let file = n
            .node
            .metadata
            .get("file_name")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let (start, end) = (
            n.node.start_char_idx.unwrap_or(0),
            n.node.end_char_idx.unwrap_or(0),
        );
        println!(
            "[{}] score {:.3} — {file}, characters {start}..{end}",
            rank + 1,
            n.get_score()
        );
        let text = n.node.get_text().trim();
        let preview: String = text.chars().take(400).collect();
        let more = if text.chars().count() > 400 {
            " …"
        } else {
            ""
        };
        println!("{}{more}\n", preview.replace('\n', " "));
    }
    Ok(())
}
