//! Plumbing shared by the readers: blocking parsing off the async threads,
//! a parser's panic turned into that file's error, and small Python helpers.

use ragloom_core::{Error, Metadata, Result};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Runs `work` on tokio's blocking pool when a runtime is there (parsing a
/// large PDF must not stall the async threads), inline otherwise. A panic
/// inside `work` (pdf-extract has `expect`s on malformed files) becomes an
/// [`Error::CorruptFile`] naming `path` instead of tearing the caller down.
pub(crate) async fn run_guarded<T, F>(path: &Path, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Path) -> Result<T> + Send + 'static,
{
    let owned: PathBuf = path.to_path_buf();
    let guarded = move || match catch_unwind(AssertUnwindSafe(|| work(&owned))) {
        Ok(result) => result,
        Err(payload) => Err(Error::corrupt(
            &owned,
            format!("the parser panicked: {}", panic_message(payload.as_ref())),
        )),
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return guarded();
    }
    tokio::task::spawn_blocking(guarded)
        .await
        .map_err(|e| Error::failed(format!("reading {} failed", path.display()), e))?
}

/// The text of the archive (DOCX, EPUB) at `path`, made by `text` from its
/// bytes inflating at most `max_unzipped_bytes`, guarded as [`run_guarded`] runs work.
pub(crate) async fn archive_text(
    path: &Path,
    max_unzipped_bytes: u64,
    text: fn(&Path, &[u8], u64) -> Result<String>,
) -> Result<String> {
    run_guarded(path, move |path| {
        text(path, &read_bytes(path)?, max_unzipped_bytes)
    })
    .await
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// The file's bytes, or an [`Error::Io`] naming it.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io("reading", path, e))
}

/// The file as UTF-8 text; invalid UTF-8 is the file's error, as Python's
/// strict `utf-8` decoding makes it in LlamaIndex's readers.
pub(crate) fn read_utf8(path: &Path) -> Result<String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::corrupt(
            path,
            format!("not valid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })
}

/// Python's `Path(file).name`.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Python's `Path(file).suffix`: from the last dot of the name, unless that
/// dot starts or ends it.
pub(crate) fn suffix(path: &Path) -> String {
    let name = file_name(path);
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => name[i..].to_string(),
        _ => String::new(),
    }
}

/// `{**first, **extra_info}`: the reader's own keys first, the file's
/// metadata after them, replacing same-named keys in place as `dict.update` does.
pub(crate) fn merged(mut first: Metadata, extra_info: &Metadata) -> Metadata {
    for (k, v) in extra_info {
        first.insert(k.clone(), v.clone());
    }
    first
}

/// The most bytes a reader decompresses from one archive (DOCX, EPUB) by
/// default: far above any real document, far below what a decompression bomb
/// would take. `with_max_unzipped_bytes` on the reader changes it.
pub const DEFAULT_MAX_UNZIPPED_BYTES: u64 = 256 * 1024 * 1024;

/// How long one PDF's text extraction may run before it is stopped and the
/// file reported as skipped (`PDFReader::with_time_limit`).
pub const DEFAULT_PDF_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The longest XML event (a tag with its attributes, a comment, a
/// processing instruction, an entity reference) a streamed archive part may
/// hold: parts are parsed one event at a time, and the XML parser buffers an
/// event whole, so without a limit one huge attribute would be held whole
/// however little text the part has. Real DOCX and EPUB markup stays in the
/// kilobytes. Text is not refused: past this length, text that is not
/// extracted is skipped, and extracted text cut into several events (see
/// [`PartReader::begin_event`]).
pub(crate) const MAX_XML_EVENT: u64 = 8 << 20;

/// The deepest nesting of elements a streamed part may have. lxml (which
/// python-docx uses) refuses more than 256 levels, so real documents stay
/// far below this; each open level costs the parser its tag's name and
/// namespace declarations.
const MAX_XML_DEPTH: usize = 4096;

/// The most bytes of start tags open at once (their names and namespace
/// declarations stay in the parser's memory until their end tags).
const MAX_OPEN_TAG_BYTES: u64 = 8 << 20;

/// How many bytes are pulled from the inflater at a time.
const CHUNK: usize = 64 << 10;

/// What to do with bytes of a part that are not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Utf8 {
    /// The part is refused, as docx2txt's strict decoding refuses it.
    Strict,
    /// Each invalid sequence becomes U+FFFD (`String::from_utf8_lossy`).
    Lossy,
}

/// Why a [`PartReader`] stopped the parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    OverBudget,
    EventTooLarge,
    NotUtf8,
    Inflate(String),
}

/// What the event now being read may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    /// Not yet known: its first bytes decide. `true` when text read now
    /// would be extracted.
    Pending(bool),
    /// Markup: at most [`MAX_XML_EVENT`] bytes.
    Bounded,
    /// Text that is extracted: cut into events of [`MAX_XML_EVENT`] bytes.
    Extracted,
    /// The rest of an event already cut short.
    Unbounded,
    /// Text the caller ignores: past [`MAX_XML_EVENT`] its bytes are
    /// dropped up to the next markup.
    Skippable,
}

/// An archive part as the XML parser's `BufRead`, inflated as it is parsed:
/// the bytes actually decompressed count against the archive's budget, the
/// event being parsed is bounded (the parser would otherwise buffer it
/// whole), and the bytes are checked (or made) UTF-8 on the way. Its own
/// memory is one chunk and the event's overhang.
pub(crate) struct PartReader<R> {
    inner: R,
    utf8: Utf8,
    raw: Vec<u8>,
    /// Inflated bytes not yet decoded: an incomplete character at a chunk's end.
    pending: Vec<u8>,
    /// Decoded bytes; `buf[pos..]` is what the parser has not consumed.
    buf: Vec<u8>,
    pos: usize,
    /// The last byte consumed.
    last: u8,
    eof: bool,
    inflated: u64,
    budget: u64,
    consumed: u64,
    event_start: u64,
    event: EventKind,
    /// [`MAX_XML_EVENT`], smaller in tests.
    event_limit: u64,
    fault: Option<Fault>,
}

impl<R: std::io::Read> PartReader<R> {
    /// `inner` read with at most `budget` bytes inflated.
    pub(crate) fn new(inner: R, budget: u64, utf8: Utf8) -> Self {
        Self {
            inner,
            utf8,
            raw: vec![0; CHUNK],
            pending: Vec::new(),
            buf: Vec::new(),
            pos: 0,
            last: 0,
            eof: false,
            inflated: 0,
            budget,
            consumed: 0,
            event_start: 0,
            event: EventKind::Bounded,
            event_limit: MAX_XML_EVENT,
            fault: None,
        }
    }

    /// No limit on events: for a parser that does not buffer them whole
    /// (the HTML tokenizer hands text out as it goes).
    pub(crate) fn unbounded_events(mut self) -> Self {
        self.event_limit = u64::MAX;
        self
    }

    /// Events cut or refused past `limit` bytes instead.
    #[cfg(test)]
    pub(crate) fn with_event_limit(mut self, limit: u64) -> Self {
        self.event_limit = limit;
        self
    }

    /// Called before each event is read: `extracted` says whether text
    /// read now would become output. Such text is handed to the parser in
    /// events of at most [`MAX_XML_EVENT`] bytes (an empty comment is put
    /// between them); other text is cut short there, the rest dropped;
    /// markup longer than that is an [`Fault::EventTooLarge`].
    pub(crate) fn begin_event(&mut self, extracted: bool) {
        self.event_start = self.consumed;
        self.event = EventKind::Pending(extracted);
    }

    /// The bytes inflated so far.
    pub(crate) fn inflated(&self) -> u64 {
        self.inflated
    }

    /// Why the parse was stopped, when this reader stopped it.
    pub(crate) fn fault(&self) -> Option<&Fault> {
        self.fault.as_ref()
    }

    fn fail(&mut self, fault: Fault) -> std::io::Error {
        let msg = format!("{fault:?}");
        self.fault = Some(fault);
        std::io::Error::other(msg)
    }

    /// Appends the next chunk, decoded, to `buf` (dropping what was consumed).
    fn refill(&mut self) -> std::io::Result<()> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        // One byte past the budget is enough to know it is exceeded.
        let room = usize::try_from(self.budget.saturating_sub(self.inflated).saturating_add(1))
            .unwrap_or(CHUNK)
            .min(CHUNK);
        let n = loop {
            match self.inner.read(&mut self.raw[..room]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.fail(Fault::Inflate(e.to_string()))),
            }
        };
        self.inflated += n as u64;
        if self.inflated > self.budget {
            return Err(self.fail(Fault::OverBudget));
        }
        if n == 0 {
            self.eof = true;
            if !self.pending.is_empty() {
                // A character cut off by the end of the part.
                if self.utf8 == Utf8::Strict {
                    return Err(self.fail(Fault::NotUtf8));
                }
                self.pending.clear();
                self.buf.extend_from_slice("\u{FFFD}".as_bytes());
            }
            return Ok(());
        }
        self.pending.extend_from_slice(&self.raw[..n]);
        let mut at = 0;
        while at < self.pending.len() {
            match std::str::from_utf8(&self.pending[at..]) {
                Ok(_) => {
                    self.buf.extend_from_slice(&self.pending[at..]);
                    at = self.pending.len();
                }
                Err(e) => {
                    let good = at + e.valid_up_to();
                    self.buf.extend_from_slice(&self.pending[at..good]);
                    at = good;
                    match e.error_len() {
                        // Incomplete: the next chunk completes it.
                        None => break,
                        Some(_) if self.utf8 == Utf8::Strict => {
                            return Err(self.fail(Fault::NotUtf8));
                        }
                        Some(len) => {
                            self.buf.extend_from_slice("\u{FFFD}".as_bytes());
                            at += len;
                        }
                    }
                }
            }
        }
        self.pending.drain(..at);
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for PartReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: std::io::Read> std::io::BufRead for PartReader<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if let Some(fault) = &self.fault {
            return Err(std::io::Error::other(format!("{fault:?}")));
        }
        loop {
            let available = self.buf.len() - self.pos;
            let event_len = self.consumed - self.event_start;
            match self.event {
                EventKind::Pending(extracted) => {
                    if available == 0 && !self.eof {
                        self.refill()?;
                        continue;
                    }
                    let next = &self.buf[self.pos..];
                    self.event = match next.first() {
                        Some(b'<' | b'&') | None => EventKind::Bounded,
                        Some(_) if extracted => EventKind::Extracted,
                        Some(_) => EventKind::Skippable,
                    };
                    continue;
                }
                EventKind::Bounded if event_len > self.event_limit => {
                    return Err(self.fail(Fault::EventTooLarge));
                }
                EventKind::Extracted if event_len > self.event_limit => {
                    if available == 0 && !self.eof {
                        self.refill()?;
                        continue;
                    }
                    if self.last == b'\r' && self.buf.get(self.pos) == Some(&b'\n') {
                        // Cut after the LF instead.
                        return Ok(&self.buf[self.pos..self.pos + 1]);
                    }
                    // The parser would hold the whole text: an empty comment
                    // cuts it into events of bounded length, each extracted
                    // in turn (a comment inside a `w:t` is no part of its
                    // text, for ElementTree as for `word_xml_text`). Not
                    // between a CR and an LF, which are one line end.
                    self.buf
                        .splice(self.pos..self.pos, b"<!---->".iter().copied());
                    self.event = EventKind::Unbounded;
                    continue;
                }
                EventKind::Skippable if event_len > self.event_limit => {
                    // The parser has the text's first bytes, which end on a
                    // character (chunks are decoded whole): drop the rest up
                    // to the next markup or reference, which it then reads.
                    loop {
                        match self.buf[self.pos..]
                            .iter()
                            .position(|&b| b == b'<' || b == b'&')
                        {
                            Some(i) => {
                                self.buf.drain(self.pos..self.pos + i);
                                break;
                            }
                            None if self.eof => {
                                self.buf.truncate(self.pos);
                                break;
                            }
                            None => {
                                self.buf.truncate(self.pos);
                                self.refill()?;
                            }
                        }
                    }
                    self.event = EventKind::Unbounded;
                    continue;
                }
                _ => {}
            }
            if available == 0 && !self.eof {
                self.refill()?;
                continue;
            }
            return Ok(&self.buf[self.pos..]);
        }
    }

    fn consume(&mut self, amount: usize) {
        let amount = amount.min(self.buf.len() - self.pos);
        if amount > 0 {
            self.last = self.buf[self.pos + amount - 1];
        }
        self.pos += amount;
        self.consumed += amount as u64;
    }
}

/// The open elements of a streamed part, bounded in depth and in the bytes
/// of their start tags (the parser keeps each open tag's name and namespace
/// declarations until its end tag).
#[derive(Debug, Default)]
pub(crate) struct Nesting {
    open: Vec<u32>,
    bytes: u64,
}

impl Nesting {
    /// A start tag of `len` bytes opened; an error past the bounds.
    pub(crate) fn open(&mut self, len: usize) -> std::result::Result<(), String> {
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        self.bytes += u64::from(len);
        self.open.push(len);
        if self.open.len() > MAX_XML_DEPTH {
            return Err(format!("elements nest deeper than {MAX_XML_DEPTH} levels"));
        }
        if self.bytes > MAX_OPEN_TAG_BYTES {
            return Err(format!(
                "the open elements' start tags exceed {} MiB",
                MAX_OPEN_TAG_BYTES >> 20
            ));
        }
        Ok(())
    }

    /// The innermost element closed.
    pub(crate) fn close(&mut self) {
        if let Some(len) = self.open.pop() {
            self.bytes -= u64::from(len);
        }
    }
}

/// Why a part's parse stopped: the XML's error, or a bound of [`Nesting`].
#[derive(Debug)]
pub(crate) enum PartParseError {
    Xml(quick_xml::Error),
    Nesting(String),
}

impl std::fmt::Display for PartParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Xml(e) => e.fmt(f),
            Self::Nesting(e) => f.write_str(e),
        }
    }
}

impl From<quick_xml::Error> for PartParseError {
    fn from(e: quick_xml::Error) -> Self {
        Self::Xml(e)
    }
}

/// Opens the entry `name` of `zip` for streaming with `budget` bytes left
/// to inflate; `Ok(None)` when there is no such entry.
pub(crate) fn open_part<'a, R: std::io::Read + std::io::Seek>(
    path: &Path,
    zip: &'a mut zip::ZipArchive<R>,
    name: &str,
    budget: u64,
    utf8: Utf8,
) -> Result<Option<PartReader<zip::read::ZipFile<'a, R>>>> {
    match zip.by_name(name) {
        Ok(entry) => Ok(Some(PartReader::new(entry, budget, utf8))),
        Err(zip::result::ZipError::FileNotFound) => Ok(None),
        Err(e) => Err(Error::corrupt(path, format!("cannot open {name}: {e}"))),
    }
}

/// The error for a streamed part `name` whose parse failed with `xml`:
/// the reader's own fault when it stopped the parse, else the XML's.
pub(crate) fn part_error(
    path: &Path,
    name: &str,
    fault: Option<&Fault>,
    xml: impl std::fmt::Display,
) -> Error {
    let msg = match fault {
        Some(Fault::OverBudget) => format!(
            "{name} decompresses past the reader's limit of unpacked bytes per archive \
             (a decompression bomb?); skipped"
        ),
        Some(Fault::EventTooLarge) => format!(
            "{name} has an XML tag, comment or reference longer than {} MiB; skipped",
            MAX_XML_EVENT >> 20
        ),
        Some(Fault::NotUtf8) => format!("{name} is not UTF-8"),
        Some(Fault::Inflate(e)) => format!("cannot read {name}: {e}"),
        None => format!("{name} is not well-formed XML: {xml}"),
    };
    Error::corrupt(path, msg)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_the_files_error() {
        let err = run_guarded::<(), _>(Path::new("x.pdf"), |_| panic!("boom"))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("x.pdf") && err.contains("boom"), "{err}");
    }

    #[test]
    fn a_panic_without_a_runtime_is_caught_too() {
        let result = futures_lite_block_on(run_guarded::<(), _>(Path::new("y.pdf"), |_| {
            panic!("{}", String::from("owned"))
        }));
        let err = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("y.pdf") && err.contains("owned"), "{err}");
    }

    /// Polls a future that never waits, without a runtime.
    fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    /// Hands out at most `step` bytes a read, as an inflater may.
    pub(crate) struct Trickle<'a>(pub(crate) &'a [u8], pub(crate) usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn lossy_parts_decode_as_from_utf8_lossy() {
        use std::io::Read;
        let bytes: Vec<u8> = b"ok \xe6\x9d\xb1 \xff cut \xe6\x9d x \xf0\x9f\x98\x80\xc3"
            .iter()
            .copied()
            .cycle()
            .take(200)
            .collect();
        for step in 1..8 {
            let mut reader = PartReader::new(Trickle(&bytes, step), u64::MAX, Utf8::Lossy)
                .with_event_limit(u64::MAX);
            let mut out = String::new();
            reader.read_to_string(&mut out).unwrap_or_default();
            assert_eq!(out, String::from_utf8_lossy(&bytes), "step {step}");

            let mut strict = PartReader::new(Trickle(&bytes, step), u64::MAX, Utf8::Strict)
                .with_event_limit(u64::MAX);
            assert!(strict.read_to_end(&mut Vec::new()).is_err());
            assert_eq!(strict.fault(), Some(&Fault::NotUtf8));
        }
    }

    #[test]
    fn the_budget_counts_inflated_bytes() {
        use std::io::Read;
        let bytes = vec![b'a'; 100];
        let mut reader = PartReader::new(Trickle(&bytes, 7), 99, Utf8::Strict);
        assert!(reader.read_to_end(&mut Vec::new()).is_err());
        assert_eq!(reader.fault(), Some(&Fault::OverBudget));
        let mut reader =
            PartReader::new(Trickle(&bytes, 7), 100, Utf8::Strict).with_event_limit(u64::MAX);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap_or_default();
        assert_eq!((out.len(), reader.inflated()), (100, 100));
    }

    #[test]
    fn suffix_and_name_are_pythons() {
        assert_eq!(suffix(Path::new("a/b.tar.gz")), ".gz");
        assert_eq!(suffix(Path::new(".bashrc")), "");
        assert_eq!(file_name(Path::new("dir/x.csv")), "x.csv");
    }
}
