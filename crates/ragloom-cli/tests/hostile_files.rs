//! Hostile files against the binary (issue 40, points 6, 7, 8, 10, 11):
//! names that are not UTF-8, symlinks out of the ingested folder, persisted
//! files with fields of the wrong type or Python's lone surrogates, a
//! relative persist folder, and `--clear` while another writer holds the
//! index. Embedded store only: these are listing and file-reading rules,
//! the same for every store.

#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod common;

use common::{json_of, ragloom, ragloom_process, status};
use serde_json::Value;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `docs/` folder under `home` with one ordinary file.
fn docs(home: &Path) -> PathBuf {
    let data = home.join("docs");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("garden.txt"),
        "The tomatoes grow along the south fence.\n",
    )
    .unwrap();
    data
}

/// `ingest --json` of `data` (with `extra` flags), which must succeed: its summary.
fn ingest(home: &Path, data: &Path, extra: &[&str]) -> (Value, String) {
    let out = ragloom(home)
        .args(["ingest", "--json"])
        .args(extra)
        .arg(data)
        .assert()
        .success();
    let out = out.get_output();
    (
        json_of(&out.stdout)["ingest"].clone(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `query --json` of the index of `data`, as text.
fn query(home: &Path, data: &Path, q: &str) -> String {
    let out = ragloom(home)
        .args(["query", "--json", q, "--files"])
        .arg(data)
        .assert()
        .success();
    json_of(&out.get_output().stdout).to_string()
}

/// The one entry of `dir`.
fn only_entry(dir: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

// ---- 6: names that are not UTF-8 ----------------------------------------

/// A file whose name is not UTF-8 is skipped with its reason; the rest of
/// the folder is ingested, and stays updatable while the file is there.
#[test]
fn a_name_that_is_not_utf8_is_skipped_not_fatal() {
    let home = tempfile::tempdir().unwrap();
    let data = docs(home.path());
    let odd = data.join(OsStr::from_bytes(b"caf\xe9.txt"));
    std::fs::write(&odd, "Latin-1 named notes about the harbour.\n").unwrap();

    let (summary, stderr) = ingest(home.path(), &data, &[]);
    assert_eq!(summary["files"], 1, "{summary}");
    assert_eq!(summary["ingested"], 1, "{summary}");
    assert_eq!(summary["skipped_files"], 1, "{summary}");
    let skipped = &summary["skipped"][0];
    assert!(
        skipped["path"]
            .as_str()
            .unwrap()
            .ends_with("caf\u{fffd}.txt"),
        "{summary}"
    );
    assert!(
        skipped["reason"].as_str().unwrap().contains("UTF-8"),
        "{summary}"
    );
    assert!(stderr.contains("skipped"), "{stderr}");

    // The folder's other files still update.
    std::fs::write(
        data.join("garden.txt"),
        "The beans climb the north trellis.\n",
    )
    .unwrap();
    let (summary, _) = ingest(home.path(), &data, &[]);
    assert_eq!(summary["ingested"], 1, "{summary}");
    assert!(query(home.path(), &data, "beans trellis").contains("trellis"));
}

/// A storage folder as LlamaIndex persists it, its docstore and index store
/// given as JSON text (so a test can write what Rust strings cannot hold).
fn persisted(dir: &Path, docstore: &str, node_ids: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("docstore.json"), docstore).unwrap();
    let nodes_dict: Vec<String> = node_ids
        .iter()
        .map(|id| format!(r#"\"{id}\": \"{id}\""#))
        .collect();
    let data = format!(
        r#"{{\"index_id\": \"idx\", \"summary\": null, \"nodes_dict\": {{{}}}, \"doc_id_dict\": {{}}, \"embeddings_dict\": {{}}}}"#,
        nodes_dict.join(", ")
    );
    std::fs::write(
        dir.join("index_store.json"),
        format!(r#"{{"index_store/data": {{"idx": {{"__type__": "vector_store", "__data__": "{data}"}}}}}}"#),
    )
    .unwrap();
    std::fs::write(
        dir.join("default__vector_store.json"),
        r#"{"embedding_dict": {}, "text_id_to_ref_doc_id": {}, "metadata_dict": {}}"#,
    )
    .unwrap();
}

/// A text node's stored entry; `fields` (`"key": value, ...`) are added to
/// (or replace) a minimal dict.
fn node_entry(id: &str, fields: &str) -> String {
    let sep = if fields.is_empty() { "" } else { ", " };
    format!(
        r#""{id}": {{"__type__": "1", "__data__": {{"id_": "{id}", "text": "The heron waits in the reeds.", "class_name": "TextNode"{sep}{fields}}}}}"#
    )
}

/// `ragloom import` of `dir` as the index of a new folder under `home`.
fn import(home: &Path, dir: &Path) -> assert_cmd::assert::Assert {
    let source = home.join("imported");
    std::fs::create_dir_all(&source).unwrap();
    ragloom(home)
        .arg("import")
        .arg(dir)
        .arg("--files")
        .arg(&source)
        .assert()
}

/// A docstore Python wrote for a file whose name is not UTF-8 holds
/// `os.fsdecode`'s lone surrogates (`caf\udce9.txt`): it loads, the names
/// read with U+FFFD, instead of the whole file being refused.
#[test]
fn a_docstore_with_lone_surrogates_imports() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("python");
    let id = r"/data/caf\udce9.txt";
    let docstore = format!(
        r#"{{"docstore/data": {{{}}}, "docstore/metadata": {{}}, "docstore/ref_doc_info": {{}}}}"#,
        node_entry(
            id,
            r#""metadata": {"file_path": "/data/caf\udce9.txt"}, "excluded_llm_metadata_keys": ["file_name"]"#
        )
    );
    // The index store's `__data__` is JSON inside JSON: its escapes doubled.
    persisted(&dir, &docstore, &[r"/data/caf\\udce9.txt"]);
    import(home.path(), &dir).success();
    let answer = query(home.path(), &home.path().join("imported"), "heron reeds");
    assert!(answer.contains("heron"), "{answer}");
    assert!(answer.contains("caf\u{fffd}.txt"), "{answer}");
}

// ---- 7: symlinks out of the folder ----------------------------------------

/// A secret outside the folder, and a link to it inside.
fn outside_link(home: &Path, data: &Path) {
    let secret = home.join("secret.txt");
    std::fs::write(&secret, "The vault code is zanzibar.\n").unwrap();
    std::os::unix::fs::symlink(&secret, data.join("p.txt")).unwrap();
}

/// A link out of the folder is skipped (and named, with the reason) unless
/// `--follow-links`; a link within the folder is read. Once the link is
/// skipped again, what it brought in is deleted.
#[test]
fn links_out_of_the_folder_are_skipped_unless_followed() {
    let home = tempfile::tempdir().unwrap();
    let data = docs(home.path());
    outside_link(home.path(), &data);
    std::os::unix::fs::symlink(data.join("garden.txt"), data.join("inner.txt")).unwrap();

    let (summary, stderr) = ingest(home.path(), &data, &[]);
    assert_eq!(summary["files"], 2, "{summary}");
    assert_eq!(summary["skipped_files"], 1, "{summary}");
    let skipped = &summary["skipped"][0];
    assert!(
        skipped["path"].as_str().unwrap().ends_with("p.txt"),
        "{summary}"
    );
    assert!(
        skipped["reason"].as_str().unwrap().contains("outside"),
        "{summary}"
    );
    assert!(stderr.contains("p.txt"), "{stderr}");
    assert!(!query(home.path(), &data, "vault code").contains("zanzibar"));

    let (summary, _) = ingest(home.path(), &data, &["--follow-links"]);
    assert_eq!(summary["skipped_files"], 0, "{summary}");
    assert!(query(home.path(), &data, "vault code").contains("zanzibar"));

    let (summary, _) = ingest(home.path(), &data, &[]);
    assert_eq!(summary["deleted"], 1, "{summary}");
    assert!(!query(home.path(), &data, "vault code").contains("zanzibar"));
}

/// The uploads folder (which a server writes) never follows a link, even
/// with `--follow-links`.
#[test]
fn uploads_never_follow_links() {
    let home = tempfile::tempdir().unwrap();
    let data = docs(home.path());
    ingest(home.path(), &data, &[]);
    let name = only_entry(&home.path().join("store/indexes"));
    let uploads = home
        .path()
        .join("store/uploads")
        .join(name.file_name().unwrap());
    std::fs::create_dir_all(&uploads).unwrap();
    outside_link(home.path(), &uploads);

    let (summary, _) = ingest(home.path(), &data, &["--follow-links"]);
    assert_eq!(summary["skipped_files"], 1, "{summary}");
    assert!(
        summary["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("uploads never follow links"),
        "{summary}"
    );
    assert!(!query(home.path(), &data, "vault code").contains("zanzibar"));
}

// ---- 8: fields of the wrong type ------------------------------------------

/// A field of the wrong type fails the import with an error naming the
/// file, the node and the field, and nothing is imported; missing optional
/// fields take LlamaIndex's defaults.
#[test]
fn a_field_of_the_wrong_type_fails_the_import_naming_it() {
    for (field, value) in [
        ("text", "42"),
        ("metadata", r#""a string""#),
        ("excluded_embed_metadata_keys", "[1]"),
        ("start_char_idx", "-1"),
        ("embedding", r#""0.5""#),
        ("metadata_template", "{}"),
        ("relationships", r#"{"1": {"node_id": 7}}"#),
    ] {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("python");
        let docstore = format!(
            r#"{{"docstore/data": {{{}}}}}"#,
            node_entry("n1", &format!(r#""{field}": {value}"#))
        );
        persisted(&dir, &docstore, &["n1"]);
        let out = import(home.path(), &dir).failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        for want in ["docstore.json", "n1", field] {
            assert!(err.contains(want), "{field}: `{want}` not in {err}");
        }
        assert!(
            !home.path().join("store/indexes").exists()
                || std::fs::read_dir(home.path().join("store/indexes"))
                    .unwrap()
                    .all(|e| !e.unwrap().path().join("current.json").exists()),
            "{field}: something was imported"
        );
    }

    // The same node with only its id and text imports, the rest defaulted.
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("python");
    let docstore = format!(r#"{{"docstore/data": {{{}}}}}"#, node_entry("n1", ""));
    persisted(&dir, &docstore, &["n1"]);
    import(home.path(), &dir).success();
}

// ---- 10: a relative persist folder ----------------------------------------

/// A relative `--persist-dir` is made absolute once, at start: what the
/// command line records and shows (the index folder, from which the
/// server's uploads folder is derived) is absolute.
#[test]
fn a_relative_persist_dir_is_made_absolute() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    docs(&home);
    let relative = |args: &[&str]| {
        // The common helper passes an absolute --persist-dir; this gives a
        // relative one through the environment (the flag's other spelling),
        // keeping the helper's environment.
        let helper = ragloom_process(&home);
        let mut cmd = std::process::Command::new(helper.get_program());
        for (k, v) in helper.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("RAGLOOM_PERSIST_DIR", "rel-store")
            .current_dir(&home)
            .args(args);
        assert_cmd::Command::from_std(cmd)
    };
    relative(&["ingest", "docs"]).assert().success();
    let out = relative(&["status", "--json", "--files", "docs"])
        .assert()
        .success();
    let s = json_of(&out.get_output().stdout);
    let dir = PathBuf::from(s["index_dir"].as_str().unwrap());
    assert!(dir.is_absolute(), "{s}");
    assert!(dir.starts_with(home.join("rel-store")), "{s}");
    assert!(dir.is_dir(), "{s}");
}

// ---- 11: --clear under the writer lock -------------------------------------

/// `rag --clear` takes the writer lock: with `--no-wait` it fails at once
/// while another writer holds it, leaving the index as it was; without, it
/// waits for the writer to finish, then clears and ingests.
#[test]
fn clear_waits_for_the_writer_lock() {
    let home = tempfile::tempdir().unwrap();
    let data = docs(home.path());
    ingest(home.path(), &data, &[]);
    let index_dir = only_entry(&home.path().join("store/indexes"));
    // What an ingest or a server's upload job holds while it writes.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(only_entry(&home.path().join("store/locks")))
        .unwrap();
    fs4::FileExt::lock(&lock).unwrap();

    let out = ragloom(home.path())
        .args(["rag", "--clear", "--no-wait", "--files"])
        .arg(&data)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("another ingest"), "{err}");
    assert!(index_dir.join("current.json").exists(), "cleared anyway");
    assert_eq!(status(home.path(), &data)["documents"], 1);

    let mut waiting = ragloom_process(home.path())
        .args(["rag", "--clear", "--json", "--files"])
        .arg(&data)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(waiting.try_wait().unwrap().is_none(), "it did not wait");
    assert!(
        index_dir.join("current.json").exists(),
        "cleared under a writer"
    );
    drop(lock);
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(json_of(&out.stdout)["ingest"]["ingested"], 1);
}
