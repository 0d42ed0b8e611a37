//! End to end: build → persist → load → retrieve → answer, and the storage
//! folder shared with Python LlamaIndex 0.14.25 in both directions.
#![allow(clippy::unwrap_used)]

mod common;

use ragloom_core::prelude::*;
use ragloom_core::storage::StorageContext;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(p)
}

fn docs() -> Vec<Document> {
    vec![
        Document::document("The cat sat on the mat. It was a sunny day in the garden.\n\nThe dog barked at the mailman.")
            .with_id("doc-animals")
            .with_metadata("file_name", "animals.txt")
            .with_metadata("year", 2021),
        Document::document("Rust is a systems programming language. It guarantees memory safety without a garbage collector.")
            .with_id("doc-rust")
            .with_metadata("file_name", "rust.md"),
        Document::document("Ça va très bien, merci. Größe und Maß. 東京は日本の首都です。 🎉 Fin.")
            .with_id("doc-unicode")
            .with_metadata("rating", 4.5),
    ]
}

async fn build(dim: usize) -> VectorStoreIndex {
    let splitter = SentenceSplitter::new()
        .chunk_size(24)
        .chunk_overlap(4)
        .build()
        .unwrap();
    VectorStoreIndex::builder(Arc::new(HashEmbedding::new(dim)))
        .transformations(vec![Arc::new(splitter)])
        .from_documents(&docs())
        .await
        .unwrap()
}

fn ids_scores(nodes: &[NodeWithScore]) -> (Vec<String>, Vec<f32>) {
    (
        nodes.iter().map(|n| n.node.id_.clone()).collect(),
        nodes.iter().map(|n| n.get_score()).collect(),
    )
}

#[tokio::test]
async fn python_index_loads_and_answers_the_same_top_k() {
    let sc = StorageContext::from_persist_dir(data("interop/python_index"))
        .await
        .unwrap();
    let index = load_index_from_storage(sc, Arc::new(MockEmbedding::new(8)), None)
        .await
        .unwrap();
    assert_eq!(index.index_id(), "python-index");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(data("interop/python_topk.json")).unwrap())
            .unwrap();
    assert_eq!(
        index.index_struct().nodes_dict.len() as u64,
        expected["num_nodes"].as_u64().unwrap()
    );
    for case in expected["results"].as_array().unwrap() {
        let q: Vec<f32> = serde_json::from_value(case["query"].clone()).unwrap();
        let k = case["k"].as_u64().unwrap() as usize;
        let bundle = QueryBundle {
            embedding: Some(q),
            ..QueryBundle::new("")
        };
        let got = index
            .as_retriever()
            .similarity_top_k(k)
            .retrieve(&bundle)
            .await
            .unwrap();
        let want_ids: Vec<String> = serde_json::from_value(case["ids"].clone()).unwrap();
        let want_scores: Vec<f64> = serde_json::from_value(case["scores"].clone()).unwrap();
        let want_texts: Vec<String> = serde_json::from_value(case["texts"].clone()).unwrap();
        let (ids, scores) = ids_scores(&got);
        assert_eq!(ids, want_ids, "k={k}");
        for (a, b) in scores.iter().zip(&want_scores) {
            assert!((*a as f64 - b).abs() < 1e-5, "score {a} vs Python {b}");
        }
        let texts: Vec<String> = got
            .iter()
            .map(|n| n.node.get_content(MetadataMode::None))
            .collect();
        assert_eq!(texts, want_texts);
    }
}

#[tokio::test]
async fn python_index_persists_back_unchanged() {
    let sc = StorageContext::from_persist_dir(data("interop/python_index"))
        .await
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    sc.persist(out.path()).await.unwrap();
    for f in [
        "docstore.json",
        "index_store.json",
        "default__vector_store.json",
        "graph_store.json",
        "image__vector_store.json",
    ] {
        let a: Value =
            serde_json::from_slice(&std::fs::read(data("interop/python_index").join(f)).unwrap())
                .unwrap();
        let b: Value = serde_json::from_slice(&std::fs::read(out.path().join(f)).unwrap()).unwrap();
        assert_eq!(a, b, "{f} changed on the way through ragloom");
    }
}

#[tokio::test]
async fn persist_load_query_gives_the_same_top_k() {
    let index = build(64).await;
    let dir = tempfile::tempdir().unwrap();
    index.storage_context().persist(dir.path()).await.unwrap();
    let loaded = load_index_from_storage(
        StorageContext::from_persist_dir(dir.path()).await.unwrap(),
        Arc::new(HashEmbedding::new(64)),
        None,
    )
    .await
    .unwrap();
    assert_eq!(loaded.index_id(), index.index_id());
    for q in ["garden cat", "memory safety", "Größe 東京"] {
        let a = index
            .as_retriever()
            .similarity_top_k(3)
            .retrieve(&q.into())
            .await
            .unwrap();
        let b = loaded
            .as_retriever()
            .similarity_top_k(3)
            .retrieve(&q.into())
            .await
            .unwrap();
        assert_eq!(ids_scores(&a), ids_scores(&b), "{q}");
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].node.text, b[0].node.text);
    }
}

#[tokio::test]
async fn hash_embedding_retrieves_the_matching_document() {
    let index = build(256).await;
    let top = index
        .as_retriever()
        .similarity_top_k(1)
        .retrieve(&"garbage collector memory safety".into())
        .await
        .unwrap();
    assert_eq!(top[0].node.ref_doc_id(), Some("doc-rust"));
}

#[tokio::test]
async fn corrupt_or_missing_files_are_errors_naming_the_file() {
    let index = build(16).await;
    for f in [
        "docstore.json",
        "index_store.json",
        "default__vector_store.json",
        "graph_store.json",
    ] {
        let dir = tempfile::tempdir().unwrap();
        index.storage_context().persist(dir.path()).await.unwrap();
        std::fs::write(dir.path().join(f), b"{\"truncated\": [1, 2").unwrap();
        let err = StorageContext::from_persist_dir(dir.path())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(f),
            "error for corrupt {f} does not name it: {err}"
        );
        if f != "graph_store.json" {
            std::fs::remove_file(dir.path().join(f)).unwrap();
            let err = StorageContext::from_persist_dir(dir.path())
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(f),
                "error for missing {f} does not name it: {err}"
            );
        }
    }
    let err = StorageContext::from_persist_dir("/nonexistent/ragloom/storage")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/ragloom/storage"), "{err}");
}

#[tokio::test]
async fn delete_ref_doc_and_insert_change_what_is_retrieved() {
    let index = build(256).await;
    index.delete_ref_doc("doc-rust", true).await.unwrap();
    let top = index
        .as_retriever()
        .similarity_top_k(50)
        .retrieve(&"memory safety".into())
        .await
        .unwrap();
    assert!(top.iter().all(|n| n.node.ref_doc_id() != Some("doc-rust")));
    assert!(
        index
            .storage_context()
            .docstore
            .get_ref_doc_info("doc-rust")
            .await
            .unwrap()
            .is_none()
    );
    index
        .insert(Document::document("Memory safety without garbage collection.").with_id("doc-new"))
        .await
        .unwrap();
    let top = index
        .as_retriever()
        .similarity_top_k(1)
        .retrieve(&"memory safety garbage".into())
        .await
        .unwrap();
    assert_eq!(top[0].node.ref_doc_id(), Some("doc-new"));
}

#[tokio::test]
async fn query_engine_answers_from_the_retrieved_context() {
    let index = build(256).await;
    let llm = Arc::new(MockLlm::scripted(["Memory safety."]));
    let engine = index.as_query_engine(llm.clone()).unwrap();
    let response = engine
        .query(&"What does Rust guarantee?".into())
        .await
        .unwrap();
    assert_eq!(response.to_string(), "Memory safety.");
    assert_eq!(response.source_nodes.len(), 2);
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "two small chunks compact into one call");
    let prompt = requests[0].prompt_text();
    assert!(
        prompt.contains("Query: What does Rust guarantee?"),
        "{prompt}"
    );
    for source in &response.source_nodes {
        assert!(
            prompt.contains(source.node.get_text().trim()),
            "context missing from prompt"
        );
    }
}

/// ragloom persists, Python LlamaIndex loads and answers the same top-k.
#[tokio::test]
async fn ragloom_index_loads_in_python_with_the_same_top_k() {
    let Some(python) = common::reference_python("llama-index-core 0.14.25") else {
        return;
    };
    let dim = 32;
    let index = build(dim).await;
    let dir = tempfile::tempdir().unwrap();
    index.storage_context().persist(dir.path()).await.unwrap();
    let embed = HashEmbedding::new(dim);
    let mut queries = Vec::new();
    for q in ["garden cat", "memory safety", "Größe 東京"] {
        queries.push(embed.embed_query(q).await.unwrap());
    }
    let request = dir.path().join("request.json");
    std::fs::write(
        &request,
        serde_json::json!({"dim": dim, "queries": queries, "k": 3}).to_string(),
    )
    .unwrap();
    let out = common::run_script(&python, "load_and_query.py", [dir.path(), &request]);
    let seen: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(seen["index_id"], Value::String(index.index_id()));
    // Every node Python reads has the hash and text ragloom computed.
    let docstore = &index.storage_context().docstore;
    let nodes = seen["nodes"].as_object().unwrap();
    assert_eq!(nodes.len(), index.index_struct().nodes_dict.len());
    for (id, n) in nodes {
        let ours = docstore.get_node(id).await.unwrap();
        assert_eq!(n["hash"].as_str(), Some(ours.hash().as_str()), "node {id}");
        assert_eq!(
            n["text"].as_str(),
            Some(ours.get_content(MetadataMode::None).as_str())
        );
        assert_eq!(n["start"].as_u64(), ours.start_char_idx.map(|x| x as u64));
    }
    // Python's document hashes are the ones ragloom recorded.
    for d in docs() {
        assert_eq!(seen["doc_hashes"][d.hash()].as_str(), Some(d.id_.as_str()));
    }
    for (q, r) in queries.iter().zip(seen["results"].as_array().unwrap()) {
        let bundle = QueryBundle {
            embedding: Some(q.clone()),
            ..QueryBundle::new("")
        };
        let ours = index
            .as_retriever()
            .similarity_top_k(3)
            .retrieve(&bundle)
            .await
            .unwrap();
        let (ids, scores) = ids_scores(&ours);
        let py_ids: Vec<String> = serde_json::from_value(r["ids"].clone()).unwrap();
        let py_scores: Vec<f64> = serde_json::from_value(r["scores"].clone()).unwrap();
        assert_eq!(ids, py_ids);
        for (a, b) in scores.iter().zip(&py_scores) {
            assert!((*a as f64 - b).abs() < 1e-5, "{a} vs {b}");
        }
    }
}

/// Counts what it is asked to embed.
#[derive(Debug)]
struct CountingEmbedding {
    inner: HashEmbedding,
    texts: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Embedding for CountingEmbedding {
    fn model_name(&self) -> &str {
        "counting"
    }
    fn dimensions(&self) -> Option<usize> {
        self.inner.dimensions()
    }
    async fn embed_query(&self, query: &str) -> ragloom_core::Result<Vec<f32>> {
        self.inner.embed_query(query).await
    }
    async fn embed_texts(&self, texts: &[String]) -> ragloom_core::Result<Vec<Vec<f32>>> {
        self.texts.lock().unwrap().extend(texts.iter().cloned());
        self.inner.embed_texts(texts).await
    }
}

/// Counts the batches added to it.
#[derive(Debug, Default)]
struct CountingStore {
    inner: SimpleVectorStore,
    batches: std::sync::Mutex<Vec<usize>>,
}

#[async_trait::async_trait]
impl VectorStore for CountingStore {
    fn stores_text(&self) -> bool {
        false
    }
    async fn add(&self, nodes: &[Node]) -> ragloom_core::Result<Vec<String>> {
        self.batches.lock().unwrap().push(nodes.len());
        self.inner.add(nodes).await
    }
    async fn delete(&self, ref_doc_id: &str) -> ragloom_core::Result<()> {
        self.inner.delete(ref_doc_id).await
    }
    async fn delete_nodes(
        &self,
        ids: Option<&[String]>,
        f: Option<&MetadataFilters>,
    ) -> ragloom_core::Result<()> {
        self.inner.delete_nodes(ids, f).await
    }
    async fn query(
        &self,
        q: &ragloom_core::vector_stores::VectorStoreQuery,
    ) -> ragloom_core::Result<ragloom_core::vector_stores::VectorStoreQueryResult> {
        self.inner.query(q).await
    }
    async fn clear(&self) -> ragloom_core::Result<()> {
        self.inner.clear().await
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[tokio::test]
async fn only_nodes_without_embeddings_are_embedded_in_insert_batches() {
    let embed = Arc::new(CountingEmbedding {
        inner: HashEmbedding::new(16),
        texts: Default::default(),
    });
    let store = Arc::new(CountingStore::default());
    let mut nodes: Vec<Node> = (0..7)
        .map(|i| {
            TextNode::text_node(format!("node number {i}"))
                .with_metadata("secret", "s")
                .with_id(format!("n{i}"))
        })
        .collect();
    for n in &mut nodes {
        n.excluded_embed_metadata_keys = vec!["secret".into()];
    }
    nodes[2].embedding = Some(vec![1.0; 16]);
    nodes[5].embedding = Some(vec![0.5; 16]);
    let index = VectorStoreIndex::builder(embed.clone())
        .storage_context(StorageContext::with_vector_store(store.clone()))
        .insert_batch_size(3)
        .from_nodes(nodes)
        .await
        .unwrap();
    assert_eq!(*store.batches.lock().unwrap(), [3, 3, 1]);
    let embedded = embed.texts.lock().unwrap().clone();
    assert_eq!(embedded.len(), 5, "nodes 2 and 5 came with embeddings");
    assert!(
        embedded.iter().all(|t| !t.contains("secret")),
        "embed text excludes excluded keys"
    );
    // The docstore keeps the nodes without their embeddings; the store has them.
    let stored = index
        .storage_context()
        .docstore
        .get_node("n2")
        .await
        .unwrap();
    assert_eq!(stored.embedding, None);
    assert_eq!(store.inner.get("n2").unwrap(), vec![1.0f64; 16]);
}
