//! Readers: where documents come from. [`Reader`] loads a whole source,
//! [`FileReader`] turns one file into documents, [`SimpleDirectoryReader`] walks a folder.

mod glob;
mod metadata;
mod simple_directory;

pub use metadata::{EXCLUDED_FILE_METADATA_KEYS, default_file_metadata_func};
pub use simple_directory::{
    DEFAULT_MAX_FILE_SIZE, FileMetadataFn, LoadReport, SimpleDirectoryReader,
};

use crate::error::Result;
use crate::schema::{Document, Metadata};
use async_trait::async_trait;
use std::path::Path;

/// A source of documents (LlamaIndex `BaseReader`): a folder, a web page, an API.
#[async_trait]
pub trait Reader: Send + Sync + std::fmt::Debug {
    /// Loads every document of the source.
    async fn load_data(&self) -> Result<Vec<Document>>;
}

/// A reader for one file, chosen by extension (LlamaIndex `file_extractor`),
/// e.g. PDF later.
///
/// `extra_info` is the file's metadata (the default metadata or what the
/// `file_metadata` function returned); implementations are expected to put
/// it on the documents they return, as LlamaIndex's file readers do.
#[async_trait]
pub trait FileReader: Send + Sync + std::fmt::Debug {
    /// Reads `path` into documents.
    async fn load_file(&self, path: &Path, extra_info: Metadata) -> Result<Vec<Document>>;
}
