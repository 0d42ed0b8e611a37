//! Storage: two indexes in one storage context, persisted in LlamaIndex's
//! folder layout, loaded back by `index_id`, a document deleted everywhere.
//!
//! ```sh
//! cargo run --release -p ragloom-examples --example storage
//! # at scale: N synthetic nodes with 384-dimensional embeddings, timed
//! cargo run --release -p ragloom-examples --example storage -- --scale 100000
//! ```
//!
//! Runs offline (`HashEmbedding`); the folder it writes loads in Python with
//! `load_index_from_storage(StorageContext.from_defaults(persist_dir=...), index_id="alice")`.

use ragloom::indices::load_index_from_storage;
use ragloom::prelude::*;
use ragloom::vector_stores::VectorStoreQuery;
use ragloom::{NodeRelationship, RelatedNodeInfo};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, n] = args.as_slice()
        && flag == "--scale"
    {
        let n = n
            .parse()
            .map_err(|_| Error::InvalidInput(format!("--scale wants a number, not `{n}`")))?;
        return scale(n).await;
    }
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let persist_dir = std::env::temp_dir().join("ragloom-storage-example");
    let embed_model: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(512));
    let splitter: Arc<dyn TransformComponent> =
        Arc::new(SentenceSplitter::new().chunk_size(256).build()?);

    // 1. Two indexes, one storage context: one docstore, one vector store.
    let storage_context = StorageContext::from_defaults();
    let mut indexes = Vec::new();
    for (name, file) in [("alice", "alice29.txt"), ("shakespeare", "asyoulik.txt")] {
        let docs = SimpleDirectoryReader::from_files([data_dir.join(file)])
            .load_data()
            .await?;
        let index = VectorStoreIndex::builder(embed_model.clone())
            .storage_context(storage_context.clone())
            .transformations(vec![splitter.clone()])
            .from_documents(&docs)
            .await?;
        index.set_index_id(name).await?;
        println!(
            "index `{name}`: {} nodes",
            index.index_struct().nodes_dict.len()
        );
        indexes.push(index);
    }

    // 2. Persist: docstore.json, index_store.json, default__vector_store.json, ...
    storage_context.persist(&persist_dir).await?;
    println!("\npersisted to {}:", persist_dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&persist_dir)
        .map_err(|e| Error::io("listing", &persist_dir, e))?
        .filter_map(|e| e.ok())
        .collect();
    files.sort_by_key(|e| e.file_name());
    for entry in files {
        let len = entry.metadata().map(|m| m.len()).unwrap_or_default();
        println!(
            "  {:<28} {len:>10} bytes",
            entry.file_name().to_string_lossy()
        );
    }

    // 3. Load one index by id: queries see only its own nodes, though the
    //    vector store holds both.
    let loaded = StorageContext::from_persist_dir(&persist_dir).await?;
    let alice = load_index_from_storage(loaded.clone(), embed_model.clone(), Some("alice")).await?;
    let question = "the White Rabbit and his watch";
    println!("\n`alice`, top 2 for {question:?}:");
    for n in alice
        .as_retriever()
        .similarity_top_k(2)
        .retrieve(&QueryBundle::new(question))
        .await?
    {
        let text: String = n.node.text.chars().take(70).collect();
        println!("  {:.3}  {}…", n.get_score(), text.replace('\n', " "));
    }

    // 4. The documents behind the index, then one deleted from every store.
    let info = alice.ref_doc_info().await?;
    for (doc_id, doc) in &info {
        println!("\ndocument {doc_id}: {} nodes", doc.node_ids.len());
    }
    if let Some(doc_id) = info.keys().next() {
        alice.delete_ref_doc(doc_id, true).await?;
        println!(
            "deleted it: the index now has {} nodes, the docstore {} documents' nodes",
            alice.index_struct().nodes_dict.len(),
            loaded.docstore.get_all_ref_doc_info().await?.len()
        );
    }
    Ok(())
}

/// `n` nodes with 384-dimensional embeddings: build, persist, load, query, timed.
async fn scale(n: usize) -> Result<()> {
    const DIM: usize = 384;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let words = ["alpha", "beta", "gamma", "délta", "epsilon", "zeta", "eta"];
    let t = Instant::now();
    let nodes: Vec<Node> = (0..n)
        .map(|i| {
            let text: Vec<&str> = (0..90)
                .map(|w| words[(i * 7 + w * 3) % words.len()])
                .collect();
            Node::text_node(text.join(" "))
                .with_id(format!("node-{i:07}"))
                .with_metadata("page", (i % 40) as u64)
                .with_relationship(
                    NodeRelationship::Source,
                    RelatedNodeInfo::new(format!("doc-{}", i / 10)),
                )
                .with_embedding((0..DIM).map(|_| next()).collect())
        })
        .collect();
    let embed_model: Arc<dyn Embedding> = Arc::new(MockEmbedding::new(DIM));
    let index = VectorStoreIndex::builder(embed_model.clone())
        .from_nodes(nodes)
        .await?;
    println!("build   {:>8.2} s  ({n} nodes)", t.elapsed().as_secs_f64());
    let dir = std::env::temp_dir().join(format!("ragloom-storage-scale-{n}"));
    let t = Instant::now();
    index.storage_context().persist(&dir).await?;
    println!("persist {:>8.2} s", t.elapsed().as_secs_f64());
    drop(index);
    let t = Instant::now();
    let sc = StorageContext::from_persist_dir(&dir).await?;
    let index = load_index_from_storage(sc, embed_model, None).await?;
    println!("load    {:>8.2} s", t.elapsed().as_secs_f64());
    let query: Vec<f32> = (0..DIM).map(|_| next()).collect();
    let t = Instant::now();
    let result = index
        .vector_store()
        .query(&VectorStoreQuery::new(query, 10))
        .await?;
    println!(
        "top-10  {:>8.2} ms ({} results)",
        t.elapsed().as_secs_f64() * 1e3,
        result.ids.len()
    );
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io("removing", &dir, e))?;
    Ok(())
}
