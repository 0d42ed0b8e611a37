//! Decompression bombs: a DOCX or EPUB that unpacks to more than the reader's
//! limit is an error naming the file, counted on bytes actually decompressed.

#![allow(clippy::unwrap_used)]

use ragloom_core::Metadata;
use ragloom_core::readers::FileReader;
use ragloom_readers_file::{DocxReader, EpubReader};
use std::io::Write;
use zip::write::SimpleFileOptions;

/// A ZIP archive with `entries`, each `(name, bytes)`, deflated.
fn archive(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// Word XML whose one paragraph is `n` letters: it compresses a thousandfold.
fn huge_document(n: usize) -> Vec<u8> {
    format!(
        "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:body></w:document>",
        "a".repeat(n)
    )
    .into_bytes()
}

#[tokio::test]
async fn a_docx_bomb_is_refused_and_a_normal_docx_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.docx");
    let bytes = archive(&[("word/document.xml", huge_document(8_000_000))]);
    assert!(bytes.len() < 100_000, "the fixture should be small on disk");
    std::fs::write(&bomb, bytes).unwrap();
    let reader = DocxReader::new().with_max_unzipped_bytes(1_000_000);
    let err = reader.load_file(&bomb, Metadata::new()).await.unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("bomb.docx") && msg.contains("decompression bomb"),
        "{msg}"
    );

    // Within the limit the same reader reads it.
    let small = dir.path().join("small.docx");
    std::fs::write(
        &small,
        archive(&[("word/document.xml", huge_document(1000))]),
    )
    .unwrap();
    let docs = reader.load_file(&small, Metadata::new()).await.unwrap();
    assert_eq!(docs[0].text.len(), 1000);
}

#[tokio::test]
async fn an_epub_bomb_counts_every_entry_against_one_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.epub");
    let container = br#"<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#.to_vec();
    let opf = br#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/><item id="b" href="b.xhtml" media-type="application/xhtml+xml"/></manifest></package>"#.to_vec();
    // Two chapters of 600 KB each: each under the 1 MB limit, together over it.
    let chapter = format!("<html><body><p>{}</p></body></html>", "b".repeat(600_000)).into_bytes();
    std::fs::write(
        &path,
        archive(&[
            ("META-INF/container.xml", container),
            ("OEBPS/content.opf", opf),
            ("OEBPS/a.xhtml", chapter.clone()),
            ("OEBPS/b.xhtml", chapter),
        ]),
    )
    .unwrap();
    let err = EpubReader::new()
        .with_max_unzipped_bytes(1_000_000)
        .load_file(&path, Metadata::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("decompression bomb"), "{err}");
    let docs = EpubReader::new()
        .load_file(&path, Metadata::new())
        .await
        .unwrap();
    assert!(docs[0].text.len() >= 1_200_000);
}
