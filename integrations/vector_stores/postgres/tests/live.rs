//! `PGVectorStore` against a real PostgreSQL 15 with pgvector, at
//! `RAGLOOM_TEST_PG_URL` (started by `.ci/setup/postgres.sh`). Without the
//! variable these tests skip, or fail when `CI` is set. Each test works in a
//! schema of its own, dropped first and last.
#![allow(clippy::unwrap_used)]

use ragloom_core::embeddings::similarity::similarity;
use ragloom_core::schema::{Metadata, Node, NodeRelationship, RelatedNodeInfo};
use ragloom_core::vector_stores::{
    FilterItem, FilterOperator, MetadataFilter, MetadataFilters, VectorStore, VectorStoreQuery,
    VectorStoreQueryMode, matches, node_to_metadata_dict,
};
use ragloom_core::{Error, SimilarityMode};
use ragloom_vector_stores_postgres::{
    DistanceMethod, HnswOptions, IvfFlatOptions, PGVectorStore, PGVectorStoreBuilder,
};
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection, Row};
use std::collections::BTreeSet;
use std::time::Duration;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
const CORE_FILTER_CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../crates/ragloom-core/tests/data/vector_stores/filters_cases.json"
);

/// The server's URL; `None` (after saying so) when the variable is unset
/// outside CI.
fn pg_url() -> Option<String> {
    match std::env::var("RAGLOOM_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_PG_URL is unset: .ci/setup/postgres.sh should have started \
                 PostgreSQL and exported it"
            );
            eprintln!("skipped: RAGLOOM_TEST_PG_URL is unset (source .ci/setup/postgres.sh)");
            None
        }
    }
}

macro_rules! require_pg {
    () => {
        match pg_url() {
            Some(url) => url,
            None => return,
        }
    };
}

async fn psql(url: &str, sql: &str) {
    let mut conn = PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

/// A fresh schema for one test (the process id keeps parallel runs apart).
async fn fresh_schema(url: &str, name: &str) -> String {
    let schema = format!("rl_{name}_{}", std::process::id());
    psql(url, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
    schema
}

async fn drop_schema(url: &str, schema: &str) {
    psql(url, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
}

fn builder(url: &str, schema: &str, table: &str, dim: usize) -> PGVectorStoreBuilder {
    PGVectorStore::from_url(url)
        .schema_name(schema)
        .table_name(table)
        .embed_dim(dim)
}

/// Deterministic pseudo-random vectors (a linear congruential generator).
fn vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            (0..dim)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
                })
                .collect()
        })
        .collect()
}

fn node(id: &str, text: &str, doc: &str, embedding: Vec<f32>) -> Node {
    Node::text_node(text)
        .with_id(id)
        .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc))
        .with_embedding(embedding)
}

fn without_embedding(node: &Node) -> Node {
    Node {
        embedding: None,
        ..node.clone()
    }
}

/// Add, then query with each distance: the ids and scores of an exact search
/// computed here, in order; the nodes come back whole.
#[tokio::test]
async fn round_trip_with_each_distance() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "distances").await;
    let dim = 8;
    let embeddings = vectors(40, dim, 7);
    let nodes: Vec<Node> = embeddings
        .iter()
        .enumerate()
        .map(|(i, e)| {
            node(
                &format!("n{i}"),
                &format!("text number {i}"),
                &format!("doc{}", i % 4),
                e.clone(),
            )
            .with_metadata("i", i)
            .with_metadata("name", format!("Zoë {i}"))
        })
        .collect();
    for (distance, mode) in [
        (DistanceMethod::Cosine, SimilarityMode::Cosine),
        (DistanceMethod::InnerProduct, SimilarityMode::DotProduct),
        (DistanceMethod::L2, SimilarityMode::Euclidean),
    ] {
        let table = format!("{distance:?}").to_lowercase();
        let store = builder(&url, &schema, &table, dim)
            .distance(distance)
            .build()
            .unwrap();
        assert!(store.stores_text());
        let ids = store.add(&nodes).await.unwrap();
        assert_eq!(ids.len(), nodes.len());
        for (qi, q) in vectors(5, dim, 99).into_iter().enumerate() {
            let top_k = 3 + qi;
            let result = store
                .query(&VectorStoreQuery::new(q.clone(), top_k))
                .await
                .unwrap();
            let mut expected: Vec<(f32, usize)> = embeddings
                .iter()
                .enumerate()
                .map(|(i, e)| (similarity(&q, e, mode), i))
                .collect();
            expected.sort_by(|a, b| b.0.total_cmp(&a.0));
            expected.truncate(top_k);
            let want_ids: Vec<String> = expected.iter().map(|(_, i)| format!("n{i}")).collect();
            assert_eq!(result.ids, want_ids, "{distance:?} query {qi}");
            for ((score, _), got) in expected.iter().zip(&result.similarities) {
                assert!((score - got).abs() < 1e-5, "{distance:?}: {score} vs {got}");
            }
            let got_nodes = result.nodes.unwrap();
            for (id, got) in want_ids.iter().zip(&got_nodes) {
                let i: usize = id[1..].parse().unwrap();
                assert_eq!(got, &without_embedding(&nodes[i]));
            }
        }
        // 0 asks for every row, best first.
        let all = store
            .query(&VectorStoreQuery::new(vec![1.0; dim], 0))
            .await
            .unwrap();
        assert_eq!(all.ids.len(), nodes.len());
        assert!(all.similarities.windows(2).all(|w| w[0] >= w[1]));
    }
    drop_schema(&url, &schema).await;
}

/// HNSW and IVFFlat indexes are created with the distance's operator class,
/// and queries through them (with ef_search / probes set) find exact matches.
#[tokio::test]
async fn approximate_indexes_are_built_and_used() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "indexes").await;
    let dim = 16;
    let embeddings = vectors(300, dim, 3);
    let nodes: Vec<Node> = embeddings
        .iter()
        .enumerate()
        .map(|(i, e)| node(&format!("n{i}"), "x", "d", e.clone()))
        .collect();
    let hnsw = builder(&url, &schema, "hnsw", dim)
        .hnsw(HnswOptions {
            m: 8,
            ef_construction: 32,
            ef_search: Some(100),
        })
        .build()
        .unwrap();
    hnsw.add(&nodes).await.unwrap();
    // IVFFlat computes its lists from the rows present: fill the table first.
    let plain = builder(&url, &schema, "ivf", dim)
        .distance(DistanceMethod::L2)
        .build()
        .unwrap();
    plain.add(&nodes).await.unwrap();
    let ivf = builder(&url, &schema, "ivf", dim)
        .distance(DistanceMethod::L2)
        .ivfflat(IvfFlatOptions {
            lists: 4,
            probes: Some(4),
        })
        .build()
        .unwrap();
    let mut conn = PgConnection::connect(&url).await.unwrap();
    // vector_l2_ops is ivfflat's default class, which pg_indexes leaves out.
    for (store, method) in [
        (
            &hnsw,
            "hnsw (embedding vector_cosine_ops) WITH (m='8', ef_construction='32')",
        ),
        (&ivf, "ivfflat (embedding) WITH (lists='4')"),
    ] {
        for i in [0usize, 17, 299] {
            let result = store
                .query(&VectorStoreQuery::new(embeddings[i].clone(), 1))
                .await
                .unwrap();
            assert_eq!(result.ids, vec![format!("n{i}")]);
        }
        let def: String = sqlx::query_scalar(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2",
        )
        .bind(&schema)
        .bind(format!("data_{}_embedding_idx", store.table_name()))
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert!(def.contains(method), "{def}");
    }
    drop_schema(&url, &schema).await;
}

/// Every operator of core's filter table (recorded from Python), on every
/// metadata shape, selects exactly the rows `matches` selects; then the
/// conditions and nested groups of the same table. Both column types.
#[tokio::test]
async fn filters_select_what_core_matches_selects() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "filters").await;
    let table: Value =
        serde_json::from_str(&std::fs::read_to_string(CORE_FILTER_CASES).unwrap()).unwrap();
    let key = table["key"].as_str().unwrap();
    let mut shapes: Vec<Metadata> = table["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_object().unwrap().clone())
        .collect();
    let shapes_in_grid = shapes.len();
    for case in table["cases"].as_array().unwrap() {
        let md = case["metadata"].as_object().unwrap().clone();
        if !shapes.contains(&md) {
            shapes.push(md);
        }
    }
    let nodes: Vec<Node> = shapes
        .iter()
        .enumerate()
        .map(|(i, md)| {
            node(&format!("m{i}"), "x", "d", vec![1.0, i as f32]).with_metadata_map(md.clone())
        })
        .collect();
    for use_jsonb in [true, false] {
        let store = builder(&url, &schema, &format!("f_{use_jsonb}"), 2)
            .use_jsonb(use_jsonb)
            .build()
            .unwrap();
        store.add(&nodes).await.unwrap();
        let select = |filters: MetadataFilters| {
            let store = &store;
            async move {
                let q = VectorStoreQuery::new(vec![1.0, 0.0], 0).with_filters(filters);
                let ids: BTreeSet<String> =
                    store.query(&q).await.unwrap().ids.into_iter().collect();
                ids
            }
        };
        let expected = |filters: &MetadataFilters, upto: usize| -> BTreeSet<String> {
            nodes[..upto]
                .iter()
                .filter(|n| matches(filters, &node_to_metadata_dict(n, true, false).unwrap()))
                .map(|n| n.id_.clone())
                .collect()
        };
        let mut checked = 0;
        for row in table["grid"].as_array().unwrap() {
            let operator: FilterOperator = serde_json::from_value(row["operator"].clone()).unwrap();
            let filter = MetadataFilter::new(key, row["value"].clone(), operator);
            let filters = MetadataFilters::and([filter.clone()]);
            let got: BTreeSet<String> = select(filters.clone())
                .await
                .into_iter()
                .filter(|id| id[1..].parse::<usize>().unwrap() < shapes_in_grid)
                .collect();
            assert_eq!(
                got,
                expected(&filters, shapes_in_grid),
                "{filter:?} (jsonb {use_jsonb})"
            );
            checked += 1;
        }
        assert!(checked >= 14 * 20, "{checked}");
        let mut nested = 0;
        for case in table["cases"].as_array().unwrap() {
            let filters: MetadataFilters = serde_json::from_value(case["filters"].clone()).unwrap();
            nested += usize::from(
                filters
                    .filters
                    .iter()
                    .any(|f| matches!(f, FilterItem::Filters(_))),
            );
            let got = select(filters.clone()).await;
            assert_eq!(
                got,
                expected(&filters, nodes.len()),
                "{case} (jsonb {use_jsonb})"
            );
        }
        assert!(nested > 10, "{nested}");
        // The same conditions drive get_nodes and delete_nodes.
        let filters = MetadataFilters::or([
            MetadataFilter::eq(key, 2),
            MetadataFilter::any(key, ["x", "zz"]),
        ]);
        let want = expected(&filters, nodes.len());
        assert!(want.len() >= 3, "{want:?}");
        let got: BTreeSet<String> = store
            .get_nodes_filtered(None, Some(&filters))
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.id_)
            .collect();
        assert_eq!(got, want);
        store.delete_nodes(None, Some(&filters)).await.unwrap();
        let left = select(MetadataFilters::default()).await;
        assert_eq!(left.len(), nodes.len() - want.len());
        assert!(left.is_disjoint(&want));
    }
    drop_schema(&url, &schema).await;
}

/// delete(ref_doc_id), delete_nodes by id, get_nodes, re-adding an id
/// (replaces the row) and clear.
#[tokio::test]
async fn deletes_get_nodes_and_clear() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "deletes").await;
    let store = builder(&url, &schema, "t", 3).build().unwrap();
    let nodes = vec![
        node("a1", "first of a", "doc-a", vec![1.0, 0.0, 0.0]),
        node("a2", "second of a", "doc-a", vec![0.0, 1.0, 0.0]),
        node("b1", "first of b", "doc-b", vec![0.0, 0.0, 1.0]),
        node("b2", "second of b", "doc-b", vec![1.0, 1.0, 0.0]),
    ];
    store.add(&nodes).await.unwrap();
    let ids = |r: Vec<Node>| r.into_iter().map(|n| n.id_).collect::<Vec<_>>();
    let all = || VectorStoreQuery::new(vec![1.0, 1.0, 1.0], 0);
    let got = store
        .get_nodes(&["b2".to_string(), "a1".to_string(), "zz".to_string()])
        .await
        .unwrap();
    assert_eq!(ids(got.clone()), vec!["a1", "b2"]);
    assert_eq!(got[0], nodes[0]);
    store.delete("doc-a").await.unwrap();
    let mut left = store.query(&all()).await.unwrap().ids;
    left.sort();
    assert_eq!(left, vec!["b1", "b2"]);
    store
        .delete_nodes(Some(&["b1".to_string()]), None)
        .await
        .unwrap();
    assert_eq!(store.query(&all()).await.unwrap().ids, vec!["b2"]);
    // Listed ids that fail the filters stay.
    store
        .delete_nodes(
            Some(&["b2".to_string()]),
            Some(&MetadataFilters::from_pairs([("ref_doc_id", "doc-a")])),
        )
        .await
        .unwrap();
    assert_eq!(store.query(&all()).await.unwrap().ids, vec!["b2"]);
    // Adding an id again replaces its row (and the last of duplicates wins).
    let replaced = node("b2", "new text", "doc-c", vec![0.0, 0.0, 1.0]);
    store
        .add(&[
            node("b2", "older", "doc-c", vec![1.0, 0.0, 0.0]),
            replaced.clone(),
        ])
        .await
        .unwrap();
    let got = store.get_nodes(&["b2".to_string()]).await.unwrap();
    assert_eq!(got, vec![replaced]);
    store.clear().await.unwrap();
    assert!(store.query(&all()).await.unwrap().ids.is_empty());
    drop_schema(&url, &schema).await;
}

/// Full-text search finds the keyword match, ranked; hybrid puts dense
/// results first and adds text matches; doc_ids / node_ids restrict.
#[tokio::test]
async fn text_and_hybrid_search() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "text").await;
    let store = builder(&url, &schema, "t", 2)
        .hybrid_search(true)
        .build()
        .unwrap();
    let nodes = vec![
        node(
            "fox",
            "The quick brown fox jumps over the lazy dog",
            "d1",
            vec![1.0, 0.0],
        ),
        node(
            "foxes",
            "Foxes and more foxes: a fox den",
            "d2",
            vec![0.9, 0.1],
        ),
        node("cat", "A cat sleeps all afternoon", "d1", vec![0.0, 1.0]),
        node(
            "rust",
            "Rust is fast; memory safety without garbage",
            "d3",
            vec![0.1, 0.9],
        ),
    ];
    store.add(&nodes).await.unwrap();
    let text = |q: &str, k: usize| {
        VectorStoreQuery {
            similarity_top_k: k,
            ..Default::default()
        }
        .with_query_str(q)
        .with_mode(VectorStoreQueryMode::TextSearch)
    };
    let r = store.query(&text("fox!", 5)).await.unwrap();
    assert_eq!(r.ids, vec!["foxes", "fox"], "more occurrences rank higher");
    assert!(r.similarities[0] > r.similarities[1] && r.similarities[1] > 0.0);
    assert_eq!(r.nodes.unwrap()[1], without_embedding(&nodes[0]));
    let sparse = store
        .query(&text("memory garbage", 5).with_mode(VectorStoreQueryMode::Sparse))
        .await
        .unwrap();
    assert_eq!(sparse.ids, vec!["rust"]);
    assert!(
        store
            .query(&text("the and of", 5))
            .await
            .unwrap()
            .ids
            .is_empty()
    );
    let restricted = store
        .query(&text("fox", 5).with_doc_ids(vec!["d1".into()]))
        .await
        .unwrap();
    assert_eq!(restricted.ids, vec!["fox"]);
    let hybrid = store
        .query(
            &VectorStoreQuery::new(vec![0.0, 1.0], 1)
                .with_query_str("fox")
                .with_mode(VectorStoreQueryMode::Hybrid),
        )
        .await
        .unwrap();
    assert_eq!(hybrid.ids, vec!["cat", "foxes"], "1 dense + 1 text match");
    let mut q = VectorStoreQuery::new(vec![1.0, 0.0], 1)
        .with_query_str("fox")
        .with_mode(VectorStoreQueryMode::Hybrid);
    q.sparse_top_k = Some(3);
    let hybrid = store.query(&q).await.unwrap();
    assert_eq!(hybrid.ids, vec!["fox", "foxes"], "duplicates dropped");
    let missing = store
        .query(&VectorStoreQuery::default().with_mode(VectorStoreQueryMode::TextSearch))
        .await;
    assert!(
        matches!(missing, Err(Error::InvalidInput(_))),
        "{missing:?}"
    );
    let mmr = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0], 1).with_mode(VectorStoreQueryMode::Mmr))
        .await;
    assert!(matches!(mmr, Err(Error::Unsupported(_))), "{mmr:?}");
    // A table made without hybrid search has no tsvector to search.
    let dense_only = builder(&url, &schema, "dense", 2).build().unwrap();
    dense_only.add(&nodes).await.unwrap();
    let err = dense_only.query(&text("fox", 5)).await;
    assert!(
        matches!(&err, Err(Error::Unsupported(m)) if m.contains("text_search_tsv")),
        "{err:?}"
    );
    drop_schema(&url, &schema).await;
}

/// Tables written by Python LlamaIndex's PGVectorStore (replayed from the
/// recorded pg_dump) read back with Python's ids, scores and nodes; and the
/// tables and rows ragloom writes for the same nodes are Python's, column
/// types, indexes and `metadata_` text included.
#[tokio::test]
async fn python_tables_interoperate() {
    let url = require_pg!();
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{DATA}python_tables.json")).unwrap(),
    )
    .unwrap();
    let py_schema = recorded["schema"].as_str().unwrap();
    psql(&url, &format!("DROP SCHEMA IF EXISTS {py_schema} CASCADE")).await;
    psql(
        &url,
        &std::fs::read_to_string(format!("{DATA}python_tables.sql")).unwrap(),
    )
    .await;
    let queries = recorded["queries"].as_array().unwrap();
    let nodes: Vec<Node> = recorded["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| serde_json::from_value(n.clone()).unwrap())
        .collect();
    let ours = fresh_schema(&url, "layout").await;
    let mut conn = PgConnection::connect(&url).await.unwrap();
    for (table, hybrid) in [("py_plain", false), ("py_hybrid", true)] {
        let expected = &recorded["tables"][table];
        // 1. Python's table, read by ragloom.
        let store = builder(&url, py_schema, table, 4)
            .hybrid_search(hybrid)
            .perform_setup(false)
            .build()
            .unwrap();
        for q in queries {
            let name = q["name"].as_str().unwrap();
            let Some(answer) = expected["answers"].get(name) else {
                continue;
            };
            let mut query = VectorStoreQuery {
                query_embedding: q["embedding"]
                    .as_array()
                    .map(|v| v.iter().map(|x| x.as_f64().unwrap() as f32).collect()),
                query_str: q["query_str"].as_str().map(str::to_string),
                similarity_top_k: q["top_k"].as_u64().unwrap() as usize,
                mode: serde_json::from_value(q.get("mode").cloned().unwrap_or(json!("default")))
                    .unwrap(),
                ..Default::default()
            };
            if let Some(filters) = q["filters"].as_array() {
                query.filters = Some(MetadataFilters::and(filters.iter().map(|f| {
                    MetadataFilter::new(
                        f[0].as_str().unwrap(),
                        f[2].clone(),
                        serde_json::from_value(f[1].clone()).unwrap(),
                    )
                })));
            }
            let got = store.query(&query).await.unwrap();
            assert_eq!(json!(got.ids), answer["ids"], "{table} {name}");
            for (g, w) in got
                .similarities
                .iter()
                .zip(answer["similarities"].as_array().unwrap())
            {
                assert!(
                    (f64::from(*g) - w.as_f64().unwrap()).abs() < 1e-6,
                    "{table} {name}"
                );
            }
            let got_nodes: Vec<Value> = got
                .nodes
                .unwrap()
                .iter()
                .map(|n| serde_json::to_value(n).unwrap())
                .collect();
            assert_eq!(json!(got_nodes), answer["nodes"], "{table} {name}");
        }
        let ids: Vec<String> = ["n-cat", "idx-1", "doc-z"].map(String::from).to_vec();
        let got: Vec<Value> = store
            .get_nodes(&ids)
            .await
            .unwrap()
            .iter()
            .map(|n| serde_json::to_value(n).unwrap())
            .collect();
        assert_eq!(json!(got), expected["get_nodes"], "{table} get_nodes");

        // 2. The same table made and filled by ragloom.
        let mut b = builder(&url, &ours, table, 4)
            .use_jsonb(hybrid)
            .hybrid_search(hybrid);
        if hybrid {
            b = b.hnsw(HnswOptions::default());
        }
        let store = b.build().unwrap();
        store.add(&nodes).await.unwrap();
        let layout = layout(&mut conn, &ours, table).await;
        assert_eq!(layout, expected["layout"], "{table} layout");
        let rows = |schema: String| {
            format!(
                "SELECT id, text, node_id, metadata_::text, embedding::text \
                 FROM {schema}.data_{table} ORDER BY id"
            )
        };
        let theirs = sqlx::query(&rows(py_schema.to_string()))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let mine = sqlx::query(&rows(ours.clone()))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(theirs.len(), nodes.len());
        assert_eq!(mine.len(), theirs.len());
        for (m, t) in mine.iter().zip(&theirs) {
            for col in 0..5 {
                let (a, b): (String, String) = if col == 0 {
                    (
                        m.get::<i64, _>(0).to_string(),
                        t.get::<i64, _>(0).to_string(),
                    )
                } else {
                    (m.get(col), t.get(col))
                };
                assert_eq!(a, b, "{table} column {col}");
            }
        }
    }
    drop_schema(&url, &ours).await;
    drop_schema(&url, py_schema).await;
}

/// Columns and indexes of a table as the generator records them, names
/// replaced by `{schema}` and `{table}`.
async fn layout(conn: &mut PgConnection, schema: &str, table: &str) -> Value {
    let columns: Value = sqlx::query_scalar(
        "SELECT json_agg(json_build_object('name', a.attname, \
         'type', format_type(a.atttypid, a.atttypmod), 'not_null', a.attnotnull, \
         'default', pg_get_expr(d.adbin, d.adrelid), 'generated', a.attgenerated) \
         ORDER BY a.attnum)::text \
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
    )
    .bind(format!("{schema}.data_{table}"))
    .fetch_one(&mut *conn)
    .await
    .map(|s: String| serde_json::from_str(&s.replace(schema, "{schema}").replace(table, "{table}")).unwrap())
    .unwrap();
    let indexes: Value = sqlx::query_scalar(
        "SELECT json_agg(json_build_object('name', indexname, 'def', indexdef) \
         ORDER BY indexname)::text FROM pg_indexes WHERE schemaname = $1 AND tablename = $2",
    )
    .bind(schema)
    .bind(format!("data_{table}"))
    .fetch_one(&mut *conn)
    .await
    .map(|s: String| {
        serde_json::from_str(&s.replace(schema, "{schema}").replace(table, "{table}")).unwrap()
    })
    .unwrap();
    json!({"columns": columns, "indexes": indexes})
}

/// A node without an embedding, of the wrong length, with NaN or NUL, and a
/// query of the wrong length: errors naming the node, nothing written.
#[tokio::test]
async fn bad_input_is_an_error_naming_the_node() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "bad").await;
    let store = builder(&url, &schema, "t", 3).build().unwrap();
    let good = node("ok", "fine", "d", vec![1.0, 0.0, 0.0]);
    for (bad, needle) in [
        (Node::text_node("no vector").with_id("no-emb"), "no-emb"),
        (node("short", "x", "d", vec![1.0]), "short"),
        (node("nan", "x", "d", vec![f32::NAN, 0.0, 0.0]), "nan"),
        (node("nul", "a\0b", "d", vec![1.0, 0.0, 0.0]), "nul"),
    ] {
        let err = store.add(&[good.clone(), bad]).await;
        assert!(
            matches!(&err, Err(Error::InvalidInput(m)) if m.contains(needle)),
            "{err:?}"
        );
    }
    let all = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0, 0.0], 0))
        .await
        .unwrap();
    assert!(all.ids.is_empty(), "nothing was written: {:?}", all.ids);
    let err = store.query(&VectorStoreQuery::new(vec![1.0], 1)).await;
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    // A table made for 3 dimensions, opened as 5.
    let wrong = builder(&url, &schema, "t", 5).build().unwrap();
    let err = wrong.initialize().await;
    assert!(
        matches!(&err, Err(Error::InvalidInput(m)) if m.contains("3 dimensions")),
        "{err:?}"
    );
    let missing = builder(&url, &schema, "absent", 3)
        .perform_setup(false)
        .build()
        .unwrap();
    assert!(matches!(
        missing.initialize().await,
        Err(Error::NotFound(_))
    ));
    drop_schema(&url, &schema).await;
}

/// A server that is not there: a Provider error naming postgres and the
/// address, after the acquire timeout, never a panic. Needs no server.
#[tokio::test]
async fn down_server_is_a_clear_provider_error() {
    let store = PGVectorStore::from_params("127.0.0.1", 1, "postgres", "postgres", Some("pw"))
        .embed_dim(3)
        .acquire_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let err = store
        .add(&[node("a", "x", "d", vec![1.0, 0.0, 0.0])])
        .await
        .unwrap_err();
    match &err {
        Error::Provider {
            provider, message, ..
        } => {
            assert_eq!(provider, "postgres");
            assert!(message.contains("127.0.0.1:1"), "{message}");
            assert!(message.to_lowercase().contains("refused"), "{message}");
            assert!(!message.contains("pw"), "{message}");
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
    assert!(
        std::error::Error::source(&err).is_some(),
        "the cause is kept"
    );
    let err = store
        .query(&VectorStoreQuery::new(vec![1.0, 0.0, 0.0], 1))
        .await;
    assert!(matches!(err, Err(Error::Provider { .. })), "{err:?}");
}

/// The store conformance kit, each check on a fresh table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms() {
    let url = require_pg!();
    let schema = fresh_schema(&url, "conformance").await;
    let n = std::sync::atomic::AtomicUsize::new(0);
    let report = ragloom_core::testing::check_vector_store(|| async {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let store = builder(&url, &schema, &format!("c{i}"), 4).build().unwrap();
        std::sync::Arc::new(store) as std::sync::Arc<dyn VectorStore>
    })
    .await;
    assert_eq!(report.unsupported, []);
    assert!(report.passed.len() >= 27, "{:?}", report.passed);
    drop_schema(&url, &schema).await;
}
