//! Many futures run a few at a time, each taken as it finishes and the
//! results handed back in input order: what parallel loading and splitting share.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::future::Future;

/// Runs `jobs` with at most `limit` in flight, in input order of starting.
/// A free slot takes the next job as soon as any running one finishes, so a
/// slow job (a book among pages) holds back no other; `finished` sees each
/// output as it comes. When `finished` returns `false`, no further job
/// starts and those running are awaited. Returns the outputs of every job
/// started, in input order: after a stop, every job before the one that
/// stopped it has run, so the first failure in input order is among them.
pub(crate) async fn run_in_order<F: Future>(
    jobs: impl IntoIterator<Item = F>,
    limit: usize,
    mut finished: impl FnMut(&F::Output) -> bool,
) -> Vec<F::Output> {
    let mut jobs = jobs.into_iter().enumerate();
    let mut running = FuturesUnordered::new();
    let mut done = Vec::new();
    let mut starting = true;
    loop {
        while starting && running.len() < limit.max(1) {
            match jobs.next() {
                Some((i, job)) => running.push(async move { (i, job.await) }),
                None => starting = false,
            }
        }
        let Some((i, out)) = running.next().await else {
            break;
        };
        if !finished(&out) {
            starting = false;
        }
        done.push((i, out));
    }
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, out)| out).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// A job that sleeps `ms` and notes when it starts and ends.
    async fn job(id: u64, ms: u64, log: Arc<Mutex<Vec<String>>>) -> u64 {
        log.lock().unwrap().push(format!("start {id}"));
        tokio::time::sleep(Duration::from_millis(ms)).await;
        log.lock().unwrap().push(format!("end {id}"));
        id
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_job_holds_no_other_back_and_order_is_kept() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let times = [100, 1, 1, 1, 1];
        let mut seen = Vec::new();
        let out = run_in_order(
            times
                .iter()
                .enumerate()
                .map(|(i, ms)| job(i as u64, *ms, log.clone())),
            2,
            |id| {
                seen.push(*id);
                true
            },
        )
        .await;
        assert_eq!(out, [0, 1, 2, 3, 4]);
        // The other slot went through jobs 1 to 4 while job 0 ran.
        assert_eq!(seen, [1, 2, 3, 4, 0]);
        let log = log.lock().unwrap();
        assert_eq!(log.last().map(String::as_str), Some("end 0"));
        // Never more than two running: job 2 starts only after job 1 ends.
        let pos = |s: &str| log.iter().position(|l| l == s).unwrap();
        assert!(pos("end 1") < pos("start 2"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_starts_nothing_more_and_waits_for_those_running() {
        let log = Arc::new(Mutex::new(Vec::new()));
        // Job 1 "fails" first; job 0 is still running then and must end.
        let times = [50, 1, 1, 1];
        let out = run_in_order(
            times
                .iter()
                .enumerate()
                .map(|(i, ms)| job(i as u64, *ms, log.clone())),
            2,
            |id| *id != 1,
        )
        .await;
        assert_eq!(out, [0, 1]);
        let log = log.lock().unwrap();
        assert!(!log.iter().any(|l| l == "start 2"), "{log:?}");
    }

    #[tokio::test]
    async fn no_jobs_and_a_zero_limit() {
        let none: Vec<std::future::Ready<u8>> = Vec::new();
        assert!(run_in_order(none, 4, |_| true).await.is_empty());
        let out = run_in_order((0..3).map(std::future::ready), 0, |_| true).await;
        assert_eq!(out, [0, 1, 2]);
    }
}
