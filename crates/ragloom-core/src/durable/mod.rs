//! The index's whole life as a library: open a durable index where it lives
//! (SQLite files, PostgreSQL, Qdrant), sync a source into it in one
//! transaction under one writer, and answer from its last commit.
//!
//! LlamaIndex's nearest concept is an `IngestionPipeline` with a docstore, a
//! vector store and a cache, run with `refresh_ref_docs`; a [`DurableIndex`]
//! adds what a program that keeps an index alive needs around it: the writer
//! lock, listing and diffing a folder by size and modification time, keeping
//! what failed to read, building beside the live index when the settings
//! change, garbage collection and a [`SyncReport`] of what happened.
//!
//! ```no_run
//! # async fn run(location: std::sync::Arc<dyn ragloom_core::durable::IndexLocation>) -> ragloom_core::Result<()> {
//! use ragloom_core::durable::{DurableIndex, Source, SyncOptions};
//!
//! let index = DurableIndex::new(location, "./storage", Source::resolve("./docs")?);
//! let report = index.sync(&SyncOptions::default()).await?;
//! println!("{} new or changed, {} unchanged", report.ingested, report.files_unchanged);
//! let live = index.open().await?;
//! let nodes = live.keyword_retriever(4, None)?.retrieve(&"heron".into()).await?;
//! # Ok(()) }
//! ```
//!
//! A store takes part by implementing [`IndexLocation`], [`IndexBuild`] and
//! [`BuildTransaction`]; the SQLite, PostgreSQL and Qdrant crates do.

mod dir;
mod fusion;
mod index;
mod kv;
mod listing;
mod llamaindex;
mod location;
mod manifest;
mod settings;
mod shared_store;
mod source;
mod status;
mod sync;
mod timed;
mod writer;

pub use crate::error::{FolderProblem, IndexError};
pub use dir::IndexDir;
pub use fusion::{FusionChoice, HybridFusion};
pub use index::{DurableIndex, IndexRetrievers, LiveIndex, NewBuild};
pub use kv::{DynKv, copy_collections};
pub use llamaindex::Exported;
pub use location::{
    BuildRequest, BuildTransaction, IndexBuild, IndexLocation, NodeSink, PlainNodeSink,
    PreparedNodes, SimpleStores, StoreInfo, WriterGuard, build_prefix, import_suffix, probe_dim,
    store_keyword_retriever,
};
pub use manifest::{
    FileRecord, IngestStages, MANIFEST_FORMAT, Manifest, SkippedFile, SyncReport, read_files,
    read_manifest, write_files, write_manifest,
};
pub use settings::{
    BuildSettings, CHUNK_TOKENIZER_MODEL, ChunkFit, ChunkTokenizerSource, Chunking,
    DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, EmbedModel, no_model,
};
pub use shared_store::{
    check_manifest_source, drop_builds, embedded_vectors, live_entry, live_if_named, own_build_name,
};
pub use source::{Source, SourceKind};
pub use status::IndexStatus;
pub use sync::{ReaderSetup, SyncEvent, SyncOptions, SyncProgress};
