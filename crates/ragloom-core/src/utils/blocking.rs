//! Blocking work (file system, large serialisation) run off the async
//! threads when a Tokio runtime is there, inline when it is not.

use crate::error::{Error, Result};

/// Runs `f` on a Tokio runtime's blocking pool when there is one, so reading
/// a folder or persisting a large store does not stall async tasks; inline otherwise.
pub async fn run_blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R> + Send + 'static,
) -> Result<R> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .map_err(|e| Error::failed("blocking task failed", e))?,
        Err(_) => f(),
    }
}
