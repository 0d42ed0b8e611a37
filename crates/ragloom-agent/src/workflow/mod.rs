//! Agents on workflows, as LlamaIndex 0.14 has them: [`FunctionAgent`],
//! [`ReActAgent`] and [`AgentWorkflow`] with handoff, state and structured output.
//!
//! A run is a [`Workflow`](ragloom_workflow::Workflow) of six steps; what it
//! works on lives in the run's store, so runs stream their events,
//! checkpoint and resume like any workflow.

mod base;
mod builder;
mod events;
mod function_agent;
mod handoff;
mod multi;
pub mod prompts;
mod react_agent;
mod steps;

pub use base::{
    AgentSpec, DEFAULT_AGENT_DESCRIPTION, DEFAULT_AGENT_NAME, DEFAULT_MAX_ITERATIONS,
    EarlyStoppingMethod, StructuredOutputFn, WorkflowAgent, memory_put, tool_context,
};
pub use events::{
    AgentInput, AgentOutput, AgentSetup, AgentStream, AgentStreamStructuredOutput, ToolCall,
    ToolCallResult,
};
pub use function_agent::{FunctionAgent, FunctionAgentBuilder};
pub use multi::{AgentHandler, AgentWorkflow, AgentWorkflowBuilder, RunOptions};
pub use react_agent::{EMPTY_RESPONSE_MESSAGE, PARSE_ERROR_MESSAGE, ReActAgent, ReActAgentBuilder};
