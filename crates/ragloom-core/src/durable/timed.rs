//! Timing an ingest's stages: a tokenizer that adds up the time spent in it,
//! and a thread's CPU time, so `ingest --json` can set each stage beside its floor.

use crate::tokenizer::Tokenizer;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Wraps the splitter's tokenizer; every clone adds to the same total.
#[derive(Clone)]
pub(super) struct TimedTokenizer {
    inner: Arc<dyn Tokenizer>,
    nanos: Arc<AtomicU64>,
}

impl TimedTokenizer {
    /// Times `inner`, from zero.
    pub(super) fn new(inner: Arc<dyn Tokenizer>) -> Self {
        TimedTokenizer {
            inner,
            nanos: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The wall time of every call so far, added up over the threads that
    /// called it (so it can pass the wall time on several cores; a call's
    /// time includes any time its thread waited for a core).
    pub(super) fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    fn timed<R>(&self, f: impl FnOnce(&dyn Tokenizer) -> R) -> R {
        let started = Instant::now();
        let out = f(self.inner.as_ref());
        self.nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }
}

/// As the wrapped tokenizer: a splitter's `Debug` text names its tokenizer,
/// and a running total there would make two equal splitters differ.
impl std::fmt::Debug for TimedTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl Tokenizer for TimedTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        self.timed(|t| t.encode(text))
    }

    fn count(&self, text: &str) -> usize {
        self.timed(|t| t.count(text))
    }

    fn count_up_to(&self, text: &str, limit: usize) -> usize {
        self.timed(|t| t.count_up_to(text, limit))
    }
}

/// The CPU time the calling thread has used so far, where the system says.
pub(super) fn thread_cpu_time() -> Option<Duration> {
    // The systems where the thread clock exists (rustix has none elsewhere).
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_vendor = "apple"
    ))]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Some(Duration::new(
            u64::try_from(t.tv_sec).ok()?,
            u32::try_from(t.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_vendor = "apple"
    )))]
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn counts_as_the_inner_tokenizer_and_adds_up_its_time() {
        let inner = crate::tokenizer::default_tokenizer();
        let timed = TimedTokenizer::new(inner.clone());
        assert_eq!(timed.elapsed(), Duration::ZERO);
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(200);
        assert_eq!(timed.count(&text), inner.count(&text));
        assert_eq!(timed.count_up_to(&text, 10), inner.count_up_to(&text, 10));
        assert_eq!(timed.encode("hello world"), inner.encode("hello world"));
        let after = timed.elapsed();
        assert!(after > Duration::ZERO);
        // Clones share the total.
        let clone = timed.clone();
        clone.count(&text);
        assert!(timed.elapsed() > after);
        // Its `Debug` is the wrapped tokenizer's, whatever the total.
        assert_eq!(format!("{timed:?}"), format!("{inner:?}"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn thread_cpu_time_counts_work_not_sleep() {
        let before = thread_cpu_time().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().unwrap() - before;
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let worked = thread_cpu_time().unwrap() - before - slept;
        assert!(slept < Duration::from_millis(20), "{slept:?}");
        assert!(worked > slept, "{worked:?} against {slept:?}");
    }
}
