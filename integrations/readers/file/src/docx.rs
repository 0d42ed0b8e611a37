//! `DocxReader`: a Word file's text as one document, extracted as LlamaIndex
//! does it (docx2txt): headers, then the body, then footers.

use crate::util::{file_name, merged, read_bytes, read_zip_entry, run_guarded};
use async_trait::async_trait;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result, py_strip};
use regex::Regex;
use serde_json::Value;
use std::io::Cursor;
use std::path::Path;
use std::sync::LazyLock;

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// Reads a `.docx` file (LlamaIndex `DocxReader`, which uses docx2txt) into
/// one document with metadata `file_name`, then the file's metadata.
///
/// The text is docx2txt's: the parts `word/header*.xml` (in archive order),
/// `word/document.xml`, then `word/footer*.xml`; in each, the text of every
/// `w:t`, a tab for `w:tab`, a line break for `w:br` and `w:cr`, and a blank
/// line *before* each paragraph (`w:p`); the result stripped of surrounding
/// whitespace. Table cells are paragraphs, so each is on its own line.
///
/// A file that is not a ZIP archive (a legacy `.doc`, a password-protected
/// document, a truncated download) or has no `word/document.xml` is an
/// [`Error::CorruptFile`] naming the file.
///
/// At most [`DEFAULT_MAX_UNZIPPED_BYTES`](crate::DEFAULT_MAX_UNZIPPED_BYTES)
/// are decompressed from one file (counted as read, not as declared); a file
/// that unpacks to more is an error naming it, so a decompression bomb in an
/// ingested folder is one skipped file, not a process out of memory.
#[derive(Debug, Clone)]
pub struct DocxReader {
    max_unzipped_bytes: u64,
}

impl Default for DocxReader {
    fn default() -> Self {
        Self::new()
    }
}

impl DocxReader {
    /// A DOCX reader.
    pub fn new() -> Self {
        Self {
            max_unzipped_bytes: crate::DEFAULT_MAX_UNZIPPED_BYTES,
        }
    }

    /// The most bytes decompressed from one file.
    pub fn with_max_unzipped_bytes(mut self, bytes: u64) -> Self {
        self.max_unzipped_bytes = bytes;
        self
    }
}

#[async_trait]
impl FileReader for DocxReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let limit = self.max_unzipped_bytes;
        run_guarded(path, move |path| {
            let bytes = read_bytes(path)?;
            let text = docx_text(path, &bytes, limit)?;
            let mut meta = Metadata::new();
            meta.insert("file_name".into(), Value::String(file_name(path)));
            Ok(vec![
                Document::document(text).with_metadata_map(merged(meta, &extra_info)),
            ])
        })
        .await
    }
}

static HEADER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^word/header[0-9]*.xml").ok());
static FOOTER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^word/footer[0-9]*.xml").ok());

/// docx2txt's `process` on the bytes of a `.docx`.
pub(crate) fn docx_text(path: &Path, bytes: &[u8], max_unzipped_bytes: u64) -> Result<String> {
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(Error::corrupt(
            path,
            "an OLE compound file, not a DOCX archive: a password-protected document or a legacy .doc",
        ));
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| Error::corrupt(path, format!("not a DOCX (ZIP) archive: {e}")))?;
    let names: Vec<String> = (0..zip.len())
        .filter_map(|i| zip.name_for_index(i).map(str::to_string))
        .collect();
    let matching = |re: &Option<Regex>| -> Vec<String> {
        names
            .iter()
            .filter(|n| re.as_ref().is_some_and(|re| re.is_match(n)))
            .cloned()
            .collect()
    };
    let mut parts = matching(&HEADER);
    parts.push("word/document.xml".to_string());
    parts.extend(matching(&FOOTER));

    let mut budget = max_unzipped_bytes;
    let mut text = String::new();
    for part in parts {
        let xml = read_part(path, &mut zip, &part, &mut budget)?;
        word_xml_text(&xml, &mut text)
            .map_err(|e| Error::corrupt(path, format!("{part} is not well-formed XML: {e}")))?;
    }
    Ok(py_strip(&text).to_string())
}

fn read_part(
    path: &Path,
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    part: &str,
    budget: &mut u64,
) -> Result<String> {
    let bytes = read_zip_entry(path, zip, part, budget)?.ok_or_else(|| {
        Error::corrupt(
            path,
            format!("cannot open {part} in the archive: not found"),
        )
    })?;
    String::from_utf8(bytes).map_err(|_| Error::corrupt(path, format!("{part} is not UTF-8")))
}

/// Appends docx2txt's `xml2text` of one part to `out`: elements are visited
/// in document order, and an element's text is only what precedes its first
/// child (ElementTree's `.text`), which for `w:t` is all of it.
pub(crate) fn word_xml_text(
    xml: &str,
    out: &mut String,
) -> std::result::Result<(), quick_xml::Error> {
    let mut reader = NsReader::from_str(xml);
    // Whether the innermost open element is a `w:t` that has had no child yet.
    let mut stack: Vec<bool> = Vec::new();
    loop {
        let (ns, event) = reader.read_resolved_event()?;
        let in_w = matches!(ns, ResolveResult::Bound(n) if n.0 == W_NS);
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                if let Some(top) = stack.last_mut() {
                    *top = false;
                }
                let local = e.local_name();
                let name = local.as_ref();
                if in_w {
                    match name {
                        "tab" => out.push('\t'),
                        "br" | "cr" => out.push('\n'),
                        "p" => out.push_str("\n\n"),
                        _ => {}
                    }
                }
                // An empty element has no end event, so it never stays open.
                if matches!(event, Event::Start(_)) {
                    stack.push(in_w && name == "t");
                }
            }
            Event::End(_) => {
                stack.pop();
            }
            Event::Text(t) if stack.last() == Some(&true) => out.push_str(&t.xml10_content()),
            Event::CData(t) if stack.last() == Some(&true) => out.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if stack.last() == Some(&true) => match r.resolve_char_ref()? {
                Some(c) => out.push(c),
                None => match &*r {
                    "amp" => out.push('&'),
                    "lt" => out.push('<'),
                    "gt" => out.push('>'),
                    "quot" => out.push('"'),
                    "apos" => out.push('\''),
                    other => {
                        return Err(quick_xml::Error::Escape(
                            quick_xml::escape::EscapeError::UnrecognizedEntity(
                                0..other.len(),
                                other.to_string(),
                            ),
                        ));
                    }
                },
            },
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}
