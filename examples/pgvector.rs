//! A vector index kept in PostgreSQL with pgvector: load `examples/data/`,
//! index it into `PGVectorStore` (LlamaIndex's `data_<table>` layout, so Python
//! LlamaIndex can read the same table), then retrieve by vector and by keywords.
//!
//! ```sh
//! export RAGLOOM_PG_URL=postgres://postgres@127.0.0.1:55432/postgres   # .ci/setup/postgres.sh starts one
//! cargo run -p ragloom-examples --features postgres --example pgvector -- "Who took a watch out of its waistcoat-pocket?"
//! ```
//!
//! Embeddings come from `HashEmbedding` (word overlap, offline), so no model is
//! needed; swap in a real embedding model for meaning-based retrieval.

use ragloom::postgres::PGVectorStore;
use ragloom::prelude::*;
use ragloom::vector_stores::{VectorStoreQuery, VectorStoreQueryMode};
use std::path::Path;
use std::sync::Arc;

const DIM: usize = 384;

#[tokio::main]
async fn main() -> Result<()> {
    let Some(url) = ["RAGLOOM_PG_URL", "RAGLOOM_TEST_PG_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    else {
        eprintln!(
            "pgvector example: no PostgreSQL configured. Set RAGLOOM_PG_URL to a database \
             with the pgvector extension, e.g.\n  \
             RAGLOOM_PG_URL=postgres://postgres@127.0.0.1:55432/postgres\n\
             (`source .ci/setup/postgres.sh` starts one on a Debian machine)."
        );
        std::process::exit(2);
    };
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Who took a watch out of its waistcoat-pocket?".to_string());

    // 1. The store: table `data_ragloom_example`, with full-text search, an HNSW index.
    let store = Arc::new(
        PGVectorStore::from_url(url)
            .table_name("ragloom_example")
            .embed_dim(DIM)
            .hybrid_search(true)
            .hnsw(Default::default())
            .build()?,
    );
    store.initialize().await?;
    store.clear().await?;

    // 2. Load, split, embed and write the nodes into PostgreSQL.
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data_dir).load_data().await?;
    let embed_model: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(DIM));
    let index = VectorStoreIndex::builder(embed_model)
        .storage_context(StorageContext::with_vector_store(store.clone()))
        .from_documents(&documents)
        .await?;
    println!(
        "Indexed {} documents into {}.data_{}\n",
        documents.len(),
        store.schema_name(),
        store.table_name()
    );

    // 3. Retrieve by vector, through the index.
    let nodes = index
        .as_retriever()
        .similarity_top_k(3)
        .retrieve(&QueryBundle::new(question.as_str()))
        .await?;
    println!("Question: {question}\nNearest passages (vector search):");
    for n in &nodes {
        println!("  {:.3}  {}", n.get_score(), preview(&n.node.text));
    }

    // 4. Retrieve by keywords: PostgreSQL full-text search on the same rows.
    let query = VectorStoreQuery {
        similarity_top_k: 3,
        ..Default::default()
    }
    .with_query_str(question.as_str())
    .with_mode(VectorStoreQueryMode::TextSearch);
    let result = store.query(&query).await?;
    println!("\nBest keyword matches (ts_rank):");
    for (node, score) in result
        .nodes
        .unwrap_or_default()
        .iter()
        .zip(&result.similarities)
    {
        println!("  {score:.3}  {}", preview(&node.text));
    }
    store.close().await;
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
