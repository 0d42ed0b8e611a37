//! A writer killed (`SIGKILL`) at random moments leaves the file at its last
//! commit: every document at one version, nodes, vectors, hashes and the
//! index agreeing, and the vector index file (kept at any size here, so
//! every commit rewrites it) answering for that commit.

#![allow(clippy::unwrap_used)]

use ragloom_core::indices::load_index_from_storage;
use ragloom_core::prelude::*;
use ragloom_storage_sqlite::{SqliteStore, set_ann_min_vectors};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

const CHILD_ENV: &str = "RAGLOOM_KILL_TEST_DB";
const INDEX_ID: &str = "kill-test";
const DOCS: usize = 40;

fn embed() -> Arc<dyn Embedding> {
    Arc::new(HashEmbedding::new(32))
}

/// Version `v` of the corpus: every document says which version it is.
fn corpus(v: u64) -> Vec<Node> {
    (0..DOCS)
        .map(|i| {
            let text = format!("Document {i} at version {v}. ").repeat(40 + i % 7);
            Node::document(text).with_id(format!("doc-{i}"))
        })
        .collect()
}

/// The child: refreshes the index to version 1, 2, 3, ... one transaction
/// each, printing each committed version, until it is killed.
#[tokio::test]
#[ignore = "run by killed_writers_leave_the_last_commit as a child process"]
async fn writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    set_ann_min_vectors(1);
    let store = SqliteStore::open(&path).unwrap();
    let mut version = state(&store).await.version.unwrap_or(0);
    let mut out = std::io::stdout();
    loop {
        version += 1;
        let tx = store.storage_context().transaction().await.unwrap();
        let context = tx.storage_context().clone();
        let index = match context
            .index_store
            .get_index_struct(Some(INDEX_ID))
            .await
            .unwrap()
        {
            Some(_) => load_index_from_storage(context, embed(), Some(INDEX_ID))
                .await
                .unwrap(),
            None => {
                let index = VectorStoreIndex::builder(embed())
                    .storage_context(context)
                    .from_nodes(Vec::new())
                    .await
                    .unwrap();
                index.set_index_id(INDEX_ID).await.unwrap();
                index
            }
        };
        index.refresh_ref_docs(&corpus(version)).await.unwrap();
        tx.commit().await.unwrap();
        writeln!(out, "committed {version}").unwrap();
        out.flush().unwrap();
    }
}

/// What the file holds, read as a reader would.
#[derive(Debug, Default)]
struct State {
    version: Option<u64>,
}

async fn state(store: &SqliteStore) -> State {
    let context = store.storage_context();
    let Some(_) = context
        .index_store
        .get_index_struct(Some(INDEX_ID))
        .await
        .unwrap()
    else {
        return State::default();
    };
    let index = load_index_from_storage(context.clone(), embed(), Some(INDEX_ID))
        .await
        .unwrap();
    let docstore = &context.docstore;
    let ref_docs = docstore.get_all_ref_doc_info().await.unwrap();
    let versions: BTreeSet<u64> = docstore
        .docs()
        .await
        .unwrap()
        .iter()
        .map(|n| {
            let at = n.text.find("at version ").unwrap() + "at version ".len();
            n.text[at..]
                .split('.')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .collect();
    assert!(
        versions.len() <= 1,
        "documents of several versions: {versions:?}"
    );
    let version = versions.into_iter().next();
    let node_ids: BTreeSet<String> = ref_docs.values().flat_map(|r| r.node_ids.clone()).collect();
    let in_index: BTreeSet<String> = index.index_struct().nodes_dict.values().cloned().collect();
    assert_eq!(
        node_ids, in_index,
        "the index struct and the docstore disagree"
    );
    let hits = index
        .as_retriever()
        .similarity_top_k(1000)
        .retrieve(&"Document version".into())
        .await
        .unwrap();
    let vector_ids: BTreeSet<String> = hits.into_iter().map(|n| n.node.id_).collect();
    assert_eq!(node_ids, vector_ids, "vectors and nodes disagree");
    if let Some(v) = version {
        assert_eq!(ref_docs.len(), DOCS);
        let want: BTreeMap<String, String> = corpus(v)
            .iter()
            .map(|d| (d.id_.clone(), d.hash()))
            .collect();
        for (id, hash) in want {
            assert_eq!(
                docstore.get_document_hash(&id).await.unwrap(),
                Some(hash),
                "{id}"
            );
        }
    }
    State { version }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_writers_leave_the_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let exe = std::env::current_exe().unwrap();
    set_ann_min_vectors(1);
    let mut with_vector_index = 0;
    let mut last_committed = 0u64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..20 {
        let mut child = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "writer_child",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines, from_child) = std::sync::mpsc::channel::<u64>();
        let reader = std::thread::spawn(move || {
            let mut max = None;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(v) = line
                    .strip_prefix("committed ")
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    max = Some(v);
                    let _ = lines.send(v);
                }
            }
            max
        });
        // Every third round lets the writer commit once first (a slow machine
        // may take longer than the window to start); then a pseudo-random
        // moment 0 to 600 ms on: before, during and between commits.
        if round % 3 == 2 {
            from_child
                .recv_timeout(Duration::from_secs(120))
                .expect("the writer committed nothing in two minutes");
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(seed % 600));
        child.kill().unwrap();
        child.wait().unwrap();
        if let Some(v) = reader.join().unwrap() {
            last_committed = last_committed.max(v);
        }
        let store = SqliteStore::open(&path).unwrap();
        // The file a commit names is there, whole: queries below use it.
        if let Some(file) = store.vector_index_status().unwrap().file {
            assert!(
                file.exists(),
                "round {round}: {} is named but missing",
                file.display()
            );
            with_vector_index += 1;
        }
        let found = state(&store).await.version.unwrap_or(0);
        // A commit may land after its line was lost with the process, never before it.
        assert!(
            found == last_committed || found == last_committed + 1,
            "round {round}: the file is at version {found}, the writer had committed {last_committed}"
        );
        last_committed = found;
    }
    assert!(
        last_committed > 0,
        "no round committed anything; the moments were too early"
    );
    assert!(
        with_vector_index > 0,
        "no round left a vector index to read"
    );
}
