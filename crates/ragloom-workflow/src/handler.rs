//! [`WorkflowHandler`]: a run in progress. Read its events, send it events,
//! cancel it, checkpoint it, or await its result.

use crate::context::{Context, Shared};
use crate::event::{AnyEvent, StopEvent};
use crate::run::{WorkflowInner, run_loop};
use crate::state::{Checkpoint, RunState};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use ragloom_core::error::{Error, Result};
use serde_json::Value;
use std::future::IntoFuture;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

struct CloseStream(Arc<Shared>);

impl Drop for CloseStream {
    fn drop(&mut self) {
        self.0.state().ended = true;
        self.0.close_stream();
    }
}

/// A run in progress, from [`Workflow::start`](crate::Workflow::start) or
/// [`Workflow::resume`](crate::Workflow::resume).
/// `.await` it for the result.
#[derive(Debug)]
pub struct WorkflowHandler {
    ctx: Context,
    events: Option<mpsc::UnboundedReceiver<AnyEvent>>,
    task: JoinHandle<Result<Value>>,
}

impl WorkflowHandler {
    pub(crate) fn start(
        wf: Arc<WorkflowInner>,
        start: Option<AnyEvent>,
        resume: Option<&Checkpoint>,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut failed = None;
        let state = match resume {
            Some(cp) => RunState::restore(cp, &wf.routes.registry).unwrap_or_else(|e| {
                failed = Some(e);
                RunState::default()
            }),
            None => RunState {
                run_id: uuid::Uuid::new_v4().to_string(),
                ..RunState::default()
            },
        };
        let shared = Arc::new(Shared {
            routes: wf.routes.clone(),
            state: Mutex::new(state),
            wake: Notify::new(),
            stream: Mutex::new(Some(tx)),
            edit_turn: Mutex::new(()),
            abort: std::sync::OnceLock::new(),
        });
        if let (Some(ev), None) = (start, &failed) {
            let mut st = shared.state();
            if let Err(e) = wf.routes.dispatch(&mut st, ev, None) {
                failed = Some(e);
            }
        }
        let timeout = wf.timeout;
        let task_shared = shared.clone();
        // Ends the caller's stream however the run ends: made before the
        // task is spawned, so a run cancelled before it first runs ends it too.
        let guard = CloseStream(task_shared.clone());
        let task = tokio::spawn(async move {
            if let Some(e) = failed {
                return Err(e);
            }
            let run = run_loop(wf, task_shared.clone());
            let out = match timeout {
                Some(limit) => tokio::time::timeout(limit, run).await.unwrap_or_else(|_| {
                    let mut running: Vec<String> = task_shared
                        .state()
                        .in_progress
                        .values()
                        .map(|(step, _)| step.clone())
                        .collect();
                    running.sort();
                    running.dedup();
                    let running = match running.is_empty() {
                        true => "No steps active".to_string(),
                        false => format!("Currently active steps: {}", running.join(", ")),
                    };
                    Err(Error::Workflow(format!(
                        "Operation timed out after {:?} seconds. {running}",
                        limit.as_secs_f64()
                    )))
                }),
                None => run.await,
            };
            if let Ok(result) = &out {
                task_shared.send_to_stream(AnyEvent::new(StopEvent {
                    result: result.clone(),
                }));
            }
            drop(guard);
            out
        });
        let _ = shared.abort.set(task.abort_handle());
        Self {
            ctx: Context {
                shared,
                current: None,
            },
            events: Some(rx),
            task,
        }
    }

    /// The events steps write to the stream, in order, then the `StopEvent`;
    /// the stream ends when the run does. Can be taken once.
    pub fn stream_events(&mut self) -> BoxStream<'static, AnyEvent> {
        let rx = self.events.take();
        Box::pin(futures::stream::unfold(rx, |rx| async move {
            let mut rx = rx?;
            let ev = rx.recv().await?;
            Some((ev, Some(rx)))
        }))
    }

    /// Sends `ev` into the run (e.g. a `HumanResponseEvent` for a waiting step).
    pub fn send_event(&self, ev: impl Into<AnyEvent>) -> Result<()> {
        self.ctx.send_event(ev, None)
    }

    /// The run's context (its store, its run id).
    pub fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// The run's state now, as a checkpoint would save it.
    pub fn checkpoint(&self) -> Result<Checkpoint> {
        self.ctx
            .shared
            .state()
            .checkpoint(&self.ctx.shared.routes.name)
    }

    /// Stops the run: running steps are dropped, and awaiting the handler
    /// gives an error saying the run was cancelled.
    pub fn cancel_run(&self) {
        self.task.abort();
    }

    /// Whether the run has ended.
    pub fn is_done(&self) -> bool {
        self.task.is_finished()
    }
}

impl IntoFuture for WorkflowHandler {
    type Output = Result<Value>;
    type IntoFuture = BoxFuture<'static, Result<Value>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            match self.task.await {
                Ok(out) => out,
                Err(e) if e.is_cancelled() => Err(Error::Workflow("the run was cancelled".into())),
                Err(e) => Err(Error::Workflow(format!("the run panicked: {e}"))),
            }
        })
    }
}
