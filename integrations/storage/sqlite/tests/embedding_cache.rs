//! The content-addressed embedding cache: each text embedded once per model,
//! batches kept as they are committed, and the schema migration that adds it.

#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use ragloom_core::embeddings::{Embedding, HashEmbedding, embed_in_batches};
use ragloom_core::error::{Error, Result};
use ragloom_storage_sqlite::{CachedEmbedding, SCHEMA_VERSION, SqliteStore};
use std::sync::{Arc, Mutex};

/// Records every text it is asked to embed; fails from call `fail_from` on.
#[derive(Debug)]
struct Counting {
    seen: Mutex<Vec<String>>,
    calls: Mutex<usize>,
    fail_from: usize,
}

impl Counting {
    fn new(fail_from: usize) -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::default(),
            calls: Mutex::default(),
            fail_from,
        })
    }
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Embedding for Counting {
    fn model_name(&self) -> &str {
        "counting"
    }
    fn dimensions(&self) -> Option<usize> {
        Some(16)
    }
    fn embed_batch_size(&self) -> usize {
        2
    }
    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        HashEmbedding::new(16).embed_query(query).await
    }
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let call = {
            let mut c = self.calls.lock().unwrap();
            *c += 1;
            *c
        };
        if call >= self.fail_from {
            return Err(Error::Other("the embedding server went away".into()));
        }
        self.seen.lock().unwrap().extend(texts.iter().cloned());
        HashEmbedding::new(16).embed_texts(texts).await
    }
}

fn texts(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| format!("a text about {w}")).collect()
}

#[tokio::test]
async fn each_text_is_embedded_once_per_model() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let inner = Counting::new(usize::MAX);
    let cached = CachedEmbedding::new(inner.clone(), store.clone(), "counting@16");
    let input = texts(&["cats", "dogs", "cats", "owls"]);
    let first = cached.embed_texts(&input).await.unwrap();
    assert_eq!(inner.seen(), texts(&["cats", "dogs", "owls"]));
    assert_eq!(
        first,
        HashEmbedding::new(16).embed_texts(&input).await.unwrap()
    );

    let again = CachedEmbedding::new(inner.clone(), store.clone(), "counting@16");
    assert_eq!(again.embed_texts(&input).await.unwrap(), first);
    assert_eq!(inner.seen().len(), 3, "cached texts were embedded again");

    // Another model key never reads these vectors.
    let other = Counting::new(usize::MAX);
    CachedEmbedding::new(other.clone(), store, "counting@16-v2")
        .embed_texts(&input[..1])
        .await
        .unwrap();
    assert_eq!(other.seen(), texts(&["cats"]));
}

#[tokio::test]
async fn batches_embedded_before_a_failure_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let input = texts(&["one", "two", "three", "four"]);
    // Batches of two: the second call fails, as a server that dies mid-run.
    let failing = Counting::new(2);
    let cached = CachedEmbedding::new(failing, store, "m");
    let err = embed_in_batches(&cached, &input, false).await.unwrap_err();
    assert!(err.to_string().contains("went away"));

    let resumed = Counting::new(usize::MAX);
    let store = SqliteStore::open(&path).unwrap();
    let cached = CachedEmbedding::new(resumed.clone(), store, "m");
    embed_in_batches(&cached, &input, false).await.unwrap();
    assert_eq!(resumed.seen(), texts(&["three", "four"]));
}

#[tokio::test]
async fn a_version_1_file_is_migrated_and_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    {
        // A file as the first schema wrote it, with one stored entry.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO meta VALUES ('schema_version', '1');
             CREATE TABLE kv (collection TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                              PRIMARY KEY (collection, key));
             CREATE TABLE vectors (node_id TEXT PRIMARY KEY, ref_doc_id TEXT,
                                   embedding BLOB NOT NULL, metadata TEXT NOT NULL);
             CREATE INDEX vectors_by_ref_doc ON vectors (ref_doc_id);
             INSERT INTO kv VALUES ('docstore/metadata', 'doc-1', '{\"doc_hash\": \"h1\"}');",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 6);
    use ragloom_core::storage::DocStore;
    assert_eq!(
        store
            .docstore()
            .get_document_hash("doc-1")
            .await
            .unwrap()
            .as_deref(),
        Some("h1")
    );
    let inner = Counting::new(usize::MAX);
    CachedEmbedding::new(inner, store, "m")
        .embed_texts(&texts(&["x"]))
        .await
        .unwrap();
}
