//! The store conformance kit run on the in-memory stores.
#![allow(clippy::unwrap_used)]

use ragloom_core::storage::{DocStore, SimpleDocumentStore};
use ragloom_core::testing::{check_doc_store, check_vector_store};
use ragloom_core::vector_stores::{SimpleVectorStore, VectorStore};
use std::sync::Arc;

#[tokio::test]
async fn simple_vector_store_conforms() {
    let report =
        check_vector_store(|| async { Arc::new(SimpleVectorStore::new()) as Arc<dyn VectorStore> })
            .await;
    // SimpleVectorStore keeps no text, so get_nodes is its one declined check.
    let declined: Vec<&str> = report.unsupported.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(declined, ["get_nodes"]);
    assert!(report.passed.len() >= 25, "{:?}", report.passed);
}

#[tokio::test]
async fn simple_document_store_conforms() {
    let report =
        check_doc_store(|| async { Arc::new(SimpleDocumentStore::new()) as Arc<dyn DocStore> })
            .await;
    assert!(report.unsupported.is_empty());
    assert_eq!(report.passed.len(), 4);
}
