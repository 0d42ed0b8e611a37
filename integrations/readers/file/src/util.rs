//! Plumbing shared by the readers: blocking parsing off the async threads,
//! a parser's panic turned into that file's error, and small Python helpers.

use ragloom_core::{Error, Metadata, Result};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Runs `work` on tokio's blocking pool when a runtime is there (parsing a
/// large PDF must not stall the async threads), inline otherwise. A panic
/// inside `work` (pdf-extract has `expect`s on malformed files) becomes an
/// [`Error::CorruptFile`] naming `path` instead of tearing the caller down.
pub(crate) async fn run_guarded<T, F>(path: &Path, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Path) -> Result<T> + Send + 'static,
{
    let owned: PathBuf = path.to_path_buf();
    let guarded = move || match catch_unwind(AssertUnwindSafe(|| work(&owned))) {
        Ok(result) => result,
        Err(payload) => Err(Error::corrupt(
            &owned,
            format!("the parser panicked: {}", panic_message(payload.as_ref())),
        )),
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return guarded();
    }
    tokio::task::spawn_blocking(guarded)
        .await
        .map_err(|e| Error::Other(format!("reading {} failed: {e}", path.display())))?
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// The file's bytes, or an [`Error::Io`] naming it.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io("reading", path, e))
}

/// The file as UTF-8 text; invalid UTF-8 is the file's error, as Python's
/// strict `utf-8` decoding makes it in LlamaIndex's readers.
pub(crate) fn read_utf8(path: &Path) -> Result<String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::corrupt(
            path,
            format!("not valid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })
}

/// Python's `Path(file).name`.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Python's `Path(file).suffix`: from the last dot of the name, unless that
/// dot starts or ends it.
pub(crate) fn suffix(path: &Path) -> String {
    let name = file_name(path);
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => name[i..].to_string(),
        _ => String::new(),
    }
}

/// `{**first, **extra_info}`: the reader's own keys first, the file's
/// metadata after them, replacing same-named keys in place as `dict.update` does.
pub(crate) fn merged(mut first: Metadata, extra_info: &Metadata) -> Metadata {
    for (k, v) in extra_info {
        first.insert(k.clone(), v.clone());
    }
    first
}

/// The most bytes a reader decompresses from one archive (DOCX, EPUB) by
/// default: far above any real document, far below what a decompression bomb
/// would take. `with_max_unzipped_bytes` on the reader changes it.
pub const DEFAULT_MAX_UNZIPPED_BYTES: u64 = 256 * 1024 * 1024;

/// How long one PDF's text extraction may run before it is stopped and the
/// file reported as skipped (`PDFReader::with_time_limit`).
pub const DEFAULT_PDF_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Reads the entry `name` of `zip`, counting what is actually decompressed
/// (never the size the archive declares) against `budget`, the bytes the
/// archive may still unpack; `Ok(None)` when there is no such entry.
pub(crate) fn read_zip_entry<R: std::io::Read + std::io::Seek>(
    path: &Path,
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    budget: &mut u64,
) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let entry = match zip.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(Error::corrupt(path, format!("cannot open {name}: {e}"))),
    };
    let mut bytes = Vec::new();
    entry
        .take(budget.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::corrupt(path, format!("cannot read {name}: {e}")))?;
    let read = bytes.len() as u64;
    if read > *budget {
        return Err(Error::corrupt(
            path,
            format!(
                "{name} decompresses past the reader's limit of unpacked bytes per archive \
                 (a decompression bomb?); skipped"
            ),
        ));
    }
    *budget -= read;
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_the_files_error() {
        let err = run_guarded::<(), _>(Path::new("x.pdf"), |_| panic!("boom"))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("x.pdf") && err.contains("boom"), "{err}");
    }

    #[test]
    fn a_panic_without_a_runtime_is_caught_too() {
        let result = futures_lite_block_on(run_guarded::<(), _>(Path::new("y.pdf"), |_| {
            panic!("{}", String::from("owned"))
        }));
        let err = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("y.pdf") && err.contains("owned"), "{err}");
    }

    /// Polls a future that never waits, without a runtime.
    fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn suffix_and_name_are_pythons() {
        assert_eq!(suffix(Path::new("a/b.tar.gz")), ".gz");
        assert_eq!(suffix(Path::new(".bashrc")), "");
        assert_eq!(file_name(Path::new("dir/x.csv")), "x.csv");
    }
}
