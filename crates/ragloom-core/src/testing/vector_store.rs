//! Vector-store checks: add and upsert, deletes by document, ids and filters
//! (one meaning of absent and empty), every filter operator, top-k, clear, reads during writes.

use super::Conformance;
use crate::error::{Error, Result};
use crate::schema::{Node, NodeRelationship, RelatedNodeInfo};
use crate::vector_stores::{
    FilterOperator, MetadataFilter, MetadataFilters, VectorStore, VectorStoreQuery,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs every vector-store check, each on a store `fresh` returns empty.
///
/// Node ids are UUIDs (as LlamaIndex's), embeddings have 4 dimensions and
/// scores are read as cosine similarities, the stores' default.
pub async fn check_vector_store<F, Fut>(fresh: F) -> Conformance
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn VectorStore>>,
{
    let mut report = Conformance::default();
    add_and_query(&*fresh().await, &mut report).await;
    upsert_replaces(&*fresh().await, &mut report).await;
    add_without_embedding(&*fresh().await, &mut report).await;
    get_nodes(&*fresh().await, &mut report).await;
    delete_by_document(&*fresh().await, &mut report).await;
    delete_nodes_meanings(&*fresh().await, &mut report).await;
    filters(&*fresh().await, &mut report).await;
    ties(&*fresh().await, &mut report).await;
    clear(&*fresh().await, &mut report).await;
    reads_during_writes(fresh().await, &mut report).await;
    report
}

/// The id of fixture node `n`: a UUID, which every store accepts.
pub(crate) fn id(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

fn node(n: usize, doc: &str, embedding: impl Into<Vec<f32>>, metadata: Value) -> Node {
    let mut node = Node::text_node(format!("node {n} of {doc}"))
        .with_id(id(n))
        .with_embedding(embedding.into())
        .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc));
    if let Value::Object(map) = metadata {
        for (k, v) in map {
            node = node.with_metadata(k, v);
        }
    }
    node
}

fn library() -> Vec<Node> {
    // Node n: its source document, its embedding and its metadata.
    let rows = json!([
        ["doc-a", [1.0, 0.0, 0.0, 0.0], {"author": "Ann", "year": 1999, "rating": 4.5, "tags": ["rust", "db"], "title": "The Rust Book"}],
        ["doc-a", [0.9, 0.1, 0.0, 0.0], {"author": "Bob", "year": 2005, "rating": 3.0, "tags": ["python"], "title": "Python Notes"}],
        ["doc-b", [0.0, 1.0, 0.0, 0.0], {"author": "Cy", "year": 2010, "rating": 5.0, "tags": ["rust", "web"], "title": "web services in rust"}],
        ["doc-b", [0.0, 0.0, 1.0, 0.0], {"author": "Ann", "year": 2021, "rating": 2.5, "tags": ["db"], "title": "Databases"}],
        ["doc-c", [0.0, 0.0, 0.0, 1.0], {"author": "Dee", "year": 1999, "rating": 4.0, "tags": ["rust"], "title": "Notes on rust"}],
        ["doc-c", [0.5, 0.5, 0.5, 0.5], {"author": "Bob", "year": 2015, "title": "Mixed"}]
    ]);
    let rows = rows.as_array().cloned().unwrap_or_default();
    rows.into_iter()
        .enumerate()
        .map(|(n, row)| {
            let embedding: Vec<f32> = row[1]
                .as_array()
                .into_iter()
                .flatten()
                .map(|x| x.as_f64().unwrap_or_default() as f32)
                .collect();
            node(
                n,
                row[0].as_str().unwrap_or_default(),
                embedding,
                row[2].clone(),
            )
        })
        .collect()
}

fn ids(ns: &[usize]) -> BTreeSet<String> {
    ns.iter().map(|&n| id(n)).collect()
}

fn fail(check: &str, detail: impl std::fmt::Display) -> ! {
    panic!("vector store conformance, {check}: {detail}")
}

fn ok<T>(check: &str, r: Result<T>) -> T {
    r.unwrap_or_else(|e| fail(check, format!("unexpected error: {e}")))
}

/// Every stored id, read through a query that asks for all of them.
async fn stored(store: &dyn VectorStore, check: &str) -> BTreeSet<String> {
    let q = VectorStoreQuery::new(vec![1.0, 1.0, 1.0, 1.0], 1000);
    ok(check, store.query(&q).await).ids.into_iter().collect()
}

async fn add_and_query(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "add and query";
    let added = ok(check, store.add(&library()).await);
    if added != (0..6).map(id).collect::<Vec<_>>() {
        fail(check, format!("add returned {added:?}"));
    }
    let q = VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 3);
    let r = ok(check, store.query(&q).await);
    if r.ids != [id(0), id(1), id(5)] {
        fail(check, format!("top 3 were {:?}", r.ids));
    }
    let cosine = [1.0, 0.9 / (0.82f32).sqrt(), 0.5];
    for (got, want) in r.similarities.iter().zip(cosine) {
        if (got - want).abs() > 1e-3 {
            fail(
                check,
                format!("scores {:?}, want {cosine:?}", r.similarities),
            );
        }
    }
    if r.similarities.len() != 3 {
        fail(check, format!("{} scores for 3 ids", r.similarities.len()));
    }
    if store.stores_text() {
        let nodes = r.nodes.unwrap_or_default();
        let texts: Vec<&str> = nodes.iter().map(|n| n.text.as_str()).collect();
        if texts != ["node 0 of doc-a", "node 1 of doc-a", "node 5 of doc-c"] {
            fail(check, format!("texts {texts:?}"));
        }
    }
    // Restricted to ids, then to documents.
    let mut q = VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 10);
    q.node_ids = Some(vec![id(2), id(3)]);
    let got: BTreeSet<String> = ok(check, store.query(&q).await).ids.into_iter().collect();
    if got != ids(&[2, 3]) {
        fail(check, format!("node_ids restriction gave {got:?}"));
    }
    let mut q = VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 10);
    q.doc_ids = Some(vec!["doc-c".into()]);
    let got: BTreeSet<String> = ok(check, store.query(&q).await).ids.into_iter().collect();
    if got != ids(&[4, 5]) {
        fail(check, format!("doc_ids restriction gave {got:?}"));
    }
    report.pass(check);
}

async fn upsert_replaces(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "add again replaces";
    ok(check, store.add(&library()).await);
    let mut again = library().remove(2);
    again.text = "rewritten".into();
    again.embedding = Some(vec![0.0, 0.0, 0.0, -1.0]);
    ok(check, store.add(&[again]).await);
    if stored(store, check).await != ids(&[0, 1, 2, 3, 4, 5]) {
        fail(check, "the ids changed");
    }
    let r = ok(
        check,
        store
            .query(&VectorStoreQuery::new(vec![0.0, 1.0, 0.0, 0.0], 1))
            .await,
    );
    if r.ids != [id(5)] {
        fail(check, format!("the old vector still answers: {:?}", r.ids));
    }
    if store.stores_text() {
        let got = ok(check, store.get_nodes(&[id(2)]).await);
        if got.len() != 1 || got[0].text != "rewritten" {
            fail(check, "get_nodes returns the old text");
        }
    }
    report.pass(check);
}

async fn add_without_embedding(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "a node without an embedding";
    let mut nodes = library();
    nodes[3].embedding = None;
    match store.add(&nodes).await {
        Err(e) if e.to_string().contains(&id(3)) => {}
        other => fail(
            check,
            format!("want an error naming {}, got {other:?}", id(3)),
        ),
    }
    if !stored(store, check).await.is_empty() {
        fail(check, "the other nodes of the batch were stored");
    }
    report.pass(check);
}

async fn get_nodes(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "get_nodes";
    ok(check, store.add(&library()).await);
    match store.get_nodes(&[id(3), id(0), id(99)]).await {
        Err(Error::Unsupported(m)) if !store.stores_text() => {
            report.unsupported.push((check.into(), m));
            return;
        }
        Err(e) => fail(check, e),
        Ok(nodes) => {
            let got: BTreeSet<String> = nodes.iter().map(|n| n.id_.clone()).collect();
            if got != ids(&[0, 3]) {
                fail(check, format!("got {got:?}"));
            }
            let n0 = nodes
                .iter()
                .find(|n| n.id_ == id(0))
                .unwrap_or_else(|| fail(check, "no n0"));
            let want = &library()[0];
            if n0.text != want.text
                || n0.ref_doc_id() != Some("doc-a")
                || n0.metadata.get("tags") != want.metadata.get("tags")
                || n0.metadata.get("author") != want.metadata.get("author")
            {
                fail(check, format!("node read back differs: {n0:?}"));
            }
        }
    }
    report.pass(check);
}

async fn delete_by_document(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "delete by document";
    ok(check, store.add(&library()).await);
    ok(check, store.delete("doc-b").await);
    ok(check, store.delete("no-such-doc").await);
    let left = stored(store, check).await;
    if left != ids(&[0, 1, 4, 5]) {
        fail(check, format!("left {left:?}"));
    }
    report.pass(check);
}

async fn delete_nodes_meanings(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "delete_nodes";
    ok(check, store.add(&library()).await);
    let expect = |left: BTreeSet<String>, want: &[usize], what: &str| {
        if left != ids(want) {
            fail(check, format!("{what}: left {left:?}"));
        }
    };
    // Neither ids nor filters restrict anything: refused, nothing deleted.
    for filters in [None, Some(&MetadataFilters::default())] {
        match store.delete_nodes(None, filters).await {
            Err(Error::InvalidInput(m)) if m.contains("clear()") => {}
            other => fail(check, format!("no ids and no filters gave {other:?}")),
        }
    }
    expect(
        stored(store, check).await,
        &[0, 1, 2, 3, 4, 5],
        "after a refused call",
    );
    // An empty id list selects nothing, whatever the filters.
    let bob = MetadataFilters::from_pairs([("author", "Bob")]);
    ok(check, store.delete_nodes(Some(&[]), None).await);
    ok(check, store.delete_nodes(Some(&[]), Some(&bob)).await);
    expect(
        stored(store, check).await,
        &[0, 1, 2, 3, 4, 5],
        "an empty id list",
    );
    // Ids alone (an unknown id is no error).
    ok(
        check,
        store.delete_nodes(Some(&[id(1), id(99)]), None).await,
    );
    expect(stored(store, check).await, &[0, 2, 3, 4, 5], "ids alone");
    // Filters alone: every match.
    ok(check, store.delete_nodes(None, Some(&bob)).await);
    expect(stored(store, check).await, &[0, 2, 3, 4], "filters alone");
    // Both: the listed nodes that match.
    let y1999 = MetadataFilters::and([MetadataFilter::eq("year", 1999)]);
    ok(
        check,
        store
            .delete_nodes(Some(&[id(0), id(3)]), Some(&y1999))
            .await,
    );
    expect(stored(store, check).await, &[2, 3, 4], "ids and filters");
    report.pass(check);
}

/// Each operator and nesting, with the matches worked out by hand.
fn filter_cases() -> Vec<(&'static str, MetadataFilters, &'static [usize])> {
    let one = |key: &str, value: Value, op: FilterOperator| {
        MetadataFilters::and([MetadataFilter::new(key, value, op)])
    };
    use FilterOperator as Op;
    vec![
        (
            "== on a string",
            one("author", json!("Ann"), Op::Eq),
            &[0, 3],
        ),
        ("== on an int", one("year", json!(1999), Op::Eq), &[0, 4]),
        ("!=", one("author", json!("Ann"), Op::Ne), &[1, 2, 4, 5]),
        (">", one("year", json!(2005), Op::Gt), &[2, 3, 5]),
        (">=", one("year", json!(2005), Op::Gte), &[1, 2, 3, 5]),
        ("<", one("rating", json!(4.0), Op::Lt), &[1, 3]),
        ("<=", one("rating", json!(4.0), Op::Lte), &[1, 3, 4]),
        (
            "in",
            one("author", json!(["Bob", "Cy"]), Op::In),
            &[1, 2, 5],
        ),
        (
            "nin",
            one("author", json!(["Bob", "Cy"]), Op::Nin),
            &[0, 3, 4],
        ),
        (
            "any",
            one("tags", json!(["web", "python"]), Op::Any),
            &[1, 2],
        ),
        ("all", one("tags", json!(["rust", "db"]), Op::All), &[0]),
        ("contains", one("tags", json!("db"), Op::Contains), &[0, 3]),
        (
            "text_match",
            one("title", json!("rust"), Op::TextMatch),
            &[2, 4],
        ),
        (
            "text_match_insensitive",
            one("title", json!("RUST"), Op::TextMatchInsensitive),
            &[0, 2, 4],
        ),
        ("is_empty", one("tags", Value::Null, Op::IsEmpty), &[5]),
        (
            "and",
            MetadataFilters::and([
                MetadataFilter::eq("author", "Ann"),
                MetadataFilter::new("year", 2000, Op::Gt),
            ]),
            &[3],
        ),
        (
            "or with a nested and",
            MetadataFilters::or([
                MetadataFilter::eq("author", "Ann").into(),
                crate::vector_stores::FilterItem::Filters(MetadataFilters::and([
                    MetadataFilter::new("year", 2010, Op::Gte),
                    MetadataFilter::new("tags", "rust", Op::Contains),
                ])),
            ]),
            &[0, 2, 3],
        ),
        (
            "not",
            MetadataFilters::not([MetadataFilter::new("author", json!(["Ann", "Bob"]), Op::In)]),
            &[2, 4],
        ),
    ]
}

async fn filters(store: &dyn VectorStore, report: &mut Conformance) {
    ok("filters", store.add(&library()).await);
    for (name, filters, want) in filter_cases() {
        let check = format!("filter {name}");
        let mut q = VectorStoreQuery::new(vec![1.0, 1.0, 1.0, 1.0], 100);
        q.filters = Some(filters);
        match store.query(&q).await {
            Err(Error::Unsupported(m)) => report.unsupported.push((check, m)),
            Err(e) => fail(&check, e),
            Ok(r) => {
                let got: BTreeSet<String> = r.ids.into_iter().collect();
                if got != ids(want) {
                    fail(&check, format!("matched {got:?}, want {:?}", ids(want)));
                }
                report.pass(check);
            }
        }
    }
}

async fn ties(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "top-k order and ties";
    let mut nodes: Vec<Node> = (10..14)
        .map(|n| node(n, "doc-t", [0.0, 1.0, 0.0, 0.0], json!({})))
        .collect();
    nodes.push(node(14, "doc-t", [0.6, 0.8, 0.0, 0.0], json!({})));
    nodes.push(node(15, "doc-t", [1.0, 0.0, 0.0, 0.0], json!({})));
    ok(check, store.add(&nodes).await);
    let tied = ids(&[10, 11, 12, 13]);
    let r = ok(
        check,
        store
            .query(&VectorStoreQuery::new(vec![0.0, 1.0, 0.0, 0.0], 2))
            .await,
    );
    if r.ids.len() != 2 || !r.ids.iter().all(|i| tied.contains(i)) {
        fail(check, format!("top 2 of 4 tied: {:?}", r.ids));
    }
    let r = ok(
        check,
        store
            .query(&VectorStoreQuery::new(vec![0.0, 1.0, 0.0, 0.0], 6))
            .await,
    );
    if r.ids.len() != 6 || r.ids[4] != id(14) || r.ids[5] != id(15) {
        fail(check, format!("all six: {:?}", r.ids));
    }
    if r.similarities.windows(2).any(|w| w[0] < w[1]) {
        fail(
            check,
            format!("scores not best first: {:?}", r.similarities),
        );
    }
    report.pass(check);
}

async fn clear(store: &dyn VectorStore, report: &mut Conformance) {
    let check = "clear";
    ok(check, store.add(&library()).await);
    ok(check, store.clear().await);
    if !stored(store, check).await.is_empty() {
        fail(check, "nodes left after clear");
    }
    ok(check, store.clear().await);
    ok(check, store.add(&library()[..2]).await);
    if stored(store, check).await != ids(&[0, 1]) {
        fail(check, "adding after clear");
    }
    report.pass(check);
}

/// A reader querying while a writer adds batches: every read succeeds, sees
/// only written nodes, and never fewer than the read before it.
async fn reads_during_writes(store: Arc<dyn VectorStore>, report: &mut Conformance) {
    let check = "reads during a write";
    let done = AtomicBool::new(false);
    let batches: Vec<Vec<Node>> = (0..10)
        .map(|b| {
            (0..5)
                .map(|i| {
                    let n = 100 + b * 5 + i;
                    let x = n as f32;
                    node(
                        n,
                        &format!("doc-{b}"),
                        [x.sin(), x.cos(), 1.0, 0.5],
                        json!({"batch": b}),
                    )
                })
                .collect()
        })
        .collect();
    let all: BTreeSet<String> = batches.iter().flatten().map(|n| n.id_.clone()).collect();
    let writer = async {
        for batch in &batches {
            ok(check, store.add(batch).await);
            tokio::task::yield_now().await;
        }
        done.store(true, Ordering::SeqCst);
    };
    let reader = async {
        let mut seen = 0;
        let mut reads = 0;
        loop {
            let finished = done.load(Ordering::SeqCst);
            let got = stored(&*store, check).await;
            if !got.is_subset(&all) || got.len() < seen {
                fail(check, format!("read {} after {seen}: {got:?}", got.len()));
            }
            seen = got.len();
            reads += 1;
            if finished {
                return (seen, reads);
            }
            tokio::task::yield_now().await;
        }
    };
    let ((), (seen, reads)) = futures::join!(writer, reader);
    if seen != all.len() || reads < 2 {
        fail(
            check,
            format!("{seen} nodes seen at the end, {reads} reads"),
        );
    }
    report.pass(check);
}
