//! A run's state, and the [`Checkpoint`] it is saved as: store, queued and
//! in-flight events, fan-in buffers, waiters.

use crate::event::{AnyEvent, EventRegistry};
use ragloom_core::error::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A step parked in [`Context::wait_for_event`](super::Context::wait_for_event).
#[derive(Clone, Debug)]
pub(crate) struct Waiter {
    pub(crate) id: String,
    pub(crate) step: String,
    pub(crate) event: AnyEvent,
    pub(crate) waiting_for: String,
    /// The parked step run's work item: it runs again under the same one.
    pub(crate) work: u64,
}

/// One delivery of an event to a step. Its id stays with it through
/// retries, parking and resumes, so what a step run did can be told apart
/// from what another run of the same step with an equal event did.
#[derive(Clone, Debug)]
pub(crate) struct WorkItem {
    pub(crate) id: u64,
    pub(crate) event: AnyEvent,
}

/// An event in a fan-in buffer: the work item that put it there, and the
/// running work item whose completed set holds it (removed when that run
/// succeeds, put back when it fails or the run is resumed).
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub(crate) work: u64,
    pub(crate) event: AnyEvent,
    pub(crate) taken_by: Option<u64>,
}

#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) run_id: String,
    pub(crate) store: Map<String, Value>,
    pub(crate) queues: HashMap<String, VecDeque<WorkItem>>,
    /// Events being handled, by work item: (step, event).
    pub(crate) in_progress: HashMap<u64, (String, AnyEvent)>,
    pub(crate) collected: HashMap<String, Vec<Held>>,
    /// Events a running step sent, by work item: routed when it succeeds,
    /// dropped when it fails, parks or is retried (so neither a retry nor a
    /// resume sends them twice).
    pub(crate) pending_sends: HashMap<u64, Vec<(AnyEvent, Option<String>)>>,
    /// The last work item id given out.
    pub(crate) next_work: u64,
    /// Step runs that called `wait_for_event` and were told to park, by work
    /// item, with the waiter id (the answer may come before the run returns).
    pub(crate) parking: HashMap<u64, String>,
    pub(crate) waiters: Vec<Waiter>,
    pub(crate) resolved: HashMap<String, AnyEvent>,
    pub(crate) result: Option<Value>,
    pub(crate) steps_done: u64,
    /// Answers each running task has read, dropped when it succeeds.
    pub(crate) answers_read: HashMap<u64, Vec<String>>,
    /// The run loop has stopped.
    pub(crate) ended: bool,
}

/// The checkpoint format this release writes and reads.
pub const CHECKPOINT_VERSION: u32 = 2;

/// A run as saved after each step: enough to resume it in another process.
/// Events are stored as `{"type": name, "value": fields}`, each with the id
/// of its work item (one delivery to one step).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The format's version ([`CHECKPOINT_VERSION`]).
    pub version: u32,
    /// The workflow's name.
    pub workflow: String,
    /// The run's id.
    pub run_id: String,
    /// Step runs finished so far.
    pub steps_done: u64,
    /// The last work item id given out.
    pub next_work_item: u64,
    /// The context's store.
    pub store: Map<String, Value>,
    /// Events waiting for a worker, by step.
    pub queued: BTreeMap<String, Vec<WorkItemCheckpoint>>,
    /// Events a step was handling when the checkpoint was written, by step;
    /// a resumed run hands them to their step again (at least once). What
    /// those runs had sent is not in the checkpoint, and what they had
    /// collected is back in its buffer, so the second run does not repeat it.
    pub in_progress: BTreeMap<String, Vec<WorkItemCheckpoint>>,
    /// Fan-in buffers ([`Context::collect_events`](super::Context::collect_events)).
    pub collected: BTreeMap<String, Vec<WorkItemCheckpoint>>,
    /// Steps waiting for an event.
    pub waiters: Vec<WaiterCheckpoint>,
    /// Events that arrived for a waiter whose step has not run again yet.
    pub resolved: BTreeMap<String, Value>,
    /// The run's result, once it has one.
    pub result: Option<Value>,
}

/// A waiter as checkpointed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaiterCheckpoint {
    /// The waiter's id.
    pub id: String,
    /// The waiting step.
    pub step: String,
    /// The event the step was given (it runs again with it).
    pub event: Value,
    /// The name of the event type waited for.
    pub waiting_for: String,
    /// The parked step run's work item.
    pub work_item: u64,
}

/// An event with the work item it belongs to, as checkpointed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkItemCheckpoint {
    /// The work item's id.
    pub work_item: u64,
    /// The event.
    pub event: Value,
}

impl RunState {
    pub(crate) fn checkpoint(&self, workflow: &str) -> Result<Checkpoint> {
        let item = |work_item: u64, ev: &AnyEvent| -> Result<WorkItemCheckpoint> {
            Ok(WorkItemCheckpoint {
                work_item,
                event: ev.to_json()?,
            })
        };
        let mut queued = BTreeMap::new();
        for (step, q) in &self.queues {
            if !q.is_empty() {
                let items = q
                    .iter()
                    .map(|w| item(w.id, &w.event))
                    .collect::<Result<_>>()?;
                queued.insert(step.clone(), items);
            }
        }
        let mut tasks: Vec<_> = self.in_progress.iter().collect();
        tasks.sort_by_key(|(id, _)| **id);
        let mut in_progress: BTreeMap<String, Vec<WorkItemCheckpoint>> = BTreeMap::new();
        for (id, (step, ev)) in tasks {
            in_progress
                .entry(step.clone())
                .or_default()
                .push(item(*id, ev)?);
        }
        // A set taken by a run still in progress is saved as not taken: that
        // run starts again on resume and takes it again.
        let mut collected = BTreeMap::new();
        for (k, held) in &self.collected {
            if !held.is_empty() {
                let items = held
                    .iter()
                    .map(|h| item(h.work, &h.event))
                    .collect::<Result<_>>()?;
                collected.insert(k.clone(), items);
            }
        }
        let waiters = self
            .waiters
            .iter()
            .map(|w| {
                Ok(WaiterCheckpoint {
                    id: w.id.clone(),
                    step: w.step.clone(),
                    event: w.event.to_json()?,
                    waiting_for: w.waiting_for.clone(),
                    work_item: w.work,
                })
            })
            .collect::<Result<_>>()?;
        let resolved = self
            .resolved
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.to_json()?)))
            .collect::<Result<_>>()?;
        Ok(Checkpoint {
            version: CHECKPOINT_VERSION,
            workflow: workflow.to_string(),
            run_id: self.run_id.clone(),
            steps_done: self.steps_done,
            next_work_item: self.next_work,
            store: self.store.clone(),
            queued,
            in_progress,
            collected,
            waiters,
            resolved,
            result: self.result.clone(),
        })
    }

    /// Queues `ev` for `step` as a new work item.
    pub(crate) fn enqueue(&mut self, step: &str, ev: AnyEvent) {
        self.next_work += 1;
        let id = self.next_work;
        self.requeue(step, id, ev);
    }

    /// Queues `ev` for `step` under an existing work item (a parked run woken).
    pub(crate) fn requeue(&mut self, step: &str, id: u64, event: AnyEvent) {
        self.queues
            .entry(step.to_string())
            .or_default()
            .push_back(WorkItem { id, event });
    }

    /// Forgets what the run of work item `id` did that only counts if it
    /// succeeds: its sends, and the fan-in sets it took.
    pub(crate) fn reset_work(&mut self, id: u64) {
        self.pending_sends.remove(&id);
        self.parking.remove(&id);
        for held in self.collected.values_mut() {
            for h in held.iter_mut().filter(|h| h.taken_by == Some(id)) {
                h.taken_by = None;
            }
        }
    }

    /// The state a checkpoint describes; events in progress go back to the
    /// front of their step's queue.
    pub(crate) fn restore(cp: &Checkpoint, registry: &EventRegistry) -> Result<Self> {
        if cp.version != CHECKPOINT_VERSION {
            return Err(ragloom_core::error::Error::Workflow(format!(
                "checkpoint version {} cannot be read; this release reads version {CHECKPOINT_VERSION}",
                cp.version
            )));
        }
        let mut state = Self {
            run_id: cp.run_id.clone(),
            store: cp.store.clone(),
            result: cp.result.clone(),
            steps_done: cp.steps_done,
            next_work: cp.next_work_item,
            ..Self::default()
        };
        // Events in progress go first: they were taken before those queued.
        // One that also has a waiter was about to park: its waiter runs it
        // again when the answer comes, so it is not queued twice.
        let parked: Vec<u64> = cp.waiters.iter().map(|w| w.work_item).collect();
        for (step, items) in cp.in_progress.iter().chain(&cp.queued) {
            for item in items {
                if cp.in_progress.get(step).is_some_and(|v| v.contains(item))
                    && parked.contains(&item.work_item)
                {
                    continue;
                }
                state.requeue(step, item.work_item, registry.decode(&item.event)?);
                state.next_work = state.next_work.max(item.work_item);
            }
        }
        for (k, items) in &cp.collected {
            let held = items
                .iter()
                .map(|i| {
                    Ok(Held {
                        work: i.work_item,
                        event: registry.decode(&i.event)?,
                        taken_by: None,
                    })
                })
                .collect::<Result<_>>()?;
            state.collected.insert(k.clone(), held);
        }
        state.waiters = cp
            .waiters
            .iter()
            .map(|w| {
                Ok(Waiter {
                    id: w.id.clone(),
                    step: w.step.clone(),
                    event: registry.decode(&w.event)?,
                    waiting_for: w.waiting_for.clone(),
                    work: w.work_item,
                })
            })
            .collect::<Result<_>>()?;
        state.next_work = state
            .waiters
            .iter()
            .map(|w| w.work)
            .fold(state.next_work, u64::max);
        state.resolved = cp
            .resolved
            .iter()
            .map(|(k, v)| Ok((k.clone(), registry.decode(v)?)))
            .collect::<Result<_>>()?;
        Ok(state)
    }
}
