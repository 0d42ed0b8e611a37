//! `EpubReader`: an EPUB book as one document, its XHTML documents in
//! manifest order turned into text, as LlamaIndex's `EpubReader` reads it.

use crate::html::html_to_text_from;
use crate::util::{Nesting, PartParseError, PartReader, Utf8, archive_text, open_part, part_error};
use async_trait::async_trait;
use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader as XmlReader;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result};
use std::collections::HashSet;
use std::io::Cursor;
use std::path::Path;

/// Reads an `.epub` file (LlamaIndex `EpubReader`) into one document with
/// the file's metadata: the text of every XHTML item of the package
/// manifest (the book's chapters, and its navigation document when that is
/// XHTML, as ebooklib lists them), in manifest order, joined with `"\n"`.
///
/// Each item is turned into text by [`HTMLReader`](crate::HTMLReader)'s
/// rules; LlamaIndex uses Python's html2text, which writes Markdown
/// (`# Chapter`, `**bold**`), so the words agree and the markup does not.
/// A file that is not a ZIP archive, has no readable package document, or
/// whose chapters are encrypted (DRM, listed in `META-INF/encryption.xml`)
/// is an [`Error::CorruptFile`] naming the file.
///
/// At most [`DEFAULT_MAX_UNZIPPED_BYTES`](crate::DEFAULT_MAX_UNZIPPED_BYTES)
/// are decompressed from one file (counted as read, not as declared); a file
/// that unpacks to more is an error naming it, so a decompression bomb in an
/// ingested folder is one skipped file, not a process out of memory. The
/// container and package documents are parsed as they inflate (a tag over
/// 8 MiB is an error naming the file); chapters are read whole.
#[derive(Debug, Clone)]
pub struct EpubReader {
    max_unzipped_bytes: u64,
}

impl Default for EpubReader {
    fn default() -> Self {
        Self::new()
    }
}

impl EpubReader {
    /// An EPUB reader.
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
impl FileReader for EpubReader {
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>> {
        let text = archive_text(path, self.max_unzipped_bytes, epub_text).await?;
        Ok(vec![Document::document(text).with_metadata_map(extra_info)])
    }
}

type Zip<'a> = zip::ZipArchive<Cursor<&'a [u8]>>;

/// The value of attribute `key` (by local name) of an XML start tag.
fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .and_then(|a| {
            a.normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// Every start (or empty) tag with local name `name` of the part that
/// `source` inflates, attributes read by `f`, in document order. The part
/// is parsed as it inflates, one event at a time into one reused buffer.
fn tags<R: std::io::Read, T>(
    source: &mut PartReader<R>,
    name: &str,
    mut f: impl FnMut(&BytesStart<'_>) -> Option<T>,
) -> std::result::Result<Vec<T>, PartParseError> {
    let mut reader = XmlReader::from_reader(source);
    let mut buf = Vec::new();
    let mut nesting = Nesting::default();
    let mut out = Vec::new();
    loop {
        buf.clear();
        // No text of these parts is read, so none may be long.
        reader.get_mut().begin_event(false);
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) => {
                nesting.open(e.len()).map_err(PartParseError::Nesting)?;
                if e.local_name().as_ref() == name {
                    out.extend(f(&e));
                }
            }
            Event::Empty(e) if e.local_name().as_ref() == name => out.extend(f(&e)),
            Event::End(_) => nesting.close(),
            Event::Eof => return Ok(out),
            _ => {}
        }
    }
}

/// [`tags`] of the entry `part`, `Ok(None)` when the archive has none; the
/// bytes it inflates are taken from `budget`.
fn part_tags<T>(
    path: &Path,
    zip: &mut Zip<'_>,
    part: &str,
    budget: &mut u64,
    name: &str,
    f: impl FnMut(&BytesStart<'_>) -> Option<T>,
) -> Result<Option<Vec<T>>> {
    // Lossy: ebooklib decodes these parts so, a stray byte is replaced.
    let Some(mut reader) = open_part(path, zip, part, *budget, Utf8::Lossy)? else {
        return Ok(None);
    };
    let parsed = tags(&mut reader, name, f);
    *budget = budget.saturating_sub(reader.inflated());
    parsed
        .map(Some)
        .map_err(|e| part_error(path, part, reader.fault(), e))
}

/// `%XX` escapes of an href decoded.
fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `href` resolved against the folder of the package document.
fn resolve(base_dir: &str, href: &str) -> String {
    let href = percent_decode(href.split('#').next().unwrap_or(href));
    let mut parts: Vec<&str> = if base_dir.is_empty() {
        Vec::new()
    } else {
        base_dir.split('/').collect()
    };
    for seg in href.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

pub(crate) fn epub_text(path: &Path, bytes: &[u8], max_unzipped_bytes: u64) -> Result<String> {
    let mut budget = max_unzipped_bytes;
    let budget = &mut budget;
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| Error::corrupt(path, format!("not an EPUB (ZIP) archive: {e}")))?;
    let opf_path = part_tags(
        path,
        &mut zip,
        "META-INF/container.xml",
        budget,
        "rootfile",
        |e| attr(e, "full-path"),
    )?
    .ok_or_else(|| Error::corrupt(path, "not an EPUB: META-INF/container.xml is missing"))?
    .into_iter()
    .next()
    .ok_or_else(|| Error::corrupt(path, "META-INF/container.xml names no package document"))?;
    let base_dir = opf_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let documents: Vec<String> = part_tags(path, &mut zip, &opf_path, budget, "item", |e| {
        let media_type = attr(e, "media-type")?;
        (media_type == "application/xhtml+xml")
            .then(|| attr(e, "href"))
            .flatten()
    })?
    .ok_or_else(|| Error::corrupt(path, format!("the package document {opf_path} is missing")))?
    .into_iter()
    .map(|href| resolve(base_dir, &href))
    .collect();

    if let Some(encrypted) = part_tags(
        path,
        &mut zip,
        "META-INF/encryption.xml",
        budget,
        "CipherReference",
        |e| attr(e, "URI"),
    )? {
        let encrypted: HashSet<String> =
            encrypted.into_iter().map(|uri| resolve("", &uri)).collect();
        if let Some(doc) = documents.iter().find(|d| encrypted.contains(*d)) {
            return Err(Error::corrupt(
                path,
                format!("the EPUB is encrypted (DRM): {doc} cannot be read"),
            ));
        }
    }

    let mut text = String::new();
    let mut first = true;
    for doc in &documents {
        // A manifest item missing from the archive is skipped, not fatal.
        // Chapters are UTF-8 (ebooklib decodes them so too); a stray byte
        // is replaced rather than failing the whole book. Each is rendered
        // as it inflates.
        let Some(chapter) = open_part(path, &mut zip, doc, *budget, Utf8::Lossy)? else {
            continue;
        };
        let mut chapter = chapter.unbounded_events();
        let read = html_to_text_from(&mut chapter);
        *budget = budget.saturating_sub(chapter.inflated());
        let (_, chapter_text) = read.map_err(|e| part_error(path, doc, chapter.fault(), e))?;
        if !first {
            text.push('\n');
        }
        first = false;
        text.push_str(&chapter_text);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_against_the_package_folder() {
        assert_eq!(
            resolve("OEBPS", "text/ch%201.xhtml#top"),
            "OEBPS/text/ch 1.xhtml"
        );
        assert_eq!(resolve("OEBPS/sub", "../ch.xhtml"), "OEBPS/ch.xhtml");
        assert_eq!(resolve("", "ch.xhtml"), "ch.xhtml");
    }
}
