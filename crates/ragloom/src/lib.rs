//! ragloom: a data framework for LLM applications — load, parse, embed, index,
//! retrieve, synthesize, chat and build agents over your own data.
//!
//! This facade re-exports [`ragloom_core`] and, behind feature flags, each
//! integration crate, so one dependency gives the whole toolkit.

pub use ragloom_core::*;

/// File readers for [`SimpleDirectoryReader`](ragloom_core::readers::SimpleDirectoryReader):
/// PDF, DOCX, CSV, JSON, Markdown, HTML and EPUB (crate `ragloom-readers-file`,
/// LlamaIndex's `llama-index-readers-file`). `SimpleDirectoryReaderExt` registers
/// them: `SimpleDirectoryReader::new(dir).with_default_file_extractors()`.
#[cfg(feature = "file-readers")]
pub mod file_readers {
    pub use ragloom_readers_file::*;
}
