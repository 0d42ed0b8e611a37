//! The [`Context`] a run's steps share: its store, sending events, writing to
//! the caller's stream, collecting several events, and waiting for a person.

use crate::event::{AnyEvent, Event, EventType};
use crate::routes::Routes;
use crate::state::{Held, RunState, Waiter};
use ragloom_core::error::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{Notify, mpsc};

pub(crate) struct Shared {
    pub(crate) routes: Arc<Routes>,
    pub(crate) state: Mutex<RunState>,
    /// Wakes the run loop: an event was sent from outside, or the run was cancelled.
    pub(crate) wake: Notify,
    /// The caller's stream; `None` once the run has ended, which ends the stream.
    pub(crate) stream: Mutex<Option<mpsc::UnboundedSender<AnyEvent>>>,
    /// One `Store::edit` at a time, without holding the state's lock.
    pub(crate) edit_turn: Mutex<()>,
    /// Stops the run's task (set once the task is spawned).
    pub(crate) abort: std::sync::OnceLock<tokio::task::AbortHandle>,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, RunState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn send_to_stream(&self, ev: AnyEvent) {
        let stream = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = stream.as_ref() {
            // A caller that stopped reading is not the run's failure.
            let _ = tx.send(ev);
        }
    }

    pub(crate) fn close_stream(&self) {
        self.stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// The step run a context was given to.
#[derive(Clone)]
pub(crate) struct Current {
    pub(crate) step: String,
    pub(crate) event: AnyEvent,
    pub(crate) task: u64,
}

/// What the steps of one run share. Cheap to clone; each step gets one that
/// knows which step and event it is running for.
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Arc<Shared>,
    /// The step running, the event it was given and its task, when called from a step.
    pub(crate) current: Option<Current>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("workflow", &self.shared.routes.name)
            .field("step", &self.current.as_ref().map(|c| &c.step))
            .finish()
    }
}

impl Context {
    /// The run's shared store: JSON values by key, checkpointed with the run.
    pub fn store(&self) -> Store<'_> {
        Store { ctx: self }
    }

    /// Sends `ev` to every step that accepts it, or to `step` only. The event
    /// must be one the workflow knows (a step's output or a registered event).
    /// From outside the steps, an event no step or waiter takes is logged
    /// and dropped (as LlamaIndex's `UnhandledEvent`); after the run has
    /// ended, sending is an error.
    pub fn send_event(&self, ev: impl Into<AnyEvent>, step: Option<&str>) -> Result<()> {
        let ev = ev.into();
        {
            let mut state = self.shared.state();
            if state.ended {
                return Err(Error::Workflow(format!(
                    "the run has ended; {} was not delivered",
                    ev.name()
                )));
            }
            if let Some(current) = &self.current {
                // From a step: routed when the step run succeeds, so a failed
                // attempt, a parked step or a resumed one does not send twice.
                self.shared.routes.check_route(&ev, step)?;
                state
                    .pending_sends
                    .entry(current.task)
                    .or_default()
                    .push((ev, step.map(str::to_string)));
                return Ok(());
            }
            match self.shared.routes.dispatch(&mut state, ev, step) {
                Err(e) if step.is_none() => {
                    tracing::warn!(error = %e, "an event sent into the run was not handled");
                }
                other => other?,
            }
        }
        self.shared.wake.notify_one();
        Ok(())
    }

    /// Hands `ev` to the caller reading `WorkflowHandler::stream_events`.
    pub fn write_event_to_stream(&self, ev: impl Into<AnyEvent>) {
        self.shared.send_to_stream(ev.into());
    }

    /// Fan-in: buffers `ev` and, once the buffer holds one event for each
    /// entry of `expected` (a type may repeat), returns them in that order
    /// (first come first within a type) and empties the buffer; until then
    /// `None`. An event of a type `expected` lacks is dropped. The buffer is
    /// the calling step's.
    pub fn collect_events(
        &self,
        ev: impl Into<AnyEvent>,
        expected: &[EventType],
    ) -> Option<Vec<AnyEvent>> {
        let buffer = self.current_step().unwrap_or("").to_string();
        self.collect_events_in(&buffer, ev, expected)
    }

    /// [`collect_events`](Self::collect_events) with a named buffer.
    pub fn collect_events_in(
        &self,
        buffer: &str,
        ev: impl Into<AnyEvent>,
        expected: &[EventType],
    ) -> Option<Vec<AnyEvent>> {
        let ev = ev.into();
        if expected.is_empty() {
            return Some(Vec::new());
        }
        if !expected.iter().any(|t| t.matches(&ev)) {
            // As LlamaIndex: an event the set does not need is not kept.
            return None;
        }
        let work = self.current.as_ref().map(|c| c.task);
        let mut state = self.shared.state();
        let held = state.collected.entry(buffer.to_string()).or_default();
        // A step run that starts again (a retry, a woken or resumed step)
        // finds its event already held and does not add it twice.
        let name = ev.name();
        let again =
            work.is_some_and(|w| held.iter().any(|h| h.work == w && h.event.name() == name));
        // As LlamaIndex: an event is kept only while its type is still needed.
        let needed = expected.iter().filter(|t| t.matches(&ev)).count();
        let have = held
            .iter()
            .filter(|h| h.taken_by.is_none() && h.event.name() == name)
            .count();
        if !again && have < needed {
            held.push(Held {
                work: work.unwrap_or(0),
                event: ev,
                taken_by: None,
            });
        }
        let mut chosen: Vec<usize> = Vec::with_capacity(expected.len());
        for ty in expected {
            let i = (0..held.len()).find(|&i| {
                !chosen.contains(&i) && held[i].taken_by.is_none() && ty.matches(&held[i].event)
            })?;
            chosen.push(i);
        }
        let out = chosen.iter().map(|&i| held[i].event.clone()).collect();
        // The set is complete: the buffer starts again, as LlamaIndex's does.
        // From a step, the set stays held for that run until it succeeds.
        match work {
            Some(w) => chosen.iter().for_each(|&i| held[i].taken_by = Some(w)),
            None => {
                let mut i = 0;
                held.retain(|_| {
                    i += 1;
                    !chosen.contains(&(i - 1))
                });
            }
        }
        Some(out)
    }

    /// Fan-in of one type: `n` events of `E`, or `None` until they are all here.
    pub fn collect<E: Event>(&self, ev: E, n: usize) -> Option<Vec<E>> {
        let expected = vec![EventType::of::<E>(); n];
        let events = self.collect_events(ev, &expected)?;
        Some(events.iter().filter_map(AnyEvent::downcast).collect())
    }

    /// Waits for an `E` sent into the run (human in the loop). The first call
    /// writes `waiter_event` to the stream and parks the step: it returns
    /// [`Error::WaitingForEvent`], which the step returns with `?`. When an
    /// `E` arrives, the step runs again with the same event and this call
    /// returns it. Because nothing is held in memory while waiting, a run
    /// parked here can be checkpointed and resumed in another process.
    ///
    /// `waiter_id` tells apart several waits of one step run; by default it
    /// is the step and its event.
    pub fn wait_for_event<E: Event>(
        &self,
        waiter_event: Option<AnyEvent>,
        waiter_id: Option<&str>,
    ) -> Result<E> {
        let Current { step, event, task } = self.current.clone().ok_or_else(|| {
            Error::Workflow("wait_for_event is only for steps of a running workflow".into())
        })?;
        let ty = EventType::of::<E>();
        let id = match waiter_id {
            Some(id) => id.to_string(),
            None => default_waiter_id(&step, &event, ty.name(), task)?,
        };
        let mut state = self.shared.state();
        if let Some(got) = state.resolved.get(&id).cloned() {
            // Kept until this step run succeeds: a retry, or a resume from a
            // checkpoint written meanwhile, still finds the answer.
            state.answers_read.entry(task).or_default().push(id.clone());
            return got.downcast::<E>().ok_or_else(|| {
                Error::Workflow(format!(
                    "waiter `{id}` expected {} and got {}",
                    ty.name(),
                    got.name()
                ))
            });
        }
        if !state.waiters.iter().any(|w| w.id == id) {
            state.waiters.push(Waiter {
                id: id.clone(),
                step,
                event,
                waiting_for: ty.name().to_string(),
                work: task,
            });
            drop(state);
            if let Some(ev) = waiter_event {
                self.write_event_to_stream(ev);
            }
        }
        self.shared.state().parking.insert(task, id.clone());
        Err(Error::WaitingForEvent(id))
    }

    /// The waiter the current step run registered and is parked on, if any:
    /// a tool that turned the parking into an error output still parks the
    /// step, so a step that calls tools returns
    /// `Error::WaitingForEvent(waiter)` when this is `Some`.
    pub fn parked_waiter(&self) -> Option<String> {
        let task = self.current.as_ref()?.task;
        self.shared.state().parking.get(&task).cloned()
    }

    /// Stops the run, as [`WorkflowHandler::cancel_run`](super::WorkflowHandler::cancel_run)
    /// does: for whoever holds only the context (a server whose client went away).
    pub fn cancel_run(&self) {
        if let Some(abort) = self.shared.abort.get() {
            abort.abort();
        }
    }

    /// The step this context was given to, if any.
    pub fn current_step(&self) -> Option<&str> {
        self.current.as_ref().map(|c| c.step.as_str())
    }

    /// The run's id (the key its checkpoints are saved under).
    pub fn run_id(&self) -> String {
        self.shared.state().run_id.clone()
    }
}

/// The step, the type waited for, a hash of the step's event, and the work
/// item: two runs of one step with equal events wait apart (LlamaIndex's
/// default id has its work item id too).
fn default_waiter_id(step: &str, event: &AnyEvent, waiting_for: &str, work: u64) -> Result<String> {
    let json = serde_json::to_string(&event.to_json()?)?;
    let digest = Sha256::digest(json.as_bytes());
    let short = ragloom_core::utils::hex(&digest[..8]);
    Ok(format!("{step}:{waiting_for}:{short}:{work}"))
}

/// The run's key-value store ([`Context::store`]).
#[derive(Debug)]
pub struct Store<'a> {
    ctx: &'a Context,
}

impl Store<'_> {
    /// The value at `key` as a `T`, or `None` when unset.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let state = self.ctx.shared.state();
        match state.store.get(key) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|e| Error::invalid(format!("store key `{key}`"), e)),
        }
    }

    /// The value at `key`, or `default` when unset.
    pub fn get_or<T: DeserializeOwned>(&self, key: &str, default: T) -> Result<T> {
        Ok(self.get(key)?.unwrap_or(default))
    }

    /// Sets `key` to `value`.
    pub fn set(&self, key: &str, value: impl Serialize) -> Result<()> {
        let value = serde_json::to_value(value)?;
        self.ctx.shared.state().store.insert(key.to_string(), value);
        Ok(())
    }

    /// Changes the store in one step, with no other step in between (what
    /// Python's `async with ctx.store.edit_state()` is for). The closure
    /// edits a copy that replaces the store when it returns; it may read
    /// the context, but what it writes through the context is overwritten.
    pub fn edit<R>(&self, f: impl FnOnce(&mut Map<String, Value>) -> R) -> R {
        let shared = &self.ctx.shared;
        let _turn = shared
            .edit_turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut copy = shared.state().store.clone();
        let out = f(&mut copy);
        shared.state().store = copy;
        out
    }
}
