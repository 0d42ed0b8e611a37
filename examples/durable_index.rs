//! A folder kept in a durable index, in about ten lines: the first run reads
//! every file, later runs only what changed (a killed run leaves the last
//! commit; a second run at once waits for the first).
//!
//! ```sh
//! cargo run -p ragloom-examples --features sqlite --example durable_index [FOLDER]
//! ```
//!
//! Runs offline: no embedding model, so retrieval is BM25 over the embedded
//! store's keyword index. Give `SyncOptions::embed` a model for hybrid search,
//! and `StoreUrl::parse("postgres://...")` or `"qdrant://..."` to keep it in a server.

use ragloom::durable::{DurableIndex, Source, StoreUrl, SyncOptions};

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let folder = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/data").to_string());
    let location = StoreUrl::parse("embedded")?.connect()?;
    let root = std::env::temp_dir().join("ragloom-durable-example");
    let index = DurableIndex::new(location, root, Source::resolve(&folder)?);
    let report = index.sync(&SyncOptions::default()).await?;
    println!(
        "synced {}: {} documents new or changed, {} files unchanged, {} nodes",
        folder, report.ingested, report.files_unchanged, report.nodes_total
    );
    let retriever = index.open().await?.keyword_retriever(2, None)?;
    for hit in retriever
        .retrieve(&"Who is the Cheshire Cat?".into())
        .await?
    {
        let first_line = hit
            .node
            .get_text()
            .trim()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        println!("{:.2}  {first_line}", hit.score.unwrap_or_default());
    }
    Ok(())
}
