//! [`Workflow`] and its builder: steps are added as async functions of an
//! event and the [`Context`]; `build` checks that every event flows somewhere.

use crate::checkpoint::Checkpointer;
use crate::context::Context;
use crate::event::{
    AnyEvent, Event, EventRegistry, EventType, HumanResponseEvent, InputRequiredEvent, StartEvent,
    StopEvent,
};
use crate::handler::WorkflowHandler;
use crate::routes::Routes;
use crate::run::WorkflowInner;
use crate::state::Checkpoint;
use crate::step::{StepConfig, StepOutput, StepSpec};
use ragloom_core::error::{Error, Result};
use ragloom_core::setters;
use std::collections::{BTreeSet, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// LlamaIndex's default run timeout: 45 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(45);

/// Steps that pass events, run by [`Workflow::run`]; cheap to clone.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ragloom_workflow::{Context, Event, StartEvent, StopEvent, Workflow};
///
/// #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
/// struct Drafted { text: String }
/// impl Event for Drafted {}
///
/// let wf = Workflow::builder("joke")
///     .step("draft", |ev: StartEvent, _ctx: Context| async move {
///         let topic: String = ev.get("topic")?;
///         Ok(Drafted { text: format!("a joke about {topic}") })
///     })
///     .step("polish", |ev: Drafted, _ctx: Context| async move {
///         Ok(StopEvent::new(ev.text.to_uppercase()))
///     })
///     .build()?;
/// let result = wf.run(StartEvent::new().with("topic", "ducks")).await?;
/// assert_eq!(result, "A JOKE ABOUT DUCKS");
/// # Ok::<(), ragloom_core::Error>(()) }).unwrap();
/// ```
#[derive(Clone)]
pub struct Workflow {
    pub(crate) inner: Arc<WorkflowInner>,
}

impl std::fmt::Debug for Workflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workflow")
            .field("name", &self.inner.routes.name)
            .field("steps", &self.inner.steps)
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

impl Workflow {
    /// A builder for the workflow `name` (the name checkpoints carry).
    pub fn builder(name: impl Into<String>) -> WorkflowBuilder {
        WorkflowBuilder {
            name: name.into(),
            steps: Vec::new(),
            external: vec![EventType::of::<HumanResponseEvent>()],
            timeout: Some(DEFAULT_TIMEOUT),
            checkpointer: None,
        }
    }

    /// The workflow's name.
    pub fn name(&self) -> &str {
        &self.inner.routes.name
    }

    /// Its steps.
    pub fn steps(&self) -> &[StepSpec] {
        &self.inner.steps
    }

    /// The event types it knows (and so can load from a checkpoint).
    pub fn registry(&self) -> &EventRegistry {
        &self.inner.routes.registry
    }

    /// Starts a run; the handler streams its events and resolves to the
    /// result. Must be called inside a Tokio runtime.
    pub fn start(&self, start: StartEvent) -> WorkflowHandler {
        WorkflowHandler::start(self.inner.clone(), Some(AnyEvent::new(start)), None)
    }

    /// Runs to the end and returns the [`StopEvent`]'s result.
    pub async fn run(&self, start: StartEvent) -> Result<serde_json::Value> {
        self.start(start).await
    }

    /// Resumes the run `checkpoint` describes: its store, queues, buffers and
    /// waiters. Events a step was handling when it was written are handled
    /// again, so a step may run twice for one event (at least once).
    pub fn resume(&self, checkpoint: &Checkpoint) -> Result<WorkflowHandler> {
        if checkpoint.workflow != self.inner.routes.name {
            return Err(Error::Workflow(format!(
                "the checkpoint is of workflow `{}`, not `{}`",
                checkpoint.workflow, self.inner.routes.name
            )));
        }
        Ok(WorkflowHandler::start(
            self.inner.clone(),
            None,
            Some(checkpoint),
        ))
    }

    /// Resumes the last checkpoint saved for `run_id` by the workflow's
    /// checkpointer.
    pub async fn resume_run(&self, run_id: &str) -> Result<WorkflowHandler> {
        let cp = self
            .inner
            .checkpointer
            .as_ref()
            .ok_or_else(|| Error::Workflow("this workflow has no checkpointer".into()))?
            .load(run_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no checkpoint for run `{run_id}`")))?;
        self.resume(&cp)
    }
}

/// Builds a [`Workflow`]; see [`Workflow::builder`].
pub struct WorkflowBuilder {
    name: String,
    steps: Vec<StepSpec>,
    external: Vec<EventType>,
    timeout: Option<Duration>,
    checkpointer: Option<Arc<dyn Checkpointer>>,
}

impl std::fmt::Debug for WorkflowBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowBuilder")
            .field("name", &self.name)
            .field("steps", &self.steps)
            .finish()
    }
}

impl WorkflowBuilder {
    /// Adds the step `name`, run for each event `E` with LlamaIndex's
    /// defaults (4 workers, no retries).
    pub fn step<E, O, F, Fut>(self, name: &str, f: F) -> Self
    where
        E: Event,
        O: StepOutput,
        F: Fn(E, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O>> + Send + 'static,
    {
        self.step_with(name, StepConfig::default(), f)
    }

    /// Adds the step `name` with its workers and retry policy.
    pub fn step_with<E, O, F, Fut>(self, name: &str, config: StepConfig, f: F) -> Self
    where
        E: Event,
        O: StepOutput,
        F: Fn(E, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O>> + Send + 'static,
    {
        let f = Arc::new(f);
        let step_name = name.to_string();
        self.step_any::<O, _, _>(name, vec![EventType::of::<E>()], config, move |ev, ctx| {
            let f = f.clone();
            let typed = ev.downcast::<E>();
            let step_name = step_name.clone();
            async move {
                let ev = typed.ok_or_else(|| {
                    Error::Workflow(format!(
                        "step `{step_name}` was given an event it does not accept"
                    ))
                })?;
                f(ev, ctx).await
            }
        })
    }

    /// Adds a step that accepts several event types (Python's `ev: A | B`).
    pub fn step_any<O, F, Fut>(
        mut self,
        name: &str,
        accepts: Vec<EventType>,
        config: StepConfig,
        f: F,
    ) -> Self
    where
        O: StepOutput,
        F: Fn(AnyEvent, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.steps.push(StepSpec {
            name: name.to_string(),
            accepts,
            emits: O::event_types(),
            config,
            run: Arc::new(move |ev, ctx| {
                let fut = f(ev, ctx);
                Box::pin(async move { fut.await.map(StepOutput::into_events) })
            }),
        });
        self
    }

    /// Declares that an `E` may come from outside the steps (sent into the
    /// run with `send_event`, or waited for), so validation counts it as
    /// produced and checkpoints can load it. `HumanResponseEvent` always is.
    pub fn event<E: Event>(mut self) -> Self {
        self.external.push(EventType::of::<E>());
        self
    }

    setters!(
        /// The whole run's time limit (default 45 s, as LlamaIndex); `None` for none.
        timeout => timeout: Option<Duration>,
        /// Saves the run's context after each step (see [`Checkpointer`]).
        checkpointer => checkpointer: Arc<dyn Checkpointer>,
    );

    /// Checks the steps and builds the workflow. Errors (with LlamaIndex's
    /// messages where it has the check): two steps or two event types with
    /// one name; no step for `StartEvent`; no step that returns `StopEvent`;
    /// a step that accepts `StopEvent`; an event accepted but never
    /// produced, or produced but never accepted; a step no event can reach;
    /// a step with no path to `StopEvent` or `InputRequiredEvent`.
    pub fn build(self) -> Result<Workflow> {
        let mut registry = EventRegistry::default();
        let mut names = HashSet::new();
        for s in &self.steps {
            if !names.insert(s.name.as_str()) {
                return Err(Error::Workflow(format!("two steps are named `{}`", s.name)));
            }
            for ty in s.accepts.iter().chain(&s.emits) {
                registry.register(ty.clone())?;
            }
        }
        for ty in [
            EventType::of::<StartEvent>(),
            EventType::of::<StopEvent>(),
            EventType::of::<InputRequiredEvent>(),
        ]
        .into_iter()
        .chain(self.external.iter().cloned())
        {
            registry.register(ty)?;
        }
        validate(&self.name, &self.steps, &self.external)?;
        let outside_inputs = self
            .steps
            .iter()
            .any(|s| s.accepts.iter().any(|t| self.external.contains(t)));
        Ok(Workflow {
            inner: Arc::new(WorkflowInner {
                routes: Arc::new(Routes {
                    name: self.name,
                    steps: self
                        .steps
                        .iter()
                        .map(|s| (s.name.clone(), s.accepts.clone()))
                        .collect(),
                    registry,
                    outside_inputs,
                }),
                steps: self.steps,
                timeout: self.timeout,
                checkpointer: self.checkpointer,
            }),
        })
    }
}

fn list(names: BTreeSet<String>) -> String {
    names.into_iter().collect::<Vec<_>>().join(", ")
}

/// LlamaIndex's checks, in its order and with its messages.
fn validate(name: &str, steps: &[StepSpec], external: &[EventType]) -> Result<()> {
    let start = EventType::of::<StartEvent>();
    let stop = EventType::of::<StopEvent>();
    // Events that end a path: the result, or a question to the caller.
    let terminal = [stop.clone(), EventType::of::<InputRequiredEvent>()];
    if !steps.iter().any(|s| s.accepts.contains(&start)) {
        return Err(Error::Workflow(format!(
            "At least one Event of type StartEvent must be received by any step. \
             (Workflow '{name}' has no step that accepts StartEvent.)"
        )));
    }
    if !steps.iter().any(|s| s.emits.contains(&stop)) {
        return Err(Error::Workflow(format!(
            "At least one Event of type StopEvent must be returned by any step. \
             (Workflow '{name}' has no step that returns StopEvent.)"
        )));
    }
    let accepting_stop: BTreeSet<String> = steps
        .iter()
        .filter(|s| s.accepts.contains(&stop))
        .map(|s| format!("'{}'", s.name))
        .collect();
    if !accepting_stop.is_empty() {
        let (noun, verb) = match accepting_stop.len() {
            1 => ("Step", "cannot"),
            _ => ("Steps", "cannot"),
        };
        return Err(Error::Workflow(format!(
            "{noun} {} {verb} accept StopEvent. StopEvent signals the end of the workflow. \
             Use a different Event type instead.",
            list(accepting_stop)
        )));
    }
    let produced: HashSet<&EventType> = steps.iter().flat_map(|s| &s.emits).collect();
    let consumed: HashSet<&EventType> = steps.iter().flat_map(|s| &s.accepts).collect();
    let never_produced: BTreeSet<String> = consumed
        .iter()
        .filter(|t| ***t != start && !external.contains(t) && !produced.contains(*t))
        .filter(|t| !terminal.contains(t))
        .map(|t| t.name().to_string())
        .collect();
    if !never_produced.is_empty() {
        return Err(Error::Workflow(format!(
            "The following events are consumed but never produced: {} \
             (declare events sent from outside the steps with WorkflowBuilder::event)",
            list(never_produced)
        )));
    }
    let never_consumed: BTreeSet<String> = produced
        .iter()
        .filter(|t| !terminal.contains(t) && !external.contains(t) && !consumed.contains(*t))
        .map(|t| t.name().to_string())
        .collect();
    if !never_consumed.is_empty() {
        return Err(Error::Workflow(format!(
            "The following events are produced but never consumed: {}",
            list(never_consumed)
        )));
    }
    let mut problems = Vec::new();
    // Forward from the start and the events that come from outside.
    let seeds = external.iter().cloned().chain([start]);
    let unreachable = unvisited(steps, seeds, |s| (&s.accepts, &s.emits));
    if !unreachable.is_empty() {
        problems.push(format!(
            "  - [reachability] Unreachable steps: {}\n    \
             Steps must be reachable from StartEvent or HumanResponseEvent.",
            list(unreachable)
        ));
    }
    // Backward from the events that end a path.
    let dead_ends = unvisited(steps, terminal, |s| (&s.emits, &s.accepts));
    if !dead_ends.is_empty() {
        problems.push(format!(
            "  - [dead_end] Dead-end steps: {}\n    \
             Steps must have a path to StopEvent or InputRequiredEvent.",
            list(dead_ends)
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Workflow(format!(
            "Graph validation failed:\n{}",
            problems.join("\n")
        )))
    }
}

/// The steps a walk from `seeds` never reaches; `sides` gives a step's
/// (entry, exit) event types, so the walk goes forward or backward.
fn unvisited(
    steps: &[StepSpec],
    seeds: impl IntoIterator<Item = EventType>,
    sides: impl Fn(&StepSpec) -> (&Vec<EventType>, &Vec<EventType>),
) -> BTreeSet<String> {
    let mut events: HashSet<EventType> = seeds.into_iter().collect();
    let mut visited: HashSet<&str> = HashSet::new();
    while let Some(s) = steps.iter().find(|s| {
        !visited.contains(s.name.as_str()) && sides(s).0.iter().any(|t| events.contains(t))
    }) {
        visited.insert(&s.name);
        events.extend(sides(s).1.iter().cloned());
    }
    steps
        .iter()
        .filter(|s| !visited.contains(s.name.as_str()))
        .map(|s| s.name.clone())
        .collect()
}
