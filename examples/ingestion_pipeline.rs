//! An incremental ingestion pipeline: split, embed and store `examples/data/`,
//! persist the pipeline's cache and docstore, and run again — the second run
//! does no work. Offline (HashEmbedding).
//!
//! ```sh
//! cargo run -p ragloom-examples --example ingestion_pipeline
//! ```

use ragloom::ingestion::{DocstoreStrategy, IngestionPipeline};
use ragloom::prelude::*;
use ragloom::storage::docstore::SimpleDocumentStore;
use std::path::Path;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<()> {
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let persist_dir = std::env::temp_dir().join("ragloom_ingestion_example");
    // Start from scratch so the first run does the work every time the example runs.
    let _ = std::fs::remove_dir_all(&persist_dir);

    for run in 1..=2 {
        // `filename_as_id` keeps document ids stable across runs: the docstore
        // recognises each file by its path and its hash.
        let documents = SimpleDirectoryReader::new(&data_dir)
            .filename_as_id(true)
            .load_data()
            .await?;
        // The vector store is persisted beside the pipeline's files.
        let vector_path = persist_dir.join("default__vector_store.json");
        let vector_store = Arc::new(if vector_path.exists() {
            SimpleVectorStore::from_persist_path(&vector_path)?
        } else {
            SimpleVectorStore::new()
        });
        let mut pipeline = IngestionPipeline::new(vec![Arc::new(
            SentenceSplitter::new().chunk_size(512).chunk_overlap(32),
        )])
        .embedding(Arc::new(HashEmbedding::new(256)))
        .docstore(Arc::new(SimpleDocumentStore::new()))
        .vector_store(vector_store.clone())
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete)
        .num_workers(2);
        let loaded = pipeline.load_if_present(&persist_dir).await?;

        let out = pipeline.run_with_stats(documents).await?;
        pipeline.persist(&persist_dir).await?;
        vector_store.persist(&vector_path).await?;
        let s = &out.stats;
        println!(
            "run {run} (state loaded: {loaded}): {} documents, {} transformed, {} skipped, \
             {} replaced, {} deleted; {} nodes out; cache {} hits / {} misses; vector store holds {} nodes",
            s.documents,
            s.transformed,
            s.skipped,
            s.replaced,
            s.deleted,
            s.nodes,
            s.cache_hits,
            s.cache_misses,
            vector_store.len(),
        );
    }
    Ok(())
}
