//! Each reader against what LlamaIndex's Python readers give on the same
//! files (recorded in `data/expected.json` by `data/gen_expected.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Metadata};
use ragloom_readers_file::{
    CSVReader, DocxReader, EpubReader, HTMLReader, HTMLTagReader, JSONReader, MarkdownReader,
    PDFReader, PandasCSVReader,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn expected(case: &str) -> Value {
    let text = std::fs::read_to_string(data("expected.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all.get(case)
        .unwrap_or_else(|| panic!("no recorded case {case}"))
        .clone()
}

fn extra() -> Metadata {
    json!({"source": "fixture"}).as_object().unwrap().clone()
}

async fn load(reader: &dyn FileReader, name: &str) -> ragloom_core::Result<Vec<Document>> {
    reader.load_file(&data(name), extra()).await
}

/// Documents as the recorded JSON shape, with the absolute path the test
/// passes written back as the relative name Python was given.
fn shape(docs: &[Document], name: &str) -> Value {
    let full = data(name).to_string_lossy().into_owned();
    Value::Array(
        docs.iter()
            .map(|d| {
                let mut meta = d.metadata.clone();
                if meta.get("file_path") == Some(&Value::String(full.clone())) {
                    meta.insert("file_path".into(), Value::String(name.into()));
                }
                json!({"text": d.text.as_str(), "metadata": meta})
            })
            .collect(),
    )
}

/// Asserts that `reader` gives exactly the recorded documents for `case`.
async fn assert_same(reader: &dyn FileReader, case: &str) {
    let name = case.rsplit('/').next().unwrap();
    let docs = load(reader, name)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let want = &expected(case)["docs"];
    assert_eq!(&shape(&docs, name), want, "{case}");
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn pdf_pages_have_llamaindex_labels_metadata_and_words() {
    for name in ["two_pages.pdf", "labelled.pdf", "owner_only.pdf"] {
        let case = format!("PDFReader/{name}");
        let docs = load(&PDFReader::new(), name).await.unwrap();
        let want = expected(&case)["docs"].as_array().unwrap().clone();
        assert_eq!(docs.len(), want.len(), "{case}");
        for (doc, want) in docs.iter().zip(&want) {
            assert_eq!(
                Value::Object(doc.metadata.clone()),
                want["metadata"],
                "{case}"
            );
            assert_eq!(
                words(doc.text.as_str()),
                words(want["text"].as_str().unwrap()),
                "{case}"
            );
        }
    }
}

#[tokio::test]
async fn pdf_full_document_joins_pages() {
    let case = "PDFReader(return_full_document)/two_pages.pdf";
    let docs = load(
        &PDFReader::new().return_full_document(true),
        "two_pages.pdf",
    )
    .await
    .unwrap();
    let want = &expected(case)["docs"][0];
    assert_eq!(docs.len(), 1);
    assert_eq!(Value::Object(docs[0].metadata.clone()), want["metadata"]);
    assert_eq!(
        words(docs[0].text.as_str()),
        words(want["text"].as_str().unwrap())
    );
    let pages = load(&PDFReader::new(), "two_pages.pdf").await.unwrap();
    let joined: Vec<&str> = pages.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(docs[0].text.as_str(), joined.join("\n"));
}

#[tokio::test]
async fn bad_pdfs_are_errors_naming_the_file() {
    // Python fails on the first two as well; the third makes pdf-extract
    // panic (no /MediaBox), which must come back as this file's error.
    for (name, needle) in [
        ("encrypted.pdf", "password"),
        ("corrupt.pdf", "not a readable PDF"),
        ("panics.pdf", "panicked"),
    ] {
        let err = load(&PDFReader::new(), name).await.unwrap_err().to_string();
        assert!(err.contains(name), "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
    }
    assert!(expected("PDFReader/encrypted.pdf").get("error").is_some());
    assert!(expected("PDFReader/corrupt.pdf").get("error").is_some());
}

#[tokio::test]
async fn docx_text_is_docx2txts() {
    assert_same(&DocxReader::new(), "DocxReader/notes.docx").await;
    let err = load(&DocxReader::new(), "corrupt.docx").await.unwrap_err();
    assert!(err.to_string().contains("corrupt.docx"), "{err}");
}

#[tokio::test]
async fn csv_readers_match_python() {
    for name in [
        "people.csv",
        "numbers.csv",
        "ints.csv",
        "flags.csv",
        "crlf.csv",
    ] {
        assert_same(&CSVReader::new(), &format!("CSVReader/{name}")).await;
        assert_same(
            &CSVReader::new().concat_rows(false),
            &format!("CSVReader(concat_rows=False)/{name}"),
        )
        .await;
        assert_same(&PandasCSVReader::new(), &format!("PandasCSVReader/{name}")).await;
        assert_same(
            &PandasCSVReader::new().concat_rows(false),
            &format!("PandasCSVReader(concat_rows=False)/{name}"),
        )
        .await;
    }
}

#[tokio::test]
async fn json_reader_matches_python() {
    let cases: Vec<(&str, JSONReader)> = vec![
        ("JSONReader/data.json", JSONReader::new()),
        (
            "JSONReader(clean_json=False)/data.json",
            JSONReader::new().clean_json(false),
        ),
        (
            "JSONReader(levels_back=0)/data.json",
            JSONReader::new().levels_back(0),
        ),
        (
            "JSONReader(levels_back=1)/data.json",
            JSONReader::new().levels_back(1),
        ),
        (
            "JSONReader(levels_back=2,collapse_length=20)/data.json",
            JSONReader::new().levels_back(2).collapse_length(20),
        ),
        (
            "JSONReader(levels_back=0,collapse_length=40)/data.json",
            JSONReader::new().levels_back(0).collapse_length(40),
        ),
        (
            "JSONReader(ensure_ascii=True)/data.json",
            JSONReader::new().ensure_ascii(true),
        ),
        (
            "JSONReader(is_jsonl=True)/rows.jsonl",
            JSONReader::new().is_jsonl(true),
        ),
        (
            "JSONReader(is_jsonl=True,levels_back=0)/rows.jsonl",
            JSONReader::new().is_jsonl(true).levels_back(0),
        ),
    ];
    for (case, reader) in cases {
        assert_same(&reader, case).await;
    }
}

#[tokio::test]
async fn invalid_json_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"a\": 1}\n{oops\n").unwrap();
    let err = JSONReader::new()
        .is_jsonl(true)
        .load_file(&bad, Metadata::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.jsonl") && err.contains("line 2"), "{err}");
}

#[tokio::test]
async fn markdown_reader_matches_python() {
    assert_same(&MarkdownReader::new(), "MarkdownReader/guide.md").await;
    assert_same(&MarkdownReader::new(), "MarkdownReader/headers_only.md").await;
    assert_same(
        &MarkdownReader::new()
            .remove_hyperlinks(false)
            .remove_images(false),
        "MarkdownReader(keep links and images)/guide.md",
    )
    .await;
}

#[tokio::test]
async fn markdown_header_metadata_is_opt_in() {
    let docs = load(&MarkdownReader::new().header_metadata(true), "guide.md")
        .await
        .unwrap();
    assert_eq!(docs[0].metadata.get("header"), None);
    assert_eq!(docs[1].metadata["header"], "Title Install");
    assert_eq!(docs[3].metadata["header"], "Second");
}

#[tokio::test]
async fn html_tag_reader_matches_python() {
    assert_same(&HTMLTagReader::new(), "HTMLTagReader/page.html").await;
    assert_same(
        &HTMLTagReader::new().tag("li"),
        "HTMLTagReader(tag=li)/page.html",
    )
    .await;
    let with_id = load(&HTMLTagReader::new().ignore_no_id(true), "page.html")
        .await
        .unwrap();
    assert_eq!(with_id.len(), 2);
}

#[tokio::test]
async fn html_reader_gives_readable_text_and_title() {
    let docs = load(&HTMLReader::new(), "page.html").await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(
        Value::Object(docs[0].metadata.clone()),
        json!({"title": "Loom & Co", "source": "fixture"})
    );
    assert_eq!(
        docs[0].text.as_str(),
        "Looms\n\nA loom weaves cloth.\n\nSection one text\n\ninner para\n\nnested\n\nno id\n\n\
         * warp\n* weft\n\n  keep\n    this\n\na | b\n1 | 2"
    );
}

#[tokio::test]
async fn epub_has_the_words_llamaindex_reads() {
    let docs = load(&EpubReader::new(), "book.epub").await.unwrap();
    let want = &expected("EpubReader/book.epub")["docs"][0];
    assert_eq!(docs.len(), 1);
    assert_eq!(Value::Object(docs[0].metadata.clone()), want["metadata"]);
    // html2text writes Markdown and link targets; compare the words.
    let python: Vec<String> = words(want["text"].as_str().unwrap())
        .into_iter()
        .filter(|w| !w.starts_with("ch") || !w.ends_with("xhtml"))
        .collect();
    let ours = words(docs[0].text.as_str());
    let python_without_links: Vec<String> = python
        .into_iter()
        .filter(|w| !["ch1", "ch2", "xhtml"].contains(&w.as_str()))
        .collect();
    assert_eq!(ours, python_without_links, "{}", docs[0].text.as_str());
}

#[tokio::test]
async fn a_missing_file_is_an_io_error_naming_it() {
    for reader in ragloom_readers_file::all_file_extractors() {
        let missing = data(&format!("missing{}", reader.0));
        let err = reader
            .1
            .load_file(&missing, Metadata::new())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing"), "{}: {err}", reader.0);
    }
}

/// A one-page PDF whose content stream shows `ops` one-letter strings.
fn pdf_with_text_ops(ops: usize) -> Vec<u8> {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td\n");
    for _ in 0..ops {
        content.push_str("(a) Tj\n");
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

#[tokio::test]
async fn a_pdf_past_its_time_limit_is_stopped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.pdf");
    std::fs::write(&small, pdf_with_text_ops(3)).unwrap();
    let docs = PDFReader::new()
        .load_file(&small, Metadata::new())
        .await
        .unwrap();
    assert!(docs[0].text.contains("aaa"), "{:?}", docs[0].text);

    let slow = dir.path().join("slow.pdf");
    // 50,000 operators: slow enough for 1 ms, and under PDFReader's parse
    // limit (a page of 200,000 would take lopdf about 120 MB to parse).
    std::fs::write(&slow, pdf_with_text_ops(50_000)).unwrap();
    let err = PDFReader::new()
        .with_time_limit(std::time::Duration::from_millis(1))
        .load_file(&slow, Metadata::new())
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("time limit") && text.contains("slow.pdf"),
        "{text}"
    );
    // Within the default limit the same file reads whole.
    let docs = PDFReader::new()
        .load_file(&slow, Metadata::new())
        .await
        .unwrap();
    assert!(docs[0].text.len() >= 50_000);
}
