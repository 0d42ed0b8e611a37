//! Peak memory of the archive readers on hostile parts (issue 40): a small
//! DOCX or EPUB whose XML inflates to a hundred megabytes holding little
//! text. Each case runs in a child process and must peak at 10x the text it
//! extracts plus 100 MB. PDF bombs and dense content must be refused so.

#![allow(clippy::unwrap_used)]

use ragloom_core::Metadata;
use ragloom_core::readers::FileReader;
use ragloom_readers_file::{
    CSVReader, DocxReader, EpubReader, HTMLReader, HTMLTagReader, JSONReader, MarkdownReader,
    PDFReader, PandasCSVReader,
};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use zip::write::SimpleFileOptions;

/// Names the case the child runs and the file it reads: `case:path`. The
/// child is this test binary run again; it reports its own `VmHWM`, the
/// kernel's record of its peak resident memory, so tests running beside it
/// do not disturb it.
const CASE_VAR: &str = "RAGLOOM_READER_MEMORY_BOUND_CASE";
/// Bytes the hostile part inflates to: far above the bound's fixed part,
/// small enough for a debug build to deflate and parse in seconds.
const PART_LEN: usize = 150 << 20;
/// For parts of one event every few bytes, which a debug build parses at
/// about a microsecond an event: still over the bound when held whole with
/// the two line breaks per paragraph that docx2txt collects.
const EVENTS_PART_LEN: usize = 80 << 20;
/// The bound's fixed part: binary, allocator, thread stacks.
const FIXED: u64 = 100 << 20;
/// The bound's part per byte of text.
const PER_BYTE: u64 = 10;

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// The hostile parts, by case: the part's opening, a unit repeated to
/// [`PART_LEN`], and its closing.
fn part(case: &str) -> (String, &'static str, String) {
    let doc = |body: &str| format!("<w:document xmlns:w=\"{W_NS}\"><w:body>{body}");
    let end = "</w:body></w:document>".to_string();
    match case {
        // Whitespace between elements: text that is never extracted.
        "docx_spaces" => (doc("<w:p><w:r><w:t>x</w:t></w:r></w:p>"), " ", end),
        // Empty paragraphs: two line breaks each, all stripped.
        "docx_empty_paragraphs" => (doc("<w:p><w:r><w:t>x</w:t></w:r></w:p>"), "<w:p/>", end),
        // One attribute of the whole part's length.
        "docx_attribute" => (doc("<w:p w:rsidR=\""), "a", format!("\"/>{end}")),
        // A text run of spaces, stripped from the end of the text.
        "docx_text_spaces" => (
            doc("<w:p><w:r><w:t>x</w:t><w:t>"),
            " ",
            format!("</w:t></w:r></w:p>{end}"),
        ),
        // The package document, padded.
        "epub_opf_spaces" => (
            r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>"#.into(),
            " ",
            "</manifest></package>".into(),
        ),
        // A chapter of markup and no text, which the HTML renderer parses whole.
        "epub_chapter_elements" => (
            "<html><body><p>x</p>".into(),
            "<b></b>",
            "</body></html>".into(),
        ),
        _ => panic!("no case {case:?}"),
    }
}

/// Plain files, by case: the file's extension, its opening, a unit
/// repeated to [`PLAIN_LEN`] (a `#` in it numbered), and its closing.
fn plain(case: &str) -> Option<(&'static str, String, String, String)> {
    let s = |open: &str, unit: &str, close: &str| (open.into(), unit.into(), close.into());
    let (ext, (open, unit, close)): (_, (String, String, String)) = match case {
        // Short lines: a `String` each before they were joined as read.
        "markdown_lines" => ("md", s("", "a\n", "")),
        // Markup and no text: an html5ever DOM node per element when pages
        // were parsed into a tree.
        "html_elements" => (
            "html",
            s("<html><body><p>x</p>", "<b></b>", "</body></html>"),
        ),
        // Elements never closed: the stack of open elements.
        "html_unclosed" => ("html", s("<body>", "<b>", "")),
        // List items a browser closes: each ends the one before.
        "html_list_items" => ("html", s("<ul>", "<li>x", "</ul>")),
        // Character references: a token each.
        "html_references" => ("html", s("<p>", "&amp;", "</p>")),
        // One comment and one attribute of the whole file: tokens the
        // tokenizer holds whole.
        "html_comment" => ("html", s("<p>x</p><!--", "a", "-->")),
        "html_attribute" => ("html", s("<p title=\"", "a", "\">x</p>")),
        // The tag nested through other elements: each occurrence reads the
        // text of those inside it, so the page is refused past 64 (Python's
        // text grows with the square of the depth).
        "htmltag_nested" => ("htmltag", s("<body>", "<section><div>x", "")),
        // Text inside script in a child: read, then dropped.
        "htmltag_scripts" => (
            "htmltag",
            s("<section><div>", "<script>x</script>", "</div></section>"),
        ),
        // CSV, read by PandasCSVReader unless the case names another reader
        // (`csv_reader`): empty fields, once a `String` each.
        "csv_empty_fields" => ("csv", s("a,b\n", ",\n", "")),
        // Blank lines: skipped by pandas, an empty row each to Python's csv.
        "csv_blank_lines" => ("csv", s("a\n", "\n", "")),
        // Rows of an empty quoted field.
        "csv_quotes" => ("csv", s("a\n", "\"\"\n", "")),
        // A header of millions of columns, with no data (no text) or one row.
        "csv_header_only" => ("csv", s("a", ",", "\n")),
        "csv_wide_row" => ("csv", s("a", ",", "\n1\n")),
        // One quoted field of the whole file, lines inside it.
        "csv_quoted_newlines" => ("csv", s("a\n\"", "x\r\n", "\"\n")),
        // Short integers: type inference over every value.
        "csv_zeros" => ("csv", s("a,b,c\n", "0,0,0\n", "")),
        // The same through CSVReader.
        "csv_python_empty_fields" => ("csv", s("a,b\n", ",\n", "")),
        "csv_python_blank_lines" => ("csv", s("a\n", "\r\n", "")),
        "csv_python_quotes" => ("csv", s("a\n", "\"\"\n", "")),
        "csv_python_quoted_newlines" => ("csv", s("a\n\"", "x\r\n", "\"\n")),
        // A document per row (`concat_rows(false)`).
        "csv_rows_empty_fields" => ("csv", s("a,b\n", ",\n", "")),
        "csv_rows_zeros" => ("csv", s("a,b,c\n", "0,0,0\n", "")),
        "csv_python_rows_empty_fields" => ("csv", s("a,b\n", ",\n", "")),
        json => ("json", json_plain(json)?),
    };
    Some((ext, open, unit, close))
}

/// The JSON cases: a `serde_json::Value` per element and a `String` per
/// line of text before the reader rendered as it parsed. The case's name
/// picks the reader's mode (see [`json_reader`]).
fn json_plain(case: &str) -> Option<(String, String, String)> {
    let s = |open: &str, unit: &str, close: &str| Some((open.into(), unit.into(), close.into()));
    // Nesting one level short of serde_json's recursion limit.
    let deep = |open: &str, close: &str| (open.repeat(126), close.repeat(126));
    match case {
        "json_zeros" => s("[0", ",0", "]"),
        "json_empty_arrays" | "json_levels_empty_arrays" | "json_collapse_empty_arrays" => {
            s("[[]", ",[]", "]")
        }
        "json_empty_objects" => s("[{}", ",{}", "]"),
        // Every empty array as deep as the limit allows: no text.
        "json_deep_arrays" => {
            let (open, close) = deep("[", "]");
            Some((
                format!("[{open}{close}"),
                format!(",{open}{close}"),
                "]".into(),
            ))
        }
        // One line per zero, under 126 keys: `a 0` with `levels_back(1)`.
        "json_levels_deep_keys" => {
            let (open, close) = deep("{\"a\":", "}");
            Some((format!("{open}[0"), ",0".into(), format!("]{close}")))
        }
        // Duplicate keys: Python keeps the first position and the last value.
        "json_duplicate_keys" => s("{\"\":0", ",\"\":0", "}"),
        "json_collapse_duplicate_keys" => s("{\"\":[]", ",\"\":[]", "}"),
        // Objects with a duplicate key, no text: each object's keys are remembered.
        "json_levels_duplicate_objects" => s("[{\"\":[],\"\":[]}", ",{\"\":[],\"\":[]}", "]"),
        // Distinct keys, each remembered while its object is open.
        "json_levels_distinct_keys" => s("{\"\":[]", ",\"#\":[]", "}"),
        // One duplicate among arrays: the rest must still stream.
        "json_duplicate_key_and_arrays" => s("[{\"\":0,\"\":0}", ",[]", "]"),
        // Six bytes of input per character of a string.
        "json_escapes" => s("[\"", "\\u0000", "\"]"),
        _ => None,
    }
}

/// The JSON reader a case runs: `json_levels_*` with `levels_back(1)`,
/// `json_collapse_*` with `levels_back(0)` and `collapse_length(1)` (nothing
/// collapses, every container is measured), the defaults otherwise.
fn json_reader(case: &str) -> JSONReader {
    if case.starts_with("json_levels") {
        JSONReader::new().levels_back(1)
    } else if case.starts_with("json_collapse") {
        JSONReader::new().levels_back(0).collapse_length(1)
    } else {
        JSONReader::new()
    }
}

/// Bytes of a plain file: its readers parse it whole, so the bound is met
/// only if each byte costs less than ten bytes of text plus a share of 100 MB.
const PLAIN_LEN: usize = 8 << 20;

/// Writes the case's archive to `path`, the hostile part deflated as it is
/// written so that the parent never holds it either.
fn write_archive(case: &str, path: &Path) {
    if case.starts_with("pdf_") {
        std::fs::write(path, hostile_pdf(case)).unwrap();
        return;
    }
    if let Some((_, open, unit, close)) = plain(case) {
        let mut body = String::with_capacity(PLAIN_LEN + 64);
        body.push_str(&open);
        if unit.contains('#') {
            // Each repetition numbered: distinct keys.
            for i in 0.. {
                if body.len() >= PLAIN_LEN {
                    break;
                }
                body.push_str(&unit.replace('#', &i.to_string()));
            }
        } else {
            body.push_str(&unit.repeat(PLAIN_LEN / unit.len()));
        }
        body.push_str(&close);
        std::fs::write(path, body).unwrap();
        return;
    }
    let file = std::fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let (open, unit, close) = part(case);
    let hostile = if case.starts_with("docx") {
        "word/document.xml"
    } else {
        if case == "epub_chapter_elements" {
            zip.start_file("OEBPS/content.opf", options).unwrap();
            zip.write_all(part("epub_opf_spaces").0.as_bytes()).unwrap();
            zip.write_all(b"</manifest></package>").unwrap();
        }
        zip.start_file("META-INF/container.xml", options).unwrap();
        zip.write_all(br#"<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#).unwrap();
        if case == "epub_opf_spaces" {
            zip.start_file("OEBPS/a.xhtml", options).unwrap();
            zip.write_all(b"<html><body><p>x</p></body></html>")
                .unwrap();
            "OEBPS/content.opf"
        } else {
            "OEBPS/a.xhtml"
        }
    };
    zip.start_file(hostile, options).unwrap();
    zip.write_all(open.as_bytes()).unwrap();
    let chunk = unit.repeat((1 << 20) / unit.len());
    // The HTML tokenizer is slower per byte than the XML parser: 8 MB of
    // elements is ten times the bound for a tree of them already.
    let len = if case == "epub_chapter_elements" {
        PLAIN_LEN
    } else if unit.len() > 1 {
        EVENTS_PART_LEN
    } else {
        PART_LEN
    };
    let mut written = 0;
    while written < len {
        zip.write_all(chunk.as_bytes()).unwrap();
        written += chunk.len();
    }
    zip.write_all(close.as_bytes()).unwrap();
    zip.finish().unwrap();
}

/// This process's peak resident memory in bytes (`VmHWM`, Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The child's side: reads one archive and prints its peak and the length
/// of the text it extracted (0 for an error). It does nothing in a normal
/// run, where the variable is unset.
#[tokio::test]
async fn memory_bound_child() {
    let Ok(case) = std::env::var(CASE_VAR) else {
        return;
    };
    let Some((name, path)) = case.split_once(':') else {
        panic!("bad case {case:?}");
    };
    let reader: Box<dyn FileReader> = match plain(name).map(|p| p.0) {
        Some("md") => Box::new(MarkdownReader::new()),
        Some("html") => Box::new(HTMLReader::new()),
        Some("htmltag") => Box::new(HTMLTagReader::new()),
        Some("json") => Box::new(json_reader(name)),
        Some(_) => csv_reader(name),
        None if name.starts_with("pdf_") => Box::new(PDFReader::new()),
        None if name.starts_with("docx") => Box::new(DocxReader::new()),
        None => Box::new(EpubReader::new()),
    };
    let start = std::time::Instant::now();
    let read = reader.load_file(Path::new(path), Metadata::new()).await;
    let secs = start.elapsed().as_secs_f64();
    let peak = peak_rss().unwrap_or(u64::MAX);
    let (text, outcome) = match &read {
        Ok(docs) => (
            docs.iter().map(|d| d.text.len()).sum::<usize>(),
            "ok".into(),
        ),
        Err(e) => (0, e.to_string()),
    };
    println!("MEMORY_BOUND peak={peak} text={text} secs={secs:.2} outcome={outcome}");
}

/// The CSV reader a case names: `csv_python_*` is CSVReader, `*_rows_*` a
/// document per row.
fn csv_reader(name: &str) -> Box<dyn FileReader> {
    let concat = !name.contains("_rows_");
    if name.starts_with("csv_python_") {
        Box::new(CSVReader::new().concat_rows(concat))
    } else {
        Box::new(PandasCSVReader::new().concat_rows(concat))
    }
}

/// Runs one case in a child and returns its peak, its text's length and
/// its report.
fn child_run(case: &str) -> (u64, u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let ext = if case.starts_with("docx") {
        "docx"
    } else if case.starts_with("pdf_") {
        "pdf"
    } else {
        "epub"
    };
    let path = dir.path().join(format!("{case}.{ext}"));
    write_archive(case, &path);
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no test binary: {e}"));
    let out = Command::new(exe)
        .args([
            "--exact",
            "memory_bound_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CASE_VAR, format!("{case}:{}", path.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the child: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        // the harness's "test ... " may precede it on the line
        .find_map(|l| l.find("MEMORY_BOUND ").map(|at| &l[at..]))
        .unwrap_or_else(|| {
            panic!(
                "{case}: child failed ({}):\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_string();
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|p| p.parse().ok())
            .unwrap_or(u64::MAX)
    };
    (field("peak="), field("text="), line)
}

/// Every case within the bound; failures are collected so one run shows
/// every case over it.
fn check(cases: &[&str]) {
    let mut over = Vec::new();
    for case in cases {
        let (peak, text, line) = child_run(case);
        let bound = PER_BYTE.saturating_mul(text).saturating_add(FIXED);
        eprintln!("{case}: {:.1} MB peak ({line})", peak as f64 / 1e6);
        if peak > bound {
            over.push(format!(
                "{case}: {:.1} MB > {:.1} MB",
                peak as f64 / 1e6,
                bound as f64 / 1e6
            ));
        }
    }
    assert!(over.is_empty(), "over the bound: {over:#?}");
}

// One test per case, so that the harness runs them side by side.

#[test]
fn docx_spaces_memory_is_bounded_by_its_text() {
    check(&["docx_spaces"]);
}

#[test]
fn docx_empty_paragraphs_memory_is_bounded_by_its_text() {
    check(&["docx_empty_paragraphs"]);
}

#[test]
fn docx_attribute_memory_is_bounded_by_its_text() {
    check(&["docx_attribute"]);
}

#[test]
fn docx_text_spaces_memory_is_bounded_by_its_text() {
    check(&["docx_text_spaces"]);
}

#[test]
fn epub_package_memory_is_bounded_by_its_text() {
    check(&["epub_opf_spaces"]);
}

/// A chapter of 80 MB of empty elements, rendered as it inflates.
#[test]
fn epub_chapter_memory_is_bounded_by_its_text() {
    check(&["epub_chapter_elements"]);
}

#[test]
fn markdown_memory_is_bounded_by_its_text() {
    check(&["markdown_lines"]);
}

#[test]
fn html_memory_is_bounded_by_its_text() {
    check(&[
        "html_elements",
        "html_unclosed",
        "html_list_items",
        "html_references",
        "html_comment",
        "html_attribute",
    ]);
}

#[test]
fn html_tag_memory_is_bounded_by_its_text() {
    check(&["htmltag_nested", "htmltag_scripts"]);
}

#[test]
fn json_memory_is_bounded_by_its_text() {
    check(&["json_zeros", "json_empty_arrays", "json_empty_objects"]);
}

#[test]
fn json_nesting_memory_is_bounded_by_its_text() {
    check(&["json_deep_arrays", "json_levels_deep_keys", "json_escapes"]);
}

#[test]
fn json_duplicate_keys_memory_is_bounded_by_its_text() {
    check(&[
        "json_duplicate_keys",
        "json_collapse_duplicate_keys",
        "json_duplicate_key_and_arrays",
        "json_levels_duplicate_objects",
    ]);
}

#[test]
fn pandas_csv_memory_is_bounded_by_its_text() {
    check(&[
        "csv_empty_fields",
        "csv_blank_lines",
        "csv_quotes",
        "csv_header_only",
        "csv_wide_row",
        "csv_quoted_newlines",
        "csv_zeros",
    ]);
}

#[test]
fn json_levels_memory_is_bounded_by_its_text() {
    check(&[
        "json_levels_empty_arrays",
        "json_collapse_empty_arrays",
        "json_levels_distinct_keys",
    ]);
}

#[test]
fn csv_memory_is_bounded_by_its_text() {
    check(&[
        "csv_python_empty_fields",
        "csv_python_blank_lines",
        "csv_python_quotes",
        "csv_python_quoted_newlines",
    ]);
}

/// A document per row of a few bytes: each `Document` (its id, metadata
/// and relationships) outweighs ten times its text (docs/reliability.md).
/// Run with `--ignored` to see the figures.
#[test]
#[ignore = "a Document per short row costs more than ten times its text"]
fn csv_document_per_row_memory_is_bounded_by_its_text() {
    check(&[
        "csv_rows_empty_fields",
        "csv_rows_zeros",
        "csv_python_rows_empty_fields",
    ]);
}

// ---------------------------------------------------------------------------
// PDFs: streams that inflate far (lopdf inflates each whole), and content
// whose operators cost lopdf hundreds of bytes each to parse.

/// `unit` repeated to `len` bytes, compressed by zlib a megabyte at a time.
fn deflated(unit: &[u8], len: usize) -> Vec<u8> {
    deflated_after(b"", unit, len)
}

/// `opening`, then `unit` repeated to `len` bytes, compressed by zlib.
fn deflated_after(opening: &[u8], unit: &[u8], len: usize) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(opening).unwrap();
    let chunk = unit.repeat((1 << 20) / unit.len());
    let mut written = 0;
    while written < len {
        enc.write_all(&chunk).unwrap();
        written += chunk.len();
    }
    enc.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// `unit` repeated to `len` bytes, LZW-coded as PDF's LZWDecode expects.
fn lzw(unit: &[u8], len: usize) -> Vec<u8> {
    let data = unit.repeat(len / unit.len());
    weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .encode(&data)
        .unwrap()
}

/// A stream object's body: its dictionary entries and its bytes.
fn stream_object(entries: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {entries} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// A PDF of `objects` (numbered from 1) with a classic cross-reference table,
/// or with `trailer_stream` (its entries and bytes) as a cross-reference stream.
fn pdf_file(objects: &[Vec<u8>], trailer_stream: Option<(&str, Vec<u8>)>) -> Vec<u8> {
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    let size = objects.len() + 1;
    if let Some((entries, data)) = trailer_stream {
        pdf.extend_from_slice(format!("{size} 0 obj\n").as_bytes());
        pdf.extend_from_slice(&stream_object(
            &format!(
                "/Type /XRef /Size {} /W [1 4 2] /Root 1 0 R {entries}",
                size + 1
            ),
            &data,
        ));
        pdf.extend_from_slice(b"\nendobj\n");
    } else {
        pdf.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
        for o in offsets {
            pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(format!("trailer\n<< /Size {size} /Root 1 0 R >>\n").as_bytes());
    }
    pdf.extend_from_slice(format!("startxref\n{xref}\n%%EOF\n").as_bytes());
    pdf
}

/// Catalog, pages and one page whose content is object 4 and whose
/// resources are `resources`; `more` follow as objects 5, 6...
fn one_page(content: Vec<u8>, resources: &str, more: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
             /Resources << {resources} >> >>"
        )
        .into_bytes(),
        content,
    ];
    objects.extend(more);
    objects
}

/// Bytes a PDF bomb inflates to: three times the per-stream limit.
const PDF_BOMB_LEN: usize = 96 << 20;

fn hostile_pdf(case: &str) -> Vec<u8> {
    let spaces = |len| deflated(b" ", len);
    match case {
        // A content stream of spaces: nothing to extract.
        "pdf_flate_content" => pdf_file(
            &one_page(
                stream_object("/Filter /FlateDecode", &spaces(PDF_BOMB_LEN)),
                "",
                vec![],
            ),
            None,
        ),
        // Deflated twice: a thousandfold twice over (the file is a few kB).
        "pdf_double_flate" => {
            let twice = zlib(&spaces(PDF_BOMB_LEN));
            let entries = "/Filter [/FlateDecode /FlateDecode]";
            pdf_file(&one_page(stream_object(entries, &twice), "", vec![]), None)
        }
        "pdf_lzw_content" => pdf_file(
            &one_page(
                stream_object("/Filter /LZWDecode", &lzw(b" ", PDF_BOMB_LEN)),
                "",
                vec![],
            ),
            None,
        ),
        // An object stream of one object and padding, inflated while loading.
        "pdf_object_stream" => {
            let content = stream_object("", b"BT ET");
            let entries = "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode";
            let body = stream_object(entries, &deflated_after(b"9 0 << >>", b" ", PDF_BOMB_LEN));
            pdf_file(&one_page(content, "", vec![body]), None)
        }
        // The cross-reference stream itself, inflated before any object.
        "pdf_xref_stream" => {
            let content = stream_object("", b"BT ET");
            pdf_file(
                &one_page(content, "", vec![]),
                Some(("/Filter /FlateDecode", deflated(&[0], PDF_BOMB_LEN))),
            )
        }
        // 8 MB of `q Q`: four million operations, 576 bytes each parsed.
        "pdf_dense_operators" => {
            let ops = b"q Q ".repeat(PLAIN_LEN / 4);
            pdf_file(&one_page(stream_object("", &ops), "", vec![]), None)
        }
        // A form that paints itself: pdf-extract recurses until the stack ends.
        "pdf_form_loop" => {
            let form = stream_object(
                "/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /X 5 0 R >> >>",
                b"/X Do",
            );
            pdf_file(
                &one_page(
                    stream_object("", b"/X Do"),
                    "/XObject << /X 5 0 R >>",
                    vec![form],
                ),
                None,
            )
        }
        _ => panic!("no case {case:?}"),
    }
}

/// Every PDF case within the bound and refused with an error naming why.
fn check_pdf(case: &str) {
    let (peak, text, line) = child_run(case);
    eprintln!("{case}: {:.1} MB peak ({line})", peak as f64 / 1e6);
    let bound = PER_BYTE.saturating_mul(text).saturating_add(FIXED);
    assert!(
        peak <= bound,
        "{case}: {:.1} MB over the bound",
        peak as f64 / 1e6
    );
    assert!(line.contains("refused"), "{case}: {line}");
}

#[test]
fn pdf_flate_bomb_is_refused_within_the_bound() {
    check_pdf("pdf_flate_content");
}

#[test]
fn pdf_double_flate_bomb_is_refused_within_the_bound() {
    check_pdf("pdf_double_flate");
}

#[test]
fn pdf_lzw_bomb_is_refused_within_the_bound() {
    check_pdf("pdf_lzw_content");
}

#[test]
fn pdf_object_stream_bomb_is_refused_within_the_bound() {
    check_pdf("pdf_object_stream");
}

#[test]
fn pdf_xref_stream_bomb_is_refused_within_the_bound() {
    check_pdf("pdf_xref_stream");
}

#[test]
fn pdf_dense_operators_are_refused_within_the_bound() {
    check_pdf("pdf_dense_operators");
}

#[test]
fn pdf_form_painting_itself_is_refused() {
    check_pdf("pdf_form_loop");
}
