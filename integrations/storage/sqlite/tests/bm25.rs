//! The file's keyword index ranks as `BM25Retriever` does over the same nodes,
//! through batches, updates and deletions, and after migrating an older file.

#![allow(clippy::unwrap_used)]

use ragloom_core::prelude::*;
use ragloom_core::retrievers::BM25Retriever;
use ragloom_core::storage::DocStore;
use ragloom_storage_sqlite::{SCHEMA_VERSION, SqliteStore};

const QUESTIONS: &[&str] = &[
    "Who is the White Rabbit?",
    "What did the Queen of Hearts shout?",
    "Rosalind in the forest of Arden",
    "Why did Alice drink from the bottle?",
    "Orlando wrestles Charles",
    "the the the",
    "zzzz unknown words only",
    "Alice Alice rabbit",
];

fn split(name: &str, text: &str) -> Vec<Node> {
    let doc = Node::document(text).with_id(name);
    SentenceSplitter::new()
        .chunk_size(256)
        .chunk_overlap(20)
        .get_nodes_from_documents(&[doc])
        .unwrap()
}

fn corpus() -> Vec<(String, String)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples/data");
    ["alice29.txt", "asyoulik.txt"]
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(format!("{root}/{f}")).unwrap();
            // Several documents per book, so updates and deletions touch parts of it.
            (f.to_string(), text)
        })
        .flat_map(|(f, text)| {
            let parts: Vec<String> = text.split("\n\n\n").map(str::to_string).collect();
            parts
                .chunks(parts.len().div_ceil(6).max(1))
                .enumerate()
                .map(|(i, p)| (format!("{f}#{i}"), p.join("\n\n\n")))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Asserts the file's top `k` equals `BM25Retriever`'s over the stored nodes:
/// the same scores, bit for bit, and the same nodes wherever scores differ.
async fn assert_same_ranking(store: &SqliteStore, k: usize) {
    let nodes = store.docstore().docs().await.unwrap();
    let reference = BM25Retriever::from_defaults(nodes, k).unwrap();
    let file = store.bm25_retriever().similarity_top_k(k);
    for q in QUESTIONS {
        let want = reference.retrieve_str(q);
        let got = file.retrieve_str(q).unwrap();
        let scores = |v: &[NodeWithScore]| v.iter().map(|n| n.score).collect::<Vec<_>>();
        assert_eq!(scores(&got), scores(&want), "scores for {q:?}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let tied = want
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.score == w.score)
                || (i + 1 == want.len() && want.len() == k);
            if !tied {
                assert_eq!(g.node.node_id(), w.node.node_id(), "rank {i} for {q:?}");
            }
        }
    }
}

#[tokio::test]
async fn the_keyword_index_ranks_as_bm25_retriever_through_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("index.sqlite")).unwrap();
    let docstore = store.docstore();
    let docs = corpus();
    assert!(docs.len() >= 6, "{}", docs.len());

    // Batches, as an ingest writes them: one segment each.
    for batch in docs.chunks(3) {
        let nodes: Vec<Node> = batch.iter().flat_map(|(n, t)| split(n, t)).collect();
        docstore.add_documents(&nodes, true, true).await.unwrap();
    }
    assert_same_ranking(&store, 4).await;

    // A changed document: old nodes out, new ones in, inside one transaction.
    let context = store.storage_context();
    let tx = context.transaction().await.unwrap();
    let (name, text) = &docs[1];
    tx.storage_context()
        .docstore
        .delete_ref_doc(name)
        .await
        .unwrap();
    let changed = split(name, &text.replace("Rabbit", "Hare"));
    tx.storage_context()
        .docstore
        .add_documents(&changed, true, true)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_same_ranking(&store, 4).await;

    // Deleting a third of the documents leaves tombstones, then merges.
    for (name, _) in docs.iter().step_by(3) {
        docstore.delete_ref_doc(name).await.unwrap();
    }
    assert_same_ranking(&store, 4).await;
    assert_same_ranking(&store, 10).await;

    // Re-adding a node under the same id replaces its counts, not adds to them.
    let again = split(&docs[2].0, &docs[2].1);
    docstore.add_documents(&again, true, true).await.unwrap();
    docstore.add_documents(&again, true, true).await.unwrap();
    assert_same_ranking(&store, 4).await;

    // The same id twice in one call: the later node wins, in both.
    let mut twice = split(&docs[4].0, &docs[4].1);
    let mut later = twice[0].clone();
    later.text = "The White Rabbit and the Queen of Hearts, written twice.".into();
    twice.push(later);
    docstore.add_documents(&twice, true, true).await.unwrap();
    assert_same_ranking(&store, 4).await;

    // Many small writes (more segments than the merge threshold) stay equal.
    for (name, text) in docs.iter().skip(1).step_by(3) {
        for node in split(name, text).chunks(1).take(6) {
            docstore.add_documents(node, true, true).await.unwrap();
        }
    }
    assert_same_ranking(&store, 4).await;
}

#[tokio::test]
async fn a_rolled_back_transaction_leaves_the_keyword_index_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("index.sqlite")).unwrap();
    let docs = corpus();
    let first: Vec<Node> = split(&docs[0].0, &docs[0].1);
    store
        .docstore()
        .add_documents(&first, true, true)
        .await
        .unwrap();
    let before = store.bm25_retriever().retrieve_str("Alice rabbit").unwrap();

    let context = store.storage_context();
    let tx = context.transaction().await.unwrap();
    let more: Vec<Node> = split(&docs[1].0, &docs[1].1);
    tx.storage_context()
        .docstore
        .add_documents(&more, true, true)
        .await
        .unwrap();
    tx.storage_context()
        .docstore
        .delete_ref_doc(&docs[0].0)
        .await
        .unwrap();
    tx.rollback().await.unwrap();

    let after = store.bm25_retriever().retrieve_str("Alice rabbit").unwrap();
    assert!(!before.is_empty());
    assert_eq!(
        before
            .iter()
            .map(|n| (n.node.node_id().to_string(), n.score))
            .collect::<Vec<_>>(),
        after
            .iter()
            .map(|n| (n.node.node_id().to_string(), n.score))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn nodes_stored_before_the_keyword_index_are_indexed_when_the_file_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let docs = corpus();
    let nodes = split(&docs[0].0, &docs[0].1);
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .docstore()
            .add_documents(&nodes, true, true)
            .await
            .unwrap();
    }
    // Turn the file back into a schema-2 file: no keyword tables.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE bm25_docs; DROP TABLE bm25_postings; DROP TABLE bm25_deleted;
         DROP TABLE bm25_segments;
         DELETE FROM meta WHERE key LIKE 'bm25_%';
         UPDATE meta SET value = '2' WHERE key = 'schema_version';",
    )
    .unwrap();
    conn.execute_batch(WITHOUT_VECTOR_LOG).unwrap();
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let hits = store.bm25_retriever().retrieve_str("White Rabbit").unwrap();
    assert!(!hits.is_empty());
    assert_same_ranking(&store, 4).await;
}

/// The keyword segments' sizes, oldest first, read from the file.
fn segment_sizes(path: &std::path::Path) -> Vec<i64> {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.prepare("SELECT docs FROM bm25_segments ORDER BY segment")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test]
async fn one_node_writes_merge_in_levels_of_sixteen_not_all_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let docstore = store.docstore();
    let nodes: Vec<Node> = corpus()
        .iter()
        .flat_map(|(n, t)| split(n, t))
        .take(291)
        .collect();
    assert_eq!(nodes.len(), 291);
    for (i, node) in nodes.iter().enumerate() {
        docstore
            .add_documents(std::slice::from_ref(node), true, true)
            .await
            .unwrap();
        if i == 255 {
            // 256 writes: sixteen merges into segments of 16, then one of 256.
            assert_eq!(segment_sizes(&path), [256]);
        }
    }
    // 291 is 1·256 + 2·16 + 3 in base 16: one segment per unit of each
    // digit, oldest (biggest) first.
    assert_eq!(segment_sizes(&path), [256, 16, 16, 1, 1, 1]);
    assert_same_ranking(&store, 4).await;
    assert_same_ranking(&store, 10).await;

    // Ending a transaction's ingest leaves these few segments as they are;
    // a tombstone makes it merge them all.
    let tx = store.begin().await.unwrap();
    tx.merge_keyword_index().unwrap();
    tx.commit().await.unwrap();
    assert_eq!(segment_sizes(&path).len(), 6);
    docstore.delete_document(&nodes[5].id_).await.unwrap();
    let tx = store.begin().await.unwrap();
    tx.merge_keyword_index().unwrap();
    tx.commit().await.unwrap();
    assert_eq!(segment_sizes(&path), [290]);
    assert_same_ranking(&store, 4).await;
}

/// Turns the file back into a schema-4 file: postings keyed by term first,
/// no segment records.
fn make_schema_4(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "DROP TABLE bm25_segments;
         CREATE TABLE old_postings (
             term TEXT NOT NULL, segment INTEGER NOT NULL, postings BLOB NOT NULL,
             PRIMARY KEY (term, segment)
         ) WITHOUT ROWID;
         INSERT INTO old_postings SELECT term, segment, postings FROM bm25_postings;
         DROP TABLE bm25_postings;
         ALTER TABLE old_postings RENAME TO bm25_postings;
         UPDATE meta SET value = '4' WHERE key = 'schema_version';",
    )
    .unwrap();
    conn.execute_batch(WITHOUT_VECTOR_LOG).unwrap();
}

/// Undoes schema 6 (the vector change log), for files turned back into older ones.
const WITHOUT_VECTOR_LOG: &str = "DROP TRIGGER vectors_logged_insert;
    DROP TRIGGER vectors_logged_update;
    DROP TRIGGER vectors_logged_delete;
    DROP TABLE vectors_log;";

#[tokio::test]
async fn a_damaged_posting_list_does_not_keep_an_older_file_from_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let docs = corpus();
    let mut stored = 0;
    {
        let store = SqliteStore::open(&path).unwrap();
        for (name, text) in docs.iter().take(2) {
            let nodes = split(name, text);
            stored += nodes.len();
            store
                .docstore()
                .add_documents(&nodes, true, true)
                .await
                .unwrap();
        }
    }
    make_schema_4(&path);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE bm25_postings SET postings = x'ff' WHERE term = 'rabbit'",
            [],
        )
        .unwrap();

    // The migration's merge meets the damaged list: the segments are
    // recorded unmerged, and the file opens with every node.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.docstore().docs().await.unwrap().len(), stored);
    assert_eq!(segment_sizes(&path), [0, 0]);
    let e = store.bm25_retriever().retrieve_str("rabbit").unwrap_err();
    assert!(e.to_string().contains("damaged"), "{e}");
    assert!(
        !store
            .bm25_retriever()
            .retrieve_str("Alice")
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn segments_written_before_their_records_are_merged_when_the_file_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    {
        let store = SqliteStore::open(&path).unwrap();
        for (name, text) in corpus().iter().take(5) {
            store
                .docstore()
                .add_documents(&split(name, text), true, true)
                .await
                .unwrap();
        }
        // One deleted node: a tombstone the migration's merge forgets.
        let first = store.docstore().docs().await.unwrap()[0].id_.clone();
        store.docstore().delete_document(&first).await.unwrap();
    }
    assert_eq!(segment_sizes(&path).len(), 5);
    make_schema_4(&path);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let key: Vec<String> = rusqlite::Connection::open(&path)
        .unwrap()
        .prepare("SELECT name FROM pragma_index_info('bm25_postings_by_term')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(key, ["term"]);
    let live = store.docstore().docs().await.unwrap().len() as i64;
    assert_eq!(segment_sizes(&path), [live]);
    assert_same_ranking(&store, 4).await;
    // Later writes add segments beside the merged one.
    let docs = corpus();
    store
        .docstore()
        .add_documents(&split(&docs[5].0, &docs[5].1), true, true)
        .await
        .unwrap();
    assert_eq!(segment_sizes(&path).len(), 2);
    assert_same_ranking(&store, 4).await;
}

#[tokio::test]
async fn filters_keep_the_best_matching_nodes_with_their_whole_index_scores() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("index.sqlite")).unwrap();
    let mut nodes = Vec::new();
    for (name, text) in corpus() {
        let book = name.split('#').next().unwrap().to_string();
        nodes.extend(
            split(&name, &text)
                .into_iter()
                .map(|n| n.with_metadata("book", book.clone())),
        );
    }
    store
        .docstore()
        .add_documents(&nodes, true, true)
        .await
        .unwrap();
    let all = store.bm25_retriever().similarity_top_k(usize::MAX);
    let only = MetadataFilters::and([MetadataFilter::eq("book", "asyoulik.txt")]);
    let filtered = store.bm25_retriever().similarity_top_k(3).filters(only);
    for q in [
        "love in the forest and at court",
        "Rosalind in the forest of Arden",
    ] {
        // The unfiltered ranking, restricted to the book, cut to three.
        let want: Vec<(String, Option<f32>)> = all
            .retrieve_str(q)
            .unwrap()
            .into_iter()
            .filter(|n| n.node.metadata["book"] == "asyoulik.txt")
            .take(3)
            .map(|n| (n.node.node_id().to_string(), n.score))
            .collect();
        let got: Vec<(String, Option<f32>)> = filtered
            .retrieve_str(q)
            .unwrap()
            .into_iter()
            .map(|n| (n.node.node_id().to_string(), n.score))
            .collect();
        assert_eq!(got.len(), 3, "{q}");
        assert_eq!(got, want, "{q}");
    }
}
