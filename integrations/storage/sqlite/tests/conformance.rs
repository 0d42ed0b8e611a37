//! The store conformance kit run on the embedded store: its vector store and
//! its docstore, each check on a fresh file.
#![allow(clippy::unwrap_used)]

use ragloom_core::storage::DocStore;
use ragloom_core::testing::{check_doc_store, check_vector_store};
use ragloom_core::vector_stores::VectorStore;
use ragloom_storage_sqlite::SqliteStore;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_vector_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let report = check_vector_store(|| async {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let store = SqliteStore::open(dir.path().join(format!("v{i}.sqlite"))).unwrap();
        store.vector_store() as Arc<dyn VectorStore>
    })
    .await;
    // Node text lives in the docstore beside it (`stores_text` is false).
    let declined: Vec<&str> = report.unsupported.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(declined, ["get_nodes"]);
    assert!(report.passed.len() >= 25, "{:?}", report.passed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_document_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let report = check_doc_store(|| async {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let store = SqliteStore::open(dir.path().join(format!("d{i}.sqlite"))).unwrap();
        store.docstore() as Arc<dyn DocStore>
    })
    .await;
    assert_eq!(report.passed.len(), 4);
}
