//! Listing a source for a sync: its files with size and modification time,
//! those that cannot be stat'ed, and those left out on purpose (names that
//! are not UTF-8, symlinks out of the folder, any link in the uploads folder).

use super::manifest::SkippedFile;
use super::source::{Source, SourceKind};
use super::sync::ReaderSetup;
use crate::error::{Error, Result};
use crate::readers::SimpleDirectoryReader;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A file found in the source, with what `stat` says.
pub(crate) struct Listed {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i128,
}

/// What the listing found: the files to consider, those that could not be
/// stat'ed (path and why: their earlier nodes are kept), and those left out
/// of the source (their earlier nodes go, as for a file that vanished).
pub(crate) struct Listing {
    pub listed: Vec<Listed>,
    pub unlisted: Vec<(String, String)>,
    pub skipped: Vec<SkippedFile>,
}

/// Unix nanoseconds of `t` (negative before 1970).
pub(crate) fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// Why `path`, found under `root`, is not part of the source, if it is not.
/// `follow_links` lets symlinks out of `root` through; `any_link` refuses
/// every symlink (the uploads folder, which only a server writes).
fn exclusion(path: &Path, root: &Path, follow_links: bool, any_link: bool) -> Option<String> {
    // Files are keyed, and their ids and `file_path` written, as UTF-8
    // strings; a lossy key would name another file (or none) when read back,
    // so such a file is skipped rather than failing the whole sync.
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

/// The files `reader` finds; an empty or missing folder is none.
fn input_files(reader: SimpleDirectoryReader) -> Result<Vec<PathBuf>> {
    match reader.input_files() {
        Ok(files) => Ok(files),
        Err(Error::NotFound(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The files of `source` and of the `uploads` folder.
pub(crate) fn list(
    source: &Source,
    uploads: &Path,
    follow_links: bool,
    setup: &ReaderSetup,
) -> Result<Listing> {
    let paths: Vec<PathBuf> = match &source.kind {
        SourceKind::Folder => input_files(setup(
            SimpleDirectoryReader::new(&source.base).recursive(true),
        ))?,
        // A file named by the caller is read wherever it resolves: the
        // caller chose it (`Source::resolve` already resolved it).
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
    // Files uploaded to a server are part of the source: a sync from
    // elsewhere keeps them.
    if uploads.is_dir() {
        let files = input_files(setup(SimpleDirectoryReader::new(uploads).recursive(false)))?;
        candidates.extend(files.into_iter().map(|p| {
            let why = exclusion(&p, uploads, false, true);
            (p, why)
        }));
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
