//! Many futures run a few at a time, each taken as it finishes and the
//! results handed back in input order: what parallel loading and splitting share.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::BTreeSet;
use std::future::Future;

/// Runs `jobs` with at most `limit` in flight, in input order of starting.
/// A free slot takes the next job as soon as any running one finishes, so a
/// slow job (a book among pages) holds back no other; `finished` sees each
/// output as it comes. When `finished` returns `false` for a job, no further
/// job starts; once every job before it has finished, the jobs after it
/// still running are dropped (a spawned task's handle dropped, its task
/// aborted or left to end, as its caller set it up). Returns the outputs in
/// input order: every job's, or after a stop those up to the first job
/// in input order that stopped it, so the first failure in order is the last.
pub(crate) async fn run_in_order<F: Future>(
    jobs: impl IntoIterator<Item = F>,
    limit: usize,
    mut finished: impl FnMut(&F::Output) -> bool,
) -> Vec<F::Output> {
    let mut jobs = jobs.into_iter().enumerate();
    let mut running = FuturesUnordered::new();
    // Indices of the jobs running, so a stop knows when those before it are done.
    let mut in_flight = BTreeSet::new();
    let mut done = Vec::new();
    let mut stop: Option<usize> = None;
    loop {
        while stop.is_none() && running.len() < limit.max(1) {
            let Some((i, job)) = jobs.next() else {
                break;
            };
            in_flight.insert(i);
            running.push(async move { (i, job.await) });
        }
        if let Some(s) = stop {
            if in_flight.first().is_none_or(|first| *first > s) {
                break;
            }
        }
        let Some((i, out)) = running.next().await else {
            break;
        };
        in_flight.remove(&i);
        if !finished(&out) {
            stop = Some(stop.map_or(i, |s| s.min(i)));
        }
        done.push((i, out));
    }
    done.sort_unstable_by_key(|(i, _)| *i);
    if let Some(s) = stop {
        done.retain(|(i, _)| *i <= s);
    }
    done.into_iter().map(|(_, out)| out).collect()
}

/// Spawns `task` on the runtime and gives a future of its result that
/// stops the task when dropped: a job [`run_in_order`] drops after a stop
/// (or a caller that gives up) takes its task with it.
pub(crate) fn spawn_stoppable<T: Send + 'static>(
    task: impl Future<Output = T> + Send + 'static,
) -> impl Future<Output = Result<T, tokio::task::JoinError>> {
    let handle = tokio::spawn(task);
    async move {
        let _stop = AbortOnDrop(handle.abort_handle());
        handle.await
    }
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
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
    async fn a_stop_waits_for_the_jobs_before_it_and_drops_those_after() {
        let log = Arc::new(Mutex::new(Vec::new()));
        // Job 1 "fails" first while job 0 (before it) and job 2 (after it)
        // still run: job 0 is awaited, job 2 dropped, job 3 never started.
        let times = [50, 1, 100, 1];
        let out = run_in_order(
            times
                .iter()
                .enumerate()
                .map(|(i, ms)| job(i as u64, *ms, log.clone())),
            3,
            |id| *id != 1,
        )
        .await;
        assert_eq!(out, [0, 1]);
        let log = log.lock().unwrap();
        assert!(log.iter().any(|l| l == "end 0"), "{log:?}");
        assert!(!log.iter().any(|l| l == "end 2"), "{log:?}");
        assert!(!log.iter().any(|l| l == "start 3"), "{log:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_stop_found_later_wins() {
        let log = Arc::new(Mutex::new(Vec::new()));
        // Job 2 stops the run first; job 0, awaited, stops it too.
        let times = [20, 30, 1];
        let out = run_in_order(
            times
                .iter()
                .enumerate()
                .map(|(i, ms)| job(i as u64, *ms, log.clone())),
            3,
            |id| *id == 1,
        )
        .await;
        assert_eq!(out, [0]);
        assert!(!log.lock().unwrap().iter().any(|l| l == "end 1"));
    }

    #[tokio::test]
    async fn no_jobs_and_a_zero_limit() {
        let none: Vec<std::future::Ready<u8>> = Vec::new();
        assert!(run_in_order(none, 4, |_| true).await.is_empty());
        let out = run_in_order((0..3).map(std::future::ready), 0, |_| true).await;
        assert_eq!(out, [0, 1, 2]);
    }
}
