//! Where an event goes: the steps that accept each type and the events the
//! workflow knows, which is all that sending an event needs of a workflow.

use crate::event::{AnyEvent, EventRegistry, EventType, InputRequiredEvent, StopEvent};
use crate::state::RunState;
use ragloom_core::error::{Error, Result};

/// A workflow's routing table, built once by `WorkflowBuilder::build`.
pub(crate) struct Routes {
    pub(crate) name: String,
    /// Each step's name and the events it accepts, in the order steps were added.
    pub(crate) steps: Vec<(String, Vec<EventType>)>,
    pub(crate) registry: EventRegistry,
    /// Whether some step accepts an event that comes from outside the steps:
    /// a run with nothing to do may still be waiting for the caller.
    pub(crate) outside_inputs: bool,
}

impl Routes {
    /// Routes `ev`: a `StopEvent` ends the run; an event for `target` goes to
    /// that step only; otherwise a step waiting for it takes it, else every step
    /// that accepts it gets it.
    pub(crate) fn dispatch(
        &self,
        state: &mut RunState,
        ev: AnyEvent,
        target: Option<&str>,
    ) -> Result<()> {
        if let Some(stop) = ev.downcast_ref::<StopEvent>() {
            state.result.get_or_insert_with(|| stop.result.clone());
            return Ok(());
        }
        if let Some(step) = target {
            self.check_route(&ev, Some(step))?;
            state.enqueue(step, ev);
            return Ok(());
        }
        let name = ev.name();
        // Every step waiting for it wakes, and runs again with its own event...
        let (woken, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut state.waiters)
            .into_iter()
            .partition(|w| w.waiting_for == name);
        state.waiters = waiting;
        let mut taken = !woken.is_empty();
        let woken_steps: Vec<String> = woken.iter().map(|w| w.step.clone()).collect();
        for w in woken {
            state.resolved.insert(w.id, ev.clone());
            state.requeue(&w.step, w.work, w.event);
        }
        // ... and every other step that accepts it gets it.
        for (step, _) in self
            .steps
            .iter()
            .filter(|(_, accepts)| accepts.iter().any(|t| t.matches(&ev)))
        {
            if woken_steps.contains(step) {
                continue;
            }
            state.enqueue(step, ev.clone());
            taken = true;
        }
        if taken || ev.is::<InputRequiredEvent>() {
            Ok(())
        } else {
            // An unknown type is named as such; a known one nobody takes now is not taken.
            self.check_route(&ev, None)?;
            Err(Error::Workflow(format!("no step accepts {name}")))
        }
    }

    /// Checks that `ev` can be routed as `dispatch` would route it, without
    /// routing it: for a send held until its step run succeeds.
    pub(crate) fn check_route(&self, ev: &AnyEvent, target: Option<&str>) -> Result<()> {
        if ev.is::<StopEvent>() {
            return Ok(());
        }
        match target {
            Some(step) => {
                let (_, accepts) = self
                    .steps
                    .iter()
                    .find(|(name, _)| name == step)
                    .ok_or_else(|| Error::Workflow(format!("there is no step `{step}`")))?;
                if accepts.iter().any(|t| t.matches(ev)) {
                    Ok(())
                } else {
                    Err(Error::Workflow(format!(
                        "step `{step}` does not accept {}",
                        ev.name()
                    )))
                }
            }
            None if self.registry.get(&ev.name()).is_some() => Ok(()),
            None => Err(Error::Workflow(format!(
                "{} is not an event of this workflow; declare it with WorkflowBuilder::event",
                ev.name()
            ))),
        }
    }
}
