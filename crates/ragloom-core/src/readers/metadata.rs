//! The metadata `SimpleDirectoryReader` attaches to each file's documents by
//! default, with the keys, order and formats of LlamaIndex's `default_file_metadata_func`.

use crate::error::{Error, Result};
use crate::schema::Metadata;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::Path;

/// The metadata keys LlamaIndex leaves out of both the embedded text and the
/// LLM text of every document `SimpleDirectoryReader` loads (only
/// `file_path` stays visible). `last_accessed_date` is listed although the
/// default metadata never holds it, exactly as LlamaIndex lists it.
pub const EXCLUDED_FILE_METADATA_KEYS: [&str; 6] = [
    "file_name",
    "file_type",
    "file_size",
    "creation_date",
    "last_modified_date",
    "last_accessed_date",
];

/// LlamaIndex's `default_file_metadata_func`, for a local file: in this order,
/// `file_path` (the path as the reader holds it), `file_name`, `file_type`
/// (MIME type guessed from the extension; absent when unknown), `file_size`
/// (bytes), `creation_date` and `last_modified_date` (`YYYY-MM-DD`, UTC).
///
/// Symlinks are followed for size and dates, the name is the link's own.
/// `creation_date` is the inode change time (`st_ctime`) on Linux, as Python
/// reports it there, and the birth time where the platform has one.
/// `last_accessed_date` is never present: LlamaIndex 0.14.25 asks fsspec for
/// an `atime` that fsspec's local file system does not report, so Python
/// drops the key, and so does this.
///
/// MIME types come from `mime_guess`; Python's `mimetypes` gives the same for
/// `.txt` (`text/plain`), `.md` (`text/markdown`), `.json`, `.csv`, `.html`
/// and `.pdf`, and no type for unknown extensions, but may differ for others
/// (its table depends on the Python version and on `/etc/mime.types`).
///
/// Fails with [`Error::Io`] naming the path when the file cannot be stat'ed
/// (missing, broken symlink, no permission).
pub fn default_file_metadata_func(path: &Path) -> Result<Metadata> {
    let stat = std::fs::metadata(path).map_err(|e| Error::io("reading metadata of", path, e))?;
    let path_str = path.to_string_lossy();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path_str.rsplit('/').next().unwrap_or_default().to_string());

    let mut meta = Metadata::new();
    meta.insert("file_path".into(), Value::String(path_str.into_owned()));
    meta.insert("file_name".into(), Value::String(file_name));
    if let Some(mime) = mime_guess::from_path(path).first_raw() {
        meta.insert("file_type".into(), Value::String(mime.to_string()));
    }
    meta.insert("file_size".into(), Value::from(stat.len()));
    if let Some(created) = creation_time(&stat) {
        meta.insert("creation_date".into(), Value::String(format_date(created)));
    }
    if let Some(modified) = stat.modified().ok().map(DateTime::<Utc>::from) {
        meta.insert(
            "last_modified_date".into(),
            Value::String(format_date(modified)),
        );
    }
    Ok(meta)
}

/// `%Y-%m-%d` in UTC, LlamaIndex's `_format_file_timestamp` without time.
fn format_date(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

/// What Python's `os.stat` calls the creation time: `st_birthtime` where it
/// exists (macOS, BSDs, Windows), otherwise `st_ctime`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn creation_time(stat: &std::fs::Metadata) -> Option<DateTime<Utc>> {
    use std::os::unix::fs::MetadataExt;
    let nanos = u32::try_from(stat.ctime_nsec()).unwrap_or(0);
    DateTime::<Utc>::from_timestamp(stat.ctime(), nanos)
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn creation_time(stat: &std::fs::Metadata) -> Option<DateTime<Utc>> {
    use std::os::unix::fs::MetadataExt;
    match stat.created() {
        Ok(t) => Some(DateTime::<Utc>::from(t)),
        Err(_) => {
            let nanos = u32::try_from(stat.ctime_nsec()).unwrap_or(0);
            DateTime::<Utc>::from_timestamp(stat.ctime(), nanos)
        }
    }
}

#[cfg(not(unix))]
fn creation_time(stat: &std::fs::Metadata) -> Option<DateTime<Utc>> {
    stat.created().ok().map(DateTime::<Utc>::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_days() {
        let before = DateTime::<Utc>::from_timestamp(86_399, 999_999_999);
        let after = DateTime::<Utc>::from_timestamp(86_400, 0);
        assert_eq!(before.map(format_date).as_deref(), Some("1970-01-01"));
        assert_eq!(after.map(format_date).as_deref(), Some("1970-01-02"));
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let err = default_file_metadata_func(Path::new("/no/such/file.txt")).err();
        assert!(err.is_some_and(|e| e.to_string().contains("/no/such/file.txt")));
    }
}
