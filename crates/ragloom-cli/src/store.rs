//! Where an index lives: one folder per source under the persist root, holding
//! the live build (one SQLite file) and the embedding cache shared by all builds.
//!
//! ```text
//! <root>/indexes/<name>-<hash>/current.json        which build is live (replaced atomically)
//!                              index-<fp>.sqlite   nodes, hashes, keyword index, vectors,
//!                                                  the files seen and the manifest: one
//!                                                  transaction per ingest (+ -wal, -shm)
//!                              embeddings.sqlite   vectors by content, per model
//! <root>/last.json                                 the source used last
//! ```
//!
//! `<fp>` is the fingerprint of what shapes the nodes and vectors (splitter
//! settings, embedding model): a change builds a new file beside the live
//! one, which is replaced only when the new build committed.

use crate::error::{CliError, exit};
use crate::source::Source;
use ragloom::EmbedSpec;
use ragloom::sqlite::{SqliteOptions, SqliteStore, database_files};
use ragloom::storage::kvstore::{KvBackend, KvValue};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The manifest's format version.
pub const MANIFEST_FORMAT: u32 = 2;

/// The kv collection of the manifest and of the files seen.
const MANIFEST: &str = "ragloom/manifest";
const FILES: &str = "ragloom/files";

/// What shapes the nodes and the vectors; a change means a new build.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildSettings {
    /// The embedding model the vectors are made with.
    pub embed: EmbedSpec,
    /// The sentence splitter's chunk size and overlap, in tokens.
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    /// Which tokens: [`CHUNK_TOKENIZER_MODEL`] for the embedding model's own;
    /// absent for cl100k (so builds made before this field keep their name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_tokenizer: Option<String>,
}

/// [`BuildSettings::chunk_tokenizer`] when chunks are counted with the embedding model's tokenizer.
pub const CHUNK_TOKENIZER_MODEL: &str = "embedding-model";

impl BuildSettings {
    /// What the chunk sizes count: `cl100k tokens` or `embedding-model tokens`.
    pub fn chunk_unit(&self) -> String {
        format!(
            "{} tokens",
            self.chunk_tokenizer.as_deref().unwrap_or("cl100k")
        )
    }

    /// A short stable name of these settings, used in the build's file name.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let digest = Sha256::digest(&json);
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }
}

/// What a build holds, written in the ingest's own transaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The source key (see [`Source::key`]).
    pub source: String,
    pub settings: BuildSettings,
    /// RFC 3339 times.
    pub created: String,
    pub updated: String,
    /// When the last ingest listed the files (Unix nanoseconds): a file
    /// modified in that second or later is read again even if its size and
    /// time match, as git does for racy entries.
    pub listed_at_ns: i128,
    /// The last ingest.
    pub last_ingest: IngestSummary,
}

/// A file as the last ingest saw it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    pub size: u64,
    pub mtime_ns: i128,
    /// The documents read from it (a PDF page is one).
    pub docs: Vec<String>,
}

/// What one ingest did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IngestSummary {
    /// Files found in the source.
    pub files: usize,
    /// Files whose size and time were unchanged, so they were not read.
    pub files_unchanged: usize,
    /// Documents read (a PDF page is one).
    pub documents: usize,
    /// Documents read but found unchanged (same hash).
    pub unchanged: usize,
    /// Documents split (and embedded) this time: new or changed.
    pub ingested: usize,
    /// Documents removed because their file vanished (or no longer yields them).
    pub deleted: usize,
    /// Files that could not be read: their earlier nodes are kept.
    pub failed_files: usize,
    /// Files found but left out of the source (see [`SkippedFile`]): their
    /// earlier nodes are deleted, as a vanished file's.
    #[serde(default)]
    pub skipped_files: usize,
    /// Each of them, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
    /// Nodes written this time.
    pub nodes_written: usize,
    /// Nodes in the index after the ingest.
    pub nodes_total: usize,
    /// Nodes embedded this time (0 without an embedding model).
    pub nodes_embedded: usize,
    /// Wall time, in milliseconds.
    pub millis: u64,
    /// Where that time went.
    #[serde(default)]
    pub stages: IngestStages,
}

/// A file the listing found but left out of the source: a name that is not
/// UTF-8, or a symlink that resolves outside the ingested folder.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedFile {
    /// The path, shown lossily where it is not UTF-8.
    pub path: String,
    /// Why it was left out.
    pub reason: String,
}

/// Wall milliseconds of each stage of an ingest, summed over its batches.
/// Without an embedding model each batch is written while the next one is
/// split and encoded, so `write` overlaps `split` and `encode` and the
/// stages can add up to more than `millis`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct IngestStages {
    /// Opening the index, listing the source and stat'ing its files.
    pub list: u64,
    /// Reading files into documents.
    pub read: u64,
    /// Planning each batch: its documents hashed (on every core) and
    /// compared with the stored hashes, changed documents' old nodes
    /// deleted.
    pub plan: u64,
    /// Splitting documents into nodes, on every core (with an embedding
    /// model: splitting, embedding and writing, which the vector index does
    /// together).
    pub split: u64,
    /// Of `split`, the time the splitter spent counting tokens: each call's
    /// wall time, added up over the threads that split (so it can pass
    /// `split` on several cores).
    pub count: u64,
    /// Encoding nodes as the embedded store keeps them (JSON, compression,
    /// hashes, keyword counts), on every core.
    pub encode: u64,
    /// Writing nodes, their hashes and their keyword counts.
    pub write: u64,
    /// Of `write`, the CPU time of the thread that wrote (`write` also
    /// counts the time it waited for a core while the next batch was split
    /// beside it, or for the disk; work it hands to other threads is in
    /// neither). Zero where the system does not say.
    pub write_cpu: u64,
    /// Merging the keyword index's postings.
    pub keyword_index: u64,
    /// Writing the manifest and committing (not in `millis`, which the
    /// manifest records).
    pub commit: u64,
}

/// The persist root: `--persist-dir`, else `<data dir>/ragloom`; made
/// absolute once, here: every path derived from it (the uploads folder a
/// server compares requested paths with, the index folder `status` shows)
/// is then absolute too, whatever the working directory later is.
pub fn persist_root(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = flag {
        return std::path::absolute(p).map_err(|e| {
            CliError::config(
                format!("cannot resolve the persist folder {}: {e}", p.display()),
                "give an absolute --persist-dir",
            )
        });
    }
    dirs::data_dir().map(|d| d.join("ragloom")).ok_or_else(|| {
        CliError::config(
            "no data directory is known for this user",
            "give one with --persist-dir or RAGLOOM_PERSIST_DIR",
        )
    })
}

/// Which build is live.
#[derive(Debug, Serialize, Deserialize)]
struct Current {
    db: String,
}

fn fs_error(what: &str, path: &Path, e: std::io::Error) -> CliError {
    CliError::new(
        exit::FAILURE,
        format!("cannot {what} {}: {e}", path.display()),
        "check the persist folder's permissions",
    )
}

/// One source's index folder.
#[derive(Clone, Debug)]
pub struct IndexDir {
    pub dir: PathBuf,
}

/// A source's folder or file name, kept to letters, digits, `-` and `_`
/// (others become `_`), at most 40 characters; `root` when nothing is left.
pub fn readable_name(source: &Source) -> String {
    let name: String = Path::new(&source.key)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if name.is_empty() {
        "root".to_string()
    } else {
        name
    }
}

impl IndexDir {
    /// The folder's own name (unique per source).
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Where writer lock files live: beside the index folders, so removing
    /// a folder never removes a lock someone holds.
    pub fn locks_dir(&self) -> PathBuf {
        self.dir.parent().and_then(Path::parent).map_or_else(
            || self.dir.with_extension("locks"),
            |root| root.join("locks"),
        )
    }

    /// The folder of `source` under `root`: a readable name plus a hash of the key.
    pub fn for_source(root: &Path, source: &Source) -> Self {
        let digest = Sha256::digest(source.key.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let name = readable_name(source);
        Self {
            dir: root.join("indexes").join(format!("{name}-{hash}")),
        }
    }

    /// Where `ragloom serve` saves uploads to this index: beside the index
    /// folders (clearing an index keeps them), and one of its sources.
    pub fn uploads_dir(&self) -> PathBuf {
        let name = self.name();
        self.dir.parent().and_then(Path::parent).map_or_else(
            || self.dir.with_extension("uploads"),
            |root| root.join("uploads").join(name),
        )
    }

    fn current_path(&self) -> PathBuf {
        self.dir.join("current.json")
    }

    /// The file of the build with `settings`.
    pub fn db_path(&self, settings: &BuildSettings) -> PathBuf {
        self.dir
            .join(format!("index-{}.sqlite", settings.fingerprint()))
    }

    /// The embedding cache, shared by every build of this source.
    pub fn embeddings_path(&self) -> PathBuf {
        self.dir.join("embeddings.sqlite")
    }

    /// The live build's file, `None` if nothing was ingested here yet.
    pub fn live_db(&self) -> Result<Option<PathBuf>, CliError> {
        let path = self.current_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(fs_error("read", &path, e)),
        };
        let current: Current = serde_json::from_str(&text).map_err(|e| {
            CliError::new(
                exit::FAILURE,
                format!("{} is damaged: {e}", path.display()),
                "rebuild the index with `ragloom rag --clear --files ...`",
            )
        })?;
        // Only a bare file name is accepted: the pointer never leads elsewhere.
        if current.db.contains(['/', '\\']) || !current.db.ends_with(".sqlite") {
            return Err(CliError::new(
                exit::FAILURE,
                format!("{} names an unexpected file", path.display()),
                "rebuild the index with `ragloom rag --clear --files ...`",
            ));
        }
        Ok(Some(self.dir.join(current.db)))
    }

    /// Makes `db` the live build (one atomic rename), then removes the
    /// build it replaced. Queries that opened the old file keep reading it.
    pub fn make_live(&self, db: &Path) -> Result<(), CliError> {
        let previous = self.live_db()?;
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let json = serde_json::to_vec(&Current { db: name }).map_err(ragloom::Error::from)?;
        ragloom::utils::write_atomic(&self.current_path(), |w| w.write_all(&json))?;
        if let Some(old) = previous.filter(|p| p != db) {
            remove_db_files(&old);
        }
        Ok(())
    }

    /// Removes the whole index folder (`--clear`).
    pub fn clear(&self) -> Result<(), CliError> {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(fs_error("remove", &self.dir, e)),
        }
    }

    /// Bytes on disk: the live build (with its WAL) and the embedding cache.
    pub fn size_bytes(&self) -> u64 {
        walkdir::WalkDir::new(&self.dir)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }
}

/// Removes a build's file and SQLite's files beside it; best effort (a
/// leftover file is only disk space).
fn remove_db_files(db: &Path) {
    for file in database_files(db) {
        let _ = std::fs::remove_file(file);
    }
}

/// Opens the build at `path`; with `no_wait` a write held by another
/// ingest fails at once instead of waiting. A `new` build is one that is
/// not live: nothing reads it, and its ingest commits it once, at its end,
/// so what a failed or killed ingest left there is removed and the file is
/// written fresh (once, in place; see `SqliteOptions::fresh`). Call it
/// holding the writer lock.
pub fn open_build(path: &Path, no_wait: bool, new: bool) -> Result<SqliteStore, CliError> {
    if new {
        remove_db_files(path);
    }
    let options = SqliteOptions {
        busy_timeout: if no_wait {
            Duration::ZERO
        } else {
            SqliteOptions::default().busy_timeout
        },
        fresh: new,
    };
    Ok(SqliteStore::open_with(path, options)?)
}

fn decode<T: DeserializeOwned>(what: &str, v: KvValue) -> ragloom::Result<T> {
    serde_json::from_value(serde_json::Value::Object(v))
        .map_err(|e| ragloom::Error::InvalidInput(format!("the stored {what} is damaged: {e}")))
}

fn encode<T: Serialize>(v: &T) -> ragloom::Result<KvValue> {
    match serde_json::to_value(v)? {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(ragloom::Error::Other("expected a JSON object".into())),
    }
}

/// The manifest stored in a build, if any.
pub fn read_manifest<B: KvBackend>(kv: &B) -> ragloom::Result<Option<Manifest>> {
    kv.read(|t| {
        t.get("manifest", MANIFEST)?
            .map(|v| decode("manifest", v.into_owned()))
            .transpose()
    })
}

/// Writes the manifest (inside the ingest's transaction).
pub fn write_manifest<B: KvBackend>(kv: &B, manifest: &Manifest) -> ragloom::Result<()> {
    let value = encode(manifest)?;
    kv.write(|t| t.put("manifest", value, MANIFEST))
}

/// Writes `manifest` in the build's transaction, commits it, folds the log
/// into the file and makes the build live.
pub async fn commit_build(
    tx: ragloom::sqlite::SqliteTransaction,
    store: &SqliteStore,
    index: &IndexDir,
    db_path: &Path,
    manifest: &Manifest,
) -> Result<(), CliError> {
    write_manifest(&*tx.kv(), manifest)?;
    tx.commit().await?;
    // The writer pays for its own log: the first query after it would
    // otherwise copy it into the file (a gigabyte after a large ingest).
    store.checkpoint()?;
    index.make_live(db_path)
}

/// Every file the last ingest saw, by path.
pub fn read_files<B: KvBackend>(kv: &B) -> ragloom::Result<BTreeMap<String, FileRecord>> {
    kv.read(|t| {
        t.get_all(FILES)?
            .iter()
            .map(|(k, v)| Ok((k.clone(), decode("file record", v.clone())?)))
            .collect()
    })
}

/// Records files as read now, and forgets `gone` ones (inside the ingest's transaction).
pub fn write_files<B: KvBackend>(
    kv: &B,
    seen: &[(String, FileRecord)],
    gone: &[String],
) -> ragloom::Result<()> {
    let values = seen
        .iter()
        .map(|(k, r)| Ok((k.clone(), encode(r)?)))
        .collect::<ragloom::Result<Vec<_>>>()?;
    kv.write(|t| {
        for (k, v) in values {
            t.put(&k, v, FILES)?;
        }
        for k in gone {
            t.delete(k, FILES)?;
        }
        Ok(())
    })
}

/// The record of the source used last, so `query`, `chat` and `status` need no `--files`.
#[derive(Debug, Serialize, Deserialize)]
struct Last {
    source: String,
}

/// Remembers `source` as the last one used.
pub fn remember_last(root: &Path, source: &Source) -> Result<(), CliError> {
    let json = serde_json::to_vec(&Last {
        source: source.key.clone(),
    })
    .map_err(ragloom::Error::from)?;
    ragloom::utils::write_atomic(&root.join("last.json"), |w| w.write_all(&json))?;
    Ok(())
}

/// The source used last, if any.
pub fn last_source(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("last.json")).ok()?;
    serde_json::from_str::<Last>(&text).ok().map(|l| l.source)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Manifests written before a stage was added still load, the new
    /// stages at zero.
    #[test]
    fn stages_of_older_manifests_load() {
        let old = r#"{"list":1,"read":2,"split":3,"write":4,"keyword_index":5,"commit":6}"#;
        let stages: IngestStages = serde_json::from_str(old).unwrap();
        assert_eq!(
            stages,
            IngestStages {
                list: 1,
                read: 2,
                split: 3,
                write: 4,
                keyword_index: 5,
                commit: 6,
                ..IngestStages::default()
            }
        );
    }
}
