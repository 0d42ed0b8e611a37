//! SimpleVectorStore against files and answers recorded from llama-index-core
//! 0.14.25 (`tests/data/vector_stores/gen_store.py`), plus ragloom's own rules.
#![allow(clippy::unwrap_used)]

use ragloom_core::embeddings::{HashEmbedding, SimilarityMode, similarity};
use ragloom_core::vector_stores::{
    MetadataFilter, MetadataFilters, SimpleVectorStore, VectorStore, VectorStoreQuery,
    VectorStoreQueryMode,
};
use ragloom_core::{Error, Node, NodeRelationship, RelatedNodeInfo};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/vector_stores/");

fn data_path(name: &str) -> PathBuf {
    Path::new(DATA).join(name)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn python_nodes() -> Vec<Node> {
    serde_json::from_value(read_json(&data_path("nodes.json"))).unwrap()
}

fn query_from_json(q: &Value) -> VectorStoreQuery {
    let mut query = VectorStoreQuery {
        query_embedding: Some(
            q["query_embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect(),
        ),
        similarity_top_k: q["similarity_top_k"].as_u64().unwrap() as usize,
        ..Default::default()
    };
    if let Some(ids) = q.get("node_ids") {
        query.node_ids = Some(serde_json::from_value(ids.clone()).unwrap());
    }
    if let Some(f) = q.get("filters") {
        query.filters = Some(serde_json::from_value(f.clone()).unwrap());
    }
    if let Some(m) = q.get("mode") {
        query.mode = serde_json::from_value(m.clone()).unwrap();
    }
    if let Some(t) = q.get("mmr_threshold") {
        query.mmr_threshold = Some(t.as_f64().unwrap() as f32);
    }
    query
}

/// Runs every recorded query of `key` on `store`: same ids in the same
/// order, scores within 1e-5.
async fn check_recorded(store: &SimpleVectorStore, key: &str) -> usize {
    let recorded = read_json(&data_path("queries.json"));
    let cases = recorded[key].as_array().unwrap();
    for case in cases {
        let query = query_from_json(&case["query"]);
        let got = store.query(&query).await.unwrap();
        let want_ids: Vec<String> = serde_json::from_value(case["ids"].clone()).unwrap();
        assert_eq!(got.ids, want_ids, "{key}: {}", case["query"]);
        let want: Vec<f64> = serde_json::from_value(case["similarities"].clone()).unwrap();
        assert_eq!(got.similarities.len(), want.len());
        for (g, w) in got.similarities.iter().zip(&want) {
            assert!(
                (f64::from(*g) - w).abs() < 1e-5,
                "{key}: {g} vs {w}: {}",
                case["query"]
            );
        }
        assert!(got.nodes.is_none());
    }
    cases.len()
}

async fn persisted_bytes(store: &SimpleVectorStore) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("default__vector_store.json");
    store.persist(&path).await.unwrap();
    std::fs::read(&path).unwrap()
}

#[tokio::test]
async fn adding_pythons_nodes_writes_pythons_file() {
    let store = SimpleVectorStore::new();
    let nodes = python_nodes();
    let ids = store.add(&nodes).await.unwrap();
    assert_eq!(ids.len(), 9);
    let want = std::fs::read(data_path("store_a.json")).unwrap();
    let got = persisted_bytes(&store).await;
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(check_recorded(&store, "store_a").await, 41);
}

#[tokio::test]
async fn python_files_load_query_and_persist_unchanged() {
    for (file, key, count) in [
        ("store_a.json", "store_a", 41),
        ("store_b.json", "store_b", 28),
        ("store_ties.json", "store_ties", 138),
        ("store_a_after_delete.json", "store_a_after_delete", 1),
    ] {
        let path = data_path(file);
        let store = SimpleVectorStore::from_persist_path(&path).unwrap();
        assert_eq!(check_recorded(&store, key).await, count);
        let got = persisted_bytes(&store).await;
        let want = std::fs::read(&path).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&got).unwrap(),
            serde_json::from_slice::<Value>(&want).unwrap(),
            "{file}"
        );
        assert!(got == want, "{file}: same value but different bytes");
    }
}

#[tokio::test]
async fn full_precision_values_survive_a_round_trip() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_b.json")).unwrap();
    let raw = read_json(&data_path("store_b.json"));
    let (id, want) = raw["embedding_dict"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let want: Vec<f64> = serde_json::from_value(want.clone()).unwrap();
    assert_eq!(store.get(id).unwrap(), want);
    assert!(want.iter().any(|v| f64::from(*v as f32) != *v));
}

#[tokio::test]
async fn delete_by_ref_doc_then_query() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_a.json")).unwrap();
    store.delete("doc-a").await.unwrap();
    assert_eq!(store.len(), 6);
    assert!(matches!(store.get("n1"), Err(Error::NotFound(_))));
    check_recorded(&store, "store_a_after_delete").await;
    let want = std::fs::read(data_path("store_a_after_delete.json")).unwrap();
    assert!(persisted_bytes(&store).await == want);
    // Deleting everything resets the dimension: a new one may start afresh.
    for doc in ["doc-b", "doc-c", "None"] {
        store.delete(doc).await.unwrap();
    }
    assert!(store.is_empty());
    assert_eq!(store.dim(), None);
    let n = Node::text_node("x")
        .with_id("new")
        .with_embedding(vec![1.0, 2.0]);
    store.add(&[n]).await.unwrap();
    assert_eq!(store.dim(), Some(2));
}

fn doc_node(id: &str, doc: &str, text: &str, emb: &HashEmbedding) -> Node {
    Node::text_node(text)
        .with_id(id)
        .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc))
        .with_metadata("doc", doc)
        .with_embedding(emb.embed(text).unwrap())
}

#[tokio::test]
async fn persist_then_load_answers_the_same() {
    let emb = HashEmbedding::new(64);
    let texts = [
        "the cat sat on the mat",
        "a dog chased the cat",
        "stock markets fell sharply today",
        "the mat was red",
        "interest rates and markets",
    ];
    let nodes: Vec<Node> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| doc_node(&format!("n{i}"), &format!("d{}", i % 2), t, &emb))
        .collect();
    let store = SimpleVectorStore::new();
    store.add(&nodes).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    store
        .persist(&SimpleVectorStore::persist_path_in(dir.path(), "default"))
        .await
        .unwrap();
    let loaded = SimpleVectorStore::from_persist_dir(dir.path(), "default").unwrap();
    for q in ["cat on a mat", "markets", "red dog"] {
        for filters in [None, Some(MetadataFilters::from_pairs([("doc", "d0")]))] {
            let mut query = VectorStoreQuery::new(emb.embed(q).unwrap(), 3);
            query.filters = filters;
            let a = store.query(&query).await.unwrap();
            let b = loaded.query(&query).await.unwrap();
            assert_eq!(a, b);
            assert!(!a.ids.is_empty());
        }
    }
    let a = store
        .query(&VectorStoreQuery::new(
            emb.embed("cat on a mat").unwrap(),
            2,
        ))
        .await
        .unwrap();
    // Stop words aside, the query is {cat, mat}: n0 {cat, sat, mat} shares two
    // words; n3 {mat, red} shares one of two (cosine 0.5), n1 {dog, chased,
    // cat} one of three (0.41).
    assert_eq!(a.ids, ["n0", "n3"]);
}

#[tokio::test]
async fn corrupt_or_missing_files_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("garbage.json", "{\"embedding_dict\": {\"a\": [1.0, "),
        ("strings.json", "{\"embedding_dict\": {\"a\": [\"x\"]}}"),
        (
            "ragged.json",
            "{\"embedding_dict\": {\"a\": [1.0, 2.0], \"b\": [1.0]}}",
        ),
        ("list.json", "[1, 2]"),
        (
            "badmeta.json",
            "{\"embedding_dict\": {\"a\": [1.0]}, \"metadata_dict\": {\"a\": 3}}",
        ),
    ];
    for (name, text) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = SimpleVectorStore::from_persist_path(&path).unwrap_err();
        assert!(matches!(err, Error::CorruptFile { .. }), "{name}: {err}");
        assert!(err.to_string().contains(name), "{err}");
    }
    let err = SimpleVectorStore::from_persist_path(dir.path().join("ragged.json")).unwrap_err();
    assert!(err.to_string().contains("`b`"), "{err}");
    let err = SimpleVectorStore::from_persist_dir(dir.path(), "nope").unwrap_err();
    assert!(matches!(err, Error::Io { .. }));
    assert!(err.to_string().contains("nope__vector_store.json"), "{err}");
    // Unknown top-level keys are ignored; missing sections are empty.
    let path = dir.path().join("extra.json");
    std::fs::write(
        &path,
        "{\"future\": {\"x\": [1]}, \"embedding_dict\": {\"a\": [1.0, 0.0]}}",
    )
    .unwrap();
    let store = SimpleVectorStore::from_persist_path(&path).unwrap();
    assert_eq!(store.len(), 1);
    // ...but such a store cannot be filtered, as in LlamaIndex.
    let q = VectorStoreQuery::new(vec![1.0, 0.0], 1)
        .with_filters(MetadataFilters::from_pairs([("a", 1)]));
    assert!(matches!(store.query(&q).await, Err(Error::InvalidInput(_))));
}

#[tokio::test]
async fn zero_vectors_score_zero_not_nan() {
    let store = SimpleVectorStore::new();
    let nodes = vec![
        Node::text_node("")
            .with_id("z1")
            .with_embedding(vec![0.0, 0.0]),
        Node::text_node("")
            .with_id("a")
            .with_embedding(vec![1.0, 0.0]),
        Node::text_node("")
            .with_id("z2")
            .with_embedding(vec![0.0, 0.0]),
        Node::text_node("")
            .with_id("b")
            .with_embedding(vec![-1.0, 0.0]),
        Node::text_node("")
            .with_id("c")
            .with_embedding(vec![0.0, 1.0]),
    ];
    store.add(&nodes).await.unwrap();
    let r = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0], 0))
        .await
        .unwrap();
    assert!(r.similarities.iter().all(|s| !s.is_nan()));
    assert_eq!(r.ids[0], "a");
    assert_eq!(*r.ids.last().unwrap(), "b");
    assert_eq!(r.similarities, [1.0, 0.0, 0.0, 0.0, -1.0]);
    // A zero query ties everything at 0.0; the order is still Python's heap order.
    let r1 = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0], 0))
        .await
        .unwrap();
    let r2 = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0], 0))
        .await
        .unwrap();
    assert_eq!(r1, r2);
    // Recorded from LlamaIndex's get_top_k_embeddings with five equal scores.
    assert_eq!(r1.ids, ["a", "b", "z2", "z1", "c"]);
    let r3 = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0], 2))
        .await
        .unwrap();
    assert_eq!(r3.ids, ["z1", "z2"]);
    // A top-k beyond the store is everything, as 0 is.
    let all = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0], usize::MAX))
        .await
        .unwrap();
    assert_eq!(all, r1);
}

#[tokio::test]
async fn unsupported_modes_are_errors() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_a.json")).unwrap();
    for mode in [
        VectorStoreQueryMode::Sparse,
        VectorStoreQueryMode::Hybrid,
        VectorStoreQueryMode::TextSearch,
        VectorStoreQueryMode::SemanticHybrid,
        VectorStoreQueryMode::Svm,
        VectorStoreQueryMode::LinearRegression,
        VectorStoreQueryMode::LogisticRegression,
    ] {
        let q = VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 2).with_mode(mode);
        let err = store.query(&q).await.unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{mode:?}");
        assert!(err.to_string().contains(mode.as_str()), "{err}");
    }
    assert!(matches!(
        store.get_nodes(&["n1".to_string()]).await,
        Err(Error::Unsupported(_))
    ));
    let err = store
        .query(&VectorStoreQuery::new(vec![1.0], 2))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    let err = store.query(&VectorStoreQuery::default()).await.unwrap_err();
    assert!(err.to_string().contains("query_embedding"), "{err}");
}

#[tokio::test]
async fn bad_nodes_are_errors_naming_them_and_change_nothing() {
    let store = SimpleVectorStore::new();
    store
        .add(&[Node::text_node("a")
            .with_id("ok")
            .with_embedding(vec![1.0, 0.0])])
        .await
        .unwrap();
    let batches = [
        (vec![Node::text_node("b").with_id("no-emb")], "no-emb"),
        (
            vec![
                Node::text_node("b")
                    .with_id("short")
                    .with_embedding(vec![1.0]),
            ],
            "short",
        ),
        (
            vec![
                Node::text_node("b")
                    .with_id("nan")
                    .with_embedding(vec![f32::NAN, 0.0]),
            ],
            "nan",
        ),
    ];
    for (batch, name) in batches {
        let mut nodes = vec![
            Node::text_node("c")
                .with_id("good")
                .with_embedding(vec![0.0, 1.0]),
        ];
        nodes.extend(batch);
        let err = store.add(&nodes).await.unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)));
        assert!(err.to_string().contains(&format!("`{name}`")), "{err}");
        assert_eq!(store.node_ids(), ["ok"]);
    }
}

#[tokio::test]
async fn doc_ids_and_node_ids_restrict_before_scoring() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_a.json")).unwrap();
    let q = || VectorStoreQuery::new(vec![1.0, 0.0, 0.0, 0.0], 1);
    assert_eq!(store.query(&q()).await.unwrap().ids, ["n1"]);
    let r = store
        .query(&q().with_doc_ids(vec!["doc-b".into()]))
        .await
        .unwrap();
    assert_eq!(r.ids, ["n3"]);
    let r = store
        .query(
            &q().with_doc_ids(vec!["doc-b".into(), "doc-c".into()])
                .with_node_ids(vec!["n0".into(), "n4".into()]),
        )
        .await
        .unwrap();
    assert_eq!(r.ids, ["n0"]);
    let r = store.query(&q().with_doc_ids(vec![])).await.unwrap();
    assert!(r.ids.is_empty());
    let nested = MetadataFilters::or([
        MetadataFilters::and([
            MetadataFilter::eq("author", "Ann"),
            MetadataFilter::gt("year", 2020),
        ]),
        MetadataFilters::and([MetadataFilter::eq("_node_type", "Document")]),
    ]);
    let mut q5 = VectorStoreQuery::new(vec![0.0, 1.0, 0.5, 0.0], 1).with_filters(nested);
    q5.similarity_top_k = 5;
    assert_eq!(store.query(&q5).await.unwrap().ids, ["n4", "doc-z"]);
}

#[tokio::test]
async fn re_adding_overwrites_in_place_and_delete_nodes_filters() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_a.json")).unwrap();
    let before = store.node_ids();
    let n = Node::text_node("new")
        .with_id("n2")
        .with_metadata("author", "Dee")
        .with_embedding(vec![0.0, 0.0, 0.0, 2.0]);
    store.add(&[n]).await.unwrap();
    assert_eq!(store.node_ids(), before);
    assert_eq!(store.get("n2").unwrap(), [0.0, 0.0, 0.0, 2.0]);
    let r = store
        .query(&VectorStoreQuery::new(vec![0.0, 0.0, 0.0, 1.0], 1))
        .await
        .unwrap();
    assert_eq!(r.ids, ["n2"]);
    // Ids and filters together: only listed nodes that match.
    let ann = MetadataFilters::from_pairs([("author", "Ann")]);
    store
        .delete_nodes(Some(&["n1".into(), "n3".into()]), Some(&ann))
        .await
        .unwrap();
    assert!(!store.node_ids().contains(&"n1".to_string()));
    assert!(store.node_ids().contains(&"n3".to_string()));
    // Filters alone: every match.
    store
        .delete_nodes(None, Some(&MetadataFilters::from_pairs([("author", "Cy")])))
        .await
        .unwrap();
    assert_eq!(
        store.node_ids(),
        ["n2", "n3", "n4", "orphan", "doc-z", "idx"]
    );
    // An empty id list selects nothing; neither ids nor filters is an error.
    store.delete_nodes(Some(&[]), Some(&ann)).await.unwrap();
    assert_eq!(store.len(), 6);
    let err = store.delete_nodes(None, None).await.unwrap_err();
    assert!(err.to_string().contains("clear()"), "{err}");
    let err = store
        .delete_nodes(None, Some(&MetadataFilters::default()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("clear()"), "{err}");
    assert_eq!(store.len(), 6);
    store
        .delete_nodes(Some(&["idx".into()]), None)
        .await
        .unwrap();
    assert_eq!(store.len(), 5);
    store.clear().await.unwrap();
    assert!(store.is_empty());
}

#[tokio::test]
async fn other_similarity_modes_score_as_llamaindex() {
    let vecs = [
        [1.0f32, 2.0, 3.0],
        [4.0, -5.0, 6.0],
        [0.5, 0.5, 0.5],
        [-1.0, 0.0, 2.0],
    ];
    let query = [0.3f32, -0.2, 0.9];
    for mode in [
        SimilarityMode::DotProduct,
        SimilarityMode::Euclidean,
        SimilarityMode::Cosine,
    ] {
        let store = SimpleVectorStore::new().with_similarity_mode(mode);
        let nodes: Vec<Node> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Node::text_node("")
                    .with_id(format!("v{i}"))
                    .with_embedding(v.to_vec())
            })
            .collect();
        store.add(&nodes).await.unwrap();
        let r = store
            .query(&VectorStoreQuery::new(query.to_vec(), 0))
            .await
            .unwrap();
        let mut want: Vec<(f32, String)> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| (similarity(&query, v, mode), format!("v{i}")))
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert_eq!(
            r.ids,
            want.iter().map(|w| w.1.clone()).collect::<Vec<_>>(),
            "{mode:?}"
        );
        for (g, w) in r.similarities.iter().zip(&want) {
            assert!((g - w.0).abs() < 1e-5, "{mode:?}");
        }
        if mode == SimilarityMode::Euclidean {
            assert!(r.similarities.iter().all(|s| *s <= 0.0));
        }
    }
}

/// A store big enough to be scanned in parallel answers as a plain scan.
#[tokio::test]
async fn parallel_scan_matches_a_plain_scan() {
    let dim = 256;
    let n = 3000; // 768k floats: above the parallel threshold
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let vectors: Vec<Vec<f32>> = (0..n).map(|_| (0..dim).map(|_| next()).collect()).collect();
    let nodes: Vec<Node> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Node::text_node("")
                .with_id(format!("id{i:05}"))
                .with_metadata("bucket", i % 10)
                .with_embedding(v.clone())
        })
        .collect();
    let store = SimpleVectorStore::new();
    store.add(&nodes).await.unwrap();
    let query: Vec<f32> = (0..dim).map(|_| next()).collect();
    for filtered in [false, true] {
        let mut q = VectorStoreQuery::new(query.clone(), 10);
        if filtered {
            q = q.with_filters(MetadataFilters::from_pairs([("bucket", 3)]));
        }
        let r = store.query(&q).await.unwrap();
        let mut want: Vec<(f32, usize)> = vectors
            .iter()
            .enumerate()
            .filter(|(i, _)| !filtered || i % 10 == 3)
            .map(|(i, v)| (similarity(&query, v, SimilarityMode::Cosine), i))
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        let want_ids: Vec<String> = want[..10]
            .iter()
            .map(|(_, i)| format!("id{i:05}"))
            .collect();
        assert_eq!(r.ids, want_ids, "filtered: {filtered}");
        for (g, w) in r.similarities.iter().zip(&want) {
            assert!((g - w.0).abs() < 1e-5);
        }
    }
    // Deleting keeps the buffer compact and the answers right.
    let doomed: Vec<String> = (0..n)
        .filter(|i| i % 2 == 0)
        .map(|i| format!("id{i:05}"))
        .collect();
    store.delete_nodes(Some(&doomed), None).await.unwrap();
    assert_eq!(store.len(), n / 2);
    let r = store
        .query(&VectorStoreQuery::new(query.clone(), 3))
        .await
        .unwrap();
    assert!(
        r.ids
            .iter()
            .all(|id| id.trim_start_matches("id").parse::<usize>().unwrap() % 2 == 1)
    );
}

#[tokio::test]
async fn mmr_defaults_to_half_and_returns_mmr_scores() {
    let store = SimpleVectorStore::from_persist_path(data_path("store_a.json")).unwrap();
    let e = vec![0.9, 0.1, 0.0, 0.0];
    let q = VectorStoreQuery::new(e.clone(), 1).with_mode(VectorStoreQueryMode::Mmr);
    let r = store.query(&q).await.unwrap();
    let plain = store.query(&VectorStoreQuery::new(e, 1)).await.unwrap();
    assert_eq!(plain.ids, ["n1"]);
    assert_eq!(r.ids, plain.ids);
    assert!((r.similarities[0] - 0.5 * plain.similarities[0]).abs() < 1e-6);
    let recorded = read_json(&data_path("queries.json"));
    assert!(
        recorded["store_a"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["query"]["mode"] == json!("mmr"))
    );
}
