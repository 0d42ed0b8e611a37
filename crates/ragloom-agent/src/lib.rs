//! Agents. The workflow agents of LlamaIndex 0.14 are here:
//! [`FunctionAgent`], [`ReActAgent`] and [`AgentWorkflow`] (several agents
//! with handoff), each run as a [`Workflow`](ragloom_workflow::Workflow).
//!
//! The step-wise agents of LlamaIndex 0.10–0.12 ([`legacy::AgentRunner`]
//! driving a ReAct or function-calling worker one `TaskStep` at a time) are
//! in [`legacy`]; they are kept because they chat across turns as a
//! [`ChatEngine`](ragloom_core::chat_engine::ChatEngine) and can be stepped by hand.
//! Their names that do not clash are also re-exported here for one release.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use ragloom_agent::{AgentStream, ReActAgent};
//! use ragloom_core::llms::MockLlm;
//! use ragloom_core::tools::{FunctionTool, Tool};
//! use futures::StreamExt;
//! use std::sync::Arc;
//!
//! /// Multiplies two integers.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args { a: i64, b: i64 }
//! let multiply: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn("multiply", None, |x: Args| x.a * x.b));
//!
//! let llm = Arc::new(MockLlm::scripted([
//!     "Thought: I need to multiply.\nAction: multiply\nAction Input: {\"a\": 6, \"b\": 7}",
//!     "Thought: I can answer without using any more tools.\nAnswer: 42",
//! ]));
//! let agent = ReActAgent::builder(llm).tool(multiply).build()?;
//! let mut handler = agent.run("What is 6 * 7?");
//! // The reply streams as it is written ...
//! let mut streamed = String::new();
//! let mut events = handler.stream_events();
//! while let Some(ev) = events.next().await {
//!     if let Some(chunk) = ev.downcast_ref::<AgentStream>() {
//!         streamed.push_str(&chunk.delta);
//!     }
//! }
//! // ... and the handler gives the output.
//! let output = handler.await?;
//! assert_eq!(output.response.content, "42");
//! assert!(streamed.ends_with("Answer: 42"));
//! # Ok::<(), ragloom_core::Error>(()) }).unwrap();
//! ```

#![warn(missing_docs)]

mod agent_builder;
pub mod function_calling;
mod index_ext;
pub mod react;
pub mod runner;
pub mod task;
pub mod tool_retriever;
pub mod tools;
pub mod workflow;

/// The step-wise agents of LlamaIndex 0.10–0.12: an [`AgentRunner`] keeps
/// tasks and memory and drives an [`AgentWorker`] (ReAct or function
/// calling) one [`TaskStep`] at a time. `ChatMode::React`, `OpenAi` and
/// `Best` chat through these.
pub mod legacy {
    pub use super::agent_builder::{AgentBuilder, WorkerBuilder};
    pub use super::function_calling::{
        DEFAULT_MAX_FUNCTION_CALLS, FunctionCallingAgent, FunctionCallingAgentBuilder,
        FunctionCallingAgentWorker, FunctionCallingAgentWorkerBuilder,
    };
    pub use super::react::worker::DEFAULT_MAX_TOOL_OUTPUT_LEN;
    pub use super::react::{ReActAgent, ReActAgentBuilder, ReActAgentWorker};
    pub use super::runner::{
        AgentRunner, AgentRunnerBuilder, AgentState, DEFAULT_MAX_ITERATIONS, TaskState,
    };
    pub use super::task::{
        AgentResponse, AgentWorker, SharedStream, StepOptions, StepOutput, Task, TaskStep,
        TaskStepOutput,
    };
}

pub use agent_builder::{AgentBuilder, WorkerBuilder};
pub use function_calling::{
    DEFAULT_MAX_FUNCTION_CALLS, FunctionCallingAgent, FunctionCallingAgentBuilder,
    FunctionCallingAgentWorker, FunctionCallingAgentWorkerBuilder,
};
pub use index_ext::AsChatEngine;
pub use ragloom_core::objects::{ObjectIndex, ObjectIndexRetriever, ObjectRetriever};
pub use react::worker::DEFAULT_MAX_TOOL_OUTPUT_LEN;
pub use react::{
    ActionReasoningStep, ObservationReasoningStep, ReActAgentWorker, ReActChatFormatter,
    ReActOutputParser, ReasoningStep, ResponseReasoningStep,
};
pub use runner::{AgentRunner, AgentRunnerBuilder, AgentState, TaskState};
pub use task::{
    AgentResponse, AgentWorker, SharedStream, StepOptions, StepOutput, Task, TaskStep,
    TaskStepOutput,
};
pub use tool_retriever::ToolRetriever;
pub use workflow::{
    AgentHandler, AgentInput, AgentOutput, AgentSetup, AgentSpec, AgentStream,
    AgentStreamStructuredOutput, AgentWorkflow, AgentWorkflowBuilder, DEFAULT_MAX_ITERATIONS,
    EarlyStoppingMethod, FunctionAgent, FunctionAgentBuilder, ReActAgent, ReActAgentBuilder,
    RunOptions, ToolCall, ToolCallResult, WorkflowAgent, tool_context,
};
