//! `ragloom ingest`: list the source, read only what changed, and bring the
//! index up to date in one transaction of its SQLite file.
//!
//! Files whose size and modification time are unchanged are not read again;
//! the others are read in batches and refreshed through the library's
//! `VectorStoreIndex::refresh_ref_docs` (or, without an embedding model, the
//! same plan applied to the docstore, whose keyword index follows it, each
//! batch written while the next one is split). A kill at any moment leaves
//! the last commit; a second ingest waits for the first.

use crate::backend::{self, Index};
use crate::error::{CliError, exit};
use crate::source::{Source, SourceKind};
use crate::store::{
    BuildSettings, CHUNK_TOKENIZER_MODEL, FileRecord, IngestSummary, MANIFEST_FORMAT, Manifest,
    SkippedFile,
};
use crate::timed::{TimedTokenizer, thread_cpu_time};
use crate::ui::Ui;
use ragloom::embeddings::CachedEmbedding;
use ragloom::indices::VectorStoreIndex;
use ragloom::indices::{RefreshPlan, record_hashes};
use ragloom::ingestion::run_transformations_parallel;
use ragloom::readers::SimpleDirectoryReader;
use ragloom::sqlite::{PreparedNodes, SqliteDocumentStore};
use ragloom::storage::StorageContext;
use ragloom::transform::TransformComponent;
use ragloom::{Embedding, Node, ProviderSpec, SentenceSplitter, default_tokenizer};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The splitter's defaults (LlamaIndex's `SentenceSplitter`).
pub const DEFAULT_CHUNK_SIZE: usize = 1024;
pub const DEFAULT_CHUNK_OVERLAP: usize = 200;
/// A batch of files read and written together holds about a sixteenth of
/// what an ingest reads, within these bytes: small batches let writing start
/// early and keep the last write, which nothing overlaps, short; large ones
/// write fewer keyword segments, which the store merges sixteen of a size at
/// a time (4 MB batches made the 1 GB corpus's ingest 56% slower), and fewer
/// keyword rows (8 MB instead of 4 made the 50 MB corpus's ingest 11% faster).
const BATCH_BYTES: std::ops::RangeInclusive<u64> = (8 << 20)..=(16 << 20);
/// ...and at most this many files.
const BATCH_FILES: usize = 512;

/// A node id that sorts after the ones made before it (a UUID v7; the
/// library's default, as LlamaIndex's, is a random v4): each node's rows
/// then land at the end of the store's key indexes, not at random pages,
/// which at 1 GB made most of the write's time.
fn time_ordered_id(_index: usize, _document: &Node) -> String {
    uuid::Uuid::now_v7().to_string()
}

/// How to ingest.
#[derive(Clone, Debug, Default)]
pub struct IngestOptions {
    /// Splitter settings; `None` keeps the index's (or the defaults).
    pub chunk_size: Option<usize>,
    pub chunk_overlap: Option<usize>,
    /// Count chunks with the embedding model's tokenizer, sized to what it
    /// reads whole; `None` keeps the index's choice.
    pub chunk_fit: Option<bool>,
    /// Allow an ingest that finds no file to empty the index.
    pub prune: bool,
    /// Fail at once if another ingest is writing, instead of waiting.
    pub no_wait: bool,
    /// Read files through symlinks that resolve outside the source's folder
    /// (skipped by default: a link must not pull `/etc/passwd` into an
    /// index that a server then answers from). Uploads never follow links.
    pub follow_links: bool,
}

/// A file found in the source, with what `stat` says.
struct Listed {
    path: String,
    size: u64,
    mtime_ns: i128,
}

fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A reader with the command line's settings, for `files`.
fn reader(files: Vec<PathBuf>) -> SimpleDirectoryReader {
    let reader = SimpleDirectoryReader::from_files(files)
        .filename_as_id(true)
        .num_workers(workers());
    #[cfg(feature = "file-readers")]
    let reader = {
        use ragloom::file_readers::SimpleDirectoryReaderExt;
        reader.with_default_file_extractors()
    };
    reader
}

/// A file that could not be stat'ed: its path and why.
type Unlisted = (String, String);

/// What the listing found: the files to consider, those that could not be
/// stat'ed (their earlier nodes are kept), and those left out of the source
/// on purpose (their earlier nodes go, as for a file that vanished).
struct Listing {
    listed: Vec<Listed>,
    unlisted: Vec<Unlisted>,
    skipped: Vec<SkippedFile>,
}

/// Why `path`, found under `root`, is not part of the source, if it is not.
/// `follow_links` lets symlinks out of `root` through; `any_link` refuses
/// every symlink (the uploads folder, which only the server writes).
fn exclusion(path: &Path, root: &Path, follow_links: bool, any_link: bool) -> Option<String> {
    // Files are keyed, and their ids and `file_path` written, as UTF-8
    // strings; a lossy key would name another file (or none) when read back,
    // so such a file is skipped rather than failing the whole ingest.
    if path.to_str().is_none() {
        return Some(
            "its name is not valid UTF-8 (ragloom keys files by their UTF-8 path); rename it to ingest it"
                .to_string(),
        );
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        // The walks do not descend symlinked folders, so only the file
        // itself can lead elsewhere.
        return None;
    }
    if any_link {
        return Some("it is a symbolic link, and uploads never follow links".to_string());
    }
    if follow_links {
        return None;
    }
    // The target is not named: a server returns this reason to its clients.
    match path.canonicalize() {
        Ok(target) if target.starts_with(root) => None,
        Ok(_) => Some(
            "it is a symbolic link that resolves outside the ingested folder (give --follow-links to read it)"
                .to_string(),
        ),
        // A broken link: left to the stat below, which reports it as unreadable.
        Err(_) => None,
    }
}

/// The files of `source` with their size and modification time; files that
/// cannot be stat'ed, and files left out (names that are not UTF-8, links
/// out of the folder), are returned apart.
fn list(source: &Source, uploads: &Path, follow_links: bool) -> Result<Listing, CliError> {
    let paths: Vec<PathBuf> = match &source.kind {
        SourceKind::Folder => {
            let reader = SimpleDirectoryReader::new(&source.base).recursive(true);
            #[cfg(feature = "file-readers")]
            let reader = {
                use ragloom::file_readers::SimpleDirectoryReaderExt;
                reader.with_default_file_extractors()
            };
            match reader.input_files() {
                Ok(files) => files,
                // An empty folder is a listing with no file, not an error.
                Err(ragloom::Error::NotFound(_)) => Vec::new(),
                Err(e) => return Err(e.into()),
            }
        }
        // A file named on the command line is read wherever it resolves:
        // the user chose it (`Source::resolve` already resolved it).
        SourceKind::File(path) => vec![path.clone()],
        SourceKind::Glob(_) => source.glob_files()?.unwrap_or_default(),
    };
    let in_source = !matches!(source.kind, SourceKind::File(_));
    let mut candidates: Vec<(PathBuf, Option<String>)> = paths
        .into_iter()
        .map(|p| {
            let why = exclusion(&p, &source.base, follow_links || !in_source, false);
            (p, why)
        })
        .collect();
    // Files uploaded to `ragloom serve` are part of the source: an ingest
    // from the command line keeps them.
    if uploads.is_dir() {
        let reader = SimpleDirectoryReader::new(uploads).recursive(false);
        #[cfg(feature = "file-readers")]
        let reader = {
            use ragloom::file_readers::SimpleDirectoryReaderExt;
            reader.with_default_file_extractors()
        };
        match reader.input_files() {
            Ok(files) => candidates.extend(files.into_iter().map(|p| {
                let why = exclusion(&p, uploads, false, true);
                (p, why)
            })),
            Err(ragloom::Error::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut listing = Listing {
        listed: Vec::with_capacity(candidates.len()),
        unlisted: Vec::new(),
        skipped: Vec::new(),
    };
    for (path, why) in candidates {
        let key = path.display().to_string();
        if let Some(reason) = why {
            listing.skipped.push(SkippedFile { path: key, reason });
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(m) => listing.listed.push(Listed {
                path: key,
                size: m.len(),
                mtime_ns: m.modified().map(nanos).unwrap_or(0),
            }),
            Err(e) => listing.unlisted.push((key, e.to_string())),
        }
    }
    Ok(listing)
}

/// Where refreshed documents go: a vector index when there is an embedding
/// model, else the docstore alone (retrieval is then BM25 over its keyword index).
enum Writer {
    Vectors(VectorStoreIndex),
    Text {
        context: StorageContext,
        transformations: Vec<Arc<dyn TransformComponent>>,
        /// The nodes also go to the vector store, without embeddings (where
        /// the store's full text is the keyword index).
        text_rows: bool,
        /// The embedded store's docstore (the context's), which encodes a
        /// batch while the one before it is written.
        sqlite: Option<Arc<SqliteDocumentStore>>,
    },
}

/// Wall time of the ingest's stages so far (see [`crate::store::IngestStages`]).
#[derive(Default)]
struct Times {
    read: Duration,
    plan: Duration,
    split: Duration,
    encode: Duration,
    write: Duration,
    /// The writer's thread CPU time, of `write`.
    write_cpu: Duration,
}

/// Split nodes of one batch, waiting to be written.
struct Staged {
    nodes: Pending,
    /// Their documents' ids and hashes, recorded once the nodes are stored.
    hashes: Vec<(String, String)>,
}

/// A batch's nodes: as split, or made ready to store, beside the split,
/// by the embedded store's docstore (which has no text rows).
enum Pending {
    Split(Vec<Node>),
    Prepared(Arc<SqliteDocumentStore>, PreparedNodes),
}

impl Pending {
    fn len(&self) -> usize {
        match self {
            Pending::Split(nodes) => nodes.len(),
            Pending::Prepared(_, prepared) => prepared.nodes().len(),
        }
    }
}

impl Staged {
    /// Stores the nodes (and their text rows), then their documents' hashes.
    async fn store(self, context: StorageContext, text_rows: bool) -> ragloom::Result<()> {
        let docstore = &context.docstore;
        match self.nodes {
            Pending::Prepared(store, prepared) => store.add_prepared_nodes(prepared, true)?,
            Pending::Split(nodes) => {
                docstore.add_documents(&nodes, true, true).await?;
                if text_rows {
                    context.vector_store()?.add(&nodes).await?;
                }
            }
        }
        record_hashes(docstore.as_ref(), &self.hashes).await
    }

    /// [`Staged::store`] on a thread of its own: the inserts are serial,
    /// and the split keeps the other core busy meanwhile. Gives the wall
    /// time and the thread's CPU time (its work without the time it waited
    /// for a core beside the split; work it hands to other threads not in it).
    fn spawn_store(
        self,
        context: StorageContext,
        text_rows: bool,
    ) -> impl std::future::Future<Output = ragloom::Result<(Duration, Duration)>> {
        let runtime = tokio::runtime::Handle::current();
        let task = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let cpu = thread_cpu_time();
            runtime.block_on(self.store(context, text_rows))?;
            let cpu = match (cpu, thread_cpu_time()) {
                (Some(before), Some(after)) => after.saturating_sub(before),
                _ => Duration::ZERO,
            };
            Ok((started.elapsed(), cpu))
        });
        async move {
            task.await.map_err(|e| {
                ragloom::Error::Other(format!("writing a batch of nodes failed: {e}"))
            })?
        }
    }
}

impl Writer {
    /// Refreshes `docs`; returns, per document, whether it was written, and
    /// how many nodes were split from them. Without an embedding model the
    /// nodes of the batch before (`staged`) are written while these are
    /// split, and these are left in `staged` for the next call or
    /// [`Writer::flush`]. Adds the time spent splitting, encoding and
    /// writing to `times` (the write overlaps the other two).
    async fn refresh(
        &self,
        docs: &[Node],
        staged: &mut Option<Staged>,
        times: &mut Times,
    ) -> ragloom::Result<(Vec<bool>, Option<usize>)> {
        match self {
            Writer::Vectors(index) => {
                let started = Instant::now();
                let written = index.refresh_ref_docs(docs).await;
                times.split += started.elapsed();
                Ok((written?, None))
            }
            Writer::Text {
                context,
                transformations,
                text_rows,
                sqlite,
            } => {
                // Planned and deleted before the earlier batch's write
                // starts: both need the transaction's connection, which the
                // write holds.
                let started = Instant::now();
                let RefreshPlan {
                    written,
                    changed,
                    to_write,
                    hashes,
                } = RefreshPlan::new(context.docstore.as_ref(), docs).await?;
                self.delete(&changed).await?;
                times.plan += started.elapsed();
                let writing = staged
                    .take()
                    .map(|batch| batch.spawn_store(context.clone(), *text_rows));
                let started = Instant::now();
                let nodes =
                    run_transformations_parallel(to_write, transformations, workers()).await;
                times.split += started.elapsed();
                let started = Instant::now();
                // Encoded here, beside the write, which then only inserts:
                // on its own thread, it kept one core idle while it inserted.
                let nodes = match (nodes, sqlite) {
                    (Ok(nodes), Some(store)) => {
                        let (store, prepare) = (store.clone(), store.clone());
                        tokio::task::spawn_blocking(move || prepare.prepare(nodes, true))
                            .await
                            .map_err(|e| {
                                ragloom::Error::Other(format!(
                                    "preparing a batch of nodes failed: {e}"
                                ))
                            })
                            .and_then(|prepared| prepared.map(|p| Pending::Prepared(store, p)))
                    }
                    (nodes, _) => nodes.map(Pending::Split),
                };
                times.encode += started.elapsed();
                // The write is awaited before any error returns, so nothing
                // of this ingest is written after it gives up.
                if let Some(writing) = writing {
                    let (wall, cpu) = writing.await?;
                    times.write += wall;
                    times.write_cpu += cpu;
                }
                let nodes = nodes?;
                let count = nodes.len();
                *staged = Some(Staged { nodes, hashes });
                Ok((written, Some(count)))
            }
        }
    }

    /// Writes the nodes left staged by the last [`Writer::refresh`].
    async fn flush(&self, staged: Option<Staged>, times: &mut Times) -> ragloom::Result<()> {
        if let (
            Writer::Text {
                context, text_rows, ..
            },
            Some(batch),
        ) = (self, staged)
        {
            let (wall, cpu) = batch.spawn_store(context.clone(), *text_rows).await?;
            times.write += wall;
            times.write_cpu += cpu;
        }
        Ok(())
    }

    /// Removes documents and their nodes (unknown ids are no error).
    async fn delete(&self, ids: &[String]) -> ragloom::Result<()> {
        match self {
            Writer::Vectors(index) => index.delete_ref_docs(ids, true).await,
            Writer::Text {
                context, text_rows, ..
            } => {
                for id in ids {
                    match context.docstore.delete_ref_doc(id).await {
                        Ok(()) | Err(ragloom::Error::NotFound(_)) => {}
                        Err(e) => return Err(e),
                    }
                    if *text_rows {
                        context.vector_store()?.delete(id).await?;
                    }
                }
                Ok(())
            }
        }
    }

    fn context(&self) -> &StorageContext {
        match self {
            Writer::Vectors(index) => index.storage_context(),
            Writer::Text { context, .. } => context,
        }
    }

    /// How many nodes the documents `ids` have now.
    async fn node_count(&self, ids: &[String]) -> ragloom::Result<usize> {
        let docstore = &self.context().docstore;
        let mut n = 0;
        for id in ids {
            n += docstore
                .get_ref_doc_info(id)
                .await?
                .map_or(0, |i| i.node_ids.len());
        }
        Ok(n)
    }
}

/// The settings this ingest builds with: the flags, else the live index's,
/// else the defaults; with fitted chunks, the embedding model's tokenizer to split with.
pub fn settings_for(
    opts: &IngestOptions,
    spec: &ProviderSpec,
    live: Option<&Manifest>,
) -> Result<(BuildSettings, Option<Arc<dyn ragloom::Tokenizer>>), CliError> {
    // Fitting is asked for, or kept from the index (an explicit --chunk-size
    // alone means cl100k tokens); kept only while the model can be fitted.
    // The model's tokenizer is read only then.
    let wanted = opts.chunk_fit.unwrap_or_else(|| {
        opts.chunk_size.is_none() && live.is_some_and(|m| m.settings.chunk_tokenizer.is_some())
    });
    let chunk_tokenizer = if wanted {
        spec.embed.chunk_tokenizer()?
    } else {
        None
    };
    let fit = wanted && (opts.chunk_fit == Some(true) || chunk_tokenizer.is_some());
    let budget = match (&chunk_tokenizer, fit) {
        (_, false) => None,
        (Some((_, budget)), true) => Some(*budget),
        (None, true) => {
            return Err(CliError::new(
                exit::USAGE,
                format!(
                    "--chunk-fit needs an embedding model whose maximum input length is known; {} does not say it",
                    spec.embed.label()
                ),
                "use a local model (--embed huggingface --embed-model FOLDER), or give --chunk-size",
            ));
        }
    };
    // The index's sizes still apply when they are counted the same way.
    let same = live.filter(|m| {
        m.settings.chunk_tokenizer.is_some() == fit && (!fit || m.settings.embed == spec.embed)
    });
    let chunk_size = match (opts.chunk_size, budget) {
        (Some(n), Some(b)) if n > b => {
            return Err(CliError::new(
                exit::USAGE,
                format!("--chunk-size {n} is more than the {b} tokens the embedding model reads"),
                format!("give at most {b}, or leave --chunk-size out"),
            ));
        }
        (Some(n), _) => n,
        (None, Some(b)) => same.map_or(b, |m| m.settings.chunk_size.min(b)),
        (None, None) => same.map_or(DEFAULT_CHUNK_SIZE, |m| m.settings.chunk_size),
    };
    let chunk_overlap = opts
        .chunk_overlap
        .or(same
            .map(|m| m.settings.chunk_overlap)
            .filter(|o| *o < chunk_size))
        .unwrap_or(match budget {
            // Fitted chunks are short: a fifth of one is shared.
            Some(_) => (chunk_size / 5).min(DEFAULT_CHUNK_OVERLAP),
            None => DEFAULT_CHUNK_OVERLAP.min(chunk_size.saturating_sub(1)),
        });
    if chunk_size == 0 || chunk_overlap >= chunk_size {
        return Err(CliError::new(
            exit::USAGE,
            format!(
                "--chunk-overlap ({chunk_overlap}) must be smaller than --chunk-size ({chunk_size})"
            ),
            "e.g. --chunk-size 512 --chunk-overlap 50",
        ));
    }
    let settings = BuildSettings {
        embed: spec.embed.clone(),
        chunk_size,
        chunk_overlap,
        chunk_tokenizer: fit.then(|| CHUNK_TOKENIZER_MODEL.to_owned()),
    };
    Ok((settings, chunk_tokenizer.map(|(t, _)| t)))
}

/// Ingests `source` into `index`.
pub async fn ingest(
    source: &Source,
    index: &Index,
    spec: &ProviderSpec,
    opts: &IngestOptions,
    ui: &Ui,
) -> Result<IngestSummary, CliError> {
    let started = Instant::now();
    // The live build, opened once: with unchanged settings it is the build
    // this ingest writes. An embedded pointer to a vanished file means a rebuild.
    // In PostgreSQL the writer lock comes first: what is live is read under it.
    let _writer = index.lock_writer(ui, opts.no_wait).await?;
    let live = index.open_live(opts.no_wait, true).await?;
    index.collect_garbage(live.as_ref(), ui).await?;
    let live_manifest = match &live {
        Some(build) => build.manifest()?,
        None => None,
    };
    let (settings, chunk_tokenizer) = settings_for(opts, spec, live_manifest.as_ref())?;
    if let Some(m) = live_manifest.as_ref().filter(|m| m.settings != settings) {
        ui.note(&format!(
            "the settings changed ({}): building a new index beside the current one; it replaces it once complete",
            describe_change(&m.settings, &settings)
        ));
    }
    // The model is built (and so checked) before anything is written; its
    // vectors are cached by content in their own file, committed as they
    // come, so a failed or killed ingest keeps the embedding work done.
    let embed: Option<Arc<dyn Embedding>> = match spec.embed.build()? {
        Some(inner) => {
            let key = serde_json::to_string(&spec.embed).map_err(ragloom::Error::from)?;
            Some(Arc::new(CachedEmbedding::with_store(
                inner,
                index.embedding_cache().await?,
                key,
            )))
        }
        None => None,
    };

    let build = index
        .open_build(live, &settings, false, opts.no_wait, || {
            backend::probe_dim(embed.as_ref())
        })
        .await?;
    let tx = index.begin(&build, ui).await?;
    let manifest = tx.read_manifest()?;
    let previous = tx.read_files()?;
    let listed_at_ns = nanos(SystemTime::now());
    let Listing {
        listed,
        unlisted,
        skipped,
    } = list(source, &index.dir.uploads_dir(), opts.follow_links)?;
    // Racy files (modified in the second the last listing ran, or later) are read again.
    let racy_from = manifest.as_ref().map_or(i128::MIN, |m| {
        m.listed_at_ns - m.listed_at_ns.rem_euclid(1_000_000_000)
    });
    let mut summary = IngestSummary {
        files: listed.len(),
        ..Default::default()
    };
    // Everything still there, readable or not: only the rest is gone.
    let present: BTreeSet<String> = unlisted
        .iter()
        .map(|(p, _)| p.clone())
        .chain(listed.iter().map(|f| f.path.clone()))
        .collect();
    // Documents that keep their text whatever this ingest reads: those of
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
                summary.files_unchanged += 1;
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
    for (path, err) in &unlisted {
        ui.warn(&format!(
            "skipped {path}: {err} (its earlier nodes are kept)"
        ));
        summary.failed_files += 1;
    }
    // Left out of the source: not in `present`, so what an earlier ingest
    // stored from them is deleted like a vanished file's.
    for file in &skipped {
        ui.warn(&format!("skipped {}: {}", file.path, file.reason));
    }
    summary.skipped_files = skipped.len();
    summary.skipped = skipped;
    if summary.files == 0 && unlisted.is_empty() && !opts.prune {
        let held = !previous.is_empty();
        return Err(CliError::no_input(
            format!("no readable files in {}", source.key),
            if held {
                "the index is kept as it was; to empty it, ingest with --prune".to_string()
            } else {
                "point --files at a folder with text, Markdown or PDF files".to_string()
            },
        ));
    }

    // Timed, so the summary can set the splitter's counting beside the
    // counter's own speed (`stages.count`).
    let counting = TimedTokenizer::new(chunk_tokenizer.unwrap_or_else(default_tokenizer));
    let splitter = SentenceSplitter::new()
        .chunk_size(settings.chunk_size)
        .chunk_overlap(settings.chunk_overlap)
        .id_func(Arc::new(time_ordered_id))
        .tokenizer(Arc::new(counting.clone()));
    let splitter: Arc<dyn TransformComponent> = Arc::new(splitter);
    let context = tx.storage_context();
    let writer = match &embed {
        Some(e) => Writer::Vectors(
            VectorStoreIndex::builder(e.clone())
                .storage_context(context)
                // Nodes in the docstore too, where the vector store keeps text.
                .store_nodes_override(true)
                .transformations(vec![splitter])
                .num_workers(workers())
                .show_progress(ui.progress())
                .load_or_create()
                .await?,
        ),
        None => Writer::Text {
            context,
            transformations: vec![splitter],
            text_rows: tx.text_rows(),
            sqlite: tx.sqlite_docstore(),
        },
    };

    let bar = ui.progress().then(|| {
        let bar = indicatif::ProgressBar::new(to_read.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} files")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message("Ingesting");
        bar
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
        let report = reader(batch.iter().map(|f| PathBuf::from(&f.path)).collect())
            .load_data_with_report()
            .await?;
        times.read += read_started.elapsed();
        let failed: BTreeSet<String> = report
            .errors
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        for (path, err) in &report.errors {
            ui.warn(&format!(
                "skipped {}: {err} (its earlier nodes are kept)",
                path.display()
            ));
        }
        summary.failed_files += failed.len();
        kept_docs += failed
            .iter()
            .filter_map(|p| previous.get(p))
            .map(|r| r.docs.len())
            .sum::<usize>();
        kept_docs += report
            .documents
            .iter()
            .filter(|d| !d.get_text().trim().is_empty())
            .count();
        let mut docs_of: HashMap<String, Vec<String>> = HashMap::new();
        for d in &report.documents {
            if let Some(p) = d.metadata.get("file_path").and_then(|v| v.as_str()) {
                docs_of
                    .entry(p.to_string())
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
        summary.deleted += stale.len();
        writer.delete(&stale).await?;
        let (written, nodes) = writer
            .refresh(&report.documents, &mut staged, &mut times)
            .await?;
        let written_ids: Vec<String> = report
            .documents
            .iter()
            .zip(&written)
            .filter(|(_, w)| **w)
            .map(|(d, _)| d.id_.clone())
            .collect();
        summary.documents += report.documents.len();
        summary.ingested += written_ids.len();
        summary.unchanged += report.documents.len() - written_ids.len();
        summary.nodes_written += match nodes {
            Some(n) => n,
            None => writer.node_count(&written_ids).await?,
        };
        if let Some(bar) = &bar {
            bar.inc(batch.len() as u64);
        }
    }
    writer.flush(staged, &mut times).await?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }

    let gone_docs: Vec<String> = gone
        .iter()
        .filter_map(|p| previous.get(p))
        .flat_map(|r| r.docs.iter().cloned())
        .collect();
    summary.deleted += gone_docs.len();
    writer.delete(&gone_docs).await?;
    if embed.is_some() {
        summary.nodes_embedded = summary.nodes_written;
    }
    summary.nodes_total = writer
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
        return Err(CliError::no_input(
            format!("{} yields no text now", source.key),
            "the index is kept as it was; to empty it, ingest with --prune",
        ));
    }
    tx.write_files(&records, &gone)?;
    let merge_started = Instant::now();
    tx.finish_keyword_index()?;
    let ms = |d: Duration| d.as_millis() as u64;
    summary.stages = crate::store::IngestStages {
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
    summary.millis = started.elapsed().as_millis() as u64;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        source: source.key.clone(),
        settings,
        created: manifest.map(|m| m.created).unwrap_or_else(|| now.clone()),
        updated: now,
        listed_at_ns,
        last_ingest: summary.clone(),
    };
    let commit_started = Instant::now();
    index.commit(tx, &manifest).await?;
    summary.stages.commit = ms(commit_started.elapsed());
    Ok(summary)
}

fn describe_change(old: &BuildSettings, new: &BuildSettings) -> String {
    let mut parts = Vec::new();
    if old.embed != new.embed {
        parts.push(format!(
            "embedding model {} → {}",
            old.embed.label(),
            new.embed.label()
        ));
    }
    if (old.chunk_size, old.chunk_overlap, &old.chunk_tokenizer)
        != (new.chunk_size, new.chunk_overlap, &new.chunk_tokenizer)
    {
        parts.push(format!(
            "chunks {}/{} {} → {}/{} {}",
            old.chunk_size,
            old.chunk_overlap,
            old.chunk_unit(),
            new.chunk_size,
            new.chunk_overlap,
            new.chunk_unit()
        ));
    }
    parts.join(", ")
}
