//! `refresh_ref_docs` / `update_ref_doc` with LlamaIndex 0.14.25's results, and
//! `StorageContext::transaction` on the in-memory stores (a pass-through).

#![allow(clippy::unwrap_used)]

use ragloom_core::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

fn doc(id: &str, text: &str) -> Document {
    Node::document(text.repeat(20)).with_id(id)
}

// Recorded from Python: `VectorStoreIndex.from_documents([a, b], MockEmbedding(8))`, then
// `refresh_ref_docs([a changed, b, c new])` -> [True, False, True], ref docs b, a, c
// (a's entry deleted and written again, so it moves after b),
// 3 nodes; a second refresh with the same documents -> [False, False, False].
#[tokio::test]
async fn refresh_ref_docs_inserts_new_updates_changed_and_skips_unchanged() {
    let embed: Arc<dyn Embedding> = Arc::new(MockEmbedding::new(8));
    let first = [doc("a", "alpha one. "), doc("b", "beta two. ")];
    let index = VectorStoreIndex::from_documents(&first, embed)
        .await
        .unwrap();
    let old_a_nodes = index.ref_doc_info().await.unwrap()["a"].node_ids.clone();

    let next = [
        doc("a", "alpha changed. "),
        doc("b", "beta two. "),
        doc("c", "gamma three. "),
    ];
    assert_eq!(
        index.refresh_ref_docs(&next).await.unwrap(),
        [true, false, true]
    );
    let info = index.ref_doc_info().await.unwrap();
    assert_eq!(
        info.keys().map(String::as_str).collect::<Vec<_>>(),
        ["b", "a", "c"]
    );
    assert_eq!(index.index_struct().nodes_dict.len(), 3);
    assert!(
        info["a"]
            .node_ids
            .iter()
            .all(|id| !old_a_nodes.contains(id))
    );
    let docstore = &index.storage_context().docstore;
    for d in &next {
        assert_eq!(
            docstore.get_document_hash(&d.id_).await.unwrap(),
            Some(d.hash())
        );
    }
    let retrieved = index
        .as_retriever()
        .similarity_top_k(3)
        .retrieve(&"alpha".into())
        .await
        .unwrap();
    let texts: BTreeSet<String> = retrieved.iter().map(|n| n.node.text.clone()).collect();
    assert!(texts.iter().any(|t| t.starts_with("alpha changed")));
    assert!(!texts.iter().any(|t| t.starts_with("alpha one")));

    assert_eq!(
        index.refresh_ref_docs(&next).await.unwrap(),
        [false, false, false]
    );
}

#[tokio::test]
async fn a_transaction_on_the_in_memory_stores_is_a_pass_through() {
    let context = StorageContext::from_defaults();
    let tx = context.transaction().await.unwrap();
    assert!(!tx.is_atomic());
    tx.storage_context()
        .docstore
        .set_document_hash("d", "h")
        .await
        .unwrap();
    // Applied at once: the in-memory stores cannot hold writes back.
    assert_eq!(
        context
            .docstore
            .get_document_hash("d")
            .await
            .unwrap()
            .as_deref(),
        Some("h")
    );
    tx.rollback().await.unwrap();
    assert!(
        context
            .docstore
            .get_document_hash("d")
            .await
            .unwrap()
            .is_some()
    );
}
