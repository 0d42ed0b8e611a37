//! The run loop: routes events to steps' queues, runs up to `num_workers`
//! of each step at once, retries, checkpoints after each step, ends on `StopEvent`.

use crate::checkpoint::Checkpointer;
use crate::context::{Context, Current, Shared};
use crate::event::{AnyEvent, InputRequiredEvent};
use crate::routes::Routes;
use crate::state::{Checkpoint, RunState};
use crate::step::StepSpec;
use ragloom_core::error::{Error, Result};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// What a run of a workflow needs: its routes, its steps' functions, its
/// timeout and where it checkpoints.
pub(crate) struct WorkflowInner {
    pub(crate) routes: Arc<Routes>,
    pub(crate) steps: Vec<StepSpec>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) checkpointer: Option<Arc<dyn Checkpointer>>,
}

/// One event through one step, with the step's retry policy.
async fn run_step(spec: StepSpec, ev: AnyEvent, ctx: Context) -> Result<Vec<AnyEvent>> {
    let started = Instant::now();
    let mut attempts = 0;
    loop {
        match (spec.run)(ev.clone(), ctx.clone()).await {
            Err(e) if !matches!(e, Error::WaitingForEvent(_)) => {
                attempts += 1;
                let delay = spec
                    .config
                    .retry_policy
                    .as_ref()
                    .and_then(|p| p.next(started.elapsed(), attempts, &e));
                match delay {
                    Some(d) => {
                        tracing::warn!(step = %spec.name, attempts, error = %e, "step failed; retrying");
                        // The failed attempt's sends and taken sets do not count.
                        if let Some(current) = &ctx.current {
                            ctx.shared.state().reset_work(current.task);
                        }
                        tokio::time::sleep(d).await;
                    }
                    None => return Err(e),
                }
            }
            done => return done,
        }
    }
}

/// The run's state as a checkpoint, only when there is a checkpointer to
/// take it: serialising every queued event after each step is not free.
fn snapshot(wf: &WorkflowInner, state: &RunState) -> Result<Option<Checkpoint>> {
    match wf.checkpointer {
        Some(_) => state.checkpoint(&wf.routes.name).map(Some),
        None => Ok(None),
    }
}

/// Writes `snapshot` to the workflow's checkpointer.
async fn save(wf: &WorkflowInner, snapshot: Option<Checkpoint>) -> Result<()> {
    match (&wf.checkpointer, snapshot) {
        (Some(cp), Some(snapshot)) => cp.save(&snapshot.run_id, &snapshot).await,
        _ => Ok(()),
    }
}

/// Routes what step `step` sent and returned, each event to its target step
/// or to whichever steps take it; an `InputRequiredEvent` for no one in
/// particular also goes to the caller's stream.
fn deliver(
    shared: &Shared,
    st: &mut RunState,
    step: &str,
    events: impl IntoIterator<Item = (AnyEvent, Option<String>)>,
) -> Result<()> {
    for (ev, target) in events {
        if target.is_none() && ev.is::<InputRequiredEvent>() {
            shared.send_to_stream(ev.clone());
        }
        shared
            .routes
            .dispatch(st, ev, target.as_deref())
            .map_err(|e| Error::Workflow(format!("after step `{step}`: {e}")))?;
    }
    Ok(())
}

/// Takes a finished step run's events into the state; the checkpoint to save.
fn complete(
    wf: &WorkflowInner,
    shared: &Shared,
    id: u64,
    out: Result<Vec<AnyEvent>>,
) -> Result<Option<Checkpoint>> {
    let mut st = shared.state();
    let step = st
        .in_progress
        .remove(&id)
        .map(|(s, _)| s)
        .unwrap_or_default();
    let answers = st.answers_read.remove(&id).unwrap_or_default();
    st.parking.remove(&id);
    match out {
        Ok(events) => {
            for answer in answers {
                st.resolved.remove(&answer);
            }
            st.steps_done += 1;
            // The sets this run took are spent now.
            for held in st.collected.values_mut() {
                held.retain(|h| h.taken_by != Some(id));
            }
            // A waiter this run left behind (a tool that swallowed the
            // parking) would wake a step run that has already finished.
            st.waiters.retain(|w| w.work != id);
            let sent = st.pending_sends.remove(&id).unwrap_or_default();
            let returned = events.into_iter().map(|ev| (ev, None));
            deliver(shared, &mut st, &step, sent.into_iter().chain(returned))?;
        }
        // Parked until its event arrives; the waiter is recorded. What it
        // sent goes out now (another step may be the one to answer it); the
        // sets it took go back, since it runs again from the top and takes them again.
        Err(Error::WaitingForEvent(_)) => {
            let sent = st.pending_sends.remove(&id).unwrap_or_default();
            st.reset_work(id);
            deliver(shared, &mut st, &step, sent)?;
        }
        Err(e) => return Err(Error::Workflow(format!("error in step `{step}`: {e}"))),
    }
    snapshot(wf, &st)
}

/// Runs until a `StopEvent`; the caller applies the timeout and cancellation.
pub(crate) async fn run_loop(wf: Arc<WorkflowInner>, shared: Arc<Shared>) -> Result<Value> {
    let mut tasks: JoinSet<(u64, Result<Vec<AnyEvent>>)> = JoinSet::new();
    {
        // The first checkpoint holds the start event (or what was resumed).
        let first = snapshot(&wf, &shared.state())?;
        save(&wf, first).await?;
    }
    loop {
        let finished = {
            let mut st = shared.state();
            match st.result.clone() {
                Some(result) => {
                    // Steps still running are dropped with the task set.
                    st.in_progress.clear();
                    Some((result, snapshot(&wf, &st)?))
                }
                None => None,
            }
        };
        if let Some((result, last)) = finished {
            save(&wf, last).await?;
            return Ok(result);
        }
        {
            let mut st = shared.state();
            for spec in &wf.steps {
                loop {
                    // Workers busy: the step's runs in progress (one source of truth).
                    let busy = st
                        .in_progress
                        .values()
                        .filter(|(s, _)| *s == spec.name)
                        .count();
                    if busy >= spec.config.num_workers {
                        break;
                    }
                    // A work item still running (a step that parks and is woken
                    // before its first run was collected) waits in the queue:
                    // one work item never runs twice at once.
                    let running = &st.in_progress;
                    let Some(at) = st
                        .queues
                        .get(&spec.name)
                        .and_then(|q| q.iter().position(|w| !running.contains_key(&w.id)))
                    else {
                        break;
                    };
                    let Some(item) = st.queues.get_mut(&spec.name).and_then(|q| q.remove(at))
                    else {
                        break;
                    };
                    let (id, ev) = (item.id, item.event);
                    st.in_progress.insert(id, (spec.name.clone(), ev.clone()));
                    let ctx = Context {
                        shared: shared.clone(),
                        current: Some(Current {
                            step: spec.name.clone(),
                            event: ev.clone(),
                            task: id,
                        }),
                    };
                    let fut = run_step(spec.clone(), ev, ctx);
                    tasks.spawn(async move { (id, fut.await) });
                }
            }
            // Idle: waiting for the caller is fine when a step waits, or when
            // a step accepts an event that comes from outside.
            if tasks.is_empty() && st.waiters.is_empty() && !wf.routes.outside_inputs {
                return Err(Error::Workflow(
                    "the run stopped without a result: no step is running, no event is queued \
                     and no step returned StopEvent"
                        .into(),
                ));
            }
        }
        tokio::select! {
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                let (id, out) = joined.map_err(|e| Error::Workflow(format!("a step panicked: {e}")))?;
                let done = complete(&wf, &shared, id, out)?;
                save(&wf, done).await?;
            }
            _ = shared.wake.notified() => {}
        }
    }
}
