//! `SimpleDirectoryReader`: every file of a folder (or of a list) as documents,
//! with LlamaIndex's options, default metadata, document ids and file order.

use super::glob::ExcludeGlob;
use super::metadata::{EXCLUDED_FILE_METADATA_KEYS, default_file_metadata_func};
use super::{FileReader, Reader};
use crate::error::{Error, Result};
use crate::schema::{Document, Metadata};
use crate::utils::{run_blocking, run_in_order, spawn_stoppable};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use walkdir::WalkDir;

/// A function from a file's path to its metadata, replacing
/// [`default_file_metadata_func`] (LlamaIndex `file_metadata`).
pub type FileMetadataFn = Arc<dyn Fn(&Path) -> Metadata + Send + Sync>;

/// What [`SimpleDirectoryReader::load_data_with_report`] returns: the
/// documents, and every file (or folder) that was skipped with the reason, so
/// that nothing is lost silently.
#[derive(Debug)]
pub struct LoadReport {
    /// The documents, in file order.
    pub documents: Vec<Document>,
    /// Files that could not be loaded and folders that could not be walked.
    pub errors: Vec<(PathBuf, Error)>,
}

#[derive(Clone, Debug)]
enum Input {
    Dir(PathBuf),
    Files(Vec<PathBuf>),
}

/// Files found by a walk, and what went wrong walking.
struct Discovered {
    files: Vec<PathBuf>,
    walk_errors: Vec<(PathBuf, Error)>,
}

/// Loads the files of a folder, or a given list of files, as [`Document`]s
/// (LlamaIndex `SimpleDirectoryReader`).
///
/// ```no_run
/// # async fn demo() -> ragloom_core::Result<()> {
/// use ragloom_core::readers::{Reader, SimpleDirectoryReader};
/// let docs = SimpleDirectoryReader::new("./data")
///     .recursive(true)
///     .exclude(["*.log", "node_modules"])
///     .required_exts([".md", ".txt"])
///     .load_data()
///     .await?;
/// # Ok(()) }
/// ```
///
/// As in LlamaIndex:
/// - files are sorted by path (component by component); `file_path` is
///   absolute for a folder and as given for [`from_files`](Self::from_files);
/// - files with no [`file_extractor`](Self::file_extractor) for their
///   extension are read as UTF-8 text, a byte order mark kept as U+FEFF;
/// - each document gets [`default_file_metadata_func`]'s metadata (or the
///   [`file_metadata`](Self::file_metadata) function's), and every key but
///   `file_path` is left out of the embedded and LLM text
///   ([`EXCLUDED_FILE_METADATA_KEYS`]);
/// - with [`filename_as_id`](Self::filename_as_id) a text file's id is its
///   path and an extractor's documents are `{path}_part_{i}`;
/// - symlinks to files are read through, wherever they resolve (outside
///   the folder too: the `ragloom` command line, which serves what it
///   ingests, skips those unless asked); symlinks to folders are skipped
///   (fsspec does not descend them) unless
///   [`follow_dir_symlinks`](Self::follow_dir_symlinks) is set, which walks
///   them and stops at loops.
///
/// Deliberate differences:
/// - bytes that are not UTF-8 become U+FFFD; Python's default
///   (`errors="ignore"`) drops them silently;
/// - a file whose name is not UTF-8 is read, but its `file_path` (and with
///   `filename_as_id` its id) shows those bytes as U+FFFD, where Python's
///   `os.fsdecode` keeps them as lone surrogates that a Rust string cannot
///   hold;
/// - a file that cannot be read (permission, broken symlink, an extractor's
///   error) is logged with `tracing::warn!`, recorded in the
///   [`LoadReport`] and skipped, unless [`raise_on_error`](Self::raise_on_error);
///   Python skips only extractor errors and raises on the rest;
/// - hidden means a path component starting with `.` *below* the input
///   folder; Python also looks at the folder's own path, so nothing under
///   `~/.config/docs` loads there;
/// - [`num_files_limit`](Self::num_files_limit) keeps the first files of
///   the filtered, sorted list; Python counts files in directory-listing
///   order before filtering out hidden or excluded ones;
/// - a folder matched by an `exclude` pattern excludes what is below it;
///   Python compares path strings, so excluding `a` also excludes `ab/x`;
/// - special files (FIFOs, sockets, devices) are skipped instead of read;
/// - a file larger than [`max_file_size`](Self::max_file_size) (1 GiB by
///   default) is skipped with that reason instead of read whole;
/// - the folder is walked when documents are loaded, not at construction,
///   so a missing folder is reported by `load_data`/`list_resources`.
#[derive(Clone)]
pub struct SimpleDirectoryReader {
    input: Input,
    recursive: bool,
    exclude: Vec<String>,
    exclude_hidden: bool,
    exclude_empty: bool,
    required_exts: Option<Vec<String>>,
    num_files_limit: Option<usize>,
    filename_as_id: bool,
    file_extractor: BTreeMap<String, Arc<dyn FileReader>>,
    file_metadata: Option<FileMetadataFn>,
    raise_on_error: bool,
    num_workers: usize,
    show_progress: bool,
    follow_dir_symlinks: bool,
    max_file_size: u64,
}

/// The largest file [`SimpleDirectoryReader`] reads by default: 1 GiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;

impl std::fmt::Debug for SimpleDirectoryReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimpleDirectoryReader")
            .field("input", &self.input)
            .field("recursive", &self.recursive)
            .field("exclude", &self.exclude)
            .field("exclude_hidden", &self.exclude_hidden)
            .field("exclude_empty", &self.exclude_empty)
            .field("required_exts", &self.required_exts)
            .field("num_files_limit", &self.num_files_limit)
            .field("filename_as_id", &self.filename_as_id)
            .field("file_extractor", &self.file_extractor)
            .field(
                "file_metadata",
                &self.file_metadata.as_ref().map(|_| "<fn>"),
            )
            .field("raise_on_error", &self.raise_on_error)
            .field("num_workers", &self.num_workers)
            .field("show_progress", &self.show_progress)
            .field("follow_dir_symlinks", &self.follow_dir_symlinks)
            .field("max_file_size", &self.max_file_size)
            .finish()
    }
}

impl SimpleDirectoryReader {
    fn with_input(input: Input) -> Self {
        Self {
            input,
            recursive: false,
            exclude: Vec::new(),
            exclude_hidden: true,
            exclude_empty: false,
            required_exts: None,
            num_files_limit: None,
            filename_as_id: false,
            file_extractor: BTreeMap::new(),
            file_metadata: None,
            raise_on_error: false,
            num_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            show_progress: false,
            follow_dir_symlinks: false,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }

    /// The largest file to read, in bytes (default [`DEFAULT_MAX_FILE_SIZE`]);
    /// a larger one is skipped (or, with `raise_on_error`, an error) naming
    /// its size, so one huge file cannot take all the memory.
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// Reads the files of `input_dir` (LlamaIndex `input_dir`).
    pub fn new(input_dir: impl Into<PathBuf>) -> Self {
        Self::with_input(Input::Dir(input_dir.into()))
    }

    /// Reads exactly these files, in this order, duplicates included
    /// (LlamaIndex `input_files`). The folder filters (`exclude`,
    /// `exclude_hidden`, `required_exts`, ...) do not apply, as in LlamaIndex.
    pub fn from_files<P: Into<PathBuf>>(input_files: impl IntoIterator<Item = P>) -> Self {
        Self::with_input(Input::Files(
            input_files
                .into_iter()
                .map(|p| pathlib_normalize(&p.into()))
                .collect(),
        ))
    }

    /// Whether to descend into subfolders (default `false`).
    pub fn recursive(mut self, recursive: bool) -> Self {
        self.recursive = recursive;
        self
    }

    /// Glob patterns of files and folders to leave out, relative to the input
    /// folder, matched as LlamaIndex (fsspec) matches them: `*`, `?` and
    /// `[...]` within one path segment, `**` across segments, dotfiles
    /// included. When recursive, each pattern also matches at any depth
    /// (`input_dir/**/pattern`).
    pub fn exclude<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.exclude = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Whether to skip files and folders whose name starts with `.` (default `true`).
    pub fn exclude_hidden(mut self, exclude_hidden: bool) -> Self {
        self.exclude_hidden = exclude_hidden;
        self
    }

    /// Whether to skip empty files (default `false`).
    pub fn exclude_empty(mut self, exclude_empty: bool) -> Self {
        self.exclude_empty = exclude_empty;
        self
    }

    /// Only files with one of these extensions, dot included and compared
    /// case-sensitively as in LlamaIndex (`[".md", ".txt"]`). The extension
    /// is Python's `Path.suffix`: `.gz` for `a.tar.gz`, none for `.bashrc`.
    pub fn required_exts<S: Into<String>>(mut self, exts: impl IntoIterator<Item = S>) -> Self {
        self.required_exts = Some(exts.into_iter().map(Into::into).collect());
        self
    }

    /// At most this many files (the first ones in sorted order); `0` means
    /// no limit, as in LlamaIndex.
    pub fn num_files_limit(mut self, limit: usize) -> Self {
        self.num_files_limit = Some(limit);
        self
    }

    /// Whether a document's id is its file path (default `false`: random UUIDs).
    pub fn filename_as_id(mut self, filename_as_id: bool) -> Self {
        self.filename_as_id = filename_as_id;
        self
    }

    /// Reads files with extension `ext` (dot included, e.g. `".pdf"`; case
    /// does not matter) with `reader` instead of as text.
    pub fn file_extractor(mut self, ext: impl Into<String>, reader: Arc<dyn FileReader>) -> Self {
        let mut ext = ext.into().to_lowercase();
        if !ext.starts_with('.') {
            ext.insert(0, '.');
        }
        self.file_extractor.insert(ext, reader);
        self
    }

    /// Replaces [`default_file_metadata_func`] with `f`, called with each file's path.
    pub fn file_metadata(mut self, f: FileMetadataFn) -> Self {
        self.file_metadata = Some(f);
        self
    }

    /// Whether a file that cannot be loaded fails the whole load (default
    /// `false`: it is logged, recorded and skipped).
    pub fn raise_on_error(mut self, raise_on_error: bool) -> Self {
        self.raise_on_error = raise_on_error;
        self
    }

    /// How many files load at once (default: the number of CPUs; `0` counts
    /// as `1`). Documents come back in file order whatever the number.
    pub fn num_workers(mut self, num_workers: usize) -> Self {
        self.num_workers = num_workers.max(1);
        self
    }

    /// Whether to draw a progress bar on stderr while loading (default `false`).
    pub fn show_progress(mut self, show_progress: bool) -> Self {
        self.show_progress = show_progress;
        self
    }

    /// Whether a recursive walk descends into symlinked folders (default
    /// `false`, as LlamaIndex). When set, a symlink loop is detected, reported
    /// as an error of that folder and not followed.
    pub fn follow_dir_symlinks(mut self, follow: bool) -> Self {
        self.follow_dir_symlinks = follow;
        self
    }

    /// The files that would be loaded, in order.
    pub fn input_files(&self) -> Result<Vec<PathBuf>> {
        self.discover().map(|d| d.files)
    }

    /// The files that would be loaded, as strings (LlamaIndex `list_resources`).
    pub fn list_resources(&self) -> Result<Vec<String>> {
        Ok(self
            .input_files()?
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect())
    }

    /// Loads every file, returning the documents and the files that were
    /// skipped with their errors. With `raise_on_error`, the first failure
    /// (in file order) is returned instead.
    pub async fn load_data_with_report(&self) -> Result<LoadReport> {
        let this = Arc::new(self.clone());
        let discovered = {
            let this = Arc::clone(&this);
            run_blocking(move || this.discover()).await?
        };
        let mut errors = discovered.walk_errors;
        let progress = self.progress(discovered.files.len());
        let loads = discovered.files.into_iter().map(|path| {
            let this = Arc::clone(&this);
            async move {
                let result = this.spawn_load(path.clone()).await;
                (path, result)
            }
        });
        // Files are taken as loads finish (a large PDF holds no slot back).
        // With `raise_on_error` a failure starts no new load, the loads of
        // files after it are stopped, and the failure reported is the first
        // in file order, as when loading one by one.
        let raise = self.raise_on_error;
        let results = run_in_order(loads, self.num_workers.max(1), |(_, result)| {
            progress.inc(1);
            !(raise && result.is_err())
        })
        .await;
        let mut documents = Vec::new();
        for (path, result) in results {
            match result {
                Ok(docs) => documents.extend(docs),
                Err(e) if raise => {
                    progress.abandon();
                    return Err(e);
                }
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "skipping a file that could not be loaded");
                    errors.push((path, e));
                }
            }
        }
        progress.finish();
        exclude_metadata(&mut documents);
        Ok(LoadReport { documents, errors })
    }

    /// Loads one file with this reader's settings (extractors, metadata,
    /// `filename_as_id`): the documents `load_data` gives for that file,
    /// metadata exclusions included. Any failure is returned, whatever
    /// `raise_on_error` says, since the caller asked for this file.
    pub async fn load_file(&self, path: impl AsRef<Path>) -> Result<Vec<Document>> {
        let path = pathlib_normalize(path.as_ref());
        let mut docs = self.load_one(&path).await?;
        exclude_metadata(&mut docs);
        Ok(docs)
    }

    /// The documents file by file, in order (LlamaIndex `iter_data`); files
    /// that give no document are skipped. Failures follow `raise_on_error`:
    /// skipped and logged, or yielded as the stream's last item.
    pub fn iter_data(&self) -> BoxStream<'_, Result<Vec<Document>>> {
        enum State {
            Start,
            Files(std::vec::IntoIter<PathBuf>, ProgressBar),
            Done,
        }
        futures::stream::unfold(State::Start, move |mut state| async move {
            loop {
                state = match state {
                    State::Done => return None,
                    State::Start => {
                        let this = self.clone();
                        match run_blocking(move || this.discover()).await {
                            Ok(d) => {
                                let progress = self.progress(d.files.len());
                                State::Files(d.files.into_iter(), progress)
                            }
                            Err(e) => return Some((Err(e), State::Done)),
                        }
                    }
                    State::Files(mut files, progress) => {
                        let Some(path) = files.next() else {
                            progress.finish();
                            return None;
                        };
                        let result = self.load_one(&path).await;
                        progress.inc(1);
                        match result {
                            Ok(mut docs) if !docs.is_empty() => {
                                exclude_metadata(&mut docs);
                                return Some((Ok(docs), State::Files(files, progress)));
                            }
                            Ok(_) => State::Files(files, progress),
                            Err(e) if self.raise_on_error => {
                                progress.abandon();
                                return Some((Err(e), State::Done));
                            }
                            Err(e) => {
                                tracing::warn!(file = %path.display(), error = %e, "skipping a file that could not be loaded");
                                State::Files(files, progress)
                            }
                        }
                    }
                }
            }
        })
        .boxed()
    }

    fn progress(&self, len: usize) -> ProgressBar {
        if !self.show_progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg}: {percent:>3}% {wide_bar} {pos}/{len} [{elapsed}<{eta}]",
        ) {
            bar.set_style(style);
        }
        bar.set_message("Loading files");
        bar
    }

    /// Runs [`Self::load_one`] on its own task when a tokio runtime is
    /// there, so that slow extractors use several cores.
    async fn spawn_load(self: Arc<Self>, path: PathBuf) -> Result<Vec<Document>> {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.load_one(&path).await;
        }
        let task_path = path.clone();
        // Dropping the load (e.g. after a `raise_on_error` failure) stops the task too.
        spawn_stoppable(async move { self.load_one(&task_path).await })
            .await
            .map_err(|e| Error::failed(format!("loading {} failed", path.display()), e))?
    }

    /// One file to documents, metadata exclusions not yet applied.
    async fn load_one(&self, path: &Path) -> Result<Vec<Document>> {
        let max = self.max_file_size;
        let suffix = py_suffix(path.file_name().unwrap_or_default()).to_lowercase();
        let path_str = path.to_string_lossy().into_owned();
        if let Some(reader) = self.file_extractor.get(&suffix) {
            let metadata = {
                let (path, custom) = (path.to_path_buf(), self.file_metadata.clone());
                run_blocking(move || {
                    check_size(&path, max)?;
                    file_metadata(&path, custom.as_ref())
                })
                .await?
            };
            let mut docs = reader.load_file(path, metadata).await.map_err(|e| {
                let message = format!("could not load {path_str}: {e}");
                Error::provider(format!("file_extractor[{suffix}]"), message, e)
            })?;
            if self.filename_as_id {
                for (i, doc) in docs.iter_mut().enumerate() {
                    doc.id_ = format!("{path_str}_part_{i}");
                }
            }
            return Ok(docs);
        }
        let (path_buf, custom) = (path.to_path_buf(), self.file_metadata.clone());
        let (metadata, bytes) = run_blocking(move || {
            check_size(&path_buf, max)?;
            let metadata = file_metadata(&path_buf, custom.as_ref())?;
            let bytes = std::fs::read(&path_buf).map_err(|e| Error::io("reading", &path_buf, e))?;
            Ok((metadata, bytes))
        })
        .await?;
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let mut doc = Document::document(text).with_metadata_map(metadata);
        if self.filename_as_id {
            doc.id_ = path_str;
        }
        Ok(vec![doc])
    }

    /// The files to load, in LlamaIndex's order.
    fn discover(&self) -> Result<Discovered> {
        match &self.input {
            Input::Files(files) => {
                // No file is nothing to load, and a file that is missing or
                // not a file is skipped with its error, as a file that fails
                // to read is (Python raises for both: docs/differences.md).
                let mut found = Vec::with_capacity(files.len());
                let mut walk_errors = Vec::new();
                for file in files {
                    let problem = match std::fs::metadata(file) {
                        Ok(meta) if meta.is_file() => None,
                        Ok(_) => Some(Error::io(
                            "reading input file",
                            file,
                            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file"),
                        )),
                        Err(e) => Some(Error::io("reading input file", file, e)),
                    };
                    match problem {
                        None => found.push(file.clone()),
                        Some(e) if self.raise_on_error => return Err(e),
                        Some(e) => walk_errors.push((file.clone(), e)),
                    }
                }
                Ok(Discovered {
                    files: found,
                    walk_errors,
                })
            }
            Input::Dir(dir) => self.walk(dir),
        }
    }

    fn walk(&self, dir: &Path) -> Result<Discovered> {
        if dir.as_os_str().is_empty() {
            return Err(Error::InvalidInput(
                "SimpleDirectoryReader needs an input directory or at least one input file".into(),
            ));
        }
        let meta =
            std::fs::metadata(dir).map_err(|e| Error::io("reading input directory", dir, e))?;
        if !meta.is_dir() {
            return Err(Error::io(
                "reading input directory",
                dir,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a directory"),
            ));
        }
        // fsspec makes the folder absolute (keeping `..`), and every path below follows.
        let root = std::path::absolute(dir)
            .map(|p| pathlib_normalize(&p))
            .map_err(|e| Error::io("resolving input directory", dir, e))?;
        let globs = self
            .exclude
            .iter()
            .map(|p| ExcludeGlob::new(&posix_string(&root), p, self.recursive))
            .collect::<Result<Vec<_>>>()?;
        let excluded = |path: &Path, is_dir: bool| {
            globs.iter().any(|g| g.matches(&posix_string(path), is_dir))
        };
        let no_files = || Error::NotFound(format!("no files found in {}", dir.display()));
        if excluded(&root, true) {
            return Err(no_files());
        }

        let mut walker = WalkDir::new(&root)
            .min_depth(1)
            .follow_links(self.follow_dir_symlinks)
            .sort_by_file_name();
        if !self.recursive {
            walker = walker.max_depth(1);
        }
        let entries = walker.into_iter().filter_entry(|entry| {
            // Pruning a folder here drops what is below it, which is what
            // LlamaIndex's hidden and excluded-folder checks amount to.
            entry.depth() == 0
                || !entry.file_type().is_dir()
                || !((self.exclude_hidden && is_hidden(entry.file_name()))
                    || excluded(entry.path(), true))
        });

        let mut files = Vec::new();
        let mut walk_errors = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    let path = err.path().map_or_else(|| root.clone(), Path::to_path_buf);
                    let err = Error::io("walking", &path, std::io::Error::from(err));
                    if self.raise_on_error {
                        return Err(err);
                    }
                    tracing::warn!(path = %path.display(), error = %err, "skipping what could not be walked");
                    walk_errors.push((path, err));
                    continue;
                }
            };
            if entry.file_type().is_dir() {
                continue;
            }
            let path = entry.path();
            // fsspec lists links as files; one that resolves to a folder is
            // then dropped, a broken one kept (its load reports the error).
            let target = std::fs::metadata(path);
            match &target {
                Ok(m) if m.is_dir() => continue,
                Ok(m) if !m.is_file() => {
                    tracing::debug!(path = %path.display(), "skipping a special file");
                    continue;
                }
                _ => {}
            }
            let name = entry.file_name();
            if self.exclude_hidden && is_hidden(name) {
                continue;
            }
            if self.exclude_empty && target.as_ref().is_ok_and(|m| m.len() == 0) {
                continue;
            }
            if let Some(exts) = &self.required_exts {
                let suffix = py_suffix(name);
                if !exts.contains(&suffix) {
                    continue;
                }
            }
            if excluded(path, false) {
                continue;
            }
            files.push(path.to_path_buf());
        }
        files.sort();
        if let Some(limit) = self.num_files_limit.filter(|&n| n > 0) {
            files.truncate(limit);
        }
        if files.is_empty() {
            return Err(no_files());
        }
        tracing::debug!(count = files.len(), dir = %dir.display(), "SimpleDirectoryReader files found");
        Ok(Discovered { files, walk_errors })
    }
}

#[async_trait]
impl Reader for SimpleDirectoryReader {
    /// Loads every file; failures are logged and skipped unless
    /// `raise_on_error` (see [`SimpleDirectoryReader::load_data_with_report`]).
    async fn load_data(&self) -> Result<Vec<Document>> {
        self.load_data_with_report().await.map(|r| r.documents)
    }
}

/// Refuses a file larger than `max` bytes before anything reads it; run on
/// the blocking hop that reads the file's metadata, so it costs no hop of its own.
fn check_size(path: &Path, max: u64) -> Result<()> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io("reading", path, e))?
        .len();
    if size > max {
        return Err(Error::InvalidInput(format!(
            "{} is {size} bytes, above max_file_size ({max} bytes): skipped",
            path.display()
        )));
    }
    Ok(())
}

/// The metadata of one file: the user's function, or the default.
fn file_metadata(path: &Path, custom: Option<&FileMetadataFn>) -> Result<Metadata> {
    match custom {
        Some(f) => Ok(f(path)),
        None => default_file_metadata_func(path),
    }
}

/// LlamaIndex's `_exclude_metadata`: appended, even if already listed.
fn exclude_metadata(docs: &mut [Document]) {
    for doc in docs {
        for list in [
            &mut doc.excluded_embed_metadata_keys,
            &mut doc.excluded_llm_metadata_keys,
        ] {
            list.extend(EXCLUDED_FILE_METADATA_KEYS.iter().map(|k| (*k).to_string()));
        }
    }
}

/// A name LlamaIndex treats as hidden.
fn is_hidden(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') && name != "." && name != ".."
}

/// Python's `PurePath.suffix`: from the last dot of the name, unless that
/// dot starts or ends it.
fn py_suffix(name: &OsStr) -> String {
    let name = name.to_string_lossy();
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => name[i..].to_string(),
        _ => String::new(),
    }
}

/// A path as `pathlib` spells it: no `.` components, no doubled or trailing
/// separators; `..` is kept.
fn pathlib_normalize(path: &Path) -> PathBuf {
    let out: PathBuf = path
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// The `/`-separated form fsspec matches globs against.
fn posix_string(path: &Path) -> String {
    let s = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        s.into_owned()
    } else {
        s.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[allow(clippy::unwrap_used)]
    async fn listed_files_that_are_missing_are_reported_and_none_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().join("a.txt");
        std::fs::write(&here, "a heron").unwrap();
        let gone = dir.path().join("gone.txt");
        let report = SimpleDirectoryReader::from_files([
            here.clone(),
            gone.clone(),
            dir.path().to_path_buf(),
        ])
        .load_data_with_report()
        .await
        .unwrap();
        assert_eq!(report.documents.len(), 1);
        let failed: Vec<&PathBuf> = report.errors.iter().map(|(p, _)| p).collect();
        assert_eq!(failed, vec![&gone, &dir.path().to_path_buf()]);
        let strict = SimpleDirectoryReader::from_files([here, gone])
            .raise_on_error(true)
            .load_data_with_report()
            .await;
        assert!(strict.is_err());
        let none = SimpleDirectoryReader::from_files(Vec::<PathBuf>::new())
            .load_data_with_report()
            .await
            .unwrap();
        assert!(none.documents.is_empty() && none.errors.is_empty());
    }

    #[test]
    fn suffix_is_pythons() {
        let s = |n: &str| py_suffix(OsStr::new(n));
        assert_eq!(s("a.tar.gz"), ".gz");
        assert_eq!(s(".bashrc"), "");
        assert_eq!(s("a."), "");
        assert_eq!(s("noext"), "");
        assert_eq!(s(".hidden.txt"), ".txt");
        assert_eq!(s("UPPER.TXT"), ".TXT");
    }

    #[test]
    fn paths_normalise_like_pathlib() {
        let n = |p: &str| pathlib_normalize(Path::new(p));
        assert_eq!(n("./a//b/./c.txt"), PathBuf::from("a/b/c.txt"));
        assert_eq!(n("a/../b.txt"), PathBuf::from("a/../b.txt"));
        assert_eq!(n("./"), PathBuf::from("."));
        assert_eq!(n("/x/./y/"), PathBuf::from("/x/y"));
    }

    #[test]
    fn hidden_names() {
        assert!(is_hidden(OsStr::new(".git")));
        assert!(!is_hidden(OsStr::new("a.txt")));
        assert!(!is_hidden(OsStr::new("..")));
    }
}
