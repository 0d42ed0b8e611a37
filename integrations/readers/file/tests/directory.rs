//! `SimpleDirectoryReader` with this crate's readers on a mixed folder:
//! every file loads through its reader, and a corrupt PDF is that file's error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ragloom_core::readers::{Reader, SimpleDirectoryReader};
use ragloom_readers_file::{SimpleDirectoryReaderExt, default_file_extractors};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A folder with one file of each kind, plus a truncated PDF and one that
/// makes pdf-extract panic.
fn mixed_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "two_pages.pdf",
        "corrupt.pdf",
        "panics.pdf",
        "notes.docx",
        "people.csv",
        "book.epub",
        "guide.md",
        "page.html",
        "data.json",
    ] {
        std::fs::copy(data(name), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("plain.txt"), "Just text.").unwrap();
    dir
}

fn file_name(doc: &ragloom_core::Document) -> &str {
    doc.metadata["file_name"].as_str().unwrap()
}

#[tokio::test]
async fn default_extractors_load_every_file_and_report_the_broken_ones() {
    let dir = mixed_folder();
    let report = SimpleDirectoryReader::new(dir.path())
        .with_default_file_extractors()
        .load_data_with_report()
        .await
        .unwrap();

    let mut failed: Vec<String> = report
        .errors
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    failed.sort();
    assert_eq!(failed, ["corrupt.pdf", "panics.pdf"]);
    for (path, error) in &report.errors {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(error.to_string().contains(name.as_ref()), "{error}");
    }

    let names: Vec<&str> = report.documents.iter().map(file_name).collect();
    // Files in sorted order; the PDF gives one document per page.
    assert_eq!(
        names,
        [
            "book.epub",
            "data.json",
            "guide.md",
            "notes.docx",
            "page.html",
            "people.csv",
            "plain.txt",
            "two_pages.pdf",
            "two_pages.pdf",
        ]
    );
    let pdf: Vec<_> = report
        .documents
        .iter()
        .filter(|d| file_name(d) == "two_pages.pdf")
        .collect();
    // The reader's key first, then SimpleDirectoryReader's file metadata.
    let keys: Vec<&str> = pdf[0].metadata.keys().map(String::as_str).collect();
    assert_eq!(keys[..3], ["page_label", "file_name", "file_path"]);
    assert_eq!(pdf[1].metadata["page_label"], "2");
    assert!(pdf[0].text.contains("looms and weaving"));
    // Only `file_path` (and the page label) reach the embedded text.
    assert!(
        pdf[0]
            .excluded_embed_metadata_keys
            .contains(&"file_name".to_string())
    );

    let csv = report
        .documents
        .iter()
        .find(|d| file_name(d) == "people.csv")
        .unwrap();
    assert!(
        csv.text.starts_with("Alice, 30, 1.5, Paris, France\n"),
        "{}",
        csv.text
    );
    let docx = report
        .documents
        .iter()
        .find(|d| file_name(d) == "notes.docx")
        .unwrap();
    assert!(
        docx.text.starts_with("Header text\n\nWeaving notes"),
        "{}",
        docx.text
    );
    // As in LlamaIndex, Markdown, HTML and JSON load as plain text by default.
    let html = report
        .documents
        .iter()
        .find(|d| file_name(d) == "page.html")
        .unwrap();
    assert!(html.text.starts_with("<!DOCTYPE html>"));
}

#[tokio::test]
async fn all_extractors_parse_markdown_html_and_json_too() {
    let dir = mixed_folder();
    let docs = SimpleDirectoryReader::new(dir.path())
        .with_all_file_extractors()
        .load_data()
        .await
        .unwrap();
    let of = |name: &str| -> Vec<&ragloom_core::Document> {
        docs.iter().filter(|d| file_name(d) == name).collect()
    };
    assert_eq!(of("guide.md").len(), 4);
    let html = of("page.html");
    assert_eq!(html[0].metadata["title"], Value::from("Loom & Co"));
    assert!(html[0].text.starts_with("Looms\n\nA loom weaves cloth."));
    assert!(
        of("data.json")[0]
            .text
            .starts_with("\"name\": \"ragloom\",")
    );
}

#[tokio::test]
async fn raise_on_error_stops_at_the_broken_pdf() {
    let dir = mixed_folder();
    let err = SimpleDirectoryReader::new(dir.path())
        .with_default_file_extractors()
        .raise_on_error(true)
        .num_workers(1)
        .load_data()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("corrupt.pdf"), "{err}");
}

#[tokio::test]
async fn a_users_extractor_registered_after_the_defaults_wins() {
    let dir = mixed_folder();
    let docs = SimpleDirectoryReader::from_files([dir.path().join("people.csv")])
        .with_default_file_extractors()
        .file_extractor(
            ".csv",
            std::sync::Arc::new(ragloom_readers_file::CSVReader::new()),
        )
        .load_data()
        .await
        .unwrap();
    assert!(docs[0].text.starts_with("name, age, score, city\n"));
    assert_eq!(docs[0].metadata["filename"], "people.csv");
}

#[test]
fn default_extractors_are_llamaindexs_for_these_formats() {
    let exts: Vec<&str> = default_file_extractors().iter().map(|(e, _)| *e).collect();
    assert_eq!(exts, [".pdf", ".docx", ".csv", ".epub"]);
}
