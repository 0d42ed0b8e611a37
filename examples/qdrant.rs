//! A vector index kept in Qdrant: load `examples/data/`, index it into
//! `QdrantVectorStore` (LlamaIndex's payload layout, so Python LlamaIndex can
//! read the same collection), then retrieve with and without a metadata filter.
//!
//! Embedded (Qdrant's engine in this process, persisted under `./qdrant_data`):
//! ```sh
//! cargo run -p ragloom-examples --features qdrant-embedded --example qdrant -- "Who took a watch out of its waistcoat-pocket?"
//! ```
//! Remote (a Qdrant server's gRPC port):
//! ```sh
//! export QDRANT_URL=http://localhost:6334   # QDRANT_API_KEY too, for Qdrant Cloud
//! cargo run -p ragloom-examples --features qdrant --example qdrant
//! ```
//! With `qdrant-embedded`, setting `QDRANT_URL` still selects the server:
//! moving from one to the other changes the constructor only.
//!
//! Embeddings come from `HashEmbedding` (word overlap, offline), so no model is
//! needed; swap in a real embedding model for meaning-based retrieval.

use ragloom::prelude::*;
use ragloom::qdrant::QdrantVectorStore;
use ragloom::vector_stores::{MetadataFilter, MetadataFilters};
use std::path::Path;
use std::sync::Arc;

const DIM: usize = 384;

fn store() -> Result<Option<QdrantVectorStore>> {
    let url = std::env::var("QDRANT_URL").ok().filter(|v| !v.is_empty());
    let builder = match url {
        Some(url) => {
            let mut b = QdrantVectorStore::remote(url);
            if let Ok(key) = std::env::var("QDRANT_API_KEY") {
                b = b.api_key(key);
            }
            b
        }
        #[cfg(feature = "qdrant-embedded")]
        None => QdrantVectorStore::embedded("./qdrant_data"),
        #[cfg(not(feature = "qdrant-embedded"))]
        None => return Ok(None),
    };
    builder.collection_name("ragloom_example").build().map(Some)
}

#[tokio::main]
async fn main() -> Result<()> {
    let Some(store) = store()? else {
        eprintln!(
            "qdrant example: no Qdrant configured. Set QDRANT_URL to a Qdrant server's gRPC \
             address, e.g.\n  QDRANT_URL=http://localhost:6334\n\
             or build with `--features qdrant-embedded` to run Qdrant's engine in-process."
        );
        std::process::exit(2);
    };
    let store = Arc::new(store);
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Who took a watch out of its waistcoat-pocket?".to_string());

    // 1. Start from an empty collection, then load, split, embed and write the nodes.
    store.clear().await?;
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let embed_model: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(DIM));
    let index = VectorStoreIndex::builder(embed_model)
        .storage_context(StorageContext::with_vector_store(store.clone()))
        .from_documents(&documents)
        .await?;
    println!(
        "Indexed {} documents into Qdrant collection `{}`\n",
        documents.len(),
        store.collection_name()
    );

    // 2. Retrieve by vector.
    let nodes = index
        .as_retriever()
        .similarity_top_k(3)
        .retrieve(&QueryBundle::new(question.as_str()))
        .await?;
    println!("Question: {question}\nNearest passages:");
    for n in &nodes {
        println!("  {:.3}  {}", n.get_score(), preview(&n.node.text));
    }

    // 3. The same, restricted to one file by a metadata filter (a Qdrant filter).
    let Some(file) = nodes
        .first()
        .and_then(|n| n.node.metadata.get("file_name"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
    else {
        return Ok(());
    };
    let filtered = index
        .as_retriever()
        .similarity_top_k(3)
        .filters(MetadataFilters::and([MetadataFilter::eq(
            "file_name",
            file.as_str(),
        )]))
        .retrieve(&QueryBundle::new(question.as_str()))
        .await?;
    println!("\nOnly from {file}:");
    for n in &filtered {
        println!("  {:.3}  {}", n.get_score(), preview(&n.node.text));
    }
    Ok(())
}

fn preview(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = flat.chars().take(100).collect();
    if cut.len() < flat.len() {
        format!("{cut}...")
    } else {
        cut
    }
}
