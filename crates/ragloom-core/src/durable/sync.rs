//! A sync: list the source, read only what changed, and bring the build up
//! to date in one transaction; a kill at any moment leaves the last commit.
//!
//! Files whose size and modification time are unchanged are not read again
//! (git's racy rule: a file modified in the second of the last listing or
//! later is); the others are read in batches and refreshed through
//! `VectorStoreIndex::refresh_ref_docs` (or, without an embedding model, the
//! same plan applied to the docstore, each batch written while the next one
//! is split). Files that vanished lose their documents; files that cannot be
//! read keep them.

use super::IndexError;
use super::dir::IndexDir;
use super::listing::{Listed, Listing, list, nanos};
use super::location::{BuildRequest, IndexBuild, IndexLocation};
use super::manifest::{
    FileRecord, IngestStages, MANIFEST_FORMAT, Manifest, SyncReport, read_files, read_manifest,
    write_files, write_manifest,
};
use super::settings::{BuildSettings, Chunking, EmbedModel, resolve};
use super::source::Source;
use super::timed::TimedTokenizer;
use super::writer::{Staged, Times, Writer};
use crate::embeddings::{CachedEmbedding, Embedding};
use crate::error::Result;
use crate::indices::VectorStoreIndex;
use crate::node_parser::SentenceSplitter;
use crate::readers::SimpleDirectoryReader;
use crate::schema::Node;
use crate::tokenizer::default_tokenizer;
use crate::transform::TransformComponent;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// A batch of files read and written together holds about a sixteenth of
/// what a sync reads, within these bytes: small batches let writing start
/// early and keep the last write, which nothing overlaps, short; large ones
/// write fewer keyword segments, which the embedded store merges sixteen of
/// a size at a time (4 MB batches made the 1 GB corpus's ingest 56% slower),
/// and fewer keyword rows (8 MB instead of 4 made the 50 MB corpus's 11% faster).
const BATCH_BYTES: std::ops::RangeInclusive<u64> = (8 << 20)..=(16 << 20);
/// ...and at most this many files.
const BATCH_FILES: usize = 512;

/// Configures the reader of a sync's files (e.g. the file readers of
/// `ragloom-readers-file`); the listing uses it too, to see which files it reads.
pub type ReaderSetup = Arc<dyn Fn(SimpleDirectoryReader) -> SimpleDirectoryReader + Send + Sync>;

/// What happens during a sync, for a progress bar or a log.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum SyncEvent<'a> {
    /// Another writer holds the source: this one waits.
    WaitingForWriter,
    /// A replaced build could not be dropped yet (only space; a later sync does).
    KeptBuild {
        /// The build.
        name: &'a str,
        /// Why.
        error: &'a str,
    },
    /// The settings changed: a new build is made beside the live one, and
    /// replaces it once complete.
    SettingsChanged {
        /// The live build's.
        old: &'a BuildSettings,
        /// This sync's.
        new: &'a BuildSettings,
    },
    /// A file that could not be read or stat'ed: its earlier nodes are kept.
    Unreadable {
        /// The file.
        path: &'a str,
        /// Why.
        error: &'a str,
    },
    /// A file left out of the source (see [`super::SkippedFile`]).
    Skipped {
        /// The file.
        path: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// Reading starts: this many files changed.
    Reading {
        /// Files to read.
        files: usize,
    },
    /// A batch of files was read and written.
    BatchDone {
        /// Files in the batch.
        files: usize,
    },
    /// Everything is written; the commit follows.
    Written,
}

/// Receives a sync's [`SyncEvent`]s.
pub trait SyncProgress: Send + Sync {
    /// One event.
    fn event(&self, event: SyncEvent<'_>);
}

impl<F: Fn(SyncEvent<'_>) + Send + Sync> SyncProgress for F {
    fn event(&self, event: SyncEvent<'_>) {
        self(event)
    }
}

/// How to sync.
#[derive(Clone)]
pub struct SyncOptions {
    /// Chunk sizes; unset ones keep the index's (or LlamaIndex's defaults).
    pub chunking: Chunking,
    /// The embedding model; without one, retrieval is by keywords alone.
    pub embed: Option<EmbedModel>,
    /// Allow a sync that finds no file, or no text, to empty the index.
    pub prune: bool,
    /// Fail at once if another writer holds the source, instead of waiting.
    pub no_wait: bool,
    /// Read files through symlinks that resolve outside the source's folder
    /// (skipped by default: a link must not pull `/etc/passwd` into an index
    /// that a server then answers from). Uploads never follow links.
    pub follow_links: bool,
    /// Show the embedding progress bar (LlamaIndex's `show_progress`).
    pub show_progress: bool,
    /// Where events go.
    pub progress: Option<Arc<dyn SyncProgress>>,
    /// Configures the reader (file readers by extension).
    pub reader_setup: ReaderSetup,
    /// Threads that read and split.
    pub num_workers: usize,
}

impl Default for SyncOptions {
    fn default() -> Self {
        Self {
            chunking: Chunking::default(),
            embed: None,
            prune: false,
            no_wait: false,
            follow_links: false,
            show_progress: false,
            progress: None,
            reader_setup: Arc::new(|r| r),
            num_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl fmt::Debug for SyncOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncOptions")
            .field("chunking", &self.chunking)
            .field("embed", &self.embed)
            .field("prune", &self.prune)
            .field("no_wait", &self.no_wait)
            .field("follow_links", &self.follow_links)
            .finish_non_exhaustive()
    }
}

impl SyncOptions {
    pub(crate) fn emit(&self, event: SyncEvent<'_>) {
        if let Some(p) = &self.progress {
            p.event(event);
        }
    }
}

/// A node id that sorts after the ones made before it (a UUID v7; the
/// library's default, as LlamaIndex's, is a random v4): each node's rows
/// then land at the end of the store's key indexes, not at random pages,
/// which at 1 GB made most of the write's time.
fn time_ordered_id(_index: usize, _document: &Node) -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The file a document was read from (its `file_path`; empty without one).
fn file_path(d: &Node) -> &str {
    d.metadata
        .get("file_path")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// What a sync works on.
pub(crate) struct Target<'a> {
    pub location: &'a dyn IndexLocation,
    pub dir: &'a IndexDir,
    pub source: &'a Source,
}

/// Drops the builds of `t` other than `keep`, reporting those kept.
pub(crate) async fn collect_garbage(
    t: &Target<'_>,
    keep: Option<&dyn IndexBuild>,
    opts: &SyncOptions,
) -> Result<()> {
    for (name, error) in t
        .location
        .collect_garbage(t.dir, &t.source.key, keep)
        .await?
    {
        opts.emit(SyncEvent::KeptBuild {
            name: &name,
            error: &error,
        });
    }
    Ok(())
}

/// Syncs `t.source` into its index.
pub(crate) async fn sync(t: &Target<'_>, opts: &SyncOptions) -> Result<SyncReport> {
    let started = Instant::now();
    let key = &t.source.key;
    let on_wait = || opts.emit(SyncEvent::WaitingForWriter);
    // The writer lock first: what is live is read under it.
    let _writer = t
        .location
        .lock_writer(t.dir, key, opts.no_wait, &on_wait)
        .await?;
    // The live build, opened once: with unchanged settings it is the build
    // this sync writes. Live data that vanished means a rebuild.
    let live = t.location.open_live(t.dir, key, opts.no_wait, true).await?;
    collect_garbage(t, live.as_deref(), opts).await?;
    let live_manifest = match &live {
        Some(build) => read_manifest(&*build.kv())?,
        None => None,
    };
    let (settings, chunk_tokenizer) =
        resolve(&opts.chunking, opts.embed.as_ref(), live_manifest.as_ref())?;
    if let Some(m) = live_manifest.as_ref().filter(|m| m.settings != settings) {
        opts.emit(SyncEvent::SettingsChanged {
            old: &m.settings,
            new: &settings,
        });
    }
    // Vectors are cached by content in a store of their own, committed as
    // they come, so a failed or killed sync keeps the embedding work done.
    let embed: Option<Arc<dyn Embedding>> = match &opts.embed {
        Some(e) => match t.location.embedding_cache(t.dir).await? {
            Some(cache) => Some(Arc::new(CachedEmbedding::with_store(
                e.model.clone(),
                cache,
                e.identity.to_string(),
            ))),
            None => Some(e.model.clone()),
        },
        None => None,
    };
    let fingerprint = settings.fingerprint();
    let request = BuildRequest {
        fingerprint: &fingerprint,
        import: false,
        no_wait: opts.no_wait,
        embed: embed.as_ref(),
        embed_dim: None,
    };
    let build = t.location.open_build(t.dir, key, live, request).await?;
    let tx = build.begin(&on_wait).await?;
    let manifest = read_manifest(&*tx.kv())?;
    let previous = read_files(&*tx.kv())?;
    let listed_at_ns = nanos(SystemTime::now());
    let Listing {
        listed,
        unlisted,
        skipped,
    } = list(
        t.source,
        &t.dir.uploads_dir(),
        opts.follow_links,
        &opts.reader_setup,
    )?;
    // Racy files (modified in the second the last listing ran, or later) are read again.
    let racy_from = manifest.as_ref().map_or(i128::MIN, |m| {
        m.listed_at_ns - m.listed_at_ns.rem_euclid(1_000_000_000)
    });
    let mut report = SyncReport {
        files: listed.len(),
        ..Default::default()
    };
    // Everything still there, readable or not: only the rest is gone.
    let present: BTreeSet<String> = unlisted
        .iter()
        .map(|(p, _)| p.clone())
        .chain(listed.iter().map(|f| f.path.clone()))
        .collect();
    // Documents that keep their text whatever this sync reads: those of
    // unchanged files, of files that cannot be read, and any read with text.
    let mut kept_docs = 0usize;
    let mut to_read: Vec<Listed> = Vec::new();
    for file in listed {
        match previous.get(&file.path) {
            Some(r)
                if r.size == file.size
                    && r.mtime_ns == file.mtime_ns
                    && file.mtime_ns < racy_from =>
            {
                report.files_unchanged += 1;
                kept_docs += r.docs.len();
            }
            _ => to_read.push(file),
        }
    }
    let gone: Vec<String> = previous
        .keys()
        .filter(|p| !present.contains(*p))
        .cloned()
        .collect();
    for (path, error) in &unlisted {
        opts.emit(SyncEvent::Unreadable { path, error });
        report.failed_files += 1;
    }
    // Left out of the source: not in `present`, so what an earlier sync
    // stored from them is deleted like a vanished file's.
    for file in &skipped {
        opts.emit(SyncEvent::Skipped {
            path: &file.path,
            reason: &file.reason,
        });
    }
    report.skipped_files = skipped.len();
    report.skipped = skipped;
    if report.files == 0 && unlisted.is_empty() && !opts.prune {
        return Err(IndexError::NoFiles {
            source_key: key.clone(),
            held: !previous.is_empty(),
        }
        .into());
    }

    // Timed, so the report can set the splitter's counting beside the
    // counter's own speed (`stages.count`).
    let counting = TimedTokenizer::new(chunk_tokenizer.unwrap_or_else(default_tokenizer));
    let splitter = SentenceSplitter::new()
        .chunk_size(settings.chunk_size)
        .chunk_overlap(settings.chunk_overlap)
        .id_func(Arc::new(time_ordered_id))
        .tokenizer(Arc::new(counting.clone()));
    let splitter: Arc<dyn TransformComponent> = Arc::new(splitter);
    let context = tx.storage_context();
    let transformations = vec![splitter];
    let writer = match &embed {
        Some(e) => Writer::vectors(
            VectorStoreIndex::builder(e.clone())
                .storage_context(context)
                // Nodes in the docstore too, where the vector store keeps text.
                .store_nodes_override(true)
                .show_progress(opts.show_progress)
                .load_or_create()
                .await?,
            transformations,
            opts.num_workers,
        ),
        None => Writer::text(
            context,
            transformations,
            opts.num_workers,
            tx.text_rows(),
            tx.node_sink(),
        ),
    };

    opts.emit(SyncEvent::Reading {
        files: to_read.len(),
    });
    let list_time = started.elapsed();
    let mut times = Times::default();
    let mut records: Vec<(String, FileRecord)> = Vec::new();
    let mut staged: Option<Staged> = None;
    let batch_bytes = (to_read.iter().map(|f| f.size).sum::<u64>() / 16)
        .clamp(*BATCH_BYTES.start(), *BATCH_BYTES.end());
    let mut rest = to_read.as_slice();
    while !rest.is_empty() {
        let mut bytes = 0u64;
        let take = rest
            .iter()
            .take_while(|f| {
                bytes += f.size;
                bytes <= batch_bytes
            })
            .count()
            .clamp(1, BATCH_FILES);
        let (batch, tail) = rest.split_at(take.min(rest.len()));
        rest = tail;
        let read_started = Instant::now();
        let reader =
            SimpleDirectoryReader::from_files(batch.iter().map(|f| PathBuf::from(&f.path)))
                .filename_as_id(true)
                .num_workers(opts.num_workers);
        let mut loaded = (opts.reader_setup)(reader).load_data_with_report().await?;
        times.read += read_started.elapsed();
        let mut failed: BTreeSet<String> = loaded
            .errors
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        for (path, err) in &loaded.errors {
            opts.emit(SyncEvent::Unreadable {
                path: &path.display().to_string(),
                error: &err.to_string(),
            });
        }
        // A document the store cannot hold fails its file, as a read error
        // would: the file's earlier nodes stay and the sync goes on.
        let mut refused: BTreeMap<String, String> = BTreeMap::new();
        for d in &loaded.documents {
            if let Err(why) = tx.check_document(d) {
                refused.entry(file_path(d).to_string()).or_insert(why);
            }
        }
        if !refused.is_empty() {
            loaded
                .documents
                .retain(|d| !refused.contains_key(file_path(d)));
            for (path, why) in refused {
                opts.emit(SyncEvent::Unreadable {
                    path: &path,
                    error: &why,
                });
                failed.insert(path);
            }
        }
        report.failed_files += failed.len();
        kept_docs += failed
            .iter()
            .filter_map(|p| previous.get(p))
            .map(|r| r.docs.len())
            .sum::<usize>();
        kept_docs += loaded
            .documents
            .iter()
            .filter(|d| !d.get_text().trim().is_empty())
            .count();
        let mut docs_of: HashMap<String, Vec<String>> = HashMap::new();
        for d in &loaded.documents {
            if d.metadata.contains_key("file_path") {
                docs_of
                    .entry(file_path(d).to_string())
                    .or_default()
                    .push(d.id_.clone());
            }
        }
        // Documents a re-read file no longer yields (a PDF that lost pages).
        let mut stale: Vec<String> = Vec::new();
        for f in batch.iter().filter(|f| !failed.contains(&f.path)) {
            let now = docs_of.remove(&f.path).unwrap_or_default();
            if let Some(before) = previous.get(&f.path) {
                stale.extend(before.docs.iter().filter(|d| !now.contains(d)).cloned());
            }
            records.push((
                f.path.clone(),
                FileRecord {
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                    docs: now,
                },
            ));
        }
        report.deleted += stale.len();
        writer.delete(&stale).await?;
        let (written, nodes) = writer
            .refresh(&loaded.documents, &mut staged, &mut times)
            .await?;
        let ingested = written.iter().filter(|w| **w).count();
        report.documents += loaded.documents.len();
        report.ingested += ingested;
        report.unchanged += loaded.documents.len() - ingested;
        report.nodes_written += nodes;
        opts.emit(SyncEvent::BatchDone { files: batch.len() });
    }
    writer.flush(staged, &mut times).await?;
    opts.emit(SyncEvent::Written);

    let gone_docs: Vec<String> = gone
        .iter()
        .filter_map(|p| previous.get(p))
        .flat_map(|r| r.docs.iter().cloned())
        .collect();
    report.deleted += gone_docs.len();
    writer.delete(&gone_docs).await?;
    if embed.is_some() {
        report.nodes_embedded = report.nodes_written;
    }
    report.nodes_total = writer
        .context()
        .docstore
        .get_all_ref_doc_info()
        .await?
        .values()
        .map(|r| r.node_ids.len())
        .sum();
    let held_before = manifest.as_ref().map_or(0, |m| m.last_ingest.nodes_total);
    if kept_docs == 0 && held_before > 0 && !opts.prune {
        // Dropping the transaction rolls it back: the index stays as it was.
        return Err(IndexError::NoText {
            source_key: key.clone(),
        }
        .into());
    }
    write_files(&*tx.kv(), &records, &gone)?;
    let merge_started = Instant::now();
    tx.finish_keyword_index()?;
    let ms = |d: Duration| d.as_millis() as u64;
    report.stages = IngestStages {
        list: ms(list_time),
        read: ms(times.read),
        plan: ms(times.plan),
        split: ms(times.split),
        count: ms(counting.elapsed()),
        encode: ms(times.encode),
        write: ms(times.write),
        write_cpu: ms(times.write_cpu),
        keyword_index: ms(merge_started.elapsed()),
        commit: 0,
    };
    report.millis = started.elapsed().as_millis() as u64;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        source: key.clone(),
        settings,
        created: manifest
            .as_ref()
            .map(|m| m.created.clone())
            .unwrap_or_else(|| now.clone()),
        updated: now,
        listed_at_ns,
        last_ingest: report.clone(),
        fusion: manifest.and_then(|m| m.fusion),
    };
    let commit_started = Instant::now();
    write_manifest(&*tx.kv(), &manifest)?;
    tx.commit().await?;
    report.stages.commit = ms(commit_started.elapsed());
    Ok(report)
}
