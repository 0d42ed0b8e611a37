//! `PDFReader`: one document per page with LlamaIndex's `page_label` and
//! `file_name` metadata, text extracted by `pdf-extract`.

mod estimate;
mod inflate;
mod limits;

use crate::util::{DEFAULT_PDF_TIME_LIMIT, file_name, merged, read_bytes, run_guarded};
use async_trait::async_trait;
use pdf_extract::{
    ColorSpace, Document as PdfDocument, MediaBox, Object, OutputDev, OutputError, Path as PdfPath,
    PlainTextOutput, Transform,
};
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Reads a PDF file (LlamaIndex `PDFReader` from `llama-index-readers-file`).
///
/// By default each page is a document whose metadata is, in this order,
/// `page_label` (the page's label from the PDF's `/PageLabels`, e.g. `iv`
/// or `A-1`, else its 1-based number), `file_name`, then the file's
/// metadata (`extra_info`). With
/// [`return_full_document`](Self::return_full_document) the whole file is
/// one document, pages joined with `"\n"`, metadata `file_name` then
/// `extra_info`. Empty pages give empty documents, as in LlamaIndex.
///
/// Text comes from `pdf-extract`, not `pypdf`: the words and their order
/// match on ordinary text PDFs, the whitespace between them may differ.
/// A file that cannot be parsed, an encrypted file that does not open with
/// the empty password, and a file that makes `pdf-extract` panic are each an
/// [`Error::CorruptFile`] naming the file; the parsing runs on a blocking
/// thread under `catch_unwind`. Extraction that runs past
/// [`with_time_limit`](Self::with_time_limit) (default
/// [`DEFAULT_PDF_TIME_LIMIT`]) is stopped from inside pdf-extract's output
/// callbacks — no thread is left running — and the file reported the same way.
/// So is a file whose streams would inflate too far or whose pages would take
/// too much memory to parse (see `pdf/limits.rs`), refused before either.
#[derive(Debug, Clone)]
pub struct PDFReader {
    return_full_document: bool,
    time_limit: Duration,
}

impl Default for PDFReader {
    fn default() -> Self {
        Self {
            return_full_document: false,
            time_limit: DEFAULT_PDF_TIME_LIMIT,
        }
    }
}

impl PDFReader {
    /// One document per page.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long one file's extraction may run (default 60 s).
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Whether the whole file is one document (default `false`).
    pub fn return_full_document(mut self, return_full_document: bool) -> Self {
        self.return_full_document = return_full_document;
        self
    }
}

#[async_trait]
impl FileReader for PDFReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let full = self.return_full_document;
        let limit = self.time_limit;
        run_guarded(path, move |path| {
            let bytes = read_bytes(path)?;
            let pages = extract_pages(path, &bytes, limit)?;
            let name = Value::String(file_name(path));
            if full {
                let text = pages
                    .iter()
                    .map(|p| p.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                let mut meta = Metadata::new();
                meta.insert("file_name".into(), name);
                return Ok(vec![
                    Document::document(text).with_metadata_map(merged(meta, &extra_info)),
                ]);
            }
            Ok(pages
                .into_iter()
                .map(|page| {
                    let mut meta = Metadata::new();
                    meta.insert("page_label".into(), Value::String(page.label));
                    meta.insert("file_name".into(), name.clone());
                    Document::document(page.text).with_metadata_map(merged(meta, &extra_info))
                })
                .collect())
        })
        .await
    }
}

/// One page's label and text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    pub(crate) label: String,
    pub(crate) text: String,
}

/// Every page of the PDF in `bytes`, in order, extracted within `limit`.
/// Fails on the first page that cannot be read rather than stopping there
/// silently, as pdf-extract's own by-pages helper does.
pub(crate) fn extract_pages(path: &Path, bytes: &[u8], limit: Duration) -> Result<Vec<Page>> {
    let started = Instant::now();
    let deadline = started.checked_add(limit);
    let over_time = || {
        Error::corrupt(
            path,
            format!(
                "text extraction stopped at the time limit of {:.1} s (with_time_limit)",
                limit.as_secs_f64()
            ),
        )
    };
    let refused = |why: String| Error::corrupt(path, format!("refused: {why}"));
    limits::survey(bytes).map_err(refused)?;
    let mut doc = PdfDocument::load_mem(bytes)
        .map_err(|e| Error::corrupt(path, format!("not a readable PDF: {e}")))?;
    if doc.is_encrypted() {
        // Readers open files whose user password is empty without asking.
        doc.decrypt("").map_err(|e| {
            Error::corrupt(
                path,
                format!("the PDF is encrypted and needs a password ({e})"),
            )
        })?;
    }
    limits::check_loaded(&doc).map_err(refused)?;
    let pages = doc.get_pages();
    let mut out = Vec::with_capacity(pages.len());
    for (index, (page_num, page_id)) in pages.iter().enumerate() {
        limits::check_page(&doc, *page_id)
            .map_err(|why| Error::corrupt(path, format!("page {page_num} refused: {why}")))?;
        let mut text = String::new();
        {
            let mut output = Timed {
                inner: PlainTextOutput::new(&mut text),
                deadline,
                calls: 0,
            };
            let read = pdf_extract::output_doc_page(&doc, &mut output, *page_num);
            if output.expired() {
                return Err(over_time());
            }
            read.map_err(|e| {
                Error::corrupt(path, format!("page {page_num} could not be read: {e}"))
            })?;
        }
        out.push(Page {
            label: page_label(&doc, index),
            text: tidy_page_text(&text),
        });
    }
    Ok(out)
}

/// An output device that stops pdf-extract once the deadline has passed:
/// every drawing and text operator reaches one of these callbacks, so a
/// page built to take hours ends within a few thousand operators of it.
struct Timed<O> {
    inner: O,
    deadline: Option<Instant>,
    calls: u32,
}

impl<O> Timed<O> {
    fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Reads the clock every 1,024 calls: cheap on ordinary pages.
    fn check(&mut self) -> std::result::Result<(), OutputError> {
        self.calls = self.calls.wrapping_add(1);
        if self.calls % 1024 == 0 && self.expired() {
            return Err(OutputError::IoError(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "time limit",
            )));
        }
        Ok(())
    }
}

impl<O: OutputDev> OutputDev for Timed<O> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> std::result::Result<(), OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> std::result::Result<(), OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner.end_line()
    }
    fn stroke(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &PdfPath,
    ) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner.stroke(ctm, colorspace, color, path)
    }
    fn fill(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &PdfPath,
    ) -> std::result::Result<(), OutputError> {
        self.check()?;
        self.inner.fill(ctm, colorspace, color, path)
    }
}

/// pdf-extract opens every page with blank lines; pypdf does not. Dropping
/// the leading line breaks keeps page texts (and so node offsets) closer to
/// LlamaIndex's without touching the text itself.
fn tidy_page_text(text: &str) -> String {
    text.trim_start_matches(['\n', '\r']).to_string()
}

// ---------------------------------------------------------------------------
// Page labels (PDF 32000-1, 12.4.2), looked up as pypdf's `index2label` does,
// including its fallbacks to the 1-based page number.

/// The label of the page at 0-based `index`.
pub(crate) fn page_label(doc: &PdfDocument, index: usize) -> String {
    label_from_tree(doc, index).unwrap_or_else(|| (index + 1).to_string())
}

fn deref<'a>(doc: &'a PdfDocument, obj: &'a Object) -> &'a Object {
    doc.dereference(obj).map(|(_, o)| o).unwrap_or(obj)
}

fn number(obj: &Object) -> Option<f64> {
    match obj {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

fn label_from_tree(doc: &PdfDocument, index: usize) -> Option<String> {
    let catalog = doc.catalog().ok()?;
    let tree = deref(doc, catalog.get(b"PageLabels").ok()?)
        .as_dict()
        .ok()?;
    if tree.has(b"Nums") {
        return label_from_nums(doc, tree, index);
    }
    let mut node = tree;
    // pypdf gives up below 100 levels; so does this (and a loop ends there).
    for _ in 0..100 {
        let kids = deref(doc, node.get(b"Kids").ok()?).as_array().ok()?;
        let mut next = None;
        for kid in kids {
            let Ok(kid) = deref(doc, kid).as_dict() else {
                continue;
            };
            let Some(limits) = kid
                .get(b"Limits")
                .ok()
                .and_then(|l| deref(doc, l).as_array().ok())
            else {
                continue;
            };
            let (Some(lo), Some(hi)) = (
                limits.first().and_then(number),
                limits.get(1).and_then(number),
            ) else {
                continue;
            };
            if lo <= index as f64 && index as f64 <= hi {
                if kid.get(b"Kids").is_ok_and(|k| !matches!(k, Object::Null)) {
                    next = Some(kid);
                    break;
                }
                return label_from_nums(doc, kid, index);
            }
        }
        node = next?;
    }
    None
}

/// The label from a `/Nums` array: the range with the largest start not
/// after `index` (the first range when `index` precedes them all).
fn label_from_nums(
    doc: &PdfDocument,
    dict: &pdf_extract::Dictionary,
    index: usize,
) -> Option<String> {
    let nums = deref(doc, dict.get(b"Nums").ok()?).as_array().ok()?;
    let mut i = 0;
    let mut entry: Option<(&Object, &Object)> = None;
    // A trailing key without a value is ignored, as pypdf ignores it.
    while i + 1 < nums.len() {
        entry = Some((&nums[i], &nums[i + 1]));
        let Some(next_key) = nums.get(i + 2) else {
            break;
        };
        if number(deref(doc, next_key))? > index as f64 {
            break;
        }
        i += 2;
    }
    let (start_index, value) = entry?;
    let start_index = number(deref(doc, start_index))?;
    let style_dict = deref(doc, value).as_dict().ok()?;
    let start = match style_dict.get(b"St") {
        Ok(st) => integer(deref(doc, st))?,
        Err(_) => 1,
    };
    let prefix = match style_dict.get(b"P") {
        Ok(p) => pdf_extract::decode_text_string(deref(doc, p)).ok()?,
        Err(_) => String::new(),
    };
    let value = index as i64 - start_index as i64 + start;
    let number = match style_dict.get(b"S") {
        Err(_) => String::new(),
        Ok(style) => match deref(doc, style).as_name().ok()? {
            b"D" => value.to_string(),
            b"R" => roman(value)?,
            b"r" => roman(value)?.to_lowercase(),
            b"A" => letters(value)?,
            b"a" => letters(value)?.to_lowercase(),
            _ => return None,
        },
    };
    Some(prefix + &number)
}

fn integer(obj: &Object) -> Option<i64> {
    match obj {
        Object::Integer(i) => Some(*i),
        _ => None,
    }
}

/// Upper-case Roman numerals for 1..=3999 (pypdf's range).
pub(crate) fn roman(mut n: i64) -> Option<String> {
    if !(1..=3999).contains(&n) {
        return None;
    }
    const TABLE: [(i64, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, symbol) in TABLE {
        while n >= value {
            out.push_str(symbol);
            n -= value;
        }
    }
    Some(out)
}

/// `A`..`Z`, then `AA`..`ZZ`, `AAA`...: one letter repeated (PDF's style
/// `/A`); pypdf refuses labels longer than 512 letters.
pub(crate) fn letters(n: i64) -> Option<String> {
    if n <= 0 {
        return None;
    }
    let repetitions = (n - 1) / 26 + 1;
    if repetitions > 512 {
        return None;
    }
    let letter = char::from(b'A' + ((n - 1) % 26) as u8);
    Some(std::iter::repeat_n(letter, repetitions as usize).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_stops_within_1024_callbacks() {
        let mut text = String::new();
        let mut out = Timed {
            inner: PlainTextOutput::new(&mut text),
            deadline: Some(Instant::now()),
            calls: 0,
        };
        let trm = Transform::identity();
        let stopped =
            (0..2048).position(|_| out.output_character(&trm, 1.0, 0.0, 12.0, "a").is_err());
        assert!(stopped.is_some_and(|n| n < 1024), "{stopped:?}");
        let mut text = String::new();
        let mut unlimited = Timed {
            inner: PlainTextOutput::new(&mut text),
            deadline: None,
            calls: 0,
        };
        assert!((0..4096).all(|_| unlimited.begin_word().is_ok()));
    }

    #[test]
    fn roman_and_letter_labels() {
        assert_eq!(roman(4).as_deref(), Some("IV"));
        assert_eq!(roman(1994).as_deref(), Some("MCMXCIV"));
        assert_eq!(roman(0), None);
        assert_eq!(roman(4000), None);
        assert_eq!(letters(1).as_deref(), Some("A"));
        assert_eq!(letters(26).as_deref(), Some("Z"));
        assert_eq!(letters(27).as_deref(), Some("AA"));
        assert_eq!(letters(53).as_deref(), Some("AAA"));
        assert_eq!(letters(0), None);
    }

    #[test]
    fn leading_blank_lines_are_dropped() {
        assert_eq!(tidy_page_text("\n\nHello\n world\n"), "Hello\n world\n");
    }
}
