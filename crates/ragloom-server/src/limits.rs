//! The gate in front of the LLM: a few calls at once, a bounded queue behind
//! them, and 429 with `Retry-After` past that, so a burst never piles up.

use crate::error::ApiError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Admits LLM calls: `running` at once, `queued` more waiting.
#[derive(Debug)]
pub struct LlmGate {
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
    pub fn new(running: usize, queued: usize) -> Self {
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
    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, ApiError> {
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
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Calls running now.
    pub fn running(&self) -> usize {
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
