//! `PostgresStore` against a real PostgreSQL 15 with pgvector at
//! `RAGLOOM_TEST_PG_URL` (started by `.ci/setup/postgres.sh`): the docstore
//! conformance kit, transactions that are atomic and isolated, and the
//! writers' lock. Without the variable these tests skip, or fail when `CI` is set.
#![allow(clippy::unwrap_used)]

use ragloom_core::schema::{Node, NodeRelationship, RelatedNodeInfo};
use ragloom_core::storage::DocStore;
use ragloom_core::testing::check_doc_store;
use ragloom_core::vector_stores::{VectorStore, VectorStoreQuery, VectorStoreQueryMode};
use ragloom_storage_postgres::{PostgresStore, PostgresTransaction};
use sqlx::{Connection, PgConnection};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn pg_url() -> Option<String> {
    match std::env::var("RAGLOOM_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "RAGLOOM_TEST_PG_URL is unset: .ci/setup/postgres.sh should have started PostgreSQL"
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

/// A fresh schema for one test (the process id keeps parallel runs apart).
async fn schema(url: &str, test: &str) -> String {
    let name = format!("rl_st_{test}_{}", std::process::id());
    let mut conn = PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    name
}

async fn store(url: &str, schema: &str, name: &str) -> PostgresStore {
    PostgresStore::builder(url)
        .schema(schema)
        .name(name)
        .embed_dim(3)
        .hybrid_search(true)
        .build()
        .await
        .unwrap()
}

fn node(id: &str, doc: &str, text: &str, embedding: [f32; 3]) -> Node {
    let mut n = Node::text_node(text)
        .with_id(id)
        .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new(doc));
    n.embedding = Some(embedding.to_vec());
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docstore_conforms_outside_and_inside_a_transaction() {
    let url = require_pg!();
    let schema = schema(&url, "conform").await;
    let n = AtomicUsize::new(0);
    let report = check_doc_store(|| async {
        let i = n.fetch_add(1, Ordering::SeqCst);
        store(&url, &schema, &format!("d{i}")).await.docstore() as Arc<dyn DocStore>
    })
    .await;
    assert_eq!(report.passed.len(), 4, "{report:?}");

    // The same checks through a transaction's docstore (kept open meanwhile).
    let open: std::sync::Mutex<Vec<PostgresTransaction>> = Default::default();
    let report = check_doc_store(|| async {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let tx = store(&url, &schema, &format!("t{i}"))
            .await
            .begin()
            .await
            .unwrap();
        let docstore = tx.storage_context().docstore.clone();
        open.lock().unwrap().push(tx);
        docstore
    })
    .await;
    assert_eq!(report.passed.len(), 4, "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_is_seen_whole_at_commit_and_not_at_all_when_dropped() {
    let url = require_pg!();
    let schema = schema(&url, "atomic").await;
    let store = store(&url, &schema, "essays").await;
    let nodes = vec![
        node("n1", "doc-a", "the lighthouse keeper", [1.0, 0.0, 0.0]),
        node("n2", "doc-a", "a garden of painters", [0.0, 1.0, 0.0]),
    ];
    let query = VectorStoreQuery::new(vec![1.0, 0.0, 0.0], 5);

    let tx = store.begin().await.unwrap();
    let ctx = tx.storage_context();
    ctx.docstore
        .add_documents(&nodes, true, true)
        .await
        .unwrap();
    ctx.vector_store().unwrap().add(&nodes).await.unwrap();
    ctx.docstore.set_document_hash("doc-a", "h1").await.unwrap();
    // The transaction reads its own writes; nobody else sees them yet.
    assert_eq!(ctx.docstore.docs().await.unwrap().len(), 2);
    let inside = ctx.vector_store().unwrap().query(&query).await.unwrap();
    assert_eq!(inside.ids, ["n1", "n2"]);
    assert!(store.docstore().docs().await.unwrap().is_empty());
    assert!(
        store
            .vector_store()
            .query(&query)
            .await
            .unwrap()
            .ids
            .is_empty()
    );
    tx.commit().await.unwrap();

    assert_eq!(store.docstore().docs().await.unwrap().len(), 2);
    assert_eq!(
        store
            .docstore()
            .get_document_hash("doc-a")
            .await
            .unwrap()
            .as_deref(),
        Some("h1")
    );
    let mut text = VectorStoreQuery::new(vec![1.0, 0.0, 0.0], 5);
    text.mode = VectorStoreQueryMode::TextSearch;
    text.query_str = Some("lighthouse".into());
    assert_eq!(store.vector_store().query(&text).await.unwrap().ids, ["n1"]);

    // A transaction dropped half-way (an error, a cancelled task) leaves nothing.
    {
        let tx = store.begin().await.unwrap();
        let ctx = tx.storage_context();
        ctx.docstore.delete_ref_doc("doc-a").await.unwrap();
        ctx.vector_store().unwrap().delete("doc-a").await.unwrap();
        ctx.docstore.set_document_hash("doc-a", "h2").await.unwrap();
        assert!(ctx.docstore.docs().await.unwrap().is_empty());
    }
    // The rollback is sent as the transaction drops; the next writer waits for it.
    let tx = store.begin().await.unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(store.docstore().docs().await.unwrap().len(), 2);
    assert_eq!(
        store.vector_store().query(&query).await.unwrap().ids,
        ["n1", "n2"]
    );
    assert_eq!(
        store
            .docstore()
            .get_document_hash("doc-a")
            .await
            .unwrap()
            .as_deref(),
        Some("h1")
    );
    // A store's transaction once ended refuses further writes.
    let tx = store.begin().await.unwrap();
    let ctx = tx.storage_context().clone();
    tx.commit().await.unwrap();
    let err = ctx.docstore.set_document_hash("x", "y").await.unwrap_err();
    assert!(err.to_string().contains("has ended"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_writer_waits_for_the_first() {
    let url = require_pg!();
    let schema = schema(&url, "lock").await;
    let store = store(&url, &schema, "essays").await;
    let first = store.begin().await.unwrap();
    let err = store
        .begin_locked(&format!("ragloom-store:{schema}.essays"), false)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("another process is writing"),
        "{err}"
    );

    let other = store.clone();
    let second =
        tokio::spawn(async move { other.begin().await.map(|tx| tx.store().name().to_string()) });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!second.is_finished(), "the second writer did not wait");
    // Readers never wait.
    assert!(store.docstore().docs().await.unwrap().is_empty());
    first.commit().await.unwrap();
    let name = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("the second writer still waits after the first committed")
        .unwrap()
        .unwrap();
    assert_eq!(name, "essays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_are_llamaindex_layout_and_sized() {
    let url = require_pg!();
    let schema = schema(&url, "layout").await;
    let store = store(&url, &schema, "essays").await;
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let columns: Vec<(String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_schema = $1 AND table_name = 'data_essays_docstore' ORDER BY ordinal_position",
    )
    .bind(&schema)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        columns,
        [
            ("id".to_string(), "integer".to_string()),
            ("key".into(), "character varying".into()),
            ("namespace".into(), "character varying".into()),
            ("value".into(), "json".into()),
        ]
    );
    assert!(store.size_bytes().await.unwrap() > 0);
    store.drop_tables().await.unwrap();
    let left: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
    )
    .bind(&schema)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(left, 0);
    conn.close().await.unwrap();
}

/// A model that counts the texts it embeds.
#[derive(Debug, Default)]
struct Counting(std::sync::Mutex<usize>);

#[async_trait::async_trait]
impl ragloom_core::embeddings::Embedding for Counting {
    fn model_name(&self) -> &str {
        "counting"
    }
    fn dimensions(&self) -> Option<usize> {
        Some(2)
    }
    async fn embed_query(&self, q: &str) -> ragloom_core::Result<Vec<f32>> {
        Ok(vec![q.len() as f32, 1.0])
    }
    async fn embed_texts(&self, texts: &[String]) -> ragloom_core::Result<Vec<Vec<f32>>> {
        *self.0.lock().unwrap() += texts.len();
        Ok(texts.iter().map(|t| vec![t.len() as f32, 0.5]).collect())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedding_cache_answers_texts_seen_before_on_any_connection() {
    use ragloom_core::embeddings::{CachedEmbedding, Embedding};
    use ragloom_storage_postgres::PostgresEmbeddingCache;
    let url = require_pg!();
    let schema = schema(&url, "cache").await;
    let model = Arc::new(Counting::default());
    let texts: Vec<String> = ["alpha", "beta", "alpha"].map(String::from).to_vec();

    let cache = PostgresEmbeddingCache::connect(&url, &schema)
        .await
        .unwrap();
    let first = CachedEmbedding::new(model.clone(), cache, "counting@2");
    let vectors = first.embed_texts(&texts).await.unwrap();
    assert_eq!(vectors, [vec![5.0, 0.5], vec![4.0, 0.5], vec![5.0, 0.5]]);
    assert_eq!(*model.0.lock().unwrap(), 2, "each text embedded once");

    // Another connection (another machine) finds them; another model key does not.
    let cache = PostgresEmbeddingCache::connect(&url, &schema)
        .await
        .unwrap();
    let again = CachedEmbedding::new(model.clone(), cache.clone(), "counting@2");
    assert_eq!(again.embed_texts(&texts).await.unwrap(), vectors);
    assert_eq!(*model.0.lock().unwrap(), 2);
    let other = CachedEmbedding::new(model.clone(), cache, "counting@2-v2");
    other.embed_texts(&texts[..1]).await.unwrap();
    assert_eq!(*model.0.lock().unwrap(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_in_a_transaction_is_undone_alone() {
    use ragloom_core::storage::kvstore::KvBackend;
    use ragloom_storage_postgres::KvTableName;
    let url = require_pg!();
    let schema = schema(&url, "savepoint").await;
    let store = store(&url, &schema, "essays").await;
    let tx = store.begin().await.unwrap();
    // jsonb refuses a NUL escape: the server fails this write half-way.
    let strict = tx
        .kv_table(KvTableName {
            schema: schema.clone(),
            table: "strict".into(),
            use_jsonb: true,
        })
        .await
        .unwrap();
    let obj = |v: serde_json::Value| v.as_object().unwrap().clone();
    let err = strict
        .write(|t| {
            t.put("fine", obj(serde_json::json!({"a": 1})), "c")?;
            t.put("bad", obj(serde_json::json!({"a": "x\u{0}y"})), "c")
        })
        .unwrap_err();
    assert!(err.to_string().contains("writing"), "{err}");
    // The transaction goes on; the failed write left nothing, the next one lands.
    tx.kv()
        .write(|t| t.put("kept", obj(serde_json::json!({"b": 2})), "ragloom/test"))
        .unwrap();
    assert!(
        strict
            .read(|t| t.get("fine", "c").map(|v| v.is_none()))
            .unwrap()
    );
    tx.commit().await.unwrap();
    let kept = store
        .kv()
        .read(|t| {
            t.get("kept", "ragloom/test")
                .map(|v| v.map(|v| v.into_owned()))
        })
        .unwrap();
    assert_eq!(kept, Some(obj(serde_json::json!({"b": 2}))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_an_error_rolled_back_refuses_to_commit() {
    use ragloom_core::storage::kvstore::KvBackend;
    use ragloom_storage_postgres::KvTableName;
    let url = require_pg!();
    let schema = schema(&url, "aborted").await;
    let store = store(&url, &schema, "essays").await;
    let obj = |v: serde_json::Value| v.as_object().unwrap().clone();
    let tx = store.begin().await.unwrap();
    tx.kv()
        .write(|t| t.put("before", obj(serde_json::json!({"a": 1})), "ragloom/test"))
        .unwrap();
    // A table that vanishes under the transaction: reading it fails on the
    // server, outside any savepoint, and aborts the transaction.
    let gone = tx
        .kv_table(KvTableName {
            schema: schema.clone(),
            table: "gone".into(),
            use_jsonb: false,
        })
        .await
        .unwrap();
    let mut conn = PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(&format!("DROP TABLE {schema}.data_gone"))
        .execute(&mut conn)
        .await
        .unwrap();
    assert!(gone.read(|t| t.get("k", "c").map(|_| ())).is_err());
    // Whatever comes after fails or is refused, and the commit says so.
    let _ = tx
        .kv()
        .write(|t| t.put("after", obj(serde_json::json!({"b": 2})), "ragloom/test"));
    let err = tx.commit().await.unwrap_err();
    assert!(err.to_string().contains("rolled back"), "{err}");
    let seen = store
        .kv()
        .read(|t| {
            Ok((
                t.get("before", "ragloom/test")?.is_some(),
                t.get("after", "ragloom/test")?.is_some(),
            ))
        })
        .unwrap();
    assert_eq!(
        seen,
        (false, false),
        "nothing of the transaction may be written"
    );
    conn.close().await.unwrap();
}
