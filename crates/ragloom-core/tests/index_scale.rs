//! Vector indexes under concurrent use and several indexes in one storage
//! context: what a query may see while documents are inserted, `index_id`,
//! `delete_ref_doc` across every store, `ref_doc_info`, and files carrying
//! fields a newer LlamaIndex might write.
#![allow(clippy::unwrap_used)]

use ragloom_core::NodeRelationship;
use ragloom_core::indices::load_index_from_storage;
use ragloom_core::prelude::*;
use ragloom_core::retrievers::Retriever;
use ragloom_core::storage::StorageContext;
use ragloom_core::vector_stores::{SimpleVectorStore, VectorStore, VectorStoreQuery};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const DIM: usize = 8;
const NODES_PER_DOC: usize = 4;

/// A deterministic, non-degenerate embedding for node `i` of document `d`.
fn embedding(d: usize, i: usize) -> Vec<f32> {
    (0..DIM)
        .map(|k| ((d * 31 + i * 7 + k * 13) % 17) as f32 / 17.0 + 0.01)
        .collect()
}

/// The nodes of document `d`, embedded, each naming its document.
fn doc_nodes(prefix: &str, d: usize) -> Vec<Node> {
    let doc = Node::document(format!("{prefix} document {d}")).with_id(format!("{prefix}-doc-{d}"));
    (0..NODES_PER_DOC)
        .map(|i| {
            Node::text_node(format!("{prefix} doc {d} node {i}"))
                .with_id(format!("{prefix}-{d}-{i}"))
                .with_metadata("doc", d as u64)
                .with_relationship(NodeRelationship::Source, doc.as_related_node_info())
                .with_embedding(embedding(d, i))
        })
        .collect()
}

/// A query that comes with its embedding.
fn bundle(embedding: Vec<f32>) -> QueryBundle {
    QueryBundle {
        embedding: Some(embedding),
        ..QueryBundle::new("query")
    }
}

fn embed_model() -> Arc<dyn Embedding> {
    Arc::new(MockEmbedding::new(DIM))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queries_never_see_half_inserted_documents() {
    const READERS: usize = 4;
    const DOCS: usize = 60;
    let index = VectorStoreIndex::builder(embed_model())
        .from_nodes(doc_nodes("w", 0))
        .await
        .unwrap();
    let store = index.vector_store().clone();
    let done = Arc::new(AtomicBool::new(false));
    let queries = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::new();
    for r in 0..READERS {
        let index = index.clone();
        let store = store.clone();
        let done = done.clone();
        let queries = queries.clone();
        readers.push(tokio::spawn(async move {
            // top_k 0 returns every node, so a half-inserted document would show.
            let retriever = index.as_retriever().similarity_top_k(0);
            let docstore = index.storage_context().docstore.clone();
            let simple = store.as_any().downcast_ref::<SimpleVectorStore>().unwrap();
            let mut rounds = 0;
            while !done.load(Ordering::Acquire) || rounds == 0 {
                let bundle = bundle(embedding(r, rounds % NODES_PER_DOC));
                let found = retriever.retrieve(&bundle).await.unwrap();
                let mut per_doc: HashMap<String, usize> = HashMap::new();
                for n in &found {
                    let id = &n.node.id_;
                    // Complete: text in the docstore, embedding in the store.
                    let stored = docstore.get_node(id).await.unwrap();
                    assert_eq!(stored.text, n.node.text, "{id}");
                    assert!(!stored.text.is_empty(), "{id}");
                    assert_eq!(simple.get(id).unwrap().len(), DIM, "{id}");
                    *per_doc
                        .entry(n.node.ref_doc_id().unwrap().to_string())
                        .or_default() += 1;
                }
                for (doc, count) in &per_doc {
                    assert_eq!(*count, NODES_PER_DOC, "document {doc} is half visible");
                }
                rounds += 1;
                queries.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
            rounds
        }));
    }
    let writer = {
        let index = index.clone();
        tokio::spawn(async move {
            for d in 1..DOCS {
                index.insert_nodes(doc_nodes("w", d)).await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    writer.await.unwrap();
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.await.unwrap() >= 1);
    }
    assert!(queries.load(Ordering::Relaxed) >= READERS);
    let all = index
        .as_retriever()
        .similarity_top_k(0)
        .retrieve(&bundle(embedding(0, 0)))
        .await
        .unwrap();
    assert_eq!(all.len(), DOCS * NODES_PER_DOC);
    assert_eq!(index.index_struct().nodes_dict.len(), DOCS * NODES_PER_DOC);
}

/// Two indexes over one storage context, renamed "a" and "b".
async fn two_indexes(sc: &StorageContext) -> (VectorStoreIndex, VectorStoreIndex) {
    let a_nodes: Vec<Node> = (0..3).flat_map(|d| doc_nodes("a", d)).collect();
    let b_nodes: Vec<Node> = (0..2).flat_map(|d| doc_nodes("b", d)).collect();
    let a = VectorStoreIndex::builder(embed_model())
        .storage_context(sc.clone())
        .from_nodes(a_nodes)
        .await
        .unwrap();
    let b = VectorStoreIndex::builder(embed_model())
        .storage_context(sc.clone())
        .from_nodes(b_nodes)
        .await
        .unwrap();
    a.set_index_id("a").await.unwrap();
    b.set_index_id("b").await.unwrap();
    (a, b)
}

async fn retrieve_ids(index: &VectorStoreIndex, emb: Vec<f32>, k: usize) -> Vec<String> {
    index
        .as_retriever()
        .similarity_top_k(k)
        .retrieve(&bundle(emb))
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.node.id_)
        .collect()
}

#[tokio::test]
async fn several_indexes_share_a_storage_context() {
    let sc = StorageContext::from_defaults();
    let (a, b) = two_indexes(&sc).await;
    assert_eq!(
        sc.vector_store()
            .unwrap()
            .as_any()
            .downcast_ref::<SimpleVectorStore>()
            .unwrap()
            .len(),
        20
    );
    // A query aimed exactly at one of b's nodes still answers from a alone.
    let from_a = retrieve_ids(&a, embedding(1, 2), 5).await;
    assert_eq!(from_a.len(), 5);
    assert!(from_a.iter().all(|id| id.starts_with("a-")), "{from_a:?}");
    let from_b = retrieve_ids(&b, embedding(1, 2), 100).await;
    assert_eq!(from_b.len(), 8);
    assert_eq!(from_b[0], "b-1-2");

    let tmp = tempfile::tempdir().unwrap();
    sc.persist(tmp.path()).await.unwrap();
    let loaded = StorageContext::from_persist_dir(tmp.path()).await.unwrap();
    let err = load_index_from_storage(loaded.clone(), embed_model(), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("2 indexes"), "{err}");
    let b2 = load_index_from_storage(loaded.clone(), embed_model(), Some("b"))
        .await
        .unwrap();
    assert_eq!(b2.index_id(), "b");
    assert_eq!(retrieve_ids(&b2, embedding(1, 2), 100).await, from_b);
    let a2 = load_index_from_storage(loaded, embed_model(), Some("a"))
        .await
        .unwrap();
    assert_eq!(retrieve_ids(&a2, embedding(1, 2), 5).await, from_a);
    // The renamed structs replaced the old ones in index_store.json.
    let index_store: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("index_store.json")).unwrap())
            .unwrap();
    let mut keys: Vec<&String> = index_store["index_store/data"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["a", "b"]);
}

#[tokio::test]
async fn delete_ref_doc_removes_a_document_from_every_store() {
    let sc = StorageContext::from_defaults();
    let (a, b) = two_indexes(&sc).await;
    let info = a.ref_doc_info().await.unwrap();
    assert_eq!(
        info.keys().collect::<Vec<_>>(),
        ["a-doc-0", "a-doc-1", "a-doc-2"]
    );
    assert_eq!(
        info["a-doc-1"].node_ids,
        ["a-1-0", "a-1-1", "a-1-2", "a-1-3"]
    );
    assert_eq!(info["a-doc-1"].metadata["doc"], json!(1));

    a.delete_ref_doc("a-doc-1", true).await.unwrap();
    let simple_len = sc
        .vector_store()
        .unwrap()
        .as_any()
        .downcast_ref::<SimpleVectorStore>()
        .unwrap()
        .len();
    assert_eq!(simple_len, 16);
    let nodes_dict = a.index_struct().nodes_dict;
    assert_eq!(nodes_dict.len(), 8);
    assert!(nodes_dict.keys().all(|k| !k.starts_with("a-1-")));
    let docstore = &sc.docstore;
    assert!(
        docstore
            .get_ref_doc_info("a-doc-1")
            .await
            .unwrap()
            .is_none()
    );
    assert!(!docstore.document_exists("a-1-0").await.unwrap());
    assert!(docstore.document_exists("a-0-0").await.unwrap());
    assert_eq!(a.ref_doc_info().await.unwrap().len(), 2);
    // The stored struct was updated too.
    let stored = sc
        .index_store
        .get_index_struct(Some("a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored,
        ragloom_core::IndexStruct::IndexDict(a.index_struct())
    );
    // The other index is untouched; deleting an unknown document is no error.
    assert_eq!(b.ref_doc_info().await.unwrap().len(), 2);
    a.delete_ref_doc("no-such-doc", true).await.unwrap();
    let ids = retrieve_ids(&a, embedding(1, 1), 100).await;
    assert_eq!(ids.len(), 8);
    assert!(ids.iter().all(|id| !id.starts_with("a-1-")), "{ids:?}");
}

#[tokio::test]
async fn vector_store_files_with_unknown_fields_load() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vector_stores/store_a.json");
    let mut file: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // What a newer LlamaIndex might add: new top-level keys of any shape.
    file.insert("class_name".into(), json!("SimpleVectorStore"));
    file.insert("future_dict".into(), json!({"n1": {"a": [1, 2.5, null]}}));
    file.insert("future_flag".into(), json!(true));
    let tmp = tempfile::tempdir().unwrap();
    let extended = tmp.path().join("default__vector_store.json");
    std::fs::write(&extended, serde_json::to_vec(&file).unwrap()).unwrap();
    let original = SimpleVectorStore::from_persist_path(&path).unwrap();
    let loaded = SimpleVectorStore::from_persist_path(&extended).unwrap();
    assert_eq!(loaded.node_ids(), original.node_ids());
    let q = VectorStoreQuery::new(vec![0.9, 0.1, 0.2, 0.0], 4);
    assert_eq!(
        loaded.query(&q).await.unwrap(),
        original.query(&q).await.unwrap()
    );
    // Persisting writes LlamaIndex's three keys; the unknown ones are dropped.
    let out = tmp.path().join("out.json");
    loaded.persist(&out).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&path).unwrap()
    );
}
