//! One source's folder under the local persist root: what every store keeps
//! on this machine (the writer's lock file, the uploads, SQLite's files).
//!
//! ```text
//! <root>/indexes/<name>-<hash>/   the source's folder (SQLite builds, embedding cache)
//! <root>/locks/<name>-<hash>.lock the writer lock (beside, so clearing the folder keeps it)
//! <root>/uploads/<name>-<hash>/   files uploaded to a server for this source
//! ```

use super::IndexError;
use super::source::Source;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One source's index folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDir {
    /// The folder.
    pub dir: PathBuf,
}

impl IndexDir {
    /// The folder of `source` under `root`: a readable name plus a hash of the key.
    pub fn for_source(root: &Path, source: &Source) -> Self {
        let digest = Sha256::digest(source.key.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        Self {
            dir: root
                .join("indexes")
                .join(format!("{}-{hash}", source.readable_name())),
        }
    }

    /// The folder's own name (unique per source).
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The persist root above the index folders, if the folder has one.
    fn root(&self) -> Option<&Path> {
        self.dir.parent().and_then(Path::parent)
    }

    /// Where writer lock files live: beside the index folders, so removing
    /// a folder never removes a lock someone holds.
    pub fn locks_dir(&self) -> PathBuf {
        self.root().map_or_else(
            || self.dir.with_extension("locks"),
            |root| root.join("locks"),
        )
    }

    /// Where a server saves uploads to this index: beside the index folders
    /// (clearing an index keeps them); part of the source.
    pub fn uploads_dir(&self) -> PathBuf {
        let name = self.name();
        self.root().map_or_else(
            || self.dir.with_extension("uploads"),
            |root| root.join("uploads").join(name),
        )
    }

    /// The embedding cache file, shared by every build of this source
    /// (stores that keep it on this machine).
    pub fn embeddings_path(&self) -> PathBuf {
        self.dir.join("embeddings.sqlite")
    }

    /// Removes the whole folder.
    pub fn clear(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("removing", &self.dir, e)),
        }
    }

    /// Bytes on disk under the folder.
    pub fn size_bytes(&self) -> u64 {
        walkdir::WalkDir::new(&self.dir)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }

    /// Takes the lock file of this source, waiting while another process
    /// holds it (calling `on_wait` once, first), or with `no_wait` failing
    /// at once with [`IndexError::WriterBusy`]. Held until the file drops.
    pub async fn lock_file(
        &self,
        no_wait: bool,
        on_wait: &(dyn Fn() + Send + Sync),
    ) -> Result<std::fs::File> {
        let locks = self.locks_dir();
        std::fs::create_dir_all(&locks).map_err(|e| Error::io("creating", &locks, e))?;
        let path = locks.join(format!("{}.lock", self.name()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("opening", &path, e))?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => return Ok(file),
            Err(fs4::TryLockError::WouldBlock) if !no_wait => {}
            Err(fs4::TryLockError::WouldBlock) => return Err(IndexError::WriterBusy.into()),
            Err(fs4::TryLockError::Error(e)) => return Err(Error::io("locking", &path, e)),
        }
        on_wait();
        tokio::task::spawn_blocking(move || fs4::FileExt::lock(&file).map(|()| file))
            .await
            .map_err(|e| Error::failed("waiting for the writer lock", e))?
            .map_err(|e| Error::io("locking", &path, e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_writer_at_a_time_and_the_lock_outlives_a_cleared_folder() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("docs")).unwrap();
        let source = Source::resolve(tmp.path().join("docs").to_str().unwrap()).unwrap();
        let dir = IndexDir::for_source(&tmp.path().join("root"), &source);
        assert!(dir.name().starts_with("docs-"));
        assert_eq!(
            dir.uploads_dir(),
            tmp.path().join("root/uploads").join(dir.name())
        );
        let held = dir.lock_file(true, &|| {}).await.unwrap();
        std::fs::create_dir_all(&dir.dir).unwrap();
        dir.clear().unwrap();
        let err = dir.lock_file(true, &|| {}).await.unwrap_err();
        assert!(matches!(err, Error::Index(IndexError::WriterBusy)), "{err}");
        drop(held);
        dir.lock_file(true, &|| {}).await.unwrap();
    }
}
