//! Where an index lives: one folder per source under the persist root, with
//! the pipeline's state, the nodes, the vectors and a manifest.
//!
//! ```text
//! <root>/indexes/<name>-<hash>/ragloom.json            the manifest (source, models, last ingest)
//!                              pipeline/llama_cache    the ingestion cache   } LlamaIndex's
//!                              pipeline/docstore.json  document hashes       } pipeline layout
//!                              storage/docstore.json   the nodes             } LlamaIndex's
//!                              storage/default__vector_store.json  vectors   } storage layout
//! <root>/last.json                                     the source used last
//! ```

use crate::error::CliError;
use crate::source::Source;
use ragloom::EmbedSpec;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The manifest's format version.
pub const MANIFEST_FORMAT: u32 = 1;

/// What an index folder holds, written after every successful ingest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The source key (see [`Source::key`]).
    pub source: String,
    /// The embedding model the vectors were made with.
    pub embed: EmbedSpec,
    /// RFC 3339 times.
    pub created: String,
    pub updated: String,
    /// The last ingest.
    pub last_ingest: IngestSummary,
}

/// What one ingest did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IngestSummary {
    /// Files read (a PDF counts once).
    pub files: usize,
    /// Documents read (a PDF page is one).
    pub documents: usize,
    /// Documents skipped because they were unchanged.
    pub unchanged: usize,
    /// Documents split (and embedded) this time: new or changed.
    pub ingested: usize,
    /// Of those, documents that replaced an earlier version.
    pub replaced: usize,
    /// Documents removed because their file vanished.
    pub deleted: usize,
    /// Files that could not be read.
    pub failed_files: usize,
    /// Nodes written this time.
    pub nodes_written: usize,
    /// Nodes in the index after the ingest.
    pub nodes_total: usize,
    /// Nodes embedded this time (0 without an embedding model).
    pub nodes_embedded: usize,
    /// Wall time, in milliseconds.
    pub millis: u64,
}

/// The persist root: `--persist-dir`, else `<data dir>/ragloom`.
pub fn persist_root(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    dirs::data_dir().map(|d| d.join("ragloom")).ok_or_else(|| {
        CliError::config(
            "no data directory is known for this user",
            "give one with --persist-dir or RAGLOOM_PERSIST_DIR",
        )
    })
}

/// One source's index folder.
#[derive(Clone, Debug)]
pub struct IndexDir {
    pub dir: PathBuf,
}

impl IndexDir {
    /// The folder of `source` under `root`: a readable name plus a hash of the key.
    pub fn for_source(root: &Path, source: &Source) -> Self {
        let digest = Sha256::digest(source.key.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
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
        let name = if name.is_empty() {
            "root".to_string()
        } else {
            name
        };
        Self {
            dir: root.join("indexes").join(format!("{name}-{hash}")),
        }
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join("ragloom.json")
    }
    pub fn pipeline_dir(&self) -> PathBuf {
        self.dir.join("pipeline")
    }
    pub fn storage_dir(&self) -> PathBuf {
        self.dir.join("storage")
    }
    pub fn nodes_path(&self) -> PathBuf {
        self.storage_dir().join("docstore.json")
    }
    pub fn vectors_path(&self) -> PathBuf {
        self.storage_dir().join("default__vector_store.json")
    }

    /// The manifest, `None` if nothing was ingested here yet.
    pub fn manifest(&self) -> Result<Option<Manifest>, CliError> {
        let path = self.manifest_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(CliError::new(
                    crate::error::exit::FAILURE,
                    format!("cannot read {}: {e}", path.display()),
                    "check the persist folder's permissions",
                ));
            }
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            CliError::new(
                crate::error::exit::FAILURE,
                format!("{} is damaged: {e}", path.display()),
                "rebuild the index with `ragloom rag --clear --files ...`",
            )
        })
    }

    /// Writes the manifest atomically.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), CliError> {
        let json = serde_json::to_vec_pretty(manifest).map_err(ragloom::Error::from)?;
        ragloom::utils::write_atomic(&self.manifest_path(), |w| w.write_all(&json))?;
        Ok(())
    }

    /// Removes the whole index folder (`--clear`, or a change of embedding model).
    pub fn clear(&self) -> Result<(), CliError> {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(CliError::new(
                crate::error::exit::FAILURE,
                format!("cannot remove {}: {e}", self.dir.display()),
                "check the persist folder's permissions",
            )),
        }
    }

    /// Bytes on disk.
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
