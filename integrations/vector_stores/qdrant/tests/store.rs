//! QdrantVectorStore end to end, live in both modes: embedded (Qdrant's engine
//! in-process) and remote (qdrant-client's gRPC against a server on 127.0.0.1
//! started here, whose services run the same engine: `support/server.rs`).
//!
//! The Python interop data (`data/python_points.json`) was written by
//! LlamaIndex's own `QdrantVectorStore` (`data/gen_python_points.py`).
#![allow(clippy::unwrap_used)]

#[path = "support/server.rs"]
mod server;

use qdrant_edge::external::uuid::Uuid;
use qdrant_edge::{EdgeConfigBuilder, EdgeShard, EdgeVectorParamsBuilder};
use ragloom_core::Error;
use ragloom_core::schema::{Metadata, Node};
use ragloom_core::vector_stores::{
    FilterItem, FilterOperator, MetadataFilter, MetadataFilters, VectorStore, VectorStoreQuery,
    matches, node_to_metadata_dict,
};
use ragloom_vector_stores_qdrant::QdrantVectorStore;
use serde_json::{Value, json};
use std::collections::BTreeSet;

fn python() -> Value {
    let text = include_str!("data/python_points.json");
    serde_json::from_str(text).unwrap()
}

fn python_nodes(data: &Value) -> Vec<Node> {
    data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| Node::from_llama_dict(n.as_object().unwrap(), None).unwrap())
        .collect()
}

/// The recorded points: id, vector, payload.
fn python_points(data: &Value) -> Vec<(Uuid, Vec<f32>, Value)> {
    data["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = Uuid::parse_str(p["id"].as_str().unwrap()).unwrap();
            let v = p["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            (id, v, p["payload"].clone())
        })
        .collect()
}

/// Writes Python's points into an engine folder, as an embedded store finds it.
#[cfg(feature = "qdrant-embedded")]
fn replay_embedded(dir: &std::path::Path, data: &Value) {
    let shard_dir = dir.join(data["collection_name"].as_str().unwrap());
    std::fs::create_dir_all(&shard_dir).unwrap();
    let config = EdgeConfigBuilder::new()
        .vector(
            "",
            EdgeVectorParamsBuilder::new(4, qdrant_edge::Distance::Cosine).build(),
        )
        .build();
    let shard = EdgeShard::new(&shard_dir, config).unwrap();
    let points = python_points(data)
        .into_iter()
        .map(|(id, v, p)| {
            qdrant_edge::PointStruct::new(qdrant_edge::PointId::Uuid(id), v, p).into()
        })
        .collect();
    shard
        .update(qdrant_edge::UpdateOperation::PointOperation(
            qdrant_edge::PointOperations::UpsertPoints(
                qdrant_edge::PointInsertOperations::PointsList(points),
            ),
        ))
        .unwrap();
    shard.flush();
}

/// What must survive a round trip through the store.
fn essence(n: &Node) -> Value {
    json!({
        "id": n.id_,
        "text": n.text,
        "metadata": n.metadata,
        "relationships": n.to_llama_dict().get("relationships"),
        "start": n.start_char_idx,
        "end": n.end_char_idx,
        "excluded_embed": n.excluded_embed_metadata_keys,
        "class": if n.class_name() == "IndexNode" { "IndexNode" } else { "TextNode" },
    })
}

async fn check_reads_python_points(store: &QdrantVectorStore, data: &Value) {
    let nodes = python_nodes(data);
    let ids: Vec<String> = nodes.iter().map(|n| n.id_.clone()).collect();
    let got = store.get_nodes(&ids).await.unwrap();
    assert_eq!(got.len(), nodes.len());
    for (want, got) in nodes.iter().zip(&got) {
        assert_eq!(essence(got), essence(want));
    }
    let q = &data["query"];
    let embedding: Vec<f32> = q["embedding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    let result = store
        .query(&VectorStoreQuery::new(
            embedding,
            q["top_k"].as_u64().unwrap() as usize,
        ))
        .await
        .unwrap();
    let want_ids: Vec<String> = serde_json::from_value(q["ids"].clone()).unwrap();
    assert_eq!(result.ids, want_ids);
    for (got, want) in result
        .similarities
        .iter()
        .zip(q["similarities"].as_array().unwrap())
    {
        assert!(
            (f64::from(*got) - want.as_f64().unwrap()).abs() < 1e-5,
            "{got} vs {want}"
        );
    }
    let nodes = result.nodes.unwrap();
    assert_eq!(nodes[0].id_, want_ids[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_reads_points_python_wrote() {
    let data = python();
    let server = server::start().await;
    server
        .state
        .create_unnamed(data["collection_name"].as_str().unwrap(), 4);
    server.state.replay(
        data["collection_name"].as_str().unwrap(),
        python_points(&data),
    );
    let store = QdrantVectorStore::remote(&server.url)
        .collection_name(data["collection_name"].as_str().unwrap())
        .build()
        .unwrap();
    check_reads_python_points(&store, &data).await;
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_reads_points_python_wrote() {
    let data = python();
    let dir = tempfile::tempdir().unwrap();
    replay_embedded(dir.path(), &data);
    let store = QdrantVectorStore::embedded(dir.path())
        .collection_name(data["collection_name"].as_str().unwrap())
        .build()
        .unwrap();
    check_reads_python_points(&store, &data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payloads_and_vectors_equal_what_python_writes() {
    let data = python();
    let server = server::start().await;
    let store = QdrantVectorStore::remote(&server.url)
        .collection_name("written_by_ragloom")
        .batch_size(3)
        .parallel(2)
        .build()
        .unwrap();
    let nodes = python_nodes(&data);
    let ids = store.add(&nodes).await.unwrap();
    assert_eq!(json!(ids), data["added_ids"]);
    // batch_size 3 over 4 nodes: two requests.
    let mut sizes = server.state.upsert_sizes.lock().unwrap().clone();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![1, 3]);
    // Like LlamaIndex: one unnamed vector, and a keyword index on doc_id.
    assert_eq!(
        server.state.field_indexes.lock().unwrap().clone(),
        vec![("written_by_ragloom".to_string(), "doc_id".to_string())]
    );
    assert_eq!(
        server.state.vector_names("written_by_ragloom"),
        vec![String::new()]
    );
    let stored = server.state.points("written_by_ragloom");
    let want = python_points(&data);
    assert_eq!(stored.len(), want.len());
    for ((id, vector, payload), (wid, wvector, wpayload)) in stored.iter().zip(&want) {
        assert_eq!(id, wid);
        // Exactly the JSON string Python writes, not just an equivalent one.
        assert_eq!(payload["_node_content"], wpayload["_node_content"], "{id}");
        assert_eq!(payload, wpayload, "{id}");
        for (a, b) in vector.iter().zip(wvector) {
            assert!((a - b).abs() < 1e-6, "{id}: {vector:?} vs {wvector:?}");
        }
    }
}

fn sample_nodes() -> Vec<Node> {
    let rows = [
        json!({"author": "pg", "year": 2004, "rating": 4.5, "draft": false, "tags": ["lisp", "essays"], "title": "Hackers and Painters"}),
        json!({"author": "pg", "year": 2001, "rating": 3.0, "draft": true, "tags": ["lisp"], "title": "Beating the Averages"}),
        json!({"author": "rms", "year": 1985, "rating": 5, "draft": false, "tags": ["gnu", "freedom"], "title": "GNU Manifesto"}),
        json!({"author": "dk", "year": 1974, "draft": false, "tags": [], "title": "Structured Programming with go to"}),
        json!({"author": "", "year": 2020, "rating": 1.25, "title": "untitled draft"}),
    ];
    rows.iter()
        .enumerate()
        .map(|(i, m)| {
            let mut v = vec![0.1_f32; 4];
            v[i % 4] = 1.0 + i as f32;
            Node::text_node(format!("text {i}"))
                .with_id(Uuid::from_u128(0x1000 + i as u128).to_string())
                .with_metadata_map(m.as_object().unwrap().clone())
                .with_embedding(v)
        })
        .collect()
}

fn filter_cases() -> Vec<(&'static str, MetadataFilters)> {
    use MetadataFilter as F;
    let one = |f: MetadataFilter| MetadataFilters::and([f]);
    vec![
        ("eq str", one(F::eq("author", "pg"))),
        ("eq int", one(F::eq("year", 1985))),
        ("eq float", one(F::eq("rating", 4.5))),
        ("eq bool", one(F::eq("draft", true))),
        ("ne", one(F::ne("author", "pg"))),
        ("gt", one(F::gt("year", 2001))),
        ("gte", one(F::gte("year", 2001))),
        ("lt", one(F::lt("rating", 4.5))),
        ("lte float", one(F::lte("rating", 3.0))),
        ("in", one(F::is_in("author", ["rms", "dk"]))),
        ("in ints", one(F::is_in("year", [1974, 2020]))),
        (
            "in empty",
            one(F::new("author", json!([]), FilterOperator::In)),
        ),
        ("nin", one(F::nin("author", ["pg"]))),
        ("any", one(F::any("tags", ["gnu", "essays"]))),
        ("all", one(F::all("tags", ["lisp", "essays"]))),
        ("contains", one(F::contains("tags", "lisp"))),
        ("text_match", one(F::text_match("title", "Avera"))),
        ("is_empty", one(F::is_empty("tags"))),
        ("is_empty str", one(F::is_empty("author"))),
        ("is_empty missing", one(F::is_empty("rating"))),
        (
            "or",
            MetadataFilters::or([F::eq("author", "rms"), F::lt("year", 1980)]),
        ),
        ("not", MetadataFilters::not([F::eq("author", "pg")])),
        (
            "nested",
            MetadataFilters::and([
                FilterItem::from(F::gte("year", 1980)),
                MetadataFilters::or([
                    FilterItem::from(F::eq("draft", true)),
                    MetadataFilters::not([F::contains("tags", "lisp")]).into(),
                ])
                .into(),
            ]),
        ),
        (
            "empty group",
            MetadataFilters::or(Vec::<MetadataFilter>::new()),
        ),
    ]
}

/// Every filter case selects, in the store, exactly the nodes core's `matches` selects.
async fn check_filters(store: &QdrantVectorStore, mode: &str) {
    let nodes = sample_nodes();
    store.add(&nodes).await.unwrap();
    let payloads: Vec<(String, Metadata)> = nodes
        .iter()
        .map(|n| {
            (
                n.id_.clone(),
                node_to_metadata_dict(n, false, false).unwrap(),
            )
        })
        .collect();
    let mut discriminating = 0;
    let cases = filter_cases();
    let total = cases.len();
    for (name, filters) in cases {
        let want: BTreeSet<String> = payloads
            .iter()
            .filter(|(_, m)| matches(&filters, m))
            .map(|(id, _)| id.clone())
            .collect();
        if !want.is_empty() && want.len() < nodes.len() {
            discriminating += 1;
        }
        let query = VectorStoreQuery::new(vec![1.0, 1.0, 1.0, 1.0], 100).with_filters(filters);
        let got: BTreeSet<String> = store.query(&query).await.unwrap().ids.into_iter().collect();
        assert_eq!(got, want, "{mode}: {name}");
    }
    // The table discriminates: all but `in []` and the empty group select some nodes, not all.
    assert_eq!(discriminating, total - 2, "{mode}");
    let result = store
        .query(
            &VectorStoreQuery::new(vec![1.0; 4], 100)
                .with_filters(MetadataFilters::and([MetadataFilter::eq("author", "pg")])),
        )
        .await
        .unwrap();
    assert_eq!(result.ids.len(), 2, "{mode}");
    let err = store
        .query(
            &VectorStoreQuery::new(vec![1.0; 4], 100).with_filters(MetadataFilters::and([
                MetadataFilter::text_match_insensitive("title", "gnu"),
            ])),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("title")),
        "{mode}: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_what_core_matches_remote() {
    let server = server::start().await;
    let store = QdrantVectorStore::remote(&server.url)
        .collection_name("filters")
        .build()
        .unwrap();
    check_filters(&store, "remote").await;
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_what_core_matches_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let store = QdrantVectorStore::embedded(dir.path())
        .collection_name("filters")
        .build()
        .unwrap();
    check_filters(&store, "embedded").await;
}

/// add / query / get / delete / delete_nodes / clear, the same in both modes.
async fn check_lifecycle(store: &QdrantVectorStore, mode: &str) {
    assert!(!store.collection_exists().await.unwrap(), "{mode}");
    let empty = store
        .query(&VectorStoreQuery::new(vec![1.0; 4], 3))
        .await
        .unwrap();
    assert!(empty.ids.is_empty(), "{mode}");
    let data = python();
    let nodes = python_nodes(&data);
    store.add(&nodes).await.unwrap();
    assert!(store.stores_text());

    // doc_ids and node_ids restrict a query, as in LlamaIndex.
    let doc = "3b1f5a60-52a1-4f5e-9d9e-0d8f3c3b2a10";
    let by_doc = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0, 1.0, 1.0], 10).with_doc_ids(vec![doc.into()]))
        .await
        .unwrap();
    assert_eq!(by_doc.ids.len(), 2, "{mode}");
    let by_node = store
        .query(&VectorStoreQuery::new(vec![1.0; 4], 10).with_node_ids(vec![nodes[2].id_.clone()]))
        .await
        .unwrap();
    assert_eq!(by_node.ids, vec![nodes[2].id_.clone()], "{mode}");
    let index_node = &by_node.nodes.unwrap()[0];
    assert_eq!(index_node.class_name(), "IndexNode", "{mode}");

    // Re-adding a node replaces it.
    let mut changed = nodes[3].clone();
    changed.text = "changed".into();
    store.add(std::slice::from_ref(&changed)).await.unwrap();
    let got = store.get_nodes(&[changed.id_.clone()]).await.unwrap();
    assert_eq!(got[0].text, "changed", "{mode}");
    assert_eq!(store.get_nodes_filtered(None, 100).await.unwrap().len(), 4);

    store.delete(doc).await.unwrap();
    let left = store.get_nodes_filtered(None, 100).await.unwrap();
    assert_eq!(left.len(), 2, "{mode}");
    store
        .delete_nodes(
            Some(&[nodes[2].id_.clone(), nodes[3].id_.clone()]),
            Some(&MetadataFilters::and([MetadataFilter::eq("year", 1999)])),
        )
        .await
        .unwrap();
    let left = store.get_nodes_filtered(None, 100).await.unwrap();
    assert_eq!(left.len(), 1, "{mode}");
    assert_eq!(left[0].id_, nodes[3].id_, "{mode}");

    // Bad input: clear errors, nothing stored is lost.
    let bad = Node::text_node("x")
        .with_id("not-a-uuid")
        .with_embedding(vec![1.0; 4]);
    let err = store.add(&[bad]).await.unwrap_err();
    assert!(err.to_string().contains("not-a-uuid"), "{mode}: {err}");
    let wrong_dim = nodes[0].clone().with_embedding(vec![1.0; 3]);
    assert!(store.add(&[nodes[1].clone(), wrong_dim]).await.is_err());
    assert_eq!(store.get_nodes_filtered(None, 100).await.unwrap().len(), 1);

    store.clear().await.unwrap();
    assert!(!store.collection_exists().await.unwrap(), "{mode}");
    store.add(&nodes[..1]).await.unwrap();
    assert_eq!(store.get_nodes_filtered(None, 100).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_remote() {
    let server = server::start().await;
    let store = QdrantVectorStore::remote(&server.url)
        .collection_name("life")
        .build()
        .unwrap();
    check_lifecycle(&store, "remote").await;
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let store = QdrantVectorStore::embedded(dir.path())
        .collection_name("life")
        .build()
        .unwrap();
    check_lifecycle(&store, "embedded").await;
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_persists_in_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = python_nodes(&python());
    {
        let store = QdrantVectorStore::embedded(dir.path())
            .collection_name("kept")
            .dense_vector_name("text-dense")
            .build()
            .unwrap();
        store.add(&nodes).await.unwrap();
    }
    // A new store (as after a restart) finds the collection and its named vector.
    let store = QdrantVectorStore::embedded(dir.path())
        .collection_name("kept")
        .build()
        .unwrap();
    assert!(store.collection_exists().await.unwrap());
    let result = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 1))
        .await
        .unwrap();
    assert_eq!(result.ids, vec![nodes[0].id_.clone()]);
    assert!((result.similarities[0] - 1.0).abs() < 1e-6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_named_vector_is_detected() {
    let server = server::start().await;
    let nodes = python_nodes(&python());
    let writer = QdrantVectorStore::remote(&server.url)
        .collection_name("hybrid_like")
        .dense_vector_name("text-dense")
        .build()
        .unwrap();
    writer.add(&nodes).await.unwrap();
    assert_eq!(
        server.state.vector_names("hybrid_like"),
        vec!["text-dense".to_string()]
    );
    // A reader that names no vector finds LlamaIndex's `text-dense`.
    let reader = QdrantVectorStore::remote(&server.url)
        .collection_name("hybrid_like")
        .build()
        .unwrap();
    let result = reader
        .query(&VectorStoreQuery::new(vec![0.0, 0.0, 1.0, 0.0], 1))
        .await
        .unwrap();
    assert_eq!(result.ids, vec![nodes[2].id_.clone()]);
    // A name the collection lacks is a clear error.
    let wrong = QdrantVectorStore::remote(&server.url)
        .collection_name("hybrid_like")
        .dense_vector_name("other")
        .build()
        .unwrap();
    let err = wrong
        .query(&VectorStoreQuery::new(vec![1.0; 4], 1))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("other"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_server_is_a_provider_error() {
    let store = QdrantVectorStore::remote("http://127.0.0.1:9")
        .collection_name("x")
        .build()
        .unwrap();
    let err = store.collection_exists().await.unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, source: Some(_), .. } if provider == "qdrant"),
        "{err:?}"
    );
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_text_false_returns_ids_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = QdrantVectorStore::embedded(dir.path())
        .stores_text(false)
        .build()
        .unwrap();
    let nodes = python_nodes(&python());
    store.add(&nodes).await.unwrap();
    let result = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 2))
        .await
        .unwrap();
    assert!(!store.stores_text());
    assert!(result.nodes.is_none());
    assert_eq!(result.ids.len(), 2);
    let kept = store.get_nodes(&[nodes[0].id_.clone()]).await.unwrap();
    assert_eq!(kept[0].text, "", "the text lives in the docstore");
}

/// Operators Qdrant cannot express: declined, never answered wrongly.
fn check_conformance(report: &ragloom_core::testing::Conformance, mode: &str) {
    let declined: Vec<&str> = report.unsupported.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(declined, ["filter text_match_insensitive"], "{mode}");
    assert!(report.passed.len() >= 26, "{mode}: {:?}", report.passed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_remote() {
    let server = server::start().await;
    let n = std::sync::atomic::AtomicUsize::new(0);
    let report = ragloom_core::testing::check_vector_store(|| async {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let store = QdrantVectorStore::remote(&server.url)
            .collection_name(format!("c{i}"))
            .build()
            .unwrap();
        std::sync::Arc::new(store) as std::sync::Arc<dyn VectorStore>
    })
    .await;
    check_conformance(&report, "remote");
}

#[cfg(feature = "qdrant-embedded")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let report = ragloom_core::testing::check_vector_store(|| async {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let store = QdrantVectorStore::embedded(dir.path().join(format!("c{i}")))
            .collection_name("c")
            .build()
            .unwrap();
        std::sync::Arc::new(store) as std::sync::Arc<dyn VectorStore>
    })
    .await;
    check_conformance(&report, "embedded");
}
