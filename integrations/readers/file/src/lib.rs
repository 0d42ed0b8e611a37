//! File readers for ragloom's `SimpleDirectoryReader`, one per extension:
//! PDF, DOCX, CSV, JSON, Markdown, HTML and EPUB (LlamaIndex's `llama-index-readers-file`).
//!
//! Each reader implements core's [`FileReader`], so it can be registered
//! for an extension with [`SimpleDirectoryReader::file_extractor`] or used
//! on its own. [`default_file_extractors`] lists the readers LlamaIndex's
//! `SimpleDirectoryReader` uses when `llama-index-readers-file` is installed
//! (for the formats this crate reads); [`SimpleDirectoryReaderExt`] registers
//! them in one call:
//!
//! ```no_run
//! # async fn demo() -> ragloom_core::Result<()> {
//! use ragloom_core::readers::SimpleDirectoryReader;
//! use ragloom_readers_file::SimpleDirectoryReaderExt;
//!
//! let report = SimpleDirectoryReader::new("./data")
//!     .with_default_file_extractors()
//!     .load_data_with_report()
//!     .await?;
//! for (file, error) in &report.errors {
//!     eprintln!("skipped {}: {error}", file.display());
//! }
//! # Ok(()) }
//! ```
//!
//! Parsing runs on tokio's blocking pool (inline when there is no runtime)
//! under `catch_unwind`: a corrupt, encrypted or hostile file is an error
//! naming that file, and a directory load carries on with the others.

#![warn(missing_docs)]

mod docx;
mod epub;
mod html;
mod json;
mod markdown;
mod pdf;
mod tabular;
mod util;

pub use docx::DocxReader;
pub use epub::EpubReader;
pub use html::{HTMLReader, HTMLTagReader, html_to_text};
pub use json::JSONReader;
pub use markdown::MarkdownReader;
pub use pdf::PDFReader;
pub use tabular::{CSVReader, PandasCSVReader};
pub use util::{DEFAULT_MAX_UNZIPPED_BYTES, DEFAULT_PDF_TIME_LIMIT};

use ragloom_core::readers::{FileReader, SimpleDirectoryReader};
use std::sync::Arc;

/// The readers LlamaIndex's `SimpleDirectoryReader` registers by default,
/// for the formats this crate reads: `.pdf` → [`PDFReader`], `.docx` →
/// [`DocxReader`], `.csv` → [`PandasCSVReader`], `.epub` → [`EpubReader`].
///
/// As in LlamaIndex, Markdown, HTML and JSON are not among them (they load
/// as plain text); [`all_file_extractors`] adds readers for those too.
pub fn default_file_extractors() -> Vec<(&'static str, Arc<dyn FileReader>)> {
    vec![
        (".pdf", Arc::new(PDFReader::new())),
        (".docx", Arc::new(DocxReader::new())),
        (".csv", Arc::new(PandasCSVReader::new())),
        (".epub", Arc::new(EpubReader::new())),
    ]
}

/// [`default_file_extractors`] plus `.md` → [`MarkdownReader`], `.html` and
/// `.htm` → [`HTMLReader`], `.json` → [`JSONReader`]: every format this
/// crate reads, each parsed rather than loaded as plain text.
pub fn all_file_extractors() -> Vec<(&'static str, Arc<dyn FileReader>)> {
    let mut readers = default_file_extractors();
    let html: Arc<dyn FileReader> = Arc::new(HTMLReader::new());
    readers.extend([
        (
            ".md",
            Arc::new(MarkdownReader::new()) as Arc<dyn FileReader>,
        ),
        (".html", Arc::clone(&html)),
        (".htm", html),
        (".json", Arc::new(JSONReader::new())),
    ]);
    readers
}

/// Registers this crate's readers on a [`SimpleDirectoryReader`].
///
/// Readers are registered by extension, replacing any registered before;
/// call this first and your own `file_extractor(...)` calls after it to
/// override one (LlamaIndex's `file_extractor` argument likewise wins over
/// its defaults).
pub trait SimpleDirectoryReaderExt: Sized {
    /// Registers [`default_file_extractors`].
    fn with_default_file_extractors(self) -> Self;
    /// Registers [`all_file_extractors`].
    fn with_all_file_extractors(self) -> Self;
}

impl SimpleDirectoryReaderExt for SimpleDirectoryReader {
    fn with_default_file_extractors(self) -> Self {
        default_file_extractors()
            .into_iter()
            .fold(self, |reader, (ext, extractor)| {
                reader.file_extractor(ext, extractor)
            })
    }

    fn with_all_file_extractors(self) -> Self {
        all_file_extractors()
            .into_iter()
            .fold(self, |reader, (ext, extractor)| {
                reader.file_extractor(ext, extractor)
            })
    }
}
