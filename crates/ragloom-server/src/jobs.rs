//! Background jobs (ingests of uploads, deletions): one writer per index at
//! a time, so requests answer 202 at once and clients poll `/v1/jobs/{id}`.
//! A job given a journal folder is recorded there before it is accepted and
//! at each change, so a restarted server runs it again under the same id.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use utoipa::ToSchema;

/// The jobs kept for polling; the oldest finished ones go past this.
const KEEP: usize = 1000;

/// A job as `/v1/jobs/{id}` shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub(crate) struct JobInfo {
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

/// A job as its journal file holds it.
#[derive(Debug, Deserialize)]
struct Recorded {
    kind: String,
    state: String,
    error: Option<String>,
    summary: Option<serde_json::Value>,
    /// Starts of the job so far (a job that stops the server is not run
    /// for ever).
    #[serde(default)]
    attempts: u32,
}

/// A job is given up after it was running when the server stopped this often.
const MAX_ATTEMPTS: u32 = 3;

/// A job as its journal file holds it: what clients see, and its starts.
#[derive(Serialize)]
struct Record<'a> {
    #[serde(flatten)]
    info: &'a JobInfo,
    attempts: u32,
}

fn static_kind(kind: &str) -> &'static str {
    if kind == "delete" { "delete" } else { "ingest" }
}

/// The job registry.
#[derive(Debug, Default)]
pub(crate) struct Jobs {
    jobs: Mutex<BTreeMap<u64, JobInfo>>,
    ids: Mutex<HashMap<String, u64>>,
    /// Where each recorded job's file is, and how often it has started.
    journals: Mutex<HashMap<u64, (PathBuf, u32)>>,
    writers: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    seq: std::sync::atomic::AtomicU64,
}

/// Writes `info` to `path` whole (a temporary file, synced, then renamed).
fn record(path: &Path, info: &JobInfo, attempts: u32) -> std::io::Result<()> {
    use std::io::Write;
    let bytes = serde_json::to_vec(&Record { info, attempts }).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(&bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Jobs {
    /// Queues `work` on `index`'s writer; returns the job id at once.
    /// `done` is told the outcome (for metrics). With a `journal` folder the
    /// job is on disk before this returns, or this fails.
    pub(crate) fn submit<F>(
        self: &Arc<Self>,
        index: &str,
        kind: &'static str,
        journal: Option<&Path>,
        work: F,
        done: impl FnOnce(bool) + Send + 'static,
    ) -> std::io::Result<String>
    where
        F: Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let id = uuid::Uuid::new_v4().to_string();
        self.start(id.clone(), index, kind, journal.map(|j| (j, 0)), work, done)?;
        Ok(id)
    }

    /// Runs again, under their ids, the jobs recorded in `journal` that a
    /// stopped server had not finished, and keeps the finished ones (the
    /// newest [`KEEP`]) for polling. `work` makes a job's work from its kind.
    pub(crate) fn recover<F>(
        self: &Arc<Self>,
        index: &str,
        journal: &Path,
        work: impl Fn(&'static str) -> F,
        done: impl Fn(bool) + Clone + Send + 'static,
    ) -> usize
    where
        F: Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let Ok(entries) = std::fs::read_dir(journal) else {
            return 0;
        };
        let mut found: Vec<(std::time::SystemTime, PathBuf, String, Recorded)> = Vec::new();
        for e in entries.flatten() {
            let path = e.path();
            // The id is the file's name, and only a UUID: a record cannot
            // point its updates anywhere else.
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| uuid::Uuid::parse_str(s).is_ok())
                .map(str::to_string);
            let Some(id) = id.filter(|_| path.extension().is_some_and(|x| x == "json")) else {
                let _ = std::fs::remove_file(&path);
                continue;
            };
            let parsed = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Recorded>(&b).ok());
            let Some(r) = parsed else {
                tracing::warn!(file = %path.display(), "a job record could not be read: removed");
                let _ = std::fs::remove_file(&path);
                continue;
            };
            let when = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            found.push((when, path, id, r));
        }
        found.sort_by_key(|f| f.0);
        let finished = found
            .iter()
            .filter(|f| matches!(f.3.state.as_str(), "succeeded" | "failed"))
            .count();
        let mut old = finished.saturating_sub(KEEP);
        let mut rerun = 0;
        for (_, path, id, r) in found {
            let kind = static_kind(&r.kind);
            let given_up =
                !matches!(r.state.as_str(), "succeeded" | "failed") && r.attempts >= MAX_ATTEMPTS;
            let (state, error) = if given_up {
                tracing::warn!(job = %id, "a job the server stopped during {MAX_ATTEMPTS} times is given up");
                (
                    "failed".to_string(),
                    Some(format!(
                        "the server stopped while running this job {} times: given up",
                        r.attempts
                    )),
                )
            } else {
                (r.state, r.error)
            };
            match state.as_str() {
                "succeeded" | "failed" if old > 0 => {
                    old -= 1;
                    let _ = std::fs::remove_file(&path);
                }
                "succeeded" | "failed" => {
                    let seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let info = JobInfo {
                        id: id.clone(),
                        kind,
                        index: index.to_string(),
                        state: if state == "failed" {
                            "failed"
                        } else {
                            "succeeded"
                        },
                        error,
                        summary: r.summary,
                    };
                    if given_up {
                        let _ = record(&path, &info, r.attempts);
                    }
                    lock(&self.jobs).insert(seq, info);
                    lock(&self.ids).insert(id, seq);
                    lock(&self.journals).insert(seq, (path, r.attempts));
                }
                _ => {
                    rerun += 1;
                    tracing::info!(job = %id, "running again a job the last server did not finish");
                    let started = self.start(
                        id,
                        index,
                        kind,
                        Some((journal, r.attempts)),
                        work(kind),
                        done.clone(),
                    );
                    if let Err(e) = started {
                        tracing::error!(error = %e, "a recovered job could not be recorded");
                    }
                }
            }
        }
        rerun
    }

    fn start<F>(
        self: &Arc<Self>,
        id: String,
        index: &str,
        kind: &'static str,
        journal: Option<(&Path, u32)>,
        work: F,
        done: impl FnOnce(bool) + Send + 'static,
    ) -> std::io::Result<()>
    where
        F: Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let info = JobInfo {
            id: id.clone(),
            kind,
            index: index.to_string(),
            state: "queued",
            error: None,
            summary: None,
        };
        let path = match journal {
            Some((dir, attempts)) => {
                std::fs::create_dir_all(dir)?;
                let path = dir.join(format!("{id}.json"));
                record(&path, &info, attempts)?;
                Some((path, attempts))
            }
            None => None,
        };
        let seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        {
            let mut jobs = lock(&self.jobs);
            jobs.insert(seq, info);
            lock(&self.ids).insert(id, seq);
            if let Some(p) = path {
                lock(&self.journals).insert(seq, p);
            }
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
        Ok(())
    }

    fn update(&self, seq: u64, f: impl FnOnce(&mut JobInfo)) {
        let snapshot = {
            let mut jobs = lock(&self.jobs);
            let Some(j) = jobs.get_mut(&seq) else {
                return;
            };
            f(j);
            j.clone()
        };
        let entry = {
            let mut journals = lock(&self.journals);
            journals.get_mut(&seq).map(|(path, attempts)| {
                if snapshot.state == "running" {
                    *attempts += 1;
                }
                (path.clone(), *attempts)
            })
        };
        if let Some((path, attempts)) = entry
            && let Err(e) = record(&path, &snapshot, attempts)
        {
            tracing::warn!(job = %snapshot.id, error = %e, "the job's record could not be updated");
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
                if let Some((p, _)) = lock(&self.journals).remove(&old) {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<JobInfo> {
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
            ids.push(
                jobs.submit(
                    "docs",
                    "ingest",
                    None,
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
                )
                .unwrap(),
            );
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

    #[tokio::test]
    async fn recorded_jobs_survive_a_restart_under_their_ids() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(".jobs");
        let first = Arc::new(Jobs::default());
        let done = first
            .submit(
                "docs",
                "ingest",
                Some(&journal),
                async { Ok(serde_json::json!({"n": 1})) },
                |_| {},
            )
            .unwrap();
        // A job the "crashed" server accepted but never finished.
        let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
        let stuck = first
            .submit(
                "docs",
                "ingest",
                Some(&journal),
                async move {
                    let _ = rx.await;
                    Ok(serde_json::json!({}))
                },
                |_| {},
            )
            .unwrap();
        for _ in 0..200 {
            if first.get(&done).unwrap().state == "succeeded" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let restarted = Arc::new(Jobs::default());
        let rerun = restarted.recover(
            "docs",
            &journal,
            |_| async { Ok(serde_json::json!({"again": true})) },
            |_| {},
        );
        assert_eq!(rerun, 1);
        assert_eq!(restarted.get(&done).unwrap().state, "succeeded");
        for _ in 0..200 {
            if restarted.get(&stuck).unwrap().state == "succeeded" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let again = restarted.get(&stuck).unwrap();
        assert_eq!(again.state, "succeeded");
        assert_eq!(again.summary, Some(serde_json::json!({"again": true})));
    }

    #[tokio::test]
    async fn records_name_their_own_file_and_a_job_that_keeps_stopping_the_server_ends() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(".jobs");
        std::fs::create_dir_all(&journal).unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(
            journal.join("evil.json"),
            format!(
                r#"{{"id":"{}","kind":"ingest","state":"queued"}}"#,
                outside.display()
            ),
        )
        .unwrap();
        let crashing = uuid::Uuid::new_v4().to_string();
        std::fs::write(
            journal.join(format!("{crashing}.json")),
            r#"{"kind":"ingest","state":"running","attempts":3}"#,
        )
        .unwrap();
        let jobs = Arc::new(Jobs::default());
        let rerun = jobs.recover(
            "docs",
            &journal,
            |_| async { Ok(serde_json::json!({})) },
            |_| {},
        );
        assert_eq!(rerun, 0);
        assert!(
            !journal.join("evil.json").exists(),
            "a record not named by a UUID goes"
        );
        assert!(!outside.with_extension("json").exists());
        let given_up = jobs.get(&crashing).unwrap();
        assert_eq!(given_up.state, "failed");
        assert!(given_up.error.unwrap().contains("3 times"));
    }
}
