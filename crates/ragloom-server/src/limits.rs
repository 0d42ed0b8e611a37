//! What one client may take: requests at once (per key), the time a request
//! may run, and the gate in front of the LLM, so a burst never piles up.

use crate::auth::KeyIndex;
use crate::error::ApiError;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests answered at once: a pool per API key when there are keys (one
/// client cannot starve the others), and one for requests without a key
/// (everyone, when there are no keys).
#[derive(Debug)]
pub(crate) struct RequestLimit {
    pools: Vec<Arc<Semaphore>>,
}

impl RequestLimit {
    pub(crate) fn new(max: usize, keys: usize) -> Self {
        Self {
            pools: (0..=keys)
                .map(|_| Arc::new(Semaphore::new(max.max(1))))
                .collect(),
        }
    }

    fn try_enter(&self, key: Option<usize>) -> Option<OwnedSemaphorePermit> {
        let last = self.pools.len().saturating_sub(1);
        let pool = self.pools.get(key.unwrap_or(last))?;
        pool.clone().try_acquire_owned().ok()
    }
}

/// Admits a request within its key's share, and bounds its time: reading
/// its body is inside `request_timeout`, so a trickled body ends too. The
/// place is held until the response's body has been sent, except for event
/// streams, which live as long as their client listens and are bounded by
/// what feeds them (the LLM gate, the MCP session cap).
pub(crate) async fn admit(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let key = req.extensions().get::<KeyIndex>().map(|k| k.0);
    let Some(permit) = state.requests.try_enter(key) else {
        return ApiError::too_many("too many requests at once from this client: retry later", 1)
            .into_response();
    };
    let limit = state.config.request_timeout;
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) if is_event_stream(&response) => response,
        Ok(response) => response.map(|body| {
            Body::new(Held {
                body,
                _permit: permit,
            })
        }),
        Err(_) => ApiError::timeout(limit.as_secs()).into_response(),
    }
}

/// The longest request target (path and query) answered; longer ones get
/// 414 in the envelope. (Past 64 KB hyper answers 414 itself, bodiless.)
pub(crate) const MAX_URI_BYTES: usize = 8 * 1024;

/// Refuses request targets longer than [`MAX_URI_BYTES`].
pub(crate) async fn uri_length(req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if len > MAX_URI_BYTES {
        return ApiError::new(
            axum::http::StatusCode::URI_TOO_LONG,
            "invalid_request_error",
            "uri_too_long",
            format!("the request target is {len} bytes: at most {MAX_URI_BYTES} are read"),
        )
        .into_response();
    }
    next.run(req).await
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// A response body that holds its request's place until it is dropped.
struct Held {
    body: Body,
    _permit: OwnedSemaphorePermit,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Admits LLM calls: `running` at once, `queued` more waiting.
#[derive(Debug)]
pub(crate) struct LlmGate {
    permits: Arc<Semaphore>,
    running: usize,
    queued: usize,
    waiting: AtomicUsize,
}

/// Decrements the waiting count however the wait ends (admitted, or the
/// client gone and the future dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl LlmGate {
    pub(crate) fn new(running: usize, queued: usize) -> Self {
        let running = running.max(1);
        Self {
            permits: Arc::new(Semaphore::new(running)),
            running,
            queued,
            waiting: AtomicUsize::new(0),
        }
    }

    /// A permit to call the LLM, held until the answer is complete; an
    /// error (429) when the queue is full.
    pub(crate) async fn enter(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        if let Ok(p) = self.permits.clone().try_acquire_owned() {
            return Ok(p);
        }
        let ahead = self.waiting.fetch_add(1, Ordering::AcqRel);
        let _waiting = Waiting(&self.waiting);
        if ahead >= self.queued {
            // A rough wait: one answer's time per round of the running calls.
            let rounds = 1 + ahead / self.running;
            return Err(ApiError::busy(rounds.min(60) as u64));
        }
        self.permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::internal("the server is shutting down"))
    }

    /// Calls waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Calls running now.
    pub(crate) fn running(&self) -> usize {
        self.running - self.permits.available_permits()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_answers_429_and_a_dropped_waiter_leaves_it() {
        let gate = Arc::new(LlmGate::new(1, 1));
        let first = gate.enter().await.unwrap();
        assert_eq!(gate.running(), 1);
        let g = gate.clone();
        let queued = tokio::spawn(async move { g.enter().await.map(|_| ()) });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let err = gate.enter().await.unwrap_err();
        assert_eq!(err.status.as_u16(), 429);
        // One call running and one waiting ahead: about two answers away.
        assert_eq!(err.retry_after, Some(2));
        // The waiter is admitted when the running call ends.
        drop(first);
        queued.await.unwrap().unwrap();
        assert_eq!(gate.waiting(), 0);
        // A waiter whose client went away frees its place.
        let held = gate.enter().await.unwrap();
        let g = gate.clone();
        let abandoned = tokio::spawn(async move { g.enter().await.map(|_| ()) });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        abandoned.abort();
        let _ = abandoned.await;
        assert_eq!(gate.waiting(), 0);
        drop(held);
        assert!(gate.enter().await.is_ok());
    }
}
