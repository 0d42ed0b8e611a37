//! Where a run's checkpoints are kept: a folder of JSON files, or any
//! key-value store (the embedded SQLite store among them).

use crate::state::Checkpoint;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::storage::kvstore::KvBackend;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Saves the last checkpoint of each run, and loads it back.
#[async_trait]
pub trait Checkpointer: Send + Sync + std::fmt::Debug {
    /// Replaces run `run_id`'s checkpoint with `checkpoint`.
    async fn save(&self, run_id: &str, checkpoint: &Checkpoint) -> Result<()>;
    /// Run `run_id`'s last checkpoint, if any.
    async fn load(&self, run_id: &str) -> Result<Option<Checkpoint>>;
}

/// One JSON file per run in a folder, replaced atomically (written beside,
/// synced, renamed), so a process killed mid-write leaves the last whole one.
#[derive(Clone, Debug)]
pub struct FileCheckpointer {
    dir: PathBuf,
}

impl FileCheckpointer {
    /// Keeps checkpoints in `dir` (created when first needed).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file run `run_id`'s checkpoint is kept in.
    pub fn path(&self, run_id: &str) -> Result<PathBuf> {
        let safe = !run_id.is_empty()
            && run_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !safe {
            return Err(Error::InvalidInput(format!(
                "run id `{run_id}`: only letters, digits, `-` and `_` can name a checkpoint file"
            )));
        }
        Ok(self.dir.join(format!("{run_id}.json")))
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io("writing", &tmp, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io("writing", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("renaming", &tmp, e))
}

#[async_trait]
impl Checkpointer for FileCheckpointer {
    async fn save(&self, run_id: &str, checkpoint: &Checkpoint) -> Result<()> {
        let path = self.path(run_id)?;
        let bytes = serde_json::to_vec_pretty(checkpoint)?;
        ragloom_core::utils::run_blocking(move || write_atomic(&path, &bytes)).await
    }

    async fn load(&self, run_id: &str) -> Result<Option<Checkpoint>> {
        let path = self.path(run_id)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("reading", &path, e)),
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(&path, format!("not a workflow checkpoint: {e}")))?;
        parse_checkpoint(value)
            .map(Some)
            .map_err(|e| Error::corrupt(&path, e))
    }
}

/// Checkpoints as values of a key-value store's collection (by default
/// `workflow_checkpoints`): with the embedded store they commit like any write.
#[derive(Debug)]
pub struct KvCheckpointer<B: KvBackend> {
    store: Arc<B>,
    collection: String,
}

impl<B: KvBackend> KvCheckpointer<B> {
    /// Keeps checkpoints in `store`.
    pub fn new(store: Arc<B>) -> Self {
        Self {
            store,
            collection: "workflow_checkpoints".into(),
        }
    }

    /// Uses the collection `name`.
    pub fn collection(mut self, name: &str) -> Self {
        self.collection = name.to_string();
        self
    }
}

#[async_trait]
impl<B: KvBackend> Checkpointer for KvCheckpointer<B> {
    async fn save(&self, run_id: &str, checkpoint: &Checkpoint) -> Result<()> {
        let serde_json::Value::Object(value) = serde_json::to_value(checkpoint)? else {
            return Err(Error::Other(
                "a checkpoint did not serialise to an object".into(),
            ));
        };
        self.store.write(|t| t.put(run_id, value, &self.collection))
    }

    async fn load(&self, run_id: &str) -> Result<Option<Checkpoint>> {
        let value = self
            .store
            .read(|t| Ok(t.get(run_id, &self.collection)?.map(|v| v.into_owned())))?;
        value
            .map(|v| {
                parse_checkpoint(serde_json::Value::Object(v))
                    .map_err(|e| Error::invalid(format!("run `{run_id}`"), e))
            })
            .transpose()
    }
}

/// A checkpoint from JSON, its version checked first so an older format is
/// named as such rather than reported as a missing field.
fn parse_checkpoint(value: serde_json::Value) -> std::result::Result<Checkpoint, String> {
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if let Some(v) = version.filter(|v| *v != u64::from(super::state::CHECKPOINT_VERSION)) {
        return Err(format!(
            "checkpoint version {v} cannot be read; this release reads version {}",
            super::state::CHECKPOINT_VERSION
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("not a workflow checkpoint: {e}"))
}
