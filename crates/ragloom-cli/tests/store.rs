//! The command line's store and its guarantees: unchanged files are not read,
//! failed reads and empty sources keep the index, new settings build beside
//! the old index, one writer at a time, readers see the last commit, and a
//! kill at any moment of an ingest leaves the old state or the new one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{json_of, live_db, ragloom, ragloom_process, status};
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

fn index_files(home: &Path) -> Vec<String> {
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
    let dir = live_db(home.path()).parent().unwrap().to_path_buf();
    assert!(!dir.join(&old_files[0]).exists());
    // A plain ingest keeps the index's settings.
    let again = ingest(home.path(), &data);
    assert_eq!(again["nodes_written"], 0, "{again}");
    assert_eq!(status(home.path(), &data)["chunk_size"], 128);
}

/// Holds the build's write lock from this process, as another ingest would.
fn hold_write_lock(home: &Path) -> Connection {
    let conn = Connection::open(live_db(home)).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn
}

#[test]
fn a_second_writer_waits_or_with_no_wait_fails_at_once() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    std::fs::write(data.join("new.txt"), "A heron stood in the reeds.").unwrap();

    let lock = hold_write_lock(home.path());
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
    lock.execute_batch("ROLLBACK").unwrap();
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(json_of(&out.stdout)["ingest"]["ingested"], 1);
}

#[test]
fn queries_read_the_last_commit_while_a_write_is_open() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("docs");
    small_corpus(&data);
    ingest(home.path(), &data);
    let before = query(home.path(), &data, "boat engine");

    // Half of a write: every node and posting gone, not committed.
    let lock = hold_write_lock(home.path());
    lock.execute_batch("DELETE FROM kv; DELETE FROM bm25_postings; DELETE FROM bm25_docs;")
        .unwrap();
    let during = query(home.path(), &data, "boat engine");
    assert_eq!(during["sources"], before["sources"]);
    let s = status(home.path(), &data);
    assert_eq!(s["documents"], 3, "{s}");
    lock.execute_batch("ROLLBACK").unwrap();
}

/// A kv value as the store keeps it: TEXT, or (when long) a BLOB of raw deflate.
fn stored_text(v: rusqlite::types::ValueRef<'_>) -> String {
    use std::io::Read;
    match v {
        rusqlite::types::ValueRef::Text(t) => String::from_utf8(t.to_vec()).unwrap(),
        rusqlite::types::ValueRef::Blob(b) => {
            let mut out = String::new();
            flate2::read::DeflateDecoder::new(b)
                .read_to_string(&mut out)
                .unwrap();
            out
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
    let nodes = rows("docstore/data");
    let meta = rows("docstore/metadata");
    let infos = rows("docstore/ref_doc_info");
    let mut out = BTreeMap::new();
    let mut in_infos = BTreeSet::new();
    for (doc, info) in &infos {
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
    for (id, m) in &meta {
        if m.get("ref_doc_id").is_none() {
            out.insert(format!("hash of {id}"), m["doc_hash"].to_string());
        }
    }
    for (path, record) in rows("ragloom/files") {
        out.insert(format!("file {path}"), record["docs"].to_string());
    }
    let keyword: BTreeSet<String> = conn
        .prepare("SELECT node_id FROM bm25_docs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let stored: BTreeSet<String> = nodes.keys().cloned().collect();
    assert_eq!(
        stored, in_infos,
        "docstore nodes and document infos disagree"
    );
    assert_eq!(stored, keyword, "docstore nodes and keyword index disagree");
    out
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

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    for e in walkdir(from) {
        let rel = e.strip_prefix(from).unwrap();
        let target = to.join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&e, &target).unwrap();
    }
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

#[test]
fn an_ingest_killed_at_any_moment_leaves_the_old_state_or_the_new_one() {
    let rounds: usize = std::env::var("RAGLOOM_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("docs");
    let old_home = work.path().join("old");
    let new_home = work.path().join("new");

    // The old state: 150 files; the new one: 50 deleted, 20 edited, 50 added.
    book_corpus(&data, 0..150, 0..0);
    ingest(&old_home, &data);
    let old = export(&live_db(&old_home));
    book_corpus(&data, 50..200, 100..120);
    let started = Instant::now();
    let full = ingest(&new_home, &data);
    let full_time = started.elapsed();
    let new = export(&live_db(&new_home));
    assert_ne!(old, new);
    assert!(full["nodes_total"].as_u64().unwrap() > 100, "{full}");

    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("kill test seed {seed}, full ingest {full_time:?}");
    let mut rng = Lcg(seed);
    let home = work.path().join("killed");
    let (mut saw_old, mut saw_new) = (0, 0);
    for round in 0..rounds {
        copy_dir(&old_home, &home);
        let delay =
            Duration::from_micros(rng.next() % (full_time.as_micros() as u64 * 11 / 10).max(1));
        let mut child = ragloom_process(&home)
            .arg("ingest")
            .arg(&data)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();

        let now = export(&live_db(&home));
        if now == old {
            saw_old += 1;
        } else if now == new {
            saw_new += 1;
        } else {
            panic!("round {round} (seed {seed}, killed after {delay:?}): a mixed state");
        }
        // The next ingest completes and lands on the new state.
        ingest(&home, &data);
        assert_eq!(
            export(&live_db(&home)),
            new,
            "round {round}: the ingest after a kill"
        );
    }
    eprintln!("kills: {saw_old} left the old state, {saw_new} the new one");
}
