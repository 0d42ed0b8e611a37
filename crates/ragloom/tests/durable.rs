//! The durable index through the library's API, on the embedded store always
//! and on PostgreSQL and Qdrant when their servers are up (`.ci/run` starts
//! them): a sync reads what changed, keeps what failed to read and deletes
//! what vanished; one writer at a time; and a sync killed at any moment
//! leaves the old state or the new one, never a mix.
//!
//! The kill test runs each sync in a child process: this test binary again,
//! told what to sync by `RAGLOOM_DURABLE_CHILD` (see [`child_sync`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ragloom::durable::{
    DurableIndex, IndexError, Source, StoreUrl, SyncOptions, SyncReport, read_files,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Where a test keeps its indexes: the embedded store, a PostgreSQL schema
/// of its own, or a Qdrant test server of its own.
struct Store {
    url: StoreUrl,
    kind: &'static str,
    _qdrant: Option<QdrantServer>,
}

/// A Qdrant test server process, stopped when dropped.
struct QdrantServer(std::process::Child);

impl Drop for QdrantServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn required(what: &str) -> bool {
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is missing: .ci/run should have provided it"
    );
    eprintln!("skipped: {what} is missing");
    false
}

/// The embedded store, and the others whose servers are up.
fn stores() -> Vec<Store> {
    let mut out = vec![Store {
        url: StoreUrl::Embedded,
        kind: "sqlite",
        _qdrant: None,
    }];
    match std::env::var("RAGLOOM_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => {
            let n = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            out.push(Store {
                url: StoreUrl::Postgres {
                    url,
                    schema: format!("durable_{}_{n}", std::process::id()),
                },
                kind: "postgres",
                _qdrant: None,
            });
        }
        _ => {
            required("RAGLOOM_TEST_PG_URL (PostgreSQL)");
        }
    }
    if let Some((url, server)) = start_qdrant() {
        out.push(Store {
            url: StoreUrl::Qdrant {
                url,
                prefix: "durable_".into(),
            },
            kind: "qdrant",
            _qdrant: Some(server),
        });
    }
    out
}

/// Starts the Qdrant test server `cargo test --workspace` builds beside this
/// test (or `RAGLOOM_TEST_QDRANT_SERVER`).
fn start_qdrant() -> Option<(String, QdrantServer)> {
    start_qdrant_in(None)
}

/// [`start_qdrant`], its collections in `dir` when given (kept after it stops).
fn start_qdrant_in(dir: Option<&Path>) -> Option<(String, QdrantServer)> {
    use std::io::BufRead;
    let bin = std::env::var_os("RAGLOOM_TEST_QDRANT_SERVER")
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.join(format!(
                "ragloom-qdrant-test-server{}",
                std::env::consts::EXE_SUFFIX
            )))
        })
        .filter(|p| p.is_file());
    let Some(bin) = bin else {
        required("the Qdrant test server (cargo build -p ragloom-qdrant-test-server)");
        return None;
    };
    let mut command = std::process::Command::new(bin);
    if let Some(dir) = dir {
        command.arg("--dir").arg(dir);
    }
    let mut server = QdrantServer(
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the Qdrant test server said {line:?}"))
        .to_string();
    Some((url, server))
}

impl Store {
    /// This store's location for the indexes tagged `tag` (in a shared
    /// server, the tag keeps them apart from the test's other indexes).
    fn url_for(&self, tag: &str) -> StoreUrl {
        match &self.url {
            StoreUrl::Postgres { url, schema } => StoreUrl::Postgres {
                url: url.clone(),
                schema: format!("{schema}_{tag}"),
            },
            StoreUrl::Qdrant { url, prefix } => StoreUrl::Qdrant {
                url: url.clone(),
                prefix: format!("{prefix}{tag}_"),
            },
            StoreUrl::Embedded => StoreUrl::Embedded,
        }
    }

    /// The index of `data` tagged `tag`, its local folder under `root`.
    fn index(&self, root: &Path, data: &Path, tag: &str) -> DurableIndex {
        index_at(&self.url_for(tag), root, data)
    }
}

fn index_at(url: &StoreUrl, root: &Path, data: &Path) -> DurableIndex {
    let source = Source::resolve(data.to_str().unwrap()).unwrap();
    DurableIndex::new(url.connect().unwrap(), root, source)
}

/// Removes an index a test made (its builds in a shared server).
fn clear(index: &DurableIndex) {
    runtime().block_on(index.clear(&options())).unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn sync(index: &DurableIndex) -> SyncReport {
    runtime().block_on(index.sync(&options())).unwrap()
}

fn options() -> SyncOptions {
    SyncOptions {
        num_workers: 2,
        ..SyncOptions::default()
    }
}

/// What an index holds, independent of its random node ids: each
/// document's hash and its nodes' text hashes in order, and the files seen.
fn state(index: &DurableIndex) -> BTreeMap<String, String> {
    runtime().block_on(async {
        let mut out = BTreeMap::new();
        let Some(live) = index.open_live().await.unwrap() else {
            return out;
        };
        let docstore = live.docstore();
        for (doc, info) in docstore.get_all_ref_doc_info().await.unwrap() {
            let nodes = docstore.get_nodes(&info.node_ids).await.unwrap();
            let hashes: Vec<String> = nodes.iter().map(|n| n.hash()).collect();
            let doc_hash = docstore.get_document_hash(&doc).await.unwrap();
            out.insert(
                format!("doc {doc}"),
                format!("{doc_hash:?} {}", hashes.join(",")),
            );
        }
        for (path, rec) in read_files(&*live.build().kv()).unwrap() {
            out.insert(
                format!("file {path}"),
                format!("{} {} {:?}", rec.size, rec.mtime_ns, rec.docs),
            );
        }
        out
    })
}

/// Sets every file's modification time an hour back (not racy).
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

/// A folder of files cut from the books in examples/data, the `edited` ones changed.
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
            body.push_str("\n\nThis copy was edited after the first sync.");
        }
        std::fs::write(dir.join(format!("part-{i:03}.txt")), body).unwrap();
    }
    age(dir);
}

#[test]
fn a_sync_reads_what_changed_keeps_what_failed_and_deletes_what_vanished() {
    for store in stores() {
        let work = tempfile::tempdir().unwrap();
        let data = work.path().join("docs");
        book_corpus(&data, 0..6, 0..0);
        let index = store.index(&work.path().join("root"), &data, "basics");
        let first = sync(&index);
        assert_eq!((first.files, first.ingested), (6, 6), "{}", store.kind);

        let again = sync(&index);
        assert_eq!(again.files_unchanged, 6, "{}: {again:?}", store.kind);
        assert_eq!(again.documents, 0, "{}: nothing read", store.kind);

        // One edited, one gone, one unreadable (a link to nowhere, which
        // no user can read): its nodes stay.
        std::fs::write(data.join("part-000.txt"), "An edited heron.").unwrap();
        std::fs::remove_file(data.join("part-001.txt")).unwrap();
        let unreadable = data.join("part-002.txt");
        std::fs::remove_file(&unreadable).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(work.path().join("nowhere"), &unreadable).unwrap();
        let third = sync(&index);
        assert_eq!(third.deleted, 1, "{}: {third:?}", store.kind);
        #[cfg(unix)]
        assert_eq!(third.failed_files, 1, "{}: {third:?}", store.kind);
        // A file holding a NUL character: PostgreSQL cannot store it, so
        // there it fails alone; the other stores read it.
        std::fs::write(data.join("nul.txt"), "a heron\0 in the reeds").unwrap();
        let fourth = sync(&index);
        let refused = usize::from(store.kind == "postgres");
        #[cfg(unix)]
        assert_eq!(
            fourth.failed_files,
            1 + refused,
            "{}: {fourth:?}",
            store.kind
        );
        assert_eq!(fourth.ingested, 1 - refused, "{}: {fourth:?}", store.kind);
        // One runtime for the index and its readers: a server's pool lives
        // on the runtime that opened it.
        let rt = runtime();
        let live = rt.block_on(index.open()).unwrap();
        let nodes = rt
            .block_on(
                live.keyword_retriever(2, None)
                    .unwrap()
                    .retrieve(&"edited heron".into()),
            )
            .unwrap();
        assert!(
            nodes[0].node.get_text().contains("edited heron"),
            "{}: {nodes:?}",
            store.kind
        );
        let docs = rt.block_on(live.docstore().get_all_ref_doc_info()).unwrap();
        drop(live);
        assert!(
            !docs.keys().any(|d| d.contains("part-001")),
            "{}: the vanished file's document is gone",
            store.kind
        );
        #[cfg(unix)]
        assert!(
            docs.keys().any(|d| d.contains("part-002")),
            "{}: the unreadable file keeps its document",
            store.kind
        );
        clear(&index);
    }
}

#[test]
fn a_second_writer_waits_or_with_no_wait_fails_at_once() {
    for store in stores() {
        let work = tempfile::tempdir().unwrap();
        let data = work.path().join("docs");
        book_corpus(&data, 0..3, 0..0);
        let index = store.index(&work.path().join("root"), &data, "writers");
        let rt = runtime();
        let held = rt.block_on(index.lock_writer(&options())).unwrap();
        let no_wait = SyncOptions {
            no_wait: true,
            ..options()
        };
        let started = Instant::now();
        let err = rt.block_on(index.sync(&no_wait)).unwrap_err();
        assert!(
            matches!(err, ragloom::Error::Index(IndexError::WriterBusy)),
            "{}: {err}",
            store.kind
        );
        assert!(started.elapsed() < Duration::from_secs(10), "at once");

        let waiting = {
            let index = index.clone();
            rt.spawn(async move { index.sync(&options()).await })
        };
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!waiting.is_finished(), "{}: it waits", store.kind);
        assert!(
            state(&index).is_empty(),
            "{}: nothing written yet",
            store.kind
        );
        drop(held);
        let report = rt.block_on(waiting).unwrap().unwrap();
        assert_eq!(report.ingested, 3, "{}", store.kind);
        clear(&index);
    }
}

/// The child of the kill test: syncs the source named by
/// `RAGLOOM_DURABLE_CHILD` (`ROOT\nDATA\nSTORE URL`); nothing without it.
#[test]
fn child_sync() {
    let Ok(spec) = std::env::var("RAGLOOM_DURABLE_CHILD") else {
        return;
    };
    let parts: Vec<&str> = spec.split('\n').collect();
    let [root, data, url] = parts[..] else {
        panic!("RAGLOOM_DURABLE_CHILD={spec:?}");
    };
    let url = StoreUrl::parse(url).unwrap();
    ragloom::sqlite::set_ann_min_vectors(1);
    hybrid_sync(&index_at(&url, Path::new(root), Path::new(data)));
}

/// The kill test's syncs embed (a 32-dimension hash), so its indexes are
/// hybrid; its processes keep the embedded store's vector index at any
/// size, so every commit rewrites that file and a kill can land on it.
fn hash_embed() -> ragloom::durable::EmbedModel {
    ragloom::durable::EmbedModel::new(
        std::sync::Arc::new(ragloom::embeddings::HashEmbedding::new(32)),
        serde_json::json!({"hash": 32}),
    )
}

fn hybrid_sync(index: &DurableIndex) -> SyncReport {
    let opts = SyncOptions {
        embed: Some(hash_embed()),
        ..options()
    };
    runtime().block_on(index.sync(&opts)).unwrap()
}

/// Fails naming only the entries where two states differ (they are long).
fn assert_same_state(got: &BTreeMap<String, String>, want: &BTreeMap<String, String>, what: &str) {
    let differ: Vec<String> = got
        .keys()
        .chain(want.keys())
        .filter(|k| got.get(*k) != want.get(*k))
        .map(|k| {
            let list = |v: Option<&String>| -> Vec<String> {
                v.map(|v| v.split(',').map(str::to_owned).collect())
                    .unwrap_or_default()
            };
            let (g, w) = (list(got.get(k)), list(want.get(k)));
            let only = |a: &[String], b: &[String]| a.iter().filter(|x| !b.contains(x)).count();
            format!(
                "{k}: {} items against {}, {} only in the first, {} only in the second",
                g.len(),
                w.len(),
                only(&g, &w),
                only(&w, &g)
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{what}: {} entries differ, e.g. {:?}",
        differ.len(),
        &differ[..differ.len().min(3)]
    );
}

/// [`state`], and what a vector search finds: every node once, by hash.
fn hybrid_state(index: &DurableIndex) -> BTreeMap<String, String> {
    let mut out = state(index);
    runtime().block_on(async {
        let Some(live) = index.open_live().await.unwrap() else {
            return;
        };
        let retrievers = live.retrievers(Some(&hash_embed())).await.unwrap();
        let found = retrievers
            .vector(100_000)
            .unwrap()
            .retrieve(&"Who repainted the boat in the harbour?".into())
            .await
            .unwrap();
        let mut hashes: Vec<String> = found.iter().map(|n| n.node.hash()).collect();
        hashes.sort();
        out.insert("vectors".into(), hashes.join(","));
        // The embedded store's vector index: a file the commit names is
        // there, whole, and answers.
        if let Some(b) = live
            .build()
            .as_any()
            .downcast_ref::<ragloom::sqlite::SqliteBuild>()
        {
            let status = b.store().vector_index_status().unwrap();
            if let Some(file) = status.file {
                assert!(file.exists(), "{} is named but missing", file.display());
                let top = retrievers
                    .vector(5)
                    .unwrap()
                    .retrieve(&"the harbour".into())
                    .await
                    .unwrap();
                assert_eq!(top.len(), 5);
            }
        }
    });
    out
}

/// The store URL of `store`'s indexes tagged `tag`, as a child parses it.
fn child_url(store: &Store, tag: &str) -> String {
    match store.url_for(tag) {
        StoreUrl::Embedded => "embedded".into(),
        StoreUrl::Postgres { url, schema } => {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}schema={schema}")
        }
        StoreUrl::Qdrant { url, prefix } => format!(
            "{}?prefix={}",
            url.replacen("http://", "qdrant://", 1),
            prefix.trim_end_matches('_')
        ),
    }
}

/// Starts a sync of `data` in a child process and kills it after `delay`.
fn sync_killed_after(store: &Store, root: &Path, data: &Path, tag: &str, delay: Duration) {
    let spec = format!(
        "{}\n{}\n{}",
        root.display(),
        data.display(),
        child_url(store, tag)
    );
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_sync", "--nocapture", "--test-threads=1"])
        .env("RAGLOOM_DURABLE_CHILD", spec)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed after `delay`, or waited for when it ends first.
    let started = Instant::now();
    while started.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    child.wait().unwrap();
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

/// Random kills of a hybrid sync from an old folder to a new one (50 files
/// gone, 20 edited, 50 new), each checked against complete syncs of both
/// (nodes, hashes, files and what a vector search finds): 20 rounds
/// on SQLite and PostgreSQL, 5 on Qdrant; `RAGLOOM_KILL_ROUNDS` sets them.
#[test]
fn a_sync_killed_at_any_moment_leaves_the_old_state_or_the_new_one() {
    ragloom::sqlite::set_ann_min_vectors(1);
    for store in stores() {
        let rounds: usize = std::env::var("RAGLOOM_KILL_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if store.kind == "qdrant" { 5 } else { 20 });
        let work = tempfile::tempdir().unwrap();
        let data = work.path().join("docs");
        // Each version is written once and moved into place: a file's change
        // time is its `creation_date`, in its hash.
        let (old_docs, new_docs) = (work.path().join("old-docs"), work.path().join("new-docs"));
        book_corpus(&old_docs, 0..150, 0..0);
        book_corpus(&new_docs, 50..200, 100..120);
        let swap = |out: &Path, into: &Path| {
            std::fs::rename(&data, out).unwrap();
            std::fs::rename(into, &data).unwrap();
        };
        std::fs::rename(&old_docs, &data).unwrap();
        let old_index = store.index(&work.path().join("old"), &data, "old");
        hybrid_sync(&old_index);
        let old = hybrid_state(&old_index);
        swap(&old_docs, &new_docs);
        let new_index = store.index(&work.path().join("new"), &data, "new");
        hybrid_sync(&new_index);
        let new = hybrid_state(&new_index);
        clear(&new_index);
        // How long a child takes, start to end, from the old state: the
        // kills are spread over it.
        let probe = work.path().join("probe");
        let probe_index = store.index(&probe, &data, "probe");
        swap(&new_docs, &old_docs);
        hybrid_sync(&probe_index);
        swap(&old_docs, &new_docs);
        let started = Instant::now();
        sync_killed_after(&store, &probe, &data, "probe", Duration::from_secs(600));
        let full_time = started.elapsed();
        assert_same_state(
            &hybrid_state(&probe_index),
            &new,
            &format!("{}: a child's whole sync", store.kind),
        );
        clear(&probe_index);
        assert_ne!(old, new);
        let seed = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        eprintln!(
            "{}: kill test seed {seed}, full sync {full_time:?}",
            store.kind
        );
        let mut rng = Lcg(seed);
        let (mut saw_old, mut saw_new) = (0, 0);
        for round in 0..rounds {
            // Each round starts from the old state: a copy of its folder on
            // the embedded store, synced afresh in a server.
            let tag = format!("k{round}");
            let root = work.path().join(&tag);
            let index = store.index(&root, &data, &tag);
            if store.kind == "sqlite" {
                copy_dir(&work.path().join("old"), &root);
            } else {
                swap(&new_docs, &old_docs);
                hybrid_sync(&index);
                swap(&old_docs, &new_docs);
            }
            assert_eq!(
                hybrid_state(&index),
                old,
                "{} round {round}: the old state",
                store.kind
            );
            let delay =
                Duration::from_micros(rng.next() % (full_time.as_micros() as u64 * 11 / 10).max(1));
            sync_killed_after(&store, &root, &data, &tag, delay);
            let now = hybrid_state(&index);
            if now == old {
                saw_old += 1;
            } else if now == new {
                saw_new += 1;
            } else {
                panic!(
                    "{} round {round} (seed {seed}, killed after {delay:?}): a mixed state",
                    store.kind
                );
            }
            // The next sync completes and lands on the new state.
            hybrid_sync(&index);
            assert_eq!(
                hybrid_state(&index),
                new,
                "{} round {round}: after a kill",
                store.kind
            );
            clear(&index);
        }
        clear(&old_index);
        eprintln!(
            "{}: kills left the old state {saw_old} times, the new one {saw_new}",
            store.kind
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let target = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// An index the command line wrote before the durable index moved into the
/// library (`tests/data/durable-v1`) opens through the library, answers, and
/// a sync of its unchanged folder reads nothing.
#[cfg(unix)]
#[test]
fn an_index_written_by_the_earlier_command_line_opens_and_syncs_nothing() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/durable-v1");
    // The source key is the folder's absolute path, as it was.
    let at = Path::new("/tmp/ragloom-durable-fixture");
    let _ = std::fs::remove_dir_all(at);
    place_fixture_docs(&fixture.join("docs"), &at.join("docs"));
    copy_dir(&fixture.join("root"), &at.join("root"));
    opens_answers_and_syncs_nothing(StoreUrl::Embedded, &at.join("docs"), &at.join("root"));
    let _ = std::fs::remove_dir_all(at);
}

/// The fixture's documents at `to`, every file's time 2026-01-01T00:00:00Z
/// as when the earlier command line ingested them.
fn place_fixture_docs(from: &Path, to: &Path) {
    copy_dir(from, to);
    let then = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    for e in std::fs::read_dir(to).unwrap() {
        let f = std::fs::File::options()
            .write(true)
            .open(e.unwrap().path())
            .unwrap();
        f.set_modified(then).unwrap();
    }
}

/// Opens an index the earlier command line wrote, answers from it without
/// re-ingesting, then syncs its unchanged folder: nothing is read.
fn opens_answers_and_syncs_nothing(url: StoreUrl, docs: &Path, root: &Path) {
    let index = index_at(&url, root, docs);
    let rt = runtime();
    let live = rt.block_on(index.open()).unwrap();
    assert_eq!(live.manifest().last_ingest.nodes_total, 3, "{url:?}");
    let hits = rt
        .block_on(
            live.keyword_retriever(1, None)
                .unwrap()
                .retrieve(&"Who repainted the boat?".into()),
        )
        .unwrap();
    assert!(
        hits[0].node.get_text().contains("harbour mechanic"),
        "{url:?}: {hits:?}"
    );
    let report = sync(&index);
    assert_eq!(
        (report.files, report.files_unchanged, report.documents),
        (3, 3, 0),
        "{url:?}: {report:?}"
    );
    assert_eq!(report.nodes_total, 3, "{url:?}");
}

/// Indexes the earlier command line wrote into PostgreSQL and Qdrant
/// (`tests/data/durable-v1-servers`: a schema dump and the test server's
/// data folder) open through the library and answer without re-ingesting.
#[cfg(unix)]
#[test]
fn server_indexes_written_by_the_earlier_command_line_open_and_sync_nothing() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // The source key is the folder's absolute path, as it was.
    let at = Path::new("/tmp/ragloom-durable-fixture-servers");
    let _ = std::fs::remove_dir_all(at);
    place_fixture_docs(&fixtures.join("durable-v1/docs"), &at.join("docs"));
    let servers = fixtures.join("durable-v1-servers");
    match std::env::var("RAGLOOM_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => {
            let restored = std::process::Command::new("psql")
                .args([url.as_str(), "-q", "-v", "ON_ERROR_STOP=1"])
                .args(["-c", "DROP SCHEMA IF EXISTS fixture_v1 CASCADE"])
                .args(["-c", "CREATE EXTENSION IF NOT EXISTS vector"])
                .arg("-f")
                .arg(servers.join("postgres.sql"))
                .status();
            match restored {
                Ok(status) => {
                    assert!(status.success(), "psql could not restore the fixture");
                    // The store as the command line was given it.
                    let sep = if url.contains('?') { '&' } else { '?' };
                    let url = StoreUrl::parse(&format!("{url}{sep}schema=fixture_v1")).unwrap();
                    opens_answers_and_syncs_nothing(url, &at.join("docs"), &at.join("root-pg"));
                }
                Err(e) => {
                    required(&format!("psql ({e})"));
                }
            }
        }
        _ => {
            required("RAGLOOM_TEST_PG_URL (PostgreSQL)");
        }
    }
    let unpacked = std::process::Command::new("tar")
        .arg("xzf")
        .arg(servers.join("qdrant.tar.gz"))
        .arg("-C")
        .arg(at)
        .status()
        .unwrap();
    assert!(unpacked.success());
    if let Some((url, _server)) = start_qdrant_in(Some(&at.join("qd"))) {
        let host = url.trim_start_matches("http://");
        let url = StoreUrl::parse(&format!("qdrant://{host}?prefix=fixture_v1_")).unwrap();
        opens_answers_and_syncs_nothing(url, &at.join("docs"), &at.join("root-qd"));
    }
    let _ = std::fs::remove_dir_all(at);
}

/// Six files of the book corpus under `dir`/docs, synced into `store`
/// with a 32-dimension hash embedding: the index, the model, the options.
fn hybrid_index(
    store: &Store,
    dir: &Path,
    name: &str,
) -> (DurableIndex, ragloom::durable::EmbedModel, SyncOptions) {
    let data = dir.join("docs");
    book_corpus(&data, 0..6, 0..0);
    let index = store.index(&dir.join("index"), &data, name);
    let embed = ragloom::durable::EmbedModel::new(
        std::sync::Arc::new(ragloom::embeddings::HashEmbedding::new(32)),
        serde_json::json!({"hash": 32}),
    );
    let opts = SyncOptions {
        embed: Some(embed.clone()),
        ..options()
    };
    runtime().block_on(index.sync(&opts)).unwrap();
    (index, embed, opts)
}

/// Hybrid retrieval fuses as the index's retrievers are told: the default
/// (reciprocal rank, equal weights) on every store, a weighted score fusion
/// in process on every store, each equal to `QueryFusionRetriever` over the
/// same dense and keyword retrievers.
#[test]
fn hybrid_fusion_follows_the_setting_on_every_store() {
    use ragloom::durable::HybridFusion;
    use ragloom::retrievers::{FusionMode, QueryFusionRetriever, Retriever};

    let ids = |nodes: &[ragloom::schema::NodeWithScore]| -> Vec<(String, String)> {
        nodes
            .iter()
            .map(|n| {
                (
                    n.node.get_text().to_owned(),
                    format!("{:.6}", n.score.unwrap_or(f32::NAN)),
                )
            })
            .collect()
    };
    let question = "Who repainted the boat in the harbour?".into();
    for store in stores() {
        let tmp = tempfile::tempdir().unwrap();
        let (index, embed, _) = hybrid_index(&store, tmp.path(), "fusion");
        let rt = runtime();
        let live = rt.block_on(index.open()).unwrap();
        let retrievers = rt.block_on(live.retrievers(Some(&embed))).unwrap();
        assert_eq!(retrievers.retrieval, "hybrid", "{}", store.kind);
        let by_hand = |mode: FusionMode, weights: Vec<f64>| -> Vec<(String, String)> {
            let fused = QueryFusionRetriever::builder(vec![
                retrievers.vector(4).unwrap(),
                retrievers.keyword(4).unwrap(),
            ])
            .mode(mode)
            .retriever_weights(weights)
            .num_queries(1)
            .similarity_top_k(4)
            .build()
            .unwrap();
            ids(&rt.block_on(fused.retrieve(&question)).unwrap())
        };
        let weighted = HybridFusion::new(FusionMode::RelativeScore, 0.8).unwrap();
        let fused = retrievers
            .clone()
            .with_fusion(weighted)
            .retriever(4, None)
            .unwrap();
        let got = ids(&rt.block_on(fused.retrieve(&question)).unwrap());
        assert_eq!(
            got,
            by_hand(FusionMode::RelativeScore, vec![0.8, 0.2]),
            "{}",
            store.kind
        );
        assert_eq!(got.len(), 4, "{}", store.kind);
        let default = retrievers.retriever(4, None).unwrap();
        let got = rt.block_on(default.retrieve(&question)).unwrap();
        assert_eq!(got.len(), 4, "{}", store.kind);
        if store.kind != "qdrant" {
            // Qdrant fuses by reciprocal rank in its own query; elsewhere the
            // default is the same fusion in process.
            assert_eq!(
                ids(&got),
                by_hand(FusionMode::ReciprocalRank, vec![0.5, 0.5]),
                "{}",
                store.kind
            );
        }
        assert!(HybridFusion::new(FusionMode::Simple, 1.5).is_err());
        assert!(HybridFusion::new(FusionMode::Simple, f64::NAN).is_err());
        clear(&index);
    }
}

/// `tune_fusion` scores every setting on lists it fuses itself, each equal
/// to what the index's retriever with that setting returns; the best,
/// recorded, is what the index fuses with until a caller sets another, is
/// kept by a sync of the same build, and is gone after a rebuild with
/// other settings.
#[test]
fn a_tuned_fusion_is_recorded_kept_by_syncs_and_dropped_by_a_rebuild() {
    use ragloom::durable::{Chunking, HybridFusion};
    use ragloom::evaluation::{LabelledQuestion, QuestionSplit, tune_fusion};
    use ragloom::retrievers::FusionMode;

    let texts = |nodes: &[ragloom::schema::NodeWithScore]| -> Vec<String> {
        let text = |n: &ragloom::schema::NodeWithScore| n.node.get_text().to_owned();
        nodes.iter().map(text).collect()
    };
    for store in stores() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("docs");
        let (index, embed, opts) = hybrid_index(&store, tmp.path(), "tuning");
        let rt = runtime();
        // A question per file: its second paragraph's opening words; every
        // other one labelled paraphrased.
        let questions: Vec<LabelledQuestion> = (0..6)
            .map(|i| {
                let file = format!("part-{i:03}.txt");
                let body = std::fs::read_to_string(data.join(&file)).unwrap();
                let para = body.split("\n\n").nth(1).unwrap();
                let words: Vec<&str> = para.split_whitespace().take(6).collect();
                serde_json::from_value(serde_json::json!({
                    "question": words.join(" "), "file": file,
                    "answer_span": words.join(" "), "paraphrased": i % 2 == 0,
                }))
                .unwrap()
            })
            .collect();
        let live = rt.block_on(index.open()).unwrap();
        let retrievers = rt.block_on(live.retrievers(Some(&embed))).unwrap();
        let candidates = HybridFusion::candidates(&[0.2, 0.5, 0.8]).unwrap();
        let tuned = rt
            .block_on(tune_fusion(&retrievers, &questions, &candidates, 3, false))
            .unwrap();
        assert_eq!(tuned.split, QuestionSplit::LiteralThenParaphrased);
        assert_eq!(tuned.candidates.len(), 8, "{}", store.kind);
        let best = tuned.best_row().unwrap();
        assert_eq!(best.chosen_on.questions, 3);
        for c in &tuned.candidates {
            let key = |s: &ragloom::evaluation::Scored| (s.chosen_on.mrr, s.chosen_on.hit_rate);
            assert!(
                key(c) <= key(best),
                "{} beats the best {}",
                c.name,
                best.name
            );
        }
        // The figures come from fused lists equal to the retriever's own.
        for &fusion in candidates.iter().filter(|f| !f.is_default()) {
            let r = retrievers
                .clone()
                .with_fusion(fusion)
                .retriever(3, None)
                .unwrap();
            let q = &questions[1].question;
            let by_retriever = texts(&rt.block_on(r.retrieve(&q.as_str().into())).unwrap());
            let dense = retrievers.vector(3).unwrap();
            let keyword = retrievers.keyword(3).unwrap();
            let lists = (
                rt.block_on(dense.retrieve(&q.as_str().into())).unwrap(),
                rt.block_on(keyword.retrieve(&q.as_str().into())).unwrap(),
            );
            let fused = fusion.fuse(lists.0, lists.1, 3).unwrap();
            assert_eq!(texts(&fused), by_retriever, "{fusion} on {}", store.kind);
        }

        let chosen = HybridFusion::new(FusionMode::DistBasedScore, 0.3).unwrap();
        rt.block_on(index.record_fusion(&live, Some(chosen), &options()))
            .unwrap();
        let fusion_now = || {
            let live = rt.block_on(index.open()).unwrap();
            let status = rt.block_on(live.status(index.dir())).unwrap();
            let own = rt.block_on(live.retrievers(Some(&embed))).unwrap().fusion();
            assert_eq!(status.fusion.unwrap_or_default(), own);
            own
        };
        assert_eq!(fusion_now(), chosen, "{}", store.kind);
        let live = rt.block_on(index.open()).unwrap();
        let set = rt.block_on(live.retrievers(Some(&embed))).unwrap();
        let weight_only = ragloom::durable::FusionChoice {
            mode: None,
            dense_weight: Some(0.6),
        };
        assert_eq!(
            set.clone().with_fusion(weight_only).fusion(),
            HybridFusion::new(FusionMode::DistBasedScore, 0.6).unwrap()
        );
        assert_eq!(
            set.with_fusion(HybridFusion::default()).fusion(),
            HybridFusion::default()
        );
        book_corpus(&data, 0..7, 0..0);
        let report = rt.block_on(index.sync(&opts)).unwrap();
        assert_eq!(report.ingested, 1, "{}", store.kind);
        assert_eq!(fusion_now(), chosen, "a sync keeps it on {}", store.kind);
        let rebuilt = SyncOptions {
            chunking: Chunking {
                chunk_size: Some(300),
                chunk_overlap: Some(20),
                chunk_fit: None,
            },
            ..opts.clone()
        };
        rt.block_on(index.sync(&rebuilt)).unwrap();
        assert_eq!(fusion_now(), HybridFusion::default(), "{}", store.kind);
        // A setting tuned on the replaced build is refused.
        let stale = rt.block_on(index.record_fusion(&live, Some(chosen), &options()));
        assert!(
            matches!(
                stale,
                Err(ragloom::Error::Index(
                    ragloom::durable::IndexError::Conflict { .. }
                ))
            ),
            "{stale:?} on {}",
            store.kind
        );
        assert_eq!(fusion_now(), HybridFusion::default(), "{}", store.kind);
        clear(&index);
    }
}
