//! Uploads as they arrive: streamed to disk part by part (never held whole
//! in memory), a few at once, and so many bytes a minute for all clients.

use crate::error::{ApiError, rejection_error};
use crate::rest::sanitize_file_name;
use axum::extract::Multipart;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::AsyncWriteExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The most files one upload request may hold.
pub(crate) const MAX_FILES_PER_UPLOAD: usize = 1000;

/// Uploads in flight and the byte budget they draw from: a bucket that
/// holds a minute's bytes and refills continuously.
#[derive(Debug)]
pub(crate) struct UploadLimit {
    in_flight: Arc<Semaphore>,
    per_minute: u64,
    bucket: Mutex<(f64, Instant)>,
}

impl UploadLimit {
    pub(crate) fn new(in_flight: usize, per_minute: u64) -> Self {
        Self {
            in_flight: Arc::new(Semaphore::new(in_flight.max(1))),
            per_minute: per_minute.max(1),
            bucket: Mutex::new((per_minute.max(1) as f64, Instant::now())),
        }
    }

    /// A place for one upload, or 429 when all are taken.
    pub(crate) fn enter(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.in_flight.clone().try_acquire_owned().map_err(|_| {
            ApiError::too_many("as many uploads as the server takes at once are running", 1)
        })
    }

    /// Takes `bytes` from the minute's budget, or says (429) how many seconds
    /// until they fit. A request larger than a minute's budget never fits.
    pub(crate) fn take(&self, bytes: u64) -> Result<(), ApiError> {
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let rate = self.per_minute as f64 / 60.0;
        let now = Instant::now();
        let level =
            (b.0 + now.duration_since(b.1).as_secs_f64() * rate).min(self.per_minute as f64);
        *b = (level, now);
        let want = bytes as f64;
        if want <= level {
            b.0 = level - want;
            return Ok(());
        }
        let wait = ((want - level) / rate).ceil().clamp(1.0, 3600.0) as u64;
        Err(ApiError::too_many(
            format!(
                "uploads are over {} bytes a minute: retry in {wait} s",
                self.per_minute
            ),
            wait,
        ))
    }
}

/// A file received into the uploads folder under a hidden temporary name,
/// removed unless it is kept.
#[derive(Debug)]
pub(crate) struct Received {
    pub name: String,
    pub tmp: PathBuf,
    kept: bool,
}

impl Drop for Received {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl Received {
    /// Moves the file to its name: an ingest never reads half a file.
    pub(crate) async fn keep(mut self, dir: &Path) -> Result<String, ApiError> {
        tokio::fs::rename(&self.tmp, dir.join(&self.name))
            .await
            .map_err(|e| ApiError::internal(format!("cannot save {}: {e}", self.name)))?;
        self.kept = true;
        Ok(std::mem::take(&mut self.name))
    }
}

/// Streams the `file` parts of `multipart` into `dir`, each under a hidden
/// temporary name, drawing on the byte budget as bytes arrive.
pub(crate) async fn receive(
    multipart: &mut Multipart,
    dir: &Path,
    limit: &UploadLimit,
) -> Result<Vec<Received>, ApiError> {
    let mut files: Vec<Received> = Vec::new();
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|e| rejection_error(e.status(), e.body_text()))?
    {
        let Some(raw) = field.file_name().map(str::to_string) else {
            continue;
        };
        if files.len() >= MAX_FILES_PER_UPLOAD {
            return Err(ApiError::bad_request(format!(
                "one upload may hold at most {MAX_FILES_PER_UPLOAD} files"
            ))
            .param("file"));
        }
        let name = sanitize_file_name(&raw).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`{}` is not a usable file name",
                raw.escape_debug()
            ))
            .param("file")
        })?;
        if files.is_empty() {
            tokio::fs::create_dir_all(dir).await.map_err(|e| {
                ApiError::internal(format!("cannot create the uploads folder: {e}"))
            })?;
        }
        let tmp = dir.join(format!(".{name}.{}.part", uuid::Uuid::new_v4().simple()));
        // Registered first, so the temporary file goes whatever happens next.
        files.push(Received {
            name: name.clone(),
            tmp: tmp.clone(),
            kept: false,
        });
        let mut out = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .await
            .map_err(|e| ApiError::internal(format!("cannot save {name}: {e}")))?;
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| rejection_error(e.status(), e.body_text()))?
        {
            limit.take(chunk.len() as u64)?;
            out.write_all(&chunk)
                .await
                .map_err(|e| ApiError::internal(format!("cannot save {name}: {e}")))?;
        }
        // On disk before the upload is accepted: a crash after the 202 keeps it.
        out.sync_all()
            .await
            .map_err(|e| ApiError::internal(format!("cannot save {name}: {e}")))?;
    }
    Ok(files)
}

/// Removes temporary files a crash left in `dir`.
pub(crate) fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".part") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_past_a_minutes_bytes_and_says_when() {
        let l = UploadLimit::new(1, 600);
        assert!(l.take(500).is_ok());
        let e = l
            .take(200)
            .err()
            .map(|e| (e.status.as_u16(), e.retry_after));
        // 100 left, 10 bytes a second: 100 more take 10 s.
        assert_eq!(e, Some((429, Some(10))));
        assert!(l.take(100).is_ok());
        assert!(l.take(601).is_err());
        let held = l.enter();
        assert!(held.is_ok());
        assert_eq!(l.enter().err().map(|e| e.status.as_u16()), Some(429));
        drop(held);
        assert!(l.enter().is_ok());
    }
}
