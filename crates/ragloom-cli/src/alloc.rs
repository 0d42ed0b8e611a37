//! The process's allocator (mimalloc) and how an ingest tunes it: memory an
//! ingest frees is kept for its next batch rather than handed back at once.

use std::ffi::{c_int, c_long};

// mimalloc, not glibc's malloc: under `serve`, glibc's per-thread arenas kept
// growing after the load had peaked (RSS 1.11x from 1,000 to 10,000 requests
// of the same load; flat with one arena). Measured in docs/server.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (its sixteenth
/// entry); the crate exports no constant for it. A test checks that this
/// slot holds the purge delay's default.
const PURGE_DELAY: c_int = 15;

#[allow(unsafe_code)]
unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
}

/// Keeps the memory this process frees instead of returning it to the kernel
/// a second later. An ingest frees each batch's nodes and takes as much again
/// for the next: returned, the pages were faulted in and zeroed again, about
/// a tenth of a 50 MB ingest's CPU (kernel page clearing and mimalloc's page
/// setup, in `perf`). Kept, five interleaved ingests each took 3.84 s against
/// 4.31 s (medians), with peaks of 343–396 MB against 311–349 MB. Only for
/// commands that exit after their work: a server's or a chat's memory would
/// stay at its busiest. Call it before any thread is started.
pub(crate) fn keep_freed_memory() {
    // SAFETY: mi_option_set stores a number in mimalloc's option table (a
    // plain store, which other threads read when they decide to purge, so it
    // is called before there are other threads); any value is valid for the
    // purge delay, -1 meaning never, and it touches no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        mi_option_set(PURGE_DELAY, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(unsafe_code)]
    unsafe extern "C" {
        fn mi_option_get(option: c_int) -> c_long;
    }

    /// The purge delay now in force, in milliseconds (-1: never).
    fn purge_delay() -> c_long {
        // SAFETY: mi_option_get only reads mimalloc's option table.
        #[allow(unsafe_code)]
        unsafe {
            mi_option_get(PURGE_DELAY)
        }
    }

    /// The slot is the purge delay: it holds mimalloc 3's default of
    /// 1,000 ms (or what the environment set), then never once kept. No
    /// other test here changes it. Other test threads allocate meanwhile:
    /// mimalloc itself initializes options with such stores from whichever
    /// thread reads one first.
    #[test]
    fn freed_memory_is_kept_once_asked() {
        let default = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
            .iter()
            .find_map(|k| std::env::var(k).ok()?.parse::<c_long>().ok())
            .unwrap_or(1000);
        let before = purge_delay();
        assert_eq!(before, default, "slot {PURGE_DELAY} is not the purge delay");
        keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }
}
