//! Workflows: steps that pass typed events through a shared, checkpointed
//! [`Context`] — the layer LlamaIndex's newer agents are built on.
//!
//! A step is an async function of one event and the context that returns
//! the events to send on ([`StepOutput`]: none, one, or one of several kinds
//! declared with [`step_output!`]). A run starts with a [`StartEvent`] and
//! ends with the first [`StopEvent`]; [`WorkflowHandler`] streams what steps
//! write, takes events from outside, cancels, and checkpoints.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use ragloom_workflow::{Context, Event, EventType, StartEvent, StopEvent, Workflow};
//!
//! #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
//! struct Part { n: u32 }
//! impl Event for Part {}
//!
//! // Fan-out: one step sends three events; fan-in: another collects them.
//! let wf = Workflow::builder("sum")
//!     .step("split", |_: StartEvent, ctx: Context| async move {
//!         for n in 1..=3 {
//!             ctx.send_event(Part { n }, None)?;
//!         }
//!         Ok(None::<Part>)
//!     })
//!     .step("add", |ev: Part, ctx: Context| async move {
//!         Ok(ctx.collect(ev, 3).map(|parts| {
//!             StopEvent::new(parts.iter().map(|p| p.n).sum::<u32>())
//!         }))
//!     })
//!     .build()?;
//! assert_eq!(wf.run(StartEvent::new()).await?, 6);
//! # Ok::<(), ragloom_core::Error>(()) }).unwrap();
//! ```

#![warn(missing_docs)]

mod checkpoint;
mod context;
pub mod draw;
mod event;
mod handler;
mod routes;
mod run;
mod state;
mod step;
#[allow(clippy::module_inception)]
mod workflow;

pub use checkpoint::{Checkpointer, FileCheckpointer, KvCheckpointer};
pub use context::{Context, Store};
pub use event::{
    AnyEvent, Event, EventRegistry, EventType, HumanResponseEvent, InputRequiredEvent, StartEvent,
    StopEvent,
};
pub use handler::WorkflowHandler;
pub use state::{CHECKPOINT_VERSION, Checkpoint, WaiterCheckpoint, WorkItemCheckpoint};
pub use step::{ConstantDelayRetryPolicy, RetryPolicy, StepConfig, StepOutput, StepSpec};
pub use workflow::{DEFAULT_TIMEOUT, Workflow, WorkflowBuilder};
