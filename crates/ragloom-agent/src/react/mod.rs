//! ReAct agents: the model reasons in text (`Thought` / `Action` / `Action
//! Input` / `Observation` / `Answer`), so any chat model can use tools.

mod dirty_json;
pub mod formatter;
pub mod output_parser;
pub mod types;
pub mod worker;

pub use formatter::{
    ReActChatFormatter, context_react_chat_system_header, get_react_tool_descriptions,
    react_chat_system_header, react_fn_schema_str,
};
pub use output_parser::{
    IMPLICIT_THOUGHT, ReActOutputParser, action_input_parser, extract_final_response,
    extract_json_str, extract_tool_use, parse_action_input, parse_action_reasoning_step,
};
pub use types::{
    ActionReasoningStep, ObservationReasoningStep, ReasoningStep, ResponseReasoningStep,
};
pub use worker::{PARSE_FAILURE_MESSAGE, ReActAgentWorker, ReActAgentWorkerBuilder};

use super::agent_builder::{AgentBuilder, worker_builder};
use super::runner::AgentRunner;
use super::tool_retriever::ToolRetriever;
use ragloom_core::error::Result;
use ragloom_core::llms::Llm;
use ragloom_core::tools::Tool;
use std::sync::Arc;

/// Builds ReAct agents (LlamaIndex `ReActAgent`): an [`AgentRunner`] over a [`ReActAgentWorker`].
#[derive(Clone, Copy, Debug)]
pub struct ReActAgent;

impl ReActAgent {
    /// An agent over `tools` with the defaults.
    pub fn from_tools(tools: Vec<Arc<dyn Tool>>, llm: Arc<dyn Llm>) -> Result<AgentRunner> {
        Self::builder(llm).tools(tools).build()
    }

    /// A builder for the worker and runner options.
    pub fn builder(llm: Arc<dyn Llm>) -> ReActAgentBuilder {
        AgentBuilder::new(ReActAgentWorker::builder(llm.clone()), llm)
    }
}

worker_builder!(ReActAgentWorkerBuilder => ReActAgentWorker);

/// Options of a ReAct agent: the worker's and the runner's.
pub type ReActAgentBuilder = AgentBuilder<ReActAgentWorkerBuilder>;

impl ReActAgentBuilder {
    /// Context for the system header.
    pub fn context(self, context: impl Into<String>) -> Self {
        self.worker(|w| w.context(context))
    }
}
