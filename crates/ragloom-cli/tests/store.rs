//! The command line's store, end to end: unchanged files are not read,
//! failed reads and empty sources keep the index, new settings build beside
//! the old index, `--no-wait` with a second writer, readers see the last
//! commit, and a first ingest killed at any moment leaves no index or the
//! whole one. Most run again with every index in PostgreSQL (module
//! `postgres`) and in Qdrant (module `qdrant`). The library's own tests
//! (`crates/ragloom/tests/durable.rs`) kill syncs at random on every store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{
    current_qdrant_url, json_of, live_db, pg_connect, postgres_mode, qdrant_mode, qdrant_prefix,
    ragloom, ragloom_process, schema_for, status,
};
use ragloom::qdrant::{CommitMarkers, Generation, QdrantKv, QdrantVectorStore};
use ragloom::storage::kvstore::KvBackend;
use ragloom::vector_stores::VectorStore;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

fn ingest(home: &Path, data: &Path) -> Value {
    let out = ragloom(home)
        .args(["ingest", "--json"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout)["ingest"].clone()
}

fn query(home: &Path, data: &Path, q: &str) -> Value {
    let out = ragloom(home)
        .args(["query", "--json", q, "--files"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout)
}

/// A few small files, their times set in the past so they are not racy.
fn small_corpus(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in [
        ("garden.md", "The tomatoes grow along the south fence."),
        (
            "boat.txt",
            "The boat engine was serviced in March by the harbour mechanic.",
        ),
        (
            "bees.txt",
            "The bees swarmed in June and settled in the old apple tree.",
        ),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    age(dir);
}

/// Sets every file's modification time an hour back.
fn age(dir: &Path) {
    let past = SystemTime::now() - Duration::from_secs(3600);
    for e in std::fs::read_dir(dir).unwrap() {
        let f = std::fs::File::options()
            .write(true)
            .open(e.unwrap().path())
            .unwrap();
        f.set_modified(past).unwrap();
    }
}

/// The builds of the index under `home`: its SQLite files, or in PostgreSQL
/// mode the names of its builds' tables.
fn index_files(home: &Path) -> Vec<String> {
    if qdrant_mode() {
        let url = current_qdrant_url().unwrap();
        let names = runtime()
            .block_on(ragloom::qdrant::admin::collection_names(
                &url,
                None,
                &qdrant_prefix(home),
            ))
            .unwrap();
        let builds: BTreeSet<String> = names
            .iter()
            .filter(|n| !n.ends_with("ragloom_indexes"))
            .map(|n| n.strip_suffix("_kv").unwrap_or(n).to_string())
            .collect();
        return builds.into_iter().collect();
    }
    if postgres_mode() {
        let schema = schema_for(home);
        let url = common::current_pg_url().unwrap();
        let (rt, mut conn) = pg_connect(&url);
        let mut names: Vec<String> = rt.block_on(async {
            {
                sqlx::query_scalar(
                    "SELECT table_name::text FROM information_schema.tables \
                     WHERE table_schema = $1 AND table_name LIKE 'data\\_rl\\_%\\_docstore'",
                )
                .bind(schema)
                .fetch_all(&mut conn)
                .await
                .unwrap()
            }
        });
        names.sort();
        return names;
    }
    let dir = live_db(home).parent().unwrap().to_path_buf();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index-") && n.ends_with(".sqlite"))
        .collect();
    names.sort();
    names
}

#[test]
fn unchanged_files_are_not_read_again() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    let first = ingest(home.path(), &data);
    assert_eq!(first["documents"], 3, "{first}");
    let again = ingest(home.path(), &data);
    assert_eq!(again["files_unchanged"], 3, "{again}");
    assert_eq!(again["documents"], 0, "{again}");
    // A file edited (new size) is read; the others are not.
    std::fs::write(data.join("bees.txt"), "The bees left in July.").unwrap();
    let edited = ingest(home.path(), &data);
    assert_eq!(edited["files_unchanged"], 2, "{edited}");
    assert_eq!(edited["ingested"], 1, "{edited}");
    let a = query(home.path(), &data, "when did the bees leave");
    assert!(
        a["sources"][0]["text"].as_str().unwrap().contains("July"),
        "{a}"
    );
}

#[test]
fn a_file_that_fails_to_read_keeps_its_nodes() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    let pdfs = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../integrations/readers/file/tests/data"
    );
    std::fs::copy(format!("{pdfs}/labelled.pdf"), data.join("report.pdf")).unwrap();
    ingest(home.path(), &data);
    let before = status(home.path(), &data);

    // The same name now holds a file the reader cannot read.
    std::fs::copy(format!("{pdfs}/panics.pdf"), data.join("report.pdf")).unwrap();
    let out = ragloom(home.path())
        .args(["ingest", "--json"])
        .arg(&data)
        .assert()
        .success();
    let summary = json_of(&out.get_output().stdout)["ingest"].clone();
    assert_eq!(summary["failed_files"], 1, "{summary}");
    assert_eq!(summary["deleted"], 0, "{summary}");
    let after = status(home.path(), &data);
    assert_eq!(after["documents"], before["documents"], "{after}");
    assert_eq!(after["nodes"], before["nodes"], "{after}");
}

#[test]
fn a_source_with_no_files_keeps_the_index_unless_pruned() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    for e in std::fs::read_dir(&data).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let out = ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .code(4);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("--prune"), "{err}");
    assert_eq!(status(home.path(), &data)["documents"], 3);

    // An empty file yields a document with no text: still no emptying without --prune.
    std::fs::write(data.join("empty.txt"), "").unwrap();
    ragloom(home.path())
        .arg("ingest")
        .arg(&data)
        .assert()
        .code(4);
    assert_eq!(status(home.path(), &data)["nodes"], 3);

    std::fs::remove_file(data.join("empty.txt")).unwrap();
    ragloom(home.path())
        .args(["ingest", "--prune"])
        .arg(&data)
        .assert()
        .success();
    assert_eq!(status(home.path(), &data)["nodes"], 0);
}

#[test]
fn new_settings_build_beside_and_replace_the_index_only_when_complete() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    std::fs::create_dir_all(&data).unwrap();
    let alice = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/alice29.txt"
    );
    std::fs::copy(alice, data.join("alice.txt")).unwrap();
    ingest(home.path(), &data);
    let before = status(home.path(), &data);
    let old_files = index_files(home.path());
    assert_eq!(old_files.len(), 1);

    // A new embedding model whose server is down: nothing changes.
    ragloom(home.path())
        .env("OLLAMA_HOST", "http://127.0.0.1:9")
        .args(["ingest", "--embed", "ollama", "--embed-model", "m"])
        .arg(&data)
        .assert()
        .failure();
    let s = status(home.path(), &data);
    assert_eq!(s["embed"], before["embed"], "{s}");
    assert_eq!(s["nodes"], before["nodes"], "{s}");
    query(home.path(), &data, "White Rabbit");

    // Smaller chunks: a new build, live once complete; the old file goes.
    ragloom(home.path())
        .args(["ingest", "--chunk-size", "128", "--chunk-overlap", "16"])
        .arg(&data)
        .assert()
        .success();
    let s = status(home.path(), &data);
    assert_eq!(s["chunk_size"], 128, "{s}");
    assert!(s["nodes"].as_u64() > before["nodes"].as_u64(), "{s}");
    if !postgres_mode() && !qdrant_mode() {
        // The embedded store removes the replaced build at once.
        assert!(!index_files(home.path()).contains(&old_files[0]));
    }
    // A plain ingest keeps the index's settings; by its end the replaced
    // build is gone (the embedded store removes it at once; PostgreSQL keeps
    // its tables for queries still reading them, until this next ingest).
    let again = ingest(home.path(), &data);
    assert_eq!(again["nodes_written"], 0, "{again}");
    assert_eq!(status(home.path(), &data)["chunk_size"], 128);
    let now = index_files(home.path());
    assert!(!now.is_empty() && !now.contains(&old_files[0]), "{now:?}");
}

/// The build's write lock held from this process, as another ingest would:
/// SQLite's write transaction, the source's PostgreSQL advisory lock in a
/// transaction of its own, or (Qdrant) the lock file of the source's folder.
enum WriteLock {
    Sqlite(Connection),
    Postgres(tokio::runtime::Runtime, sqlx::PgConnection, String),
    Qdrant(std::fs::File, PathBuf, PathBuf),
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The one entry of `dir`.
fn index_dir_in(dir: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

/// The Qdrant server of the running test and the commit markers of `home`'s indexes.
fn qdrant_markers(home: &Path) -> (String, CommitMarkers) {
    let url = current_qdrant_url().unwrap();
    let prefix = qdrant_prefix(home);
    let markers = CommitMarkers::remote(&url, None, &format!("{prefix}ragloom_indexes")).unwrap();
    (url, markers)
}

/// The node collection `name` of a build, as generation `g` sees it.
fn qdrant_nodes(url: &str, name: &str, g: Generation) -> QdrantVectorStore {
    QdrantVectorStore::remote(url)
        .collection_name(name)
        .enable_hybrid(true)
        .generation(g)
        .build()
        .unwrap()
}

/// The live build of `data`'s index in Qdrant: its name and committed generation.
fn qdrant_live(home: &Path, data: &Path) -> (String, u64) {
    let (_, markers) = qdrant_markers(home);
    let key = data.canonicalize().unwrap().display().to_string();
    let m = runtime().block_on(markers.get(&key)).unwrap().unwrap();
    (
        m["name"].as_str().unwrap().to_string(),
        m["generation"].as_u64().unwrap(),
    )
}

fn hold_write_lock(home: &Path, data: &Path) -> WriteLock {
    if qdrant_mode() {
        // The one source's lock file, beside the index folders.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(index_dir_in(&home.join("store/locks")))
            .unwrap();
        fs4::FileExt::lock(&file).unwrap();
        return WriteLock::Qdrant(file, home.to_path_buf(), data.to_path_buf());
    }
    if !postgres_mode() {
        let conn = Connection::open(live_db(home)).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        return WriteLock::Sqlite(conn);
    }
    use sha2::{Digest, Sha256};
    use sqlx::Connection as _;
    let key = format!(
        "ragloom-source:{}:{}",
        schema_for(home),
        data.canonicalize().unwrap().display()
    );
    let digest = Sha256::digest(key.as_bytes());
    let lock = i64::from_be_bytes(digest[..8].try_into().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = common::current_pg_url().unwrap();
    let conn = rt.block_on(async {
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(lock)
            .execute(&mut conn)
            .await
            .unwrap();
        conn
    });
    WriteLock::Postgres(rt, conn, schema_for(home))
}

impl WriteLock {
    /// Half of a write: every node gone, not committed.
    fn delete_everything(&mut self) {
        match self {
            WriteLock::Qdrant(_, home, data) => {
                // A writer of the next generation, as an ingest would be.
                let (name, committed) = qdrant_live(home, data);
                let url = current_qdrant_url().unwrap();
                let g = Generation::write(committed);
                runtime().block_on(async {
                    let nodes = qdrant_nodes(&url, &name, g);
                    for node in nodes.get_nodes_filtered(None, usize::MAX).await.unwrap() {
                        nodes.delete(node.ref_doc_id().unwrap()).await.unwrap();
                    }
                    assert!(nodes.get_nodes_filtered(None, 10).await.unwrap().is_empty());
                    let kv = QdrantKv::remote(&url, None, &format!("{name}_kv"), g)
                        .await
                        .unwrap();
                    kv.write(|t| {
                        for c in [
                            "docstore/data",
                            "docstore/ref_doc_info",
                            "docstore/metadata",
                        ] {
                            let keys: Vec<String> = t.get_all(c)?.keys().cloned().collect();
                            for k in keys {
                                t.delete(&k, c)?;
                            }
                        }
                        Ok(())
                    })
                    .unwrap();
                    kv.flush().await.unwrap();
                });
            }
            WriteLock::Sqlite(conn) => conn
                .execute_batch("DELETE FROM kv; DELETE FROM bm25_postings; DELETE FROM bm25_docs;")
                .unwrap(),
            WriteLock::Postgres(rt, conn, schema) => rt.block_on(async {
                let tables: Vec<String> = sqlx::query_scalar(
                    "SELECT table_name::text FROM information_schema.tables \
                     WHERE table_schema = $1 AND table_name LIKE 'data\\_rl\\_%'",
                )
                .bind(&*schema)
                .fetch_all(&mut *conn)
                .await
                .unwrap();
                for t in tables {
                    sqlx::raw_sql(&format!("DELETE FROM {schema}.{t}"))
                        .execute(&mut *conn)
                        .await
                        .unwrap();
                }
            }),
        }
    }

    fn release(self) {
        match self {
            WriteLock::Qdrant(file, ..) => fs4::FileExt::unlock(&file).unwrap(),
            WriteLock::Sqlite(conn) => conn.execute_batch("ROLLBACK").unwrap(),
            WriteLock::Postgres(rt, mut conn, _) => rt.block_on(async {
                sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.unwrap();
            }),
        }
    }
}

#[test]
fn a_second_writer_waits_or_with_no_wait_fails_at_once() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    std::fs::write(data.join("new.txt"), "A heron stood in the reeds.").unwrap();

    let lock = hold_write_lock(home.path(), &data);
    let out = ragloom(home.path())
        .args(["ingest", "--no-wait"])
        .arg(&data)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("another ingest"), "{err}");

    let mut waiting = ragloom_process(home.path())
        .args(["ingest", "--json"])
        .arg(&data)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(waiting.try_wait().unwrap().is_none(), "it did not wait");
    lock.release();
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(json_of(&out.stdout)["ingest"]["ingested"], 1);
}

/// A build with new settings is written beside the live one, under the
/// source's lock file: a second ingest waits for it (or fails at once with
/// `--no-wait`) and never removes the file being written.
#[test]
fn a_new_build_is_written_under_the_sources_lock() {
    if postgres_mode() || qdrant_mode() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    let before = query(home.path(), &data, "boat engine");
    let old_build = live_db(home.path());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(index_dir_in(&home.path().join("store/locks")))
        .unwrap();
    fs4::FileExt::lock(&file).unwrap();
    let resize = ["ingest", "--chunk-size", "128", "--chunk-overlap", "16"];
    let out = ragloom(home.path())
        .args(resize)
        .arg("--no-wait")
        .arg(&data)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("another ingest"), "{err}");
    let mut waiting = ragloom_process(home.path())
        .args(resize)
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(waiting.try_wait().unwrap().is_none(), "it did not wait");
    // Nothing of the new build is live meanwhile: queries read the old one.
    assert_eq!(
        query(home.path(), &data, "boat engine")["sources"],
        before["sources"]
    );
    drop(file);
    assert!(waiting.wait().unwrap().success());
    let indexes = index_dir_in(&home.path().join("store/indexes"));
    let builds = std::fs::read_dir(&indexes)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("index-") && name.ends_with(".sqlite")
        })
        .count();
    assert_eq!(builds, 1, "the replaced build is removed");
    let new_build = live_db(home.path());
    assert_ne!(new_build, old_build);
    assert!(new_build.exists());
    assert!(!export(&new_build).is_empty());
}

#[test]
fn queries_read_the_last_commit_while_a_write_is_open() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    let before = query(home.path(), &data, "boat engine");

    // Half of a write: every node and posting gone, not committed.
    let mut lock = hold_write_lock(home.path(), &data);
    lock.delete_everything();
    let during = query(home.path(), &data, "boat engine");
    assert_eq!(during["sources"], before["sources"]);
    let s = status(home.path(), &data);
    assert_eq!(s["documents"], 3, "{s}");
    lock.release();
}

/// A kv value as the store keeps it: TEXT, or (when long) a BLOB holding a zstd frame.
fn stored_text(v: rusqlite::types::ValueRef<'_>) -> String {
    match v {
        rusqlite::types::ValueRef::Text(t) => String::from_utf8(t.to_vec()).unwrap(),
        rusqlite::types::ValueRef::Blob(b) => {
            String::from_utf8(zstd::stream::decode_all(b).unwrap()).unwrap()
        }
        other => panic!("unexpected value {other:?}"),
    }
}

/// What a build holds, independent of the random node ids: each document's
/// node hashes in order, each document's hash, the files seen, and checks
/// that the docstore, the keyword index and the document infos agree.
fn export(db: &Path) -> BTreeMap<String, String> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let rows = |collection: &str| -> BTreeMap<String, Value> {
        let mut stmt = conn
            .prepare("SELECT key, value FROM kv WHERE collection = ?1")
            .unwrap();
        stmt.query_map([collection], |r| {
            Ok((r.get::<_, String>(0)?, stored_text(r.get_ref(1)?)))
        })
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (k, serde_json::from_str(&v).unwrap())
        })
        .collect()
    };
    let keyword: BTreeSet<String> = conn
        .prepare("SELECT node_id FROM bm25_docs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    summarize(
        &rows("docstore/data"),
        &rows("docstore/metadata"),
        &rows("docstore/ref_doc_info"),
        rows("ragloom/files"),
        keyword,
    )
}

/// The state [`export`] compares, from a build's collections and the ids
/// its keyword index holds.
fn summarize(
    nodes: &BTreeMap<String, Value>,
    meta: &BTreeMap<String, Value>,
    infos: &BTreeMap<String, Value>,
    files: BTreeMap<String, Value>,
    keyword: BTreeSet<String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut in_infos = BTreeSet::new();
    for (doc, info) in infos {
        let hashes: Vec<String> = info["node_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| {
                let id = id.as_str().unwrap();
                in_infos.insert(id.to_string());
                meta[id]["doc_hash"].as_str().unwrap().to_string()
            })
            .collect();
        out.insert(format!("nodes of {doc}"), hashes.join(","));
    }
    for (id, m) in meta {
        if m.get("ref_doc_id").is_none() {
            out.insert(format!("hash of {id}"), m["doc_hash"].to_string());
        }
    }
    for (path, record) in files {
        out.insert(format!("file {path}"), record["docs"].to_string());
    }
    let stored: BTreeSet<String> = nodes.keys().cloned().collect();
    assert_eq!(
        stored, in_infos,
        "docstore nodes and document infos disagree"
    );
    assert_eq!(stored, keyword, "docstore nodes and keyword index disagree");
    out
}

/// [`export`] of the live build under `home`, in any mode.
fn state(home: &Path) -> BTreeMap<String, String> {
    if qdrant_mode() {
        return export_qdrant(home);
    }
    if postgres_mode() {
        export_pg(home)
    } else {
        export(&live_db(home))
    }
}

/// [`export`] for the live build in PostgreSQL: the docstore table's
/// collections, and the vector table's rows standing for the keyword index.
fn export_pg(home: &Path) -> BTreeMap<String, String> {
    let schema = schema_for(home);
    let url = common::current_pg_url().unwrap();
    let (rt, mut conn) = pg_connect(&url);
    let conn = &mut conn;
    let (rows, vector_ids): (Vec<(String, String, String)>, Vec<String>) = rt.block_on(async {
        {
            let entry: String = sqlx::query_scalar(&format!(
                "SELECT value::text FROM {schema}.data_ragloom_indexes"
            ))
            .fetch_one(&mut *conn)
            .await
            .unwrap();
            let entry: Value = serde_json::from_str(&entry).unwrap();
            let name = entry["name"].as_str().unwrap().to_string();
            let rows = sqlx::query_as(&format!(
                "SELECT namespace::text, key::text, value::text FROM {schema}.data_{name}_docstore"
            ))
            .fetch_all(&mut *conn)
            .await
            .unwrap();
            let ids =
                sqlx::query_scalar(&format!("SELECT node_id::text FROM {schema}.data_{name}"))
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap();
            (rows, ids)
        }
    });
    let collection = |c: &str| -> BTreeMap<String, Value> {
        rows.iter()
            .filter(|(ns, _, _)| ns == c)
            .map(|(_, k, v)| (k.clone(), serde_json::from_str(v).unwrap()))
            .collect()
    };
    let keyword: BTreeSet<String> = vector_ids.into_iter().collect();
    summarize(
        &collection("docstore/data"),
        &collection("docstore/metadata"),
        &collection("docstore/ref_doc_info"),
        collection("ragloom/files"),
        keyword,
    )
}

/// [`export`] for the live build in Qdrant, as a reader sees it: the
/// key-value collections, and the ids of the nodes' points (their sparse
/// vectors are the keyword index).
fn export_qdrant(home: &Path) -> BTreeMap<String, String> {
    let (url, markers) = qdrant_markers(home);
    let rt = runtime();
    let all = rt.block_on(markers.all()).unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    let name = all[0].1["name"].as_str().unwrap().to_string();
    let g = Generation::read(all[0].1["generation"].as_u64().unwrap());
    let (kv, ids) = rt.block_on(async {
        let kv = QdrantKv::remote(&url, None, &format!("{name}_kv"), g)
            .await
            .unwrap();
        let nodes = qdrant_nodes(&url, &name, g);
        let ids: BTreeSet<String> = nodes
            .get_nodes_filtered(None, usize::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.id_)
            .collect();
        (kv, ids)
    });
    let collection = |c: &str| -> BTreeMap<String, Value> {
        kv.read(|t| Ok(t.get_all(c)?.into_owned()))
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k, Value::Object(v)))
            .collect()
    };
    summarize(
        &collection("docstore/data"),
        &collection("docstore/metadata"),
        &collection("docstore/ref_doc_info"),
        collection("ragloom/files"),
        ids,
    )
}

/// A folder of `n` files cut from the books in examples/data, `edit`ing those in `edited`.
fn book_corpus(dir: &Path, files: std::ops::Range<usize>, edited: std::ops::Range<usize>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data");
    let text = std::fs::read_to_string(format!("{root}/alice29.txt")).unwrap()
        + &std::fs::read_to_string(format!("{root}/asyoulik.txt")).unwrap();
    let paras: Vec<&str> = text.split("\n\n").collect();
    for i in files {
        let body: Vec<&str> = (0..12)
            .map(|j| paras[(i * 7 + j * 13) % paras.len()])
            .collect();
        let mut body = body.join("\n\n");
        if edited.contains(&i) {
            body.push_str("\n\nThis copy was edited after the first ingest.");
        }
        std::fs::write(dir.join(format!("part-{i:03}.txt")), body).unwrap();
    }
    age(dir);
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A small pseudo-random generator, seeded from the clock (printed, to replay a failure).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Starts an ingest of `data` into `home` and kills it after `delay`.
fn ingest_killed_after(home: &Path, data: &Path, delay: Duration) {
    let mut child = ragloom_process(home)
        .arg("ingest")
        .arg(data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().unwrap();
}

/// A first ingest killed at any moment leaves no index or the whole one: a
/// new build is written in place, without the log, until its one commit,
/// and the next ingest removes what a killed one left of it.
#[test]
fn a_first_ingest_killed_at_any_moment_leaves_no_index_or_the_whole_one() {
    let rounds: usize = std::env::var("RAGLOOM_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("docs");
    book_corpus(&data, 0..150, 0..0);
    let started = Instant::now();
    ingest(&work.path().join("whole"), &data);
    let full_time = started.elapsed();
    let whole = state(&work.path().join("whole"));
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("first-ingest kill test seed {seed}, full ingest {full_time:?}");
    let mut rng = Lcg(seed);
    let (mut saw_none, mut saw_whole) = (0, 0);
    for round in 0..rounds {
        let home = work.path().join(format!("killed-{round}"));
        let delay =
            Duration::from_micros(rng.next() % (full_time.as_micros() as u64 * 11 / 10).max(1));
        ingest_killed_after(&home, &data, delay);
        let live = home.exists()
            && walkdir(&home)
                .iter()
                .any(|p| p.file_name().is_some_and(|n| n == "current.json"));
        if live {
            assert_eq!(
                state(&home),
                whole,
                "round {round} (seed {seed}, killed after {delay:?})"
            );
            saw_whole += 1;
        } else {
            saw_none += 1;
        }
        ingest(&home, &data);
        assert_eq!(
            state(&home),
            whole,
            "round {round}: the ingest after a kill"
        );
    }
    eprintln!("first-ingest kills: {saw_none} left no index, {saw_whole} the whole one");
}

/// The same tests with every index in PostgreSQL (`--store postgres://...`,
/// a schema per home folder), against the server `.ci/setup/postgres.sh` starts.
mod postgres {
    use crate::common::in_postgres;

    #[test]
    fn unchanged_files_are_not_read_again() {
        in_postgres(super::unchanged_files_are_not_read_again);
    }

    #[test]
    fn a_file_that_fails_to_read_keeps_its_nodes() {
        in_postgres(super::a_file_that_fails_to_read_keeps_its_nodes);
    }

    #[test]
    fn a_source_with_no_files_keeps_the_index_unless_pruned() {
        in_postgres(super::a_source_with_no_files_keeps_the_index_unless_pruned);
    }

    #[test]
    fn new_settings_build_beside_and_replace_the_index_only_when_complete() {
        in_postgres(super::new_settings_build_beside_and_replace_the_index_only_when_complete);
    }

    #[test]
    fn queries_read_the_last_commit_while_a_write_is_open() {
        in_postgres(super::queries_read_the_last_commit_while_a_write_is_open);
    }
}

/// The same tests with every index in Qdrant (`--store qdrant://...`, a
/// collection prefix per home folder), each against a Qdrant test server of its own.
mod qdrant {
    use crate::common::in_qdrant;

    #[test]
    fn unchanged_files_are_not_read_again() {
        in_qdrant(super::unchanged_files_are_not_read_again);
    }

    #[test]
    fn a_file_that_fails_to_read_keeps_its_nodes() {
        in_qdrant(super::a_file_that_fails_to_read_keeps_its_nodes);
    }

    #[test]
    fn a_source_with_no_files_keeps_the_index_unless_pruned() {
        in_qdrant(super::a_source_with_no_files_keeps_the_index_unless_pruned);
    }

    #[test]
    fn new_settings_build_beside_and_replace_the_index_only_when_complete() {
        in_qdrant(super::new_settings_build_beside_and_replace_the_index_only_when_complete);
    }

    #[test]
    fn queries_read_the_last_commit_while_a_write_is_open() {
        in_qdrant(super::queries_read_the_last_commit_while_a_write_is_open);
    }
}
