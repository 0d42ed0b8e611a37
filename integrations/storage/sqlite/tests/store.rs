//! The embedded store: the schema version, the document and index stores'
//! LlamaIndex semantics, transactions (atomic, isolated, one writer), and an index on top.

#![allow(clippy::unwrap_used)]

use ragloom_core::indices::load_index_from_storage;
use ragloom_core::prelude::*;
use ragloom_core::retrievers::Retriever;
use ragloom_core::storage::{DocStore, SimpleDocumentStore};
use ragloom_core::vector_stores::VectorStoreQuery;
use ragloom_storage_sqlite::{SCHEMA_VERSION, SqliteOptions, SqliteStore};
use std::sync::Arc;
use std::time::Duration;

fn doc(id: &str, text: &str) -> Node {
    Node::document(text).with_id(id)
}

/// Nodes split from documents, so they carry ref doc ids and relationships.
async fn nodes_of(docs: &[Node]) -> Vec<Node> {
    let splitter = SentenceSplitter::new().chunk_size(64).chunk_overlap(8);
    splitter.get_nodes_from_documents(docs).unwrap()
}

/// The sample's nodes embedded with a 16-dimension hash embedding.
async fn embedded_sample() -> (HashEmbedding, Vec<Node>) {
    let embed = HashEmbedding::new(16);
    let mut nodes = nodes_of(&sample_docs()).await;
    for n in &mut nodes {
        n.embedding = Some(embed.embed_query(&n.text).await.unwrap());
    }
    (embed, nodes)
}

fn sample_docs() -> Vec<Node> {
    vec![
        doc(
            "a.txt",
            &"The White Rabbit took a watch out of its waistcoat-pocket. ".repeat(12),
        ),
        doc(
            "b.txt",
            &"Alice fell down the rabbit hole into a long hall. ".repeat(12),
        ),
        doc(
            "c.txt",
            &"The Queen of Hearts shouted off with their heads. ".repeat(12),
        ),
    ]
}

#[tokio::test]
async fn a_new_file_records_the_schema_version_and_a_newer_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    drop(store);
    assert_eq!(
        SqliteStore::open(&path).unwrap().schema_version().unwrap(),
        SCHEMA_VERSION
    );

    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    drop(conn);
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("newer ragloom") && err.contains("999"),
        "{err}"
    );
}

/// A schema-3 file holds its long values as raw deflate: it opens as
/// schema 4 with every node as it was, and what is written next is zstd.
#[tokio::test]
async fn a_schema_3_file_with_deflated_values_reads_and_migrates() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let nodes = nodes_of(&sample_docs()).await;
    let store = SqliteStore::open(&path).unwrap();
    store
        .docstore()
        .add_documents(&nodes, true, true)
        .await
        .unwrap();
    drop(store);
    // Rewrite every compressed value as schema 3 stored it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let blobs: Vec<(String, String, Vec<u8>)> = conn
        .prepare("SELECT collection, key, value FROM kv WHERE typeof(value) = 'blob'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!blobs.is_empty(), "no value was long enough to compress");
    for (collection, key, blob) in &blobs {
        let json = zstd::stream::decode_all(&blob[..]).unwrap();
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        z.write_all(&json).unwrap();
        conn.execute(
            "UPDATE kv SET value = ?3 WHERE collection = ?1 AND key = ?2",
            rusqlite::params![collection, key, z.finish().unwrap()],
        )
        .unwrap();
    }
    // Schema 3 had no segment records either, nor the vector change log.
    conn.execute_batch(
        "DROP TABLE bm25_segments;
         DROP TRIGGER vectors_logged_insert; DROP TRIGGER vectors_logged_update;
         DROP TRIGGER vectors_logged_delete; DROP TABLE vectors_log;
         UPDATE meta SET value = '3' WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let docstore = store.docstore();
    for node in &nodes {
        assert_eq!(docstore.get_node(&node.id_).await.unwrap().text, node.text);
    }
    let hits = store.bm25_retriever().retrieve_str("White Rabbit").unwrap();
    assert!(!hits.is_empty());
    let more = nodes_of(&[doc("d.txt", &"The Mock Turtle sighed deeply. ".repeat(20))]).await;
    docstore.add_documents(&more, true, true).await.unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let value: Vec<u8> = conn
        .query_row(
            "SELECT value FROM kv WHERE collection = 'docstore/data' AND key = ?1",
            [&more[0].id_],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        value.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
        "not a zstd frame"
    );
}

#[tokio::test]
async fn the_docstore_behaves_as_the_in_memory_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let sqlite = store.docstore();
    let memory = SimpleDocumentStore::new();
    let nodes = nodes_of(&sample_docs()).await;
    assert!(nodes.len() > 3);
    for ds in [&*sqlite as &dyn DocStore, &memory as &dyn DocStore] {
        ds.add_documents(&nodes, true, true).await.unwrap();
        ds.set_document_hash("a.txt", "h-a").await.unwrap();
        ds.delete_document(&nodes[0].id_).await.unwrap();
        ds.delete_ref_doc("c.txt").await.unwrap();
        assert!(ds.add_documents(&nodes[1..2], false, true).await.is_err());
    }
    let ids = |v: Vec<Node>| v.into_iter().map(|n| n.id_).collect::<Vec<_>>();
    assert_eq!(
        ids(sqlite.docs().await.unwrap()),
        ids(memory.docs().await.unwrap())
    );
    assert_eq!(
        sqlite.get_all_ref_doc_info().await.unwrap(),
        memory.get_all_ref_doc_info().await.unwrap()
    );
    assert_eq!(
        sqlite.get_all_document_hashes().await.unwrap(),
        memory.get_all_document_hashes().await.unwrap()
    );
    let n = &nodes[1];
    assert_eq!(
        sqlite.get_node(&n.id_).await.unwrap().to_llama_dict(),
        memory.get_node(&n.id_).await.unwrap().to_llama_dict()
    );
    assert!(sqlite.get_document_hash("a.txt").await.unwrap().is_some());
}

#[tokio::test]
async fn a_transaction_is_invisible_until_it_commits_and_gone_when_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let context = store.storage_context();
    let nodes = nodes_of(&sample_docs()[..1]).await;

    let tx = context.transaction().await.unwrap();
    assert!(tx.is_atomic());
    tx.storage_context()
        .docstore
        .add_documents(&nodes, true, true)
        .await
        .unwrap();
    // The transaction sees its own writes; everyone else sees the last commit.
    assert_eq!(
        tx.storage_context().docstore.docs().await.unwrap().len(),
        nodes.len()
    );
    assert!(context.docstore.docs().await.unwrap().is_empty());
    assert!(
        SqliteStore::open(store.path())
            .unwrap()
            .docstore()
            .docs()
            .await
            .unwrap()
            .is_empty()
    );
    tx.commit().await.unwrap();
    assert_eq!(context.docstore.docs().await.unwrap().len(), nodes.len());

    let tx = context.transaction().await.unwrap();
    tx.storage_context()
        .docstore
        .delete_ref_doc("a.txt")
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(context.docstore.docs().await.unwrap().len(), nodes.len());

    // Dropped without a commit (an error, a cancelled task): rolled back.
    {
        let tx = context.transaction().await.unwrap();
        tx.storage_context()
            .docstore
            .delete_ref_doc("a.txt")
            .await
            .unwrap();
    }
    assert_eq!(context.docstore.docs().await.unwrap().len(), nodes.len());

    // Stores of an ended transaction refuse writes instead of writing outside it.
    let tx = context.transaction().await.unwrap();
    let stale = tx.storage_context().clone();
    tx.commit().await.unwrap();
    let err = stale.docstore.delete_ref_doc("a.txt").await.unwrap_err();
    assert!(err.to_string().contains("ended"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_writer_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let context = store.storage_context();
    let tx = context.transaction().await.unwrap();

    // A write beside the open transaction, in this process, is refused, not left hanging.
    let err = context
        .docstore
        .set_document_hash("x", "y")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("transaction is open"), "{err}");

    // A second transaction in this process waits its turn.
    let waiting = tokio::spawn({
        let context = context.clone();
        async move {
            let tx = context.transaction().await.unwrap();
            tx.storage_context()
                .docstore
                .set_document_hash("second", "2")
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished());

    // Another connection (as another process would) that will not wait fails at once, clearly.
    let impatient = SqliteStore::open_with(
        &path,
        SqliteOptions {
            busy_timeout: Duration::ZERO,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    let err = impatient.storage_context().transaction().await.unwrap_err();
    assert!(
        err.to_string().contains("another process is writing"),
        "{err}"
    );

    tx.storage_context()
        .docstore
        .set_document_hash("first", "1")
        .await
        .unwrap();
    tx.commit().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap();
    let hashes = context.docstore.get_all_document_hashes().await.unwrap();
    assert_eq!(hashes.get("1").map(String::as_str), Some("first"));
    assert_eq!(hashes.get("2").map(String::as_str), Some("second"));
}

#[tokio::test]
async fn an_index_built_in_a_transaction_loads_from_the_file_and_answers_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.sqlite");
    let embed: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(64));
    // The same nodes (same ids) in both, so even ties must come out alike.
    let nodes = nodes_of(&sample_docs()).await;
    let store = SqliteStore::open(&path).unwrap();
    let tx = store.storage_context().transaction().await.unwrap();
    let index = VectorStoreIndex::builder(Arc::clone(&embed))
        .storage_context(tx.storage_context().clone())
        .from_nodes(nodes.clone())
        .await
        .unwrap();
    let index_id = index.index_id();
    tx.commit().await.unwrap();

    let memory = VectorStoreIndex::builder(Arc::clone(&embed))
        .from_nodes(nodes)
        .await
        .unwrap();
    let reopened = SqliteStore::open(&path).unwrap();
    let loaded = load_index_from_storage(
        reopened.storage_context(),
        Arc::clone(&embed),
        Some(&index_id),
    )
    .await
    .unwrap();
    let question: QueryBundle = "Who took a watch out of a waistcoat pocket?".into();
    let got = loaded.as_retriever().retrieve(&question).await.unwrap();
    let want = memory.as_retriever().retrieve(&question).await.unwrap();
    let view = |v: &[NodeWithScore]| {
        v.iter()
            .map(|n| (n.node.text.clone(), n.score.map(|s| (s * 1e5).round())))
            .collect::<Vec<_>>()
    };
    assert_eq!(view(&got), view(&want));
    assert!(got[0].node.text.contains("White Rabbit"));

    // The vectors are cached per commit: a commit by another handle is seen.
    let before = reopened
        .vector_store()
        .query(&VectorStoreQuery::new(
            embed.embed_query("hall").await.unwrap(),
            50,
        ))
        .await
        .unwrap();
    let writer = SqliteStore::open(&path).unwrap();
    writer.vector_store().delete("b.txt").await.unwrap();
    let after = reopened
        .vector_store()
        .query(&VectorStoreQuery::new(
            embed.embed_query("hall").await.unwrap(),
            50,
        ))
        .await
        .unwrap();
    assert!(after.ids.len() < before.ids.len());
}

#[tokio::test]
async fn a_refresh_in_a_transaction_lands_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.sqlite");
    let embed: Arc<dyn Embedding> = Arc::new(HashEmbedding::new(32));
    let store = SqliteStore::open(&path).unwrap();
    let context = store.storage_context();
    let docs = sample_docs();

    let tx = context.transaction().await.unwrap();
    let index = VectorStoreIndex::builder(Arc::clone(&embed))
        .storage_context(tx.storage_context().clone())
        .from_documents(&docs[..2])
        .await
        .unwrap();
    assert_eq!(
        index.refresh_ref_docs(&docs).await.unwrap(),
        [false, false, true]
    );
    let index_id = index.index_id();
    tx.commit().await.unwrap();

    // A refresh that is dropped half-way (a crash, an error) changes nothing.
    let changed = vec![
        doc("a.txt", "The rabbit is late. "),
        docs[1].clone(),
        docs[2].clone(),
    ];
    {
        let tx = context.transaction().await.unwrap();
        let index = load_index_from_storage(
            tx.storage_context().clone(),
            Arc::clone(&embed),
            Some(&index_id),
        )
        .await
        .unwrap();
        assert_eq!(
            index.refresh_ref_docs(&changed).await.unwrap(),
            [true, false, false]
        );
    }
    let reader = SqliteStore::open(&path).unwrap().storage_context();
    assert_eq!(
        reader.docstore.get_document_hash("a.txt").await.unwrap(),
        Some(docs[0].hash())
    );
    let index = load_index_from_storage(reader, Arc::clone(&embed), Some(&index_id))
        .await
        .unwrap();
    let texts: Vec<String> = index
        .as_retriever()
        .similarity_top_k(10)
        .retrieve(&"rabbit".into())
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.node.text)
        .collect();
    assert!(texts.iter().any(|t| t.contains("waistcoat")));
    assert!(!texts.iter().any(|t| t.contains("is late")));
}

/// The first query of a commit scans the file's rows; the next ones read
/// the vectors held in memory. Both answer as the in-memory store does:
/// the same ids, scores and order, ties (equal vectors under different ids)
/// and the errors of a bad query included; a write makes the next query scan again.
#[tokio::test]
async fn a_scanned_query_and_a_cached_one_answer_as_the_in_memory_store() {
    use ragloom_core::SimpleVectorStore;
    use ragloom_core::vector_stores::VectorStoreQueryResult;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let (embed, mut nodes) = embedded_sample().await;
    // Repeated text: equal vectors under other ids, so ties decide places.
    let twins: Vec<Node> = nodes
        .iter()
        .take(4)
        .map(|n| n.clone().with_id(format!("twin-{}", n.id_)))
        .collect();
    nodes.extend(twins);
    let sqlite = store.vector_store();
    let memory = SimpleVectorStore::new();
    sqlite.add(&nodes).await.unwrap();
    memory.add(&nodes).await.unwrap();
    let seen = |r: VectorStoreQueryResult| -> Vec<(String, String)> {
        let scores = r.similarities.iter().map(|s| format!("{s:.7}"));
        r.ids.into_iter().zip(scores).collect()
    };
    for (question, k) in [("rabbit watch", 3), ("the queen", 5), ("hall", 0)] {
        let query = VectorStoreQuery::new(embed.embed_query(question).await.unwrap(), k);
        let want = seen(memory.query(&query).await.unwrap());
        let scanned = seen(sqlite.query(&query).await.unwrap());
        let cached = seen(sqlite.query(&query).await.unwrap());
        assert_eq!(scanned, want, "{question}");
        assert_eq!(cached, want, "{question}");
        sqlite.add(&nodes[..1]).await.unwrap(); // a write: the next query scans
    }
    let wrong = VectorStoreQuery::new(vec![0.5; 3], 2);
    let bad = VectorStoreQuery::new(vec![f32::NAN; 16], 2);
    for query in [&wrong, &bad] {
        let want = memory.query(query).await.unwrap_err().to_string();
        let scanned = sqlite.query(query).await.unwrap_err().to_string();
        assert_eq!(scanned, want);
        sqlite.add(&nodes[..1]).await.unwrap();
    }
}

#[tokio::test]
async fn delete_nodes_by_filter_matches_what_the_in_memory_store_deletes() {
    use ragloom_core::SimpleVectorStore;
    use ragloom_core::vector_stores::{FilterOperator, MetadataFilter, MetadataFilters};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let (embed, nodes) = embedded_sample().await;
    let sqlite = store.vector_store();
    let memory = SimpleVectorStore::new();
    // `doc_id` is one of the keys a vector store adds to a node's metadata.
    let filters =
        MetadataFilters::and([MetadataFilter::new("doc_id", "b.txt", FilterOperator::Eq)]);
    for vs in [&*sqlite as &dyn VectorStore, &memory as &dyn VectorStore] {
        vs.add(&nodes).await.unwrap();
        vs.delete_nodes(None, Some(&filters)).await.unwrap();
    }
    let ids = |r: ragloom_core::vector_stores::VectorStoreQueryResult| {
        let mut ids = r.ids;
        ids.sort();
        ids
    };
    let query = VectorStoreQuery::new(embed.embed_query("rabbit").await.unwrap(), 100);
    let left = ids(sqlite.query(&query).await.unwrap());
    assert_eq!(left, ids(memory.query(&query).await.unwrap()));
    assert!(left.len() < nodes.len());
}

#[tokio::test]
async fn an_ingestion_pipeline_writes_into_a_transaction_and_upserts_and_deletes() {
    use ragloom_core::ingestion::{DocstoreStrategy, IngestionPipeline};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("i.sqlite")).unwrap();
    let context = store.storage_context();
    let pipeline_for = |tx: &ragloom_core::storage::StorageTransaction| {
        let c = tx.storage_context();
        IngestionPipeline::new(vec![Arc::new(
            SentenceSplitter::new().chunk_size(64).chunk_overlap(8),
        )])
        .embedding(Arc::new(HashEmbedding::new(8)))
        .docstore(c.docstore.clone())
        .vector_store(c.vector_store().unwrap())
        .docstore_strategy(DocstoreStrategy::UpsertsAndDelete)
    };

    let tx = context.transaction().await.unwrap();
    let out = pipeline_for(&tx).run(sample_docs()).await.unwrap();
    assert!(!out.is_empty());
    // Not committed: nobody else sees it; dropped: nothing is kept.
    drop(tx);
    assert!(
        context
            .docstore
            .get_all_document_hashes()
            .await
            .unwrap()
            .is_empty()
    );

    let tx = context.transaction().await.unwrap();
    pipeline_for(&tx).run(sample_docs()).await.unwrap();
    tx.commit().await.unwrap();
    let stored = store.vector_store();
    let count = || async {
        stored
            .query(&VectorStoreQuery::new(vec![1.0; 8], 100))
            .await
            .unwrap()
            .ids
            .len()
    };
    let before = count().await;
    assert!(before > 0);

    // b.txt changed, c.txt vanished: upserted and deleted in one commit.
    let mut next = sample_docs();
    next.truncate(2);
    next[1] = doc(
        "b.txt",
        "Alice grew very tall after drinking from the bottle.",
    );
    let tx = context.transaction().await.unwrap();
    let out = pipeline_for(&tx).run_with_stats(next).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(out.stats.deleted, 1);
    assert_eq!(out.stats.replaced, 1);
    let hashes = context.docstore.get_all_document_hashes().await.unwrap();
    assert_eq!(hashes.len(), 2, "{hashes:?}");
    assert!(count().await < before);
}

/// A fresh file is written in place until its first commit, then takes the
/// write-ahead log: it reads and writes as any other file afterwards.
#[tokio::test]
async fn a_fresh_file_commits_once_then_uses_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.sqlite");
    let fresh = SqliteOptions {
        fresh: true,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&path, fresh.clone()).unwrap();
    let nodes = nodes_of(&sample_docs()).await;
    let journal = |p: &std::path::Path| -> String {
        let c = rusqlite::Connection::open(p).unwrap();
        c.query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap()
    };

    // A rolled back transaction leaves nothing, and the file stays fresh.
    let tx = store.begin().await.unwrap();
    tx.storage_context()
        .docstore
        .add_documents(&nodes[..2], true, true)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(store.docstore().docs().await.unwrap().is_empty());

    let tx = store.begin().await.unwrap();
    tx.storage_context()
        .docstore
        .add_documents(&nodes, true, true)
        .await
        .unwrap();
    assert_eq!(
        tx.storage_context().docstore.docs().await.unwrap().len(),
        nodes.len()
    );
    tx.merge_keyword_index().unwrap();
    tx.commit().await.unwrap();
    assert!(store.checkpoint().unwrap());
    assert_eq!(journal(&path), "wal");

    // Another connection reads the commit; later transactions commit and roll back as usual.
    let other = SqliteStore::open(&path).unwrap();
    assert_eq!(other.docstore().docs().await.unwrap().len(), nodes.len());
    let tx = store.begin().await.unwrap();
    tx.storage_context()
        .docstore
        .delete_ref_doc("a.txt")
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(other.docstore().docs().await.unwrap().len(), nodes.len());
    let tx = store.begin().await.unwrap();
    tx.storage_context()
        .docstore
        .delete_ref_doc("a.txt")
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert!(other.docstore().docs().await.unwrap().len() < nodes.len());
    let hits = other
        .bm25_retriever()
        .similarity_top_k(3)
        .retrieve_str("queen hearts")
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.node.ref_doc_id() != Some("a.txt")));

    // A file that exists is not fresh, nor is a path with a journal left
    // beside it (it would be rolled back into the new file).
    drop((store, other));
    let err = SqliteStore::open_with(&path, fresh.clone()).unwrap_err();
    assert!(err.to_string().contains("exists"), "{err}");
    let orphan = dir.path().join("orphan.sqlite");
    std::fs::write(dir.path().join("orphan.sqlite-journal"), b"left by a kill").unwrap();
    let err = SqliteStore::open_with(&orphan, fresh).unwrap_err();
    assert!(err.to_string().contains("journal"), "{err}");
}

/// Every row of the file's `kv` table and keyword index that does not
/// depend on row numbers, in order.
fn stored_rows(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut rows = Vec::new();
    for sql in [
        "SELECT collection || ' ' || key || ' ' || hex(value) FROM kv ORDER BY collection, key",
        "SELECT node_id || ' ' || length FROM bm25_docs ORDER BY node_id",
        "SELECT term || ' ' || segment FROM bm25_postings ORDER BY segment, term",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let found = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.extend(found.map(Result::unwrap));
    }
    rows
}

/// Nodes prepared ahead (their JSON, hashes and terms made off the
/// connection) are stored exactly as `add_documents` stores them, even with
/// another batch written in between.
#[tokio::test]
async fn prepared_nodes_are_stored_as_added_ones() {
    let dir = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let (first, second) = (nodes_of(&docs[..2]).await, nodes_of(&docs[2..]).await);

    let added = dir.path().join("added.sqlite");
    let store = SqliteStore::open(&added).unwrap();
    let tx = store.begin().await.unwrap();
    let docstore = tx.storage_context().docstore.clone();
    docstore.add_documents(&second, true, true).await.unwrap();
    docstore.add_documents(&first, true, true).await.unwrap();
    tx.commit().await.unwrap();
    drop(store);

    let prepared = dir.path().join("prepared.sqlite");
    let store = SqliteStore::open(&prepared).unwrap();
    let tx = store.begin().await.unwrap();
    let docstore = tx.docstore();
    let ahead = docstore.prepare(first.clone(), true).unwrap();
    assert_eq!(ahead.nodes(), &first[..]);
    docstore.add_documents(&second, true, true).await.unwrap();
    docstore.add_prepared_nodes(ahead, true).unwrap();
    tx.commit().await.unwrap();
    let hits = store.bm25_retriever().retrieve_str("Rabbit watch").unwrap();
    assert_eq!(hits[0].node.ref_doc_id(), Some("a.txt"));
    drop(store);

    let (want, got) = (stored_rows(&added), stored_rows(&prepared));
    assert!(want.len() > first.len() + second.len(), "{}", want.len());
    assert_eq!(got, want);
}
