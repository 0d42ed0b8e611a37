//! Docstore checks: nodes in and out, the source-document bookkeeping and
//! the document-hash state that incremental ingestion decides from.

use super::Conformance;
use super::vector_store::id;
use crate::error::{Error, Result};
use crate::schema::{Node, NodeRelationship, RelatedNodeInfo};
use crate::storage::docstore::DocStore;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// Runs every docstore check, each on a store `fresh` returns empty.
pub async fn check_doc_store<F, Fut>(fresh: F) -> Conformance
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn DocStore>>,
{
    let mut report = Conformance::default();
    nodes_in_and_out(&*fresh().await, &mut report).await;
    no_update_writes_nothing(&*fresh().await, &mut report).await;
    source_documents(&*fresh().await, &mut report).await;
    hashes(&*fresh().await, &mut report).await;
    report
}

fn node(n: usize, doc: &str) -> Node {
    Node::text_node(format!("text {n} of {doc}"))
        .with_id(id(n))
        .with_metadata("file_name", format!("{doc}.txt"))
        .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc))
}

fn nodes() -> Vec<Node> {
    vec![node(0, "doc-a"), node(1, "doc-a"), node(2, "doc-b")]
}

fn fail(check: &str, detail: impl std::fmt::Display) -> ! {
    panic!("docstore conformance, {check}: {detail}")
}

fn ok<T>(check: &str, r: Result<T>) -> T {
    r.unwrap_or_else(|e| fail(check, format!("unexpected error: {e}")))
}

async fn nodes_in_and_out(store: &dyn DocStore, report: &mut Conformance) {
    let check = "nodes in and out";
    ok(check, store.add_documents(&nodes(), true, true).await);
    let got = ok(check, store.get_nodes(&[id(2), id(0)]).await);
    if got != [nodes()[2].clone(), nodes()[0].clone()] {
        fail(check, format!("get_nodes gave {got:?}"));
    }
    if !ok(check, store.document_exists(&id(1)).await)
        || ok(check, store.document_exists(&id(9)).await)
    {
        fail(check, "document_exists");
    }
    match store.get_node(&id(9)).await {
        Err(Error::NotFound(m)) if m.contains(&id(9)) => {}
        other => fail(check, format!("a missing node gave {other:?}")),
    }
    if ok(check, store.get_document(&id(9)).await).is_some() {
        fail(check, "get_document of a missing id");
    }
    // Updating a node replaces it.
    let mut changed = node(1, "doc-a");
    changed.text = "changed".into();
    ok(check, store.add_documents(&[changed], true, true).await);
    if ok(check, store.get_node(&id(1)).await).text != "changed" {
        fail(check, "an update was not stored");
    }
    let all: Vec<String> = ok(check, store.docs().await)
        .into_iter()
        .map(|n| n.id_)
        .collect();
    if all.len() != 3 {
        fail(check, format!("docs() after an update: {all:?}"));
    }
    report.pass(check);
}

async fn no_update_writes_nothing(store: &dyn DocStore, report: &mut Conformance) {
    let check = "allow_update false";
    ok(check, store.add_documents(&nodes()[..1], true, true).await);
    let batch = [node(5, "doc-c"), node(0, "doc-a")];
    match store.add_documents(&batch, false, true).await {
        Err(e) if e.to_string().contains(&id(0)) => {}
        other => fail(
            check,
            format!("want an error naming {}, got {other:?}", id(0)),
        ),
    }
    if ok(check, store.document_exists(&id(5)).await) {
        fail(check, "the batch was partly written");
    }
    report.pass(check);
}

async fn source_documents(store: &dyn DocStore, report: &mut Conformance) {
    let check = "source documents";
    ok(check, store.add_documents(&nodes(), true, true).await);
    let info = ok(check, store.get_ref_doc_info("doc-a").await)
        .unwrap_or_else(|| fail(check, "no info for doc-a"));
    if info.node_ids != [id(0), id(1)] {
        fail(check, format!("doc-a's nodes: {:?}", info.node_ids));
    }
    let all = ok(check, store.get_all_ref_doc_info().await);
    if all.keys().collect::<Vec<_>>() != ["doc-a", "doc-b"] {
        fail(check, format!("all infos: {:?}", all.keys()));
    }
    // Deleting a node takes it out of its document; the last one takes the document.
    ok(check, store.delete_document(&id(0)).await);
    let info = ok(check, store.get_ref_doc_info("doc-a").await);
    if info.map(|i| i.node_ids) != Some(vec![id(1)]) {
        fail(check, "doc-a after deleting one node");
    }
    ok(check, store.delete_document(&id(2)).await);
    if ok(check, store.get_ref_doc_info("doc-b").await).is_some() {
        fail(check, "doc-b outlived its last node");
    }
    ok(check, store.delete_ref_doc("doc-a").await);
    if ok(check, store.document_exists(&id(1)).await) {
        fail(check, "delete_ref_doc left a node");
    }
    match store.delete_ref_doc("doc-a").await {
        Err(Error::NotFound(_)) => {}
        other => fail(check, format!("deleting a missing document gave {other:?}")),
    }
    report.pass(check);
}

async fn hashes(store: &dyn DocStore, report: &mut Conformance) {
    let check = "document hashes";
    ok(check, store.add_documents(&nodes(), true, true).await);
    let want = nodes()[0].hash();
    if ok(check, store.get_document_hash(&id(0)).await) != Some(want.clone()) {
        fail(check, "add_documents did not record the node's hash");
    }
    ok(check, store.set_document_hash("doc-a", "h-a").await);
    ok(check, store.set_document_hash("doc-b", "h-b").await);
    ok(check, store.set_document_hash("doc-a", "h-a2").await);
    if ok(check, store.get_document_hash("doc-a").await).as_deref() != Some("h-a2") {
        fail(check, "a hash was not replaced");
    }
    if ok(check, store.get_document_hash("doc-z").await).is_some() {
        fail(check, "a hash for an unknown document");
    }
    let all: BTreeMap<String, String> = ok(check, store.get_all_document_hashes().await);
    if all.get("h-a2").map(String::as_str) != Some("doc-a")
        || all.get("h-b").map(String::as_str) != Some("doc-b")
        || all.contains_key("h-a")
        || all.get(&want) != Some(&id(0))
    {
        fail(check, format!("all hashes: {all:?}"));
    }
    // A node written without its text still leaves its hash.
    ok(
        check,
        store.add_documents(&[node(7, "doc-c")], true, false).await,
    );
    if ok(check, store.get_document_hash(&id(7)).await) != Some(node(7, "doc-c").hash()) {
        fail(check, "store_text false lost the hash");
    }
    ok(check, store.delete_document(&id(0)).await);
    if ok(check, store.get_document_hash(&id(0)).await).is_some() {
        fail(check, "a deleted node kept its hash");
    }
    report.pass(check);
}
