//! QdrantVectorStore end to end, live in both modes: embedded (Qdrant's engine
//! in-process) and remote (qdrant-client's gRPC against a server on 127.0.0.1
//! started here, whose services run the same engine: ragloom-qdrant-test-server);
//! hybrid search, generations and the key-value collections on the server.
//!
//! The Python interop data (`data/python_points.json`) was written by
//! LlamaIndex's own `QdrantVectorStore` (`data/gen_python_points.py`).
#![allow(clippy::unwrap_used)]

#[cfg(feature = "qdrant-embedded")]
use qdrant_edge::{EdgeConfigBuilder, EdgeShard, EdgeVectorParamsBuilder};
use ragloom_core::Error;
use ragloom_core::schema::{Metadata, Node};
use ragloom_core::vector_stores::{
    FilterItem, FilterOperator, MetadataFilter, MetadataFilters, VectorStore, VectorStoreQuery,
    VectorStoreQueryMode, matches, node_to_metadata_dict,
};
use ragloom_qdrant_test_server as server;
use ragloom_vector_stores_qdrant::{Generation, QdrantKv, QdrantVectorStore};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use uuid::Uuid;

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

fn text_node(id: u128, doc: &str, text: &str, embedding: Option<Vec<f32>>) -> Node {
    let mut n = Node::text_node(text)
        .with_id(Uuid::from_u128(id).to_string())
        .with_relationship(
            ragloom_core::schema::NodeRelationship::Source,
            ragloom_core::schema::RelatedNodeInfo::new(doc),
        );
    n.embedding = embedding;
    n
}

fn hybrid(url: &str, collection: &str) -> ragloom_vector_stores_qdrant::QdrantVectorStoreBuilder {
    QdrantVectorStore::remote(url)
        .collection_name(collection)
        .enable_hybrid(true)
}

fn ids(result: &ragloom_core::vector_stores::VectorStoreQueryResult) -> Vec<String> {
    result.ids.clone()
}

fn text_query(text: &str, mode: VectorStoreQueryMode, k: usize) -> VectorStoreQuery {
    let mut q = VectorStoreQuery::new(vec![1.0, 0.0], k);
    q.query_str = Some(text.into());
    q.mode = mode;
    q
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_collections_rank_keywords_and_fuse_them_with_vectors() {
    let server = server::start().await;
    let store = hybrid(&server.url, "hybrid").build().unwrap();
    let nodes = vec![
        text_node(
            1,
            "a",
            "The heron stood in the reeds by the river.",
            Some(vec![0.0, 1.0]),
        ),
        text_node(
            2,
            "b",
            "A boat engine was serviced in spring.",
            Some(vec![1.0, 0.0]),
        ),
        text_node(
            3,
            "c",
            "The river ran past the mill and the reeds.",
            Some(vec![0.7, 0.7]),
        ),
    ];
    store.add(&nodes).await.unwrap();
    // LlamaIndex's hybrid layout, with Qdrant's IDF on the sparse side.
    assert_eq!(server.state.vector_names("hybrid"), vec!["text-dense"]);
    assert_eq!(
        server.state.sparse_vector_names("hybrid"),
        vec!["text-sparse-new"]
    );

    // Keywords: "heron" is in one node only.
    let sparse = store
        .query(&text_query(
            "where was the heron?",
            VectorStoreQueryMode::Sparse,
            3,
        ))
        .await
        .unwrap();
    assert_eq!(ids(&sparse), vec![Uuid::from_u128(1).to_string()]);
    // Text search is the same query.
    let text = store
        .query(&text_query("heron", VectorStoreQueryMode::TextSearch, 3))
        .await
        .unwrap();
    assert_eq!(ids(&text), ids(&sparse));
    // Vectors alone put the engine note first; fused with "reeds river",
    // node 3 (second by vector, first by keywords) leads.
    let dense = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0], 3))
        .await
        .unwrap();
    assert_eq!(dense.ids[0], Uuid::from_u128(2).to_string());
    let fused = store
        .query(&text_query(
            "reeds river mill",
            VectorStoreQueryMode::Hybrid,
            3,
        ))
        .await
        .unwrap();
    assert_eq!(
        fused.ids[0],
        Uuid::from_u128(3).to_string(),
        "{:?}",
        fused.ids
    );
    assert_eq!(fused.ids.len(), 3);
    // Nodes come back whole.
    assert_eq!(fused.nodes.unwrap()[0].text, nodes[2].text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hybrid_store_without_embeddings_keeps_keyword_vectors_only() {
    let server = server::start().await;
    let store = hybrid(&server.url, "words").build().unwrap();
    store
        .add(&[
            text_node(1, "a", "Bees left the hive in July.", None),
            text_node(2, "b", "Tomatoes grow by the fence.", None),
        ])
        .await
        .unwrap();
    assert!(server.state.vector_names("words").is_empty());
    let hits = store
        .query(&text_query(
            "when did the bees leave",
            VectorStoreQueryMode::Hybrid,
            2,
        ))
        .await
        .unwrap();
    assert_eq!(hits.ids[0], Uuid::from_u128(1).to_string());
    // A dense query has nothing to search, and says so.
    let err = store
        .query(&VectorStoreQuery::new(vec![1.0], 2))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no dense vector"), "{err}");
    // So has a plain store asked for keywords.
    let plain = QdrantVectorStore::remote(&server.url)
        .collection_name("words")
        .build()
        .unwrap();
    let err = plain
        .query(&text_query("bees", VectorStoreQueryMode::Sparse, 2))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("enable_hybrid"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generation_is_invisible_until_committed_and_recovery_undoes_it() {
    let server = server::start().await;
    let at = |g| hybrid(&server.url, "gens").generation(g).build().unwrap();
    let all = |s: QdrantVectorStore| async move {
        let mut ids: Vec<String> = s
            .get_nodes_filtered(None, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.id_)
            .collect();
        ids.sort();
        ids
    };
    let id = |n: u128| Uuid::from_u128(n).to_string();
    // Generation 1: two documents, committed.
    let w1 = at(Generation::write(0));
    w1.add(&[
        text_node(1, "a", "apples in autumn", None),
        text_node(2, "b", "bees in summer", None),
    ])
    .await
    .unwrap();
    assert!(all(at(Generation::read(0))).await.is_empty());
    assert_eq!(all(at(Generation::read(1))).await, vec![id(1), id(2)]);

    // Generation 2 replaces document a and is never committed.
    let w2 = at(Generation::write(1));
    w2.recover(&Generation::write(1)).await.unwrap();
    w2.delete("a").await.unwrap();
    w2.add(&[text_node(3, "a", "apples in winter", None)])
        .await
        .unwrap();
    // Its writer sees its own state; readers of 1 do not, by any path.
    assert_eq!(all(at(Generation::write(1))).await, vec![id(2), id(3)]);
    let r1 = at(Generation::read(1));
    assert_eq!(all(at(Generation::read(1))).await, vec![id(1), id(2)]);
    let hits = r1
        .query(&text_query("apples", VectorStoreQueryMode::Sparse, 5))
        .await
        .unwrap();
    assert_eq!(hits.ids, vec![id(1)]);
    assert_eq!(r1.get_nodes(&[id(1), id(3)]).await.unwrap().len(), 1);
    // A node id readers see cannot be written again under them, even
    // after this writer deleted it.
    let err = w2
        .add(&[text_node(2, "b", "bees again", None)])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already committed"), "{err}");
    w2.delete("b").await.unwrap();
    let err = w2
        .add(&[text_node(2, "b", "bees again", None)])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already committed"), "{err}");
    assert_eq!(all(at(Generation::read(1))).await, vec![id(1), id(2)]);

    // The writer died: the next one recovers generation 1 exactly.
    let w2b = at(Generation::write(1));
    w2b.recover(&Generation::write(1)).await.unwrap();
    let every = || async {
        hybrid(&server.url, "gens")
            .build()
            .unwrap()
            .get_nodes_filtered(None, 100)
            .await
            .unwrap()
            .len()
    };
    assert_eq!(all(at(Generation::write(1))).await, vec![id(1), id(2)]);
    assert_eq!(every().await, 2);
    // This time it commits: readers of 2 see the new state. Tidying after
    // the commit keeps what generation 2 deleted for readers of 1 still
    // running; the writer of 3 removes it.
    w2b.delete("a").await.unwrap();
    w2b.add(&[text_node(3, "a", "apples in winter", None)])
        .await
        .unwrap();
    assert_eq!(all(at(Generation::read(2))).await, vec![id(2), id(3)]);
    assert_eq!(all(at(Generation::read(1))).await, vec![id(1), id(2)]);
    at(Generation::read(2))
        .recover(&Generation::read(2))
        .await
        .unwrap();
    assert_eq!(all(at(Generation::read(1))).await, vec![id(1), id(2)]);
    assert_eq!(every().await, 3);
    at(Generation::write(3))
        .recover(&Generation::write(3))
        .await
        .unwrap();
    assert_eq!(every().await, 2);
    assert_eq!(all(at(Generation::read(3))).await, vec![id(2), id(3)]);
    // Clearing one generation of a shared collection is refused.
    assert!(matches!(
        at(Generation::write(2)).clear().await,
        Err(Error::Unsupported(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_values_by_generation_keep_order_and_roll_back() {
    use ragloom_core::storage::kvstore::{KvBackend, KvValue};
    let server = server::start().await;
    let kv = |g| QdrantKv::remote(&server.url, None, "kv", g);
    let val = |n: i64| -> KvValue { json!({"n": n, "z": 1, "a": 2}).as_object().unwrap().clone() };
    let read = |kv: &QdrantKv| {
        kv.read(|t| {
            Ok(t.get_all("c")?
                .iter()
                .map(|(k, v)| (k.clone(), v["n"].as_i64().unwrap()))
                .collect::<Vec<_>>())
        })
        .unwrap()
    };
    // Generation 1: three keys, in this order.
    let w1 = kv(Generation::write(0)).await.unwrap();
    w1.write(|t| {
        t.put("k3", val(3), "c")?;
        t.put("k1", val(1), "c")?;
        t.put("k2", val(2), "c")
    })
    .unwrap();
    // A failed write leaves nothing.
    let failed: ragloom_core::Result<()> = w1.write(|t| {
        t.put("k9", val(9), "c")?;
        Err(Error::InvalidInput("stop".into()))
    });
    assert!(failed.is_err());
    assert_eq!(
        read(&w1),
        vec![("k3".into(), 3), ("k1".into(), 1), ("k2".into(), 2)]
    );
    w1.flush().await.unwrap();
    let r0 = kv(Generation::read(0)).await.unwrap();
    assert!(read(&r0).is_empty());
    let r1 = kv(Generation::read(1)).await.unwrap();
    assert_eq!(
        read(&r1),
        vec![("k3".into(), 3), ("k1".into(), 1), ("k2".into(), 2)]
    );
    // The value's own key order survives the round trip.
    let v = r1
        .read(|t| Ok(t.get("k3", "c")?.unwrap().into_owned()))
        .unwrap();
    assert_eq!(v.keys().collect::<Vec<_>>(), vec!["n", "z", "a"]);

    // Generation 2 changes k1, deletes k3, adds k4; readers of 1 see none of it.
    let w2 = kv(Generation::write(1)).await.unwrap();
    w2.write(|t| {
        t.put("k1", val(10), "c")?;
        assert!(t.delete("k3", "c")?);
        assert!(!t.delete("nope", "c")?);
        t.put("k4", val(4), "c")
    })
    .unwrap();
    w2.flush().await.unwrap();
    let after = vec![("k1".into(), 10), ("k2".into(), 2), ("k4".into(), 4)];
    assert_eq!(read(&w2), after);
    assert_eq!(read(&kv(Generation::read(1)).await.unwrap()), read(&r1));
    assert_eq!(read(&kv(Generation::read(2)).await.unwrap()), after);

    // Had generation 2 died, recovery restores generation 1 for the next writer.
    let again = kv(Generation::write(1)).await.unwrap();
    again.recover().await.unwrap();
    assert_eq!(read(&again), read(&r1));
    assert_eq!(read(&kv(Generation::read(2)).await.unwrap()), read(&r1));
}
