//! Background jobs (ingests of uploads, deletions): one writer per index at
//! a time, so requests answer 202 at once and clients poll `/v1/jobs/{id}`.

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use utoipa::ToSchema;

/// The jobs kept for polling; the oldest finished ones go past this.
const KEEP: usize = 1000;

/// A job as `/v1/jobs/{id}` shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct JobInfo {
    pub id: String,
    /// `ingest` or `delete`.
    pub kind: &'static str,
    /// The index it writes.
    pub index: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the ingest did (files, documents, nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub summary: Option<serde_json::Value>,
}

/// The job registry.
#[derive(Debug, Default)]
pub struct Jobs {
    jobs: Mutex<BTreeMap<u64, JobInfo>>,
    ids: Mutex<HashMap<String, u64>>,
    writers: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    seq: std::sync::atomic::AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Jobs {
    /// Queues `work` on `index`'s writer; returns the job id at once.
    /// `done` is told the outcome (for metrics).
    pub fn submit<F>(
        self: &Arc<Self>,
        index: &str,
        kind: &'static str,
        work: F,
        done: impl FnOnce(bool) + Send + 'static,
    ) -> String
    where
        F: Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let id = uuid::Uuid::new_v4().to_string();
        let seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        {
            let mut jobs = lock(&self.jobs);
            jobs.insert(
                seq,
                JobInfo {
                    id: id.clone(),
                    kind,
                    index: index.to_string(),
                    state: "queued",
                    error: None,
                    summary: None,
                },
            );
            lock(&self.ids).insert(id.clone(), seq);
            self.evict(&mut jobs);
        }
        let writer = lock(&self.writers)
            .entry(index.to_string())
            .or_default()
            .clone();
        let this = self.clone();
        tokio::spawn(async move {
            let _turn = writer.lock().await;
            this.update(seq, |j| j.state = "running");
            // A panicking job still ends as `failed`, never stuck `running`.
            let outcome = tokio::spawn(work)
                .await
                .unwrap_or_else(|e| Err(format!("the job stopped: {e}")));
            let ok = outcome.is_ok();
            this.update(seq, |j| match outcome {
                Ok(summary) => {
                    j.state = "succeeded";
                    j.summary = Some(summary);
                }
                Err(e) => {
                    j.state = "failed";
                    j.error = Some(e);
                }
            });
            done(ok);
        });
        id
    }

    fn update(&self, seq: u64, f: impl FnOnce(&mut JobInfo)) {
        if let Some(j) = lock(&self.jobs).get_mut(&seq) {
            f(j);
        }
    }

    fn evict(&self, jobs: &mut BTreeMap<u64, JobInfo>) {
        while jobs.len() > KEEP {
            let Some(old) = jobs
                .iter()
                .find(|(_, j)| matches!(j.state, "succeeded" | "failed"))
                .map(|(s, _)| *s)
            else {
                break;
            };
            if let Some(j) = jobs.remove(&old) {
                lock(&self.ids).remove(&j.id);
            }
        }
    }

    pub fn get(&self, id: &str) -> Option<JobInfo> {
        let seq = *lock(&self.ids).get(id)?;
        lock(&self.jobs).get(&seq).cloned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn jobs_of_one_index_run_one_at_a_time_and_report_their_outcome() {
        let jobs = Arc::new(Jobs::default());
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut ids = Vec::new();
        for i in 0..4 {
            let (running, most) = (running.clone(), most.clone());
            ids.push(jobs.submit(
                "docs",
                "ingest",
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    if i == 2 {
                        Err("bad file".to_string())
                    } else {
                        Ok(serde_json::json!({"n": i}))
                    }
                },
                |_| {},
            ));
        }
        for _ in 0..200 {
            if ids
                .iter()
                .all(|id| matches!(jobs.get(id).unwrap().state, "succeeded" | "failed"))
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(jobs.get(&ids[0]).unwrap().state, "succeeded");
        let failed = jobs.get(&ids[2]).unwrap();
        assert_eq!(failed.state, "failed");
        assert_eq!(failed.error.as_deref(), Some("bad file"));
        assert!(jobs.get("nope").is_none());
    }
}
