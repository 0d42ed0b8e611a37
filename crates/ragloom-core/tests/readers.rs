//! SimpleDirectoryReader against what LlamaIndex 0.14.25 gives on the same
//! folder (tests/data/readers, recorded by gen_readers.py), and each option's effect.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use async_trait::async_trait;
use ragloom_core::readers::{
    EXCLUDED_FILE_METADATA_KEYS, FileReader, Reader, SimpleDirectoryReader,
};
use ragloom_core::{Document, Error, Metadata, MetadataMode, Result};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/readers");

fn read_json(name: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(DATA).join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Builds the folder described by layout.json under `root`.
fn build_layout(root: &Path) {
    let layout = read_json("layout.json");
    let default_mtime = layout["default_mtime"].as_u64().unwrap();
    for f in layout["files"].as_array().unwrap() {
        let path = root.join(f["path"].as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = match f.get("hex") {
            Some(hex) => hex_decode(hex.as_str().unwrap()),
            None => f["text"].as_str().unwrap().as_bytes().to_vec(),
        };
        std::fs::write(&path, bytes).unwrap();
        let mtime = f
            .get("mtime")
            .and_then(Value::as_u64)
            .unwrap_or(default_mtime);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(mtime))
            .unwrap();
    }
    for s in layout["symlinks"].as_array().unwrap() {
        std::os::unix::fs::symlink(
            s["target"].as_str().unwrap(),
            root.join(s["path"].as_str().unwrap()),
        )
        .unwrap();
    }
}

fn hex_decode(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn layout_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    build_layout(&root);
    (tmp, root)
}

/// The extractor of the recorded `file_extractor` case: two documents per
/// file, carrying the metadata it is given.
#[derive(Debug)]
struct TwoPartReader;

#[async_trait]
impl FileReader for TwoPartReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
        Ok((0..2)
            .map(|i| {
                Document::document(format!("part{i}:{text}")).with_metadata_map(extra_info.clone())
            })
            .collect())
    }
}

/// Fails on every file.
#[derive(Debug)]
struct FailingReader;

#[async_trait]
impl FileReader for FailingReader {
    async fn load_file(&self, path: &Path, _: Metadata) -> Result<Vec<Document>> {
        Err(Error::corrupt(path, "this extractor always fails"))
    }
}

fn reader_for(config: &Value, root: &Path) -> SimpleDirectoryReader {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut reader = match config.get("input_files") {
        Some(files) => {
            SimpleDirectoryReader::from_files(strings(files).iter().map(|f| root.join(f)))
        }
        None => SimpleDirectoryReader::new(root),
    };
    let flag = |key: &str| config.get(key).and_then(Value::as_bool);
    if let Some(v) = flag("recursive") {
        reader = reader.recursive(v);
    }
    if let Some(v) = flag("exclude_hidden") {
        reader = reader.exclude_hidden(v);
    }
    if let Some(v) = flag("exclude_empty") {
        reader = reader.exclude_empty(v);
    }
    if let Some(v) = flag("filename_as_id") {
        reader = reader.filename_as_id(v);
    }
    if let Some(v) = config.get("required_exts") {
        reader = reader.required_exts(strings(v));
    }
    if let Some(v) = config.get("exclude") {
        reader = reader.exclude(strings(v));
    }
    if let Some(ext) = config.get("file_extractor") {
        reader = reader.file_extractor(ext.as_str().unwrap(), Arc::new(TwoPartReader));
    }
    reader
}

fn is_date(s: &str) -> bool {
    s.len() == 10
        && s.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Our document in the recorded form: root replaced, creation date masked.
fn recorded_form(doc: &Document, root: &str, with_id: bool) -> Value {
    let mut metadata = serde_json::Map::new();
    for (k, v) in &doc.metadata {
        let v = match (k.as_str(), v) {
            ("creation_date", Value::String(s)) => {
                assert!(is_date(s), "creation_date {s:?} is not YYYY-MM-DD");
                json!("<date>")
            }
            (_, Value::String(s)) => json!(s.replace(root, "<root>")),
            _ => v.clone(),
        };
        metadata.insert(k.clone(), v);
    }
    json!({
        "id": if with_id { json!(doc.id_.replace(root, "<root>")) } else { Value::Null },
        "text": doc.text,
        "metadata": Value::Object(metadata),
        "excluded_embed_metadata_keys": doc.excluded_embed_metadata_keys,
        "excluded_llm_metadata_keys": doc.excluded_llm_metadata_keys,
    })
}

#[tokio::test]
async fn matches_llama_index_on_the_recorded_layout() {
    let (_tmp, root) = layout_dir();
    let root_str = root.to_string_lossy().into_owned();
    let expected = read_json("expected.json");
    let cases = expected["cases"].as_array().unwrap();
    assert!(cases.len() > 50);
    for case in cases {
        let config = &case["config"];
        let name = config["name"].as_str().unwrap();
        let result = &case["result"];
        let reader = reader_for(config, &root);
        if let Some(err) = result.get("error") {
            assert!(err.as_str().unwrap().contains("No files found"), "{name}");
            let ours = reader.list_resources();
            assert!(
                ours.as_ref()
                    .is_err_and(|e| e.to_string().contains("no files found in")),
                "{name}: expected no files, got {ours:?}"
            );
            assert!(reader.load_data().await.is_err(), "{name}");
            continue;
        }
        let files: Vec<String> = reader
            .list_resources()
            .unwrap()
            .iter()
            .map(|f| f.replace(&root_str, "<root>"))
            .collect();
        let want: Vec<String> = serde_json::from_value(result["files"].clone()).unwrap();
        assert_eq!(files, want, "{name}: files");

        let Some(want_docs) = result.get("docs").and_then(Value::as_array) else {
            continue;
        };
        let report = reader.load_data_with_report().await.unwrap();
        assert!(report.errors.is_empty(), "{name}: {:?}", report.errors);
        assert_eq!(
            report.documents.len(),
            want_docs.len(),
            "{name}: document count"
        );
        let with_id = config.get("filename_as_id").is_some();
        for (doc, want) in report.documents.iter().zip(want_docs) {
            let mut got = recorded_form(doc, &root_str, with_id);
            // Deliberate difference: Python drops undecodable bytes, we replace them.
            let text = doc.text.as_str();
            if text.contains('\u{FFFD}') {
                assert_eq!(text, "caf\u{FFFD} ok", "{name}");
                got["text"] = json!(text.replace('\u{FFFD}', ""));
            }
            assert_eq!(&got, want, "{name}");
            // serde_json maps compare without order; LlamaIndex's order matters.
            let keys: Vec<&String> = doc.metadata.keys().collect();
            let want_keys: Vec<&String> = want["metadata"].as_object().unwrap().keys().collect();
            assert_eq!(keys, want_keys, "{name}: metadata key order");
        }
    }
}

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn names(reader: &SimpleDirectoryReader, root: &Path) -> Vec<String> {
    reader
        .input_files()
        .unwrap()
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect()
}

/// A small folder: top files, a subfolder, hidden things, an empty file.
fn small_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "b.md", "# B\n");
    write(d, "a.txt", "A");
    write(d, "empty.txt", "");
    write(d, ".secret.txt", "S");
    write(d, "sub/c.txt", "C");
    write(d, "sub/deep/d.md", "D");
    write(d, ".git/config", "G");
    tmp
}

#[test]
fn recursive_descends_only_when_asked() {
    let tmp = small_dir();
    let root = tmp.path();
    let flat = SimpleDirectoryReader::new(root);
    assert_eq!(names(&flat, root), ["a.txt", "b.md", "empty.txt"]);
    let deep = SimpleDirectoryReader::new(root).recursive(true);
    assert_eq!(
        names(&deep, root),
        ["a.txt", "b.md", "empty.txt", "sub/c.txt", "sub/deep/d.md"]
    );
}

#[test]
fn exclude_globs_drop_files_and_folders() {
    let tmp = small_dir();
    let root = tmp.path();
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .exclude(["*.md"]);
    assert_eq!(names(&r, root), ["a.txt", "empty.txt", "sub/c.txt"]);
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .exclude(["sub/**"]);
    assert_eq!(names(&r, root), ["a.txt", "b.md", "empty.txt"]);
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .exclude(["**/deep"]);
    assert_eq!(names(&r, root), ["a.txt", "b.md", "empty.txt", "sub/c.txt"]);
    // Not recursive: the pattern is anchored at the folder itself.
    let r = SimpleDirectoryReader::new(root).exclude(["*.md", "empty.*"]);
    assert_eq!(names(&r, root), ["a.txt"]);
    // A folder match is component-wise: excluding `su` keeps `sub`.
    write(root, "su/x.txt", "X");
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .exclude(["su"]);
    let kept = names(&r, root);
    assert!(kept.contains(&"sub/c.txt".to_string()) && !kept.contains(&"su/x.txt".to_string()));
    let bad = SimpleDirectoryReader::new(root)
        .exclude(["a**b"])
        .input_files();
    assert!(bad.is_err_and(|e| e.to_string().contains("a**b")));
}

#[test]
fn exclude_hidden_and_exclude_empty() {
    let tmp = small_dir();
    let root = tmp.path();
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .exclude_hidden(false);
    let all = names(&r, root);
    assert!(all.contains(&".secret.txt".to_string()));
    assert!(all.contains(&".git/config".to_string()));
    let r = SimpleDirectoryReader::new(root).exclude_empty(true);
    assert_eq!(names(&r, root), ["a.txt", "b.md"]);
}

#[test]
fn hidden_is_judged_below_the_input_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".config/docs");
    write(&dir, "note.txt", "N");
    let r = SimpleDirectoryReader::new(&dir);
    assert_eq!(names(&r, &dir), ["note.txt"]);
}

#[test]
fn required_exts_and_num_files_limit() {
    let tmp = small_dir();
    let root = tmp.path();
    write(root, "UPPER.MD", "U");
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .required_exts([".md"]);
    assert_eq!(names(&r, root), ["b.md", "sub/deep/d.md"]);
    let r = SimpleDirectoryReader::new(root)
        .recursive(true)
        .num_files_limit(2);
    assert_eq!(names(&r, root), ["UPPER.MD", "a.txt"]);
    let r = SimpleDirectoryReader::new(root).num_files_limit(0);
    assert_eq!(names(&r, root).len(), 4);
    let none = SimpleDirectoryReader::new(root)
        .required_exts([".pdf"])
        .input_files();
    assert!(none.is_err_and(|e| e.to_string().contains("no files found")));
}

#[tokio::test]
async fn filename_as_id_uses_the_path() {
    let tmp = small_dir();
    let root = tmp.path();
    let docs = SimpleDirectoryReader::new(root)
        .filename_as_id(true)
        .load_data()
        .await
        .unwrap();
    let ids: Vec<&str> = docs.iter().map(|d| d.id_.as_str()).collect();
    let want: Vec<String> = ["a.txt", "b.md", "empty.txt"]
        .iter()
        .map(|n| root.join(n).to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids, want);
    let random = SimpleDirectoryReader::new(root).load_data().await.unwrap();
    assert!(random.iter().all(|d| uuid_like(&d.id_)));
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|&c| c == '-').count() == 4
}

#[tokio::test]
async fn file_extractor_is_used_for_its_extension() {
    let tmp = small_dir();
    let root = tmp.path();
    write(root, "SHOUT.MD", "LOUD");
    let docs = SimpleDirectoryReader::new(root)
        .file_extractor(".md", Arc::new(TwoPartReader))
        .filename_as_id(true)
        .load_data()
        .await
        .unwrap();
    let got: Vec<(String, &str)> = docs
        .iter()
        .map(|d| (d.id_.replace(&*root.to_string_lossy(), ""), d.text.as_str()))
        .collect();
    let want = [
        ("/SHOUT.MD_part_0", "part0:LOUD"),
        ("/SHOUT.MD_part_1", "part1:LOUD"),
        ("/a.txt", "A"),
        ("/b.md_part_0", "part0:# B\n"),
        ("/b.md_part_1", "part1:# B\n"),
        ("/empty.txt", ""),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(a, b)| (a.to_string(), *b))
            .collect::<Vec<_>>()
    );
    // The extractor got the default metadata, and the exclusions were applied.
    assert_eq!(docs[3].metadata["file_name"], json!("b.md"));
    assert_eq!(
        docs[3].excluded_llm_metadata_keys,
        EXCLUDED_FILE_METADATA_KEYS
    );
}

#[tokio::test]
async fn file_metadata_replaces_the_default() {
    let tmp = small_dir();
    let root = tmp.path();
    let docs = SimpleDirectoryReader::new(root)
        .required_exts([".txt"])
        .file_metadata(Arc::new(|p: &Path| {
            let mut m = Metadata::new();
            m.insert(
                "source".into(),
                json!(p.file_name().unwrap().to_string_lossy()),
            );
            m
        }))
        .load_data()
        .await
        .unwrap();
    assert_eq!(docs.len(), 2);
    for doc in &docs {
        assert_eq!(doc.metadata.keys().collect::<Vec<_>>(), ["source"]);
        // LlamaIndex still lists its keys as excluded.
        assert_eq!(
            doc.excluded_embed_metadata_keys,
            EXCLUDED_FILE_METADATA_KEYS
        );
    }
    assert_eq!(docs[0].metadata["source"], json!("a.txt"));
    assert_eq!(
        docs[0].get_content(MetadataMode::Embed),
        "source: a.txt\n\nA"
    );
}

#[tokio::test]
async fn default_metadata_keeps_only_file_path_visible() {
    let tmp = small_dir();
    let root = tmp.path();
    let docs = SimpleDirectoryReader::new(root).load_data().await.unwrap();
    let path = root.join("a.txt").to_string_lossy().into_owned();
    assert_eq!(
        docs[0].get_content(MetadataMode::Llm),
        format!("file_path: {path}\n\nA")
    );
    assert_eq!(docs[0].metadata["file_size"], json!(1));
    assert_eq!(docs[1].metadata["file_type"], json!("text/markdown"));
}

#[tokio::test]
async fn raise_on_error_decides_between_skipping_and_failing() {
    let tmp = small_dir();
    let root = tmp.path();
    let reader = SimpleDirectoryReader::new(root).file_extractor(".md", Arc::new(FailingReader));
    let report = reader.load_data_with_report().await.unwrap();
    let texts: Vec<&str> = report.documents.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(texts, ["A", ""]);
    assert_eq!(report.errors.len(), 1);
    let (path, err) = &report.errors[0];
    assert_eq!(path, &root.join("b.md"));
    let msg = err.to_string();
    assert!(msg.contains("b.md") && msg.contains(".md"), "{msg}");
    assert_eq!(reader.load_data().await.unwrap().len(), 2);

    let strict = reader.clone().raise_on_error(true);
    let err = strict.load_data().await.unwrap_err();
    assert!(err.to_string().contains("b.md"), "{err}");
    let err = strict.iter_data_all().await.unwrap_err();
    assert!(err.to_string().contains("b.md"), "{err}");
}

/// Collects `iter_data`, stopping at the first error.
trait IterAll {
    async fn iter_data_all(&self) -> Result<Vec<Vec<Document>>>;
}

impl IterAll for SimpleDirectoryReader {
    async fn iter_data_all(&self) -> Result<Vec<Vec<Document>>> {
        use futures::StreamExt;
        let mut stream = self.iter_data();
        let mut out = Vec::new();
        while let Some(batch) = stream.next().await {
            out.push(batch?);
        }
        Ok(out)
    }
}

#[tokio::test]
async fn undecodable_bytes_are_replaced_and_a_bom_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("latin1.txt"), b"caf\xe9 \xff!").unwrap();
    std::fs::write(tmp.path().join("bom.txt"), b"\xef\xbb\xbfhi").unwrap();
    let docs = SimpleDirectoryReader::new(tmp.path())
        .load_data()
        .await
        .unwrap();
    assert_eq!(docs[0].text, "\u{FEFF}hi");
    assert_eq!(docs[1].text, "caf\u{FFFD} \u{FFFD}!");
}

#[tokio::test]
async fn missing_paths_are_errors_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let err = SimpleDirectoryReader::new(&missing)
        .load_data()
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Io { ref path, .. } if *path == missing),
        "{err}"
    );
    assert!(err.to_string().contains("nope"));

    let file = write(tmp.path(), "f.txt", "F");
    let err = SimpleDirectoryReader::new(&file)
        .list_resources()
        .unwrap_err();
    assert!(err.to_string().contains("f.txt"), "{err}");

    // A listed file that is missing is skipped with its error, as a file
    // that fails to read (Python raises: docs/differences.md).
    let report = SimpleDirectoryReader::from_files([file.clone(), missing.clone()])
        .load_data_with_report()
        .await
        .unwrap();
    assert_eq!(report.documents.len(), 1);
    assert_eq!(report.errors.len(), 1);
    assert!(report.errors[0].1.to_string().contains("nope"));

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = SimpleDirectoryReader::new(&empty)
        .load_data()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no files found") && err.to_string().contains("empty"));
    let none: [&str; 0] = [];
    assert!(
        SimpleDirectoryReader::from_files(none)
            .list_resources()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn symlink_loops_terminate() {
    let (_tmp, root) = layout_dir();
    // Default, like LlamaIndex: folder links (`linkdir`, `sub/loop`) are not walked.
    let files = SimpleDirectoryReader::new(&root)
        .recursive(true)
        .input_files()
        .unwrap();
    assert!(files.iter().all(|f| !f.starts_with(root.join("linkdir"))));
    assert!(files.contains(&root.join("link.txt")));

    // Following them: `linkdir` is walked, `sub/loop` (-> ..) is reported as a loop.
    let report = SimpleDirectoryReader::new(&root)
        .recursive(true)
        .follow_dir_symlinks(true)
        .filename_as_id(true)
        .load_data_with_report()
        .await
        .unwrap();
    let ids: Vec<&str> = report.documents.iter().map(|d| d.id_.as_str()).collect();
    let linked = root
        .join("linkdir/deep/f.txt")
        .to_string_lossy()
        .into_owned();
    assert!(ids.contains(&linked.as_str()));
    let loops: Vec<&PathBuf> = report.errors.iter().map(|(p, _)| p).collect();
    assert!(loops.contains(&&root.join("sub/loop")), "{loops:?}");
    assert!(
        report
            .errors
            .iter()
            .all(|(_, e)| e.to_string().contains("loop"))
    );

    let strict = SimpleDirectoryReader::new(&root)
        .recursive(true)
        .follow_dir_symlinks(true)
        .raise_on_error(true);
    assert!(
        strict
            .load_data()
            .await
            .is_err_and(|e| e.to_string().contains("loop"))
    );
}

#[tokio::test]
async fn broken_symlinks_are_reported_not_fatal() {
    let tmp = small_dir();
    let root = tmp.path();
    std::os::unix::fs::symlink("missing-target.txt", root.join("broken.txt")).unwrap();
    let reader = SimpleDirectoryReader::new(root);
    let report = reader.load_data_with_report().await.unwrap();
    assert_eq!(report.documents.len(), 3);
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].0, root.join("broken.txt"));
    assert!(report.errors[0].1.to_string().contains("broken.txt"));
    assert!(reader.raise_on_error(true).load_data().await.is_err());
}

/// Sleeps longer for earlier files, so concurrent loads finish out of order.
#[derive(Debug)]
struct SlowReader;

#[async_trait]
impl FileReader for SlowReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let n: u64 = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.trim_start_matches('f').parse().ok())
            .unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(40u64.saturating_sub(n))).await;
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
        Ok(vec![Document::document(text).with_metadata_map(extra_info)])
    }
}

/// Fails, but only after a while.
#[derive(Debug)]
struct LateFailingReader;

#[async_trait]
impl FileReader for LateFailingReader {
    async fn load_file(&self, path: &Path, _: Metadata) -> Result<Vec<Document>> {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Err(Error::corrupt(path, "this extractor fails late"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_loads_report_failures_in_file_order() {
    let tmp = tempfile::tempdir().unwrap();
    // `a` fails last, `b` at once.
    for name in ["a.late", "b.md", "c.txt"] {
        write(tmp.path(), name, "text");
    }
    let reader = SimpleDirectoryReader::new(tmp.path())
        .file_extractor(".late", Arc::new(LateFailingReader))
        .file_extractor(".md", Arc::new(FailingReader))
        .num_workers(4);
    let report = reader.load_data_with_report().await.unwrap();
    let failed: Vec<_> = report.errors.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(failed, [tmp.path().join("a.late"), tmp.path().join("b.md")]);
    assert_eq!(report.documents.len(), 1);
    let err = reader.raise_on_error(true).load_data().await.unwrap_err();
    assert!(err.to_string().contains("a.late"), "{err}");
}

/// Takes far longer than any test may.
#[derive(Debug)]
struct EndlessReader;

#[async_trait]
impl FileReader for EndlessReader {
    async fn load_file(&self, _: &Path, _: Metadata) -> Result<Vec<Document>> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(Vec::new())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_stops_the_loads_of_later_files() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["a.md", "b.endless", "c.endless"] {
        write(tmp.path(), name, "text");
    }
    let reader = SimpleDirectoryReader::new(tmp.path())
        .file_extractor(".md", Arc::new(FailingReader))
        .file_extractor(".endless", Arc::new(EndlessReader))
        .num_workers(4)
        .raise_on_error(true);
    // The endless loads after the failing file are stopped, not awaited.
    let load = tokio::time::timeout(Duration::from_secs(60), reader.load_data());
    let err = load.await.expect("waited on later files").unwrap_err();
    assert!(err.to_string().contains("a.md"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_loads_match_a_serial_load() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let ext = if i % 2 == 0 { "txt" } else { "slow" };
        write(tmp.path(), &format!("f{i:02}.{ext}"), &format!("file {i}"));
    }
    let reader = |workers: usize| {
        SimpleDirectoryReader::new(tmp.path())
            .filename_as_id(true)
            .file_extractor(".slow", Arc::new(SlowReader))
            .num_workers(workers)
    };
    let serial = reader(1).load_data().await.unwrap();
    let parallel = reader(16).load_data().await.unwrap();
    assert_eq!(serial.len(), 40);
    let view = |docs: &[Document]| -> Vec<(String, String, Metadata)> {
        docs.iter()
            .map(|d| (d.id_.clone(), d.text.clone(), d.metadata.clone()))
            .collect()
    };
    assert_eq!(view(&serial), view(&parallel));
    let texts: Vec<String> = serial.iter().map(|d| d.text.clone()).collect();
    let want: Vec<String> = (0..40).map(|i| format!("file {i}")).collect();
    assert_eq!(texts, want);
}

#[tokio::test]
async fn iter_data_yields_one_batch_per_file() {
    let tmp = small_dir();
    let root = tmp.path();
    let reader = SimpleDirectoryReader::new(root)
        .recursive(true)
        .file_extractor(".md", Arc::new(TwoPartReader))
        .filename_as_id(true);
    let batches = reader.iter_data_all().await.unwrap();
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(sizes, [1, 2, 1, 1, 2]);
    let flat: Vec<Document> = batches.into_iter().flatten().collect();
    assert_eq!(flat, reader.load_data().await.unwrap());
}

#[tokio::test]
async fn load_file_and_list_resources() {
    let tmp = small_dir();
    let root = tmp.path();
    let reader = SimpleDirectoryReader::new(root).filename_as_id(true);
    let listed = reader.list_resources().unwrap();
    assert_eq!(listed.len(), 3);
    assert!(listed[0].ends_with("/a.txt") && Path::new(&listed[0]).is_absolute());
    let docs = reader.load_file(root.join("sub/./c.txt")).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].id_, root.join("sub/c.txt").to_string_lossy());
    assert_eq!(
        docs[0].excluded_embed_metadata_keys,
        EXCLUDED_FILE_METADATA_KEYS
    );
    assert!(reader.load_file(root.join("zzz.txt")).await.is_err());
}

#[tokio::test]
async fn relative_paths_are_rendered_as_llama_index_renders_them() {
    // Tests run in the crate folder.
    let rel = "./tests//data/readers/layout.json";
    let docs = SimpleDirectoryReader::from_files([rel, rel])
        .filename_as_id(true)
        .load_data()
        .await
        .unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].id_, "tests/data/readers/layout.json");
    assert_eq!(
        docs[0].metadata["file_path"],
        json!("tests/data/readers/layout.json")
    );
    assert_eq!(docs[0].metadata["file_type"], json!("application/json"));

    let dir_docs = SimpleDirectoryReader::new("tests/data/readers/")
        .required_exts([".json"])
        .list_resources()
        .unwrap();
    let abs = format!(
        "{}/tests/data/readers/layout.json",
        env!("CARGO_MANIFEST_DIR")
    );
    assert!(dir_docs.contains(&abs), "{dir_docs:?}");
}

#[test]
fn works_without_a_tokio_runtime() {
    let tmp = small_dir();
    let reader = SimpleDirectoryReader::new(tmp.path()).num_workers(4);
    let docs = futures::executor::block_on(reader.load_data()).unwrap();
    assert_eq!(docs.len(), 3);
}

#[tokio::test]
async fn is_a_reader_trait_object() {
    let tmp = small_dir();
    let reader: Arc<dyn Reader> =
        Arc::new(SimpleDirectoryReader::new(tmp.path()).show_progress(true));
    assert_eq!(reader.load_data().await.unwrap().len(), 3);
    assert!(format!("{reader:?}").contains("SimpleDirectoryReader"));
}

#[tokio::test]
async fn corpus_loads_as_llama_index_loads_it() {
    let corpus = common::corpus_dir();
    let docs = SimpleDirectoryReader::new(&corpus)
        .recursive(true)
        .required_exts([".txt"])
        .filename_as_id(true)
        .load_data()
        .await
        .unwrap();
    let expected = read_json("corpus_expected.json");
    let expected = expected.as_array().unwrap();
    assert_eq!(docs.len(), expected.len());
    let corpus_str = corpus.to_string_lossy().into_owned();
    for (doc, want) in docs.iter().zip(expected) {
        let sha = Sha256::digest(doc.text.as_bytes());
        let sha: String = sha.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            doc.id_.replace(&corpus_str, "<corpus>"),
            want["id"].as_str().unwrap()
        );
        assert_eq!(
            doc.text.chars().count() as u64,
            want["chars"].as_u64().unwrap()
        );
        assert_eq!(sha, want["text_sha256"].as_str().unwrap(), "{}", doc.id_);
        assert_eq!(doc.metadata["file_size"], want["file_size"]);
        assert_eq!(doc.metadata["file_type"], want["file_type"]);
    }
}

/// A FIFO or a link to a device in a folder would block or never end if
/// read: both are skipped, and the folder's files load.
#[tokio::test]
async fn fifos_and_links_to_devices_are_skipped_not_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "a plain file").unwrap();
    let fifo = dir.path().join("pipe.txt");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zeros.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", dir.path().join("noise.bin")).unwrap();

    let reader = SimpleDirectoryReader::new(dir.path());
    let docs = tokio::time::timeout(Duration::from_secs(20), reader.load_data())
        .await
        .expect("reading the folder hung")
        .unwrap();
    let names: Vec<&str> = docs
        .iter()
        .filter_map(|d| d.metadata.get("file_name").and_then(Value::as_str))
        .collect();
    assert_eq!(names, ["note.txt"]);
}

#[tokio::test]
async fn files_above_max_file_size_are_skipped_with_their_size() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "tiny").unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(5000)).unwrap();
    let report = SimpleDirectoryReader::new(dir.path())
        .max_file_size(1000)
        .load_data_with_report()
        .await
        .unwrap();
    assert_eq!(report.documents.len(), 1);
    assert_eq!(report.documents[0].text, "tiny");
    assert_eq!(report.errors.len(), 1);
    let (path, err) = &report.errors[0];
    assert!(path.ends_with("big.txt"));
    let text = err.to_string();
    assert!(
        text.contains("5000 bytes") && text.contains("max_file_size"),
        "{text}"
    );
    // With raise_on_error the same file is the error.
    let err = SimpleDirectoryReader::new(dir.path())
        .max_file_size(1000)
        .raise_on_error(true)
        .load_data_with_report()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("max_file_size"), "{err}");
}
