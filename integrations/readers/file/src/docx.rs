//! `DocxReader`: a Word file's text as one document, extracted as LlamaIndex
//! does it (docx2txt): headers, then the body, then footers.

use crate::util::{
    Nesting, PartParseError, PartReader, Utf8, archive_text, file_name, merged, open_part,
    part_error,
};
use async_trait::async_trait;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use ragloom_core::readers::FileReader;
use ragloom_core::{Document, Error, Metadata, Result, is_py_space};
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
/// Parts are parsed as they inflate, so memory follows the text, not the
/// part's size; a part with a tag, comment or reference over 8 MiB, or
/// elements nested over 4096 deep, is an error naming the file and part.
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
        let text = archive_text(path, self.max_unzipped_bytes, docx_text).await?;
        let mut meta = Metadata::new();
        meta.insert("file_name".into(), Value::String(file_name(path)));
        Ok(vec![
            Document::document(text).with_metadata_map(merged(meta, &extra_info)),
        ])
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
    let mut text = Stripped::default();
    for part in parts {
        // Parsed as it inflates: the part is never held whole, so its
        // memory is the text it yields, not its size (issue 40).
        let mut reader =
            open_part(path, &mut zip, &part, budget, Utf8::Strict)?.ok_or_else(|| {
                Error::corrupt(
                    path,
                    format!("cannot open {part} in the archive: not found"),
                )
            })?;
        let parsed = word_xml_text(&mut reader, &mut text);
        budget = budget.saturating_sub(reader.inflated());
        parsed.map_err(|e| part_error(path, &part, reader.fault(), e))?;
    }
    Ok(text.finish())
}

/// Appends docx2txt's `xml2text` of one part to `out`: elements are visited
/// in document order, and an element's text is only what precedes its first
/// child (ElementTree's `.text`), which for `w:t` is all of it.
///
/// The part is read one event at a time into one reused buffer; only text
/// that is extracted may make an event longer than [`MAX_XML_EVENT`]
/// (`crate::util`), and the open elements are bounded by [`Nesting`].
pub(crate) fn word_xml_text<R: std::io::Read>(
    source: &mut PartReader<R>,
    out: &mut Stripped,
) -> std::result::Result<(), PartParseError> {
    let mut reader = NsReader::from_reader(source);
    let mut buf = Vec::new();
    let mut nesting = Nesting::default();
    // Whether the innermost open element is a `w:t` that has had no child
    // yet. Once an element has a child it never has `.text` again, so every
    // other open element's flag is false and the top one is all to keep.
    let mut fresh_text = false;
    loop {
        buf.clear();
        reader.get_mut().begin_event(fresh_text);
        let (ns, event) = reader.read_resolved_event_into(&mut buf)?;
        let in_w = matches!(ns, ResolveResult::Bound(n) if n.0 == W_NS);
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
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
                fresh_text = false;
                if matches!(event, Event::Start(_)) {
                    nesting.open(e.len()).map_err(PartParseError::Nesting)?;
                    fresh_text = in_w && name == "t";
                }
            }
            Event::End(_) => {
                nesting.close();
                // The element it returns to has had this child.
                fresh_text = false;
            }
            Event::Text(t) if fresh_text => out.push_str(&t.xml10_content()),
            Event::CData(t) if fresh_text => out.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if fresh_text => match r.resolve_char_ref()? {
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
                        )
                        .into());
                    }
                },
            },
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// The text of the parts as it is built, stripped of surrounding whitespace
/// as docx2txt strips the whole at the end, without holding that
/// whitespace: a part of millions of empty paragraphs adds two line breaks
/// each and no text.
#[derive(Debug, Default)]
pub(crate) struct Stripped {
    text: String,
    /// The whitespace after the last other character: the text's if more
    /// text follows, stripped if not. Runs of one character are counted
    /// rather than stored.
    trailing: Vec<Whitespace>,
}

/// A stretch of [`Stripped::trailing`].
#[derive(Debug)]
enum Whitespace {
    /// Mixed whitespace, its last character and how often it repeats at the end.
    Chars(String, char, usize),
    Run(char, u64),
}

/// A run of one character this long is kept as a count.
const RUN: usize = 32;

impl Stripped {
    pub(crate) fn push_str(&mut self, s: &str) {
        let Some(first) = s.find(|c| !is_py_space(c)) else {
            self.push_spaces(s);
            return;
        };
        self.push_spaces(&s[..first]);
        let end = s
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_py_space(c))
            .map_or(s.len(), |(i, c)| i + c.len_utf8());
        self.flush_trailing();
        self.text.push_str(&s[first..end]);
        self.push_spaces(&s[end..]);
    }

    /// [`Self::push_space`] for each character of `s`, whitespace, a run
    /// of one character at a time (a text run of a hundred megabytes of
    /// spaces is one count).
    fn push_spaces(&mut self, s: &str) {
        if self.text.is_empty() {
            return;
        }
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            let run = rest.len() - rest.trim_start_matches(c).len();
            let count = run / c.len_utf8();
            match self.trailing.last_mut() {
                Some(Whitespace::Run(r, n)) if *r == c => *n += count as u64,
                _ if count >= RUN => self.trailing.push(Whitespace::Run(c, count as u64)),
                _ => (0..count).for_each(|_| self.push_space(c)),
            }
            rest = &rest[run..];
        }
    }

    pub(crate) fn push(&mut self, c: char) {
        if is_py_space(c) {
            self.push_space(c);
        } else {
            self.flush_trailing();
            self.text.push(c);
        }
    }

    fn push_space(&mut self, c: char) {
        // Whitespace before any text is stripped.
        if self.text.is_empty() {
            return;
        }
        match self.trailing.last_mut() {
            Some(Whitespace::Run(r, n)) if *r == c => *n += 1,
            Some(Whitespace::Chars(s, last, same)) => {
                *same = if *last == c { *same + 1 } else { 1 };
                *last = c;
                s.push(c);
                if *same >= RUN {
                    s.truncate(s.len() - RUN * c.len_utf8());
                    if s.is_empty() {
                        self.trailing.pop();
                    }
                    self.trailing.push(Whitespace::Run(c, RUN as u64));
                }
            }
            _ => self.trailing.push(Whitespace::Chars(c.to_string(), c, 1)),
        }
    }

    /// More text follows: the pending whitespace is the text's.
    fn flush_trailing(&mut self) {
        for stretch in self.trailing.drain(..) {
            match stretch {
                Whitespace::Chars(s, _, _) => self.text.push_str(&s),
                Whitespace::Run(c, n) => (0..n).for_each(|_| self.text.push(c)),
            }
        }
    }

    /// The text, stripped.
    pub(crate) fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::tests::Trickle;

    /// `xml`'s text read with events of at most `limit` bytes and reads of
    /// `step` bytes.
    fn text_of(xml: &str, limit: u64, step: usize) -> Result<String> {
        let mut reader = PartReader::new(Trickle(xml.as_bytes(), step), u64::MAX, Utf8::Strict)
            .with_event_limit(limit);
        let mut out = Stripped::default();
        word_xml_text(&mut reader, &mut out)
            .map_err(|e| part_error(Path::new("t.docx"), "word/document.xml", reader.fault(), e))?;
        Ok(out.finish())
    }

    /// Long text is cut into several events, long text that is not
    /// extracted skipped: the text is the same as read whole, line ends
    /// (a CR and an LF are one) and references included.
    #[test]
    fn bounded_events_give_the_same_text() {
        let run = "a\r\nb \r\r\nc&amp;d&#x41;東😀e\r\n".repeat(12);
        let xml = format!(
            "<w:document xmlns:w=\"{W_NS}\">  \r\n  <w:body>{pad}<w:p><w:r><w:t>{run}</w:t>{pad}<w:t>\n \r\n</w:t><w:instrText>{pad}x</w:instrText></w:r></w:p><w:p><w:r><w:t>{pad}z</w:t></w:r></w:p></w:body></w:document>",
            pad = " \r\n\t ".repeat(40)
        );
        let whole = text_of(&xml, u64::MAX, 1 << 16).unwrap_or_default();
        assert!(whole.starts_with("a\nb \n\nc&dA東😀e\na"), "{whole:?}");
        // Longer than every tag, shorter than the texts.
        for limit in [100, 101, 117, 150] {
            for step in [1, 2, 3, 4, 7, 64] {
                let cut = text_of(&xml, limit, step).map_err(|e| e.to_string());
                assert_eq!(
                    cut.as_deref(),
                    Ok(whole.as_str()),
                    "limit {limit}, step {step}"
                );
            }
        }
    }

    #[test]
    fn a_long_tag_is_refused_naming_the_part() {
        let xml = format!(
            "<w:document xmlns:w=\"{W_NS}\"><w:p w:x=\"{}\"/></w:document>",
            "a".repeat(100)
        );
        let err = text_of(&xml, 50, 7)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("t.docx")
                && err.contains("word/document.xml")
                && err.contains("longer than"),
            "{err}"
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let xml = format!(
            "<w:document xmlns:w=\"{W_NS}\">{}</w:document>",
            "<a>".repeat(5000)
        );
        let err = text_of(&xml, u64::MAX, 1 << 16)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("deeper than"), "{err}");
    }

    /// The same as building the whole text and stripping it.
    #[test]
    fn stripped_is_strip_of_the_whole() {
        let pieces = [
            "\n\n", " \t", "", "a", "\n\n", " b ", "\u{a0}", "c\t", "\n\n\n",
        ];
        let mut long = vec![" "; 100];
        long.extend(["x"; 3]);
        long.extend(["\n"; 70]);
        long.extend(["\t", "\n"]);
        long.extend(["\u{3000}"; 40]);
        long.push("y");
        long.extend(["\n"; 50]);
        for case in [&pieces[..], &long[..]] {
            let mut s = Stripped::default();
            let mut whole = String::new();
            for p in case {
                if let Some(c) = p.chars().next().filter(|_| p.chars().count() == 1) {
                    s.push(c);
                } else {
                    s.push_str(p);
                }
                whole.push_str(p);
            }
            assert_eq!(s.finish(), ragloom_core::py_strip(&whole));
        }
    }
}
