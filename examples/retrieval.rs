//! Hybrid retrieval: BM25 keyword search and vector search over `examples/data`,
//! fused with reciprocal rank fusion, then answered by a query engine.
//!
//! ```sh
//! cargo run -p ragloom-examples --example retrieval
//! ```
//!
//! It runs offline: embeddings come from `HashEmbedding` and the LLM is a
//! `MockLlm` that echoes its prompt, so what this shows is which passages
//! each retriever finds and how fusion ranks them, not a model's answer.

use ragloom::llms::MockLlm;
use ragloom::prelude::*;
use ragloom::retrievers::{BM25Retriever, FusionMode, QueryFusionRetriever};
use std::path::Path;
use std::sync::Arc;

fn show(title: &str, nodes: &[NodeWithScore]) {
    println!("{title}");
    for n in nodes {
        let text: String = n.node.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let short: String = text.chars().take(70).collect();
        println!("  {:>8.4}  {short}...", n.get_score());
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let documents = SimpleDirectoryReader::new(&data).load_data().await?;
    let index =
        VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(1024))).await?;

    // BM25 over the same chunks the vector index holds (its docstore).
    let bm25 = BM25Retriever::from_docstore(index.storage_context().docstore.as_ref(), 4).await?;
    let vector = index.as_retriever().similarity_top_k(4);
    let query: QueryBundle = "Why did the Queen shout off with her head?".into();

    show("BM25:", &bm25.retrieve(&query).await?);
    show("Vector:", &vector.retrieve(&query).await?);

    // num_queries(1): fuse the two retrievers' results for the query itself,
    // without asking an LLM for query variants.
    let fusion = Arc::new(
        QueryFusionRetriever::builder(vec![Arc::new(bm25), Arc::new(vector)])
            .mode(FusionMode::ReciprocalRank)
            .num_queries(1)
            .similarity_top_k(4)
            .build()?,
    );
    show("Fused (reciprocal rank):", &fusion.retrieve(&query).await?);

    let engine = RetrieverQueryEngine::builder(fusion)
        .llm(Arc::new(MockLlm::new().context_window(32_768)))
        .build()?;
    let response = engine.query(&query).await?;
    println!(
        "Query engine over the fused retriever: {} source nodes, answer of {} characters",
        response.source_nodes.len(),
        response.to_string().chars().count()
    );
    Ok(())
}
