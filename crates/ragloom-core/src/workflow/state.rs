//! A run's state, and the [`Checkpoint`] it is saved as: store, queued and
//! in-flight events, fan-in buffers, waiters.

use super::event::{AnyEvent, EventRegistry};
use crate::error::Result;
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
}

#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) run_id: String,
    pub(crate) store: Map<String, Value>,
    pub(crate) queues: HashMap<String, VecDeque<AnyEvent>>,
    /// Events being handled, by task: (step, event).
    pub(crate) in_progress: HashMap<u64, (String, AnyEvent)>,
    pub(crate) collected: HashMap<String, Vec<AnyEvent>>,
    pub(crate) waiters: Vec<Waiter>,
    pub(crate) resolved: HashMap<String, AnyEvent>,
    pub(crate) result: Option<Value>,
    pub(crate) steps_done: u64,
    /// Answers each running task has read, dropped when it succeeds.
    pub(crate) answers_read: HashMap<u64, Vec<String>>,
    /// The run loop has stopped.
    pub(crate) ended: bool,
}

/// A run as saved after each step: enough to resume it in another process.
/// Events are stored as `{"type": name, "value": fields}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The format's version (1).
    pub version: u32,
    /// The workflow's name.
    pub workflow: String,
    /// The run's id.
    pub run_id: String,
    /// Step runs finished so far.
    pub steps_done: u64,
    /// The context's store.
    pub store: Map<String, Value>,
    /// Events waiting for a worker, by step.
    pub queued: BTreeMap<String, Vec<Value>>,
    /// Events a step was handling when the checkpoint was written, by step;
    /// a resumed run hands them to their step again (at least once).
    pub in_progress: BTreeMap<String, Vec<Value>>,
    /// Fan-in buffers ([`Context::collect_events`](super::Context::collect_events)).
    pub collected: BTreeMap<String, Vec<Value>>,
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
}

fn events_json(events: &[AnyEvent]) -> Result<Vec<Value>> {
    events.iter().map(AnyEvent::to_json).collect()
}

impl RunState {
    pub(crate) fn checkpoint(&self, workflow: &str) -> Result<Checkpoint> {
        let mut queued = BTreeMap::new();
        for (step, q) in &self.queues {
            if !q.is_empty() {
                let events: Vec<AnyEvent> = q.iter().cloned().collect();
                queued.insert(step.clone(), events_json(&events)?);
            }
        }
        let mut tasks: Vec<_> = self.in_progress.iter().collect();
        tasks.sort_by_key(|(id, _)| **id);
        let mut in_progress: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for (_, (step, ev)) in tasks {
            in_progress
                .entry(step.clone())
                .or_default()
                .push(ev.to_json()?);
        }
        let mut collected = BTreeMap::new();
        for (k, v) in &self.collected {
            if !v.is_empty() {
                collected.insert(k.clone(), events_json(v)?);
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
                })
            })
            .collect::<Result<_>>()?;
        let resolved = self
            .resolved
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.to_json()?)))
            .collect::<Result<_>>()?;
        Ok(Checkpoint {
            version: 1,
            workflow: workflow.to_string(),
            run_id: self.run_id.clone(),
            steps_done: self.steps_done,
            store: self.store.clone(),
            queued,
            in_progress,
            collected,
            waiters,
            resolved,
            result: self.result.clone(),
        })
    }

    /// The state a checkpoint describes; events in progress go back to the
    /// front of their step's queue.
    pub(crate) fn restore(cp: &Checkpoint, registry: &EventRegistry) -> Result<Self> {
        let decode_all = |v: &[Value]| -> Result<Vec<AnyEvent>> {
            v.iter().map(|e| registry.decode(e)).collect()
        };
        let mut queues: HashMap<String, VecDeque<AnyEvent>> = HashMap::new();
        for (step, events) in &cp.in_progress {
            queues
                .entry(step.clone())
                .or_default()
                .extend(decode_all(events)?);
        }
        for (step, events) in &cp.queued {
            queues
                .entry(step.clone())
                .or_default()
                .extend(decode_all(events)?);
        }
        let mut collected = HashMap::new();
        for (k, v) in &cp.collected {
            collected.insert(k.clone(), decode_all(v)?);
        }
        let waiters = cp
            .waiters
            .iter()
            .map(|w| {
                Ok(Waiter {
                    id: w.id.clone(),
                    step: w.step.clone(),
                    event: registry.decode(&w.event)?,
                    waiting_for: w.waiting_for.clone(),
                })
            })
            .collect::<Result<_>>()?;
        let resolved = cp
            .resolved
            .iter()
            .map(|(k, v)| Ok((k.clone(), registry.decode(v)?)))
            .collect::<Result<_>>()?;
        Ok(Self {
            run_id: cp.run_id.clone(),
            store: cp.store.clone(),
            queues,
            in_progress: HashMap::new(),
            collected,
            waiters,
            resolved,
            result: cp.result.clone(),
            steps_done: cp.steps_done,
            answers_read: HashMap::new(),
            ended: false,
        })
    }
}
