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

use super::runner::{AgentRunner, AgentRunnerBuilder};
use super::tool_retriever::ToolRetriever;
use ragloom_core::error::Result;
use ragloom_core::llms::Llm;
use ragloom_core::memory::BaseMemory;
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
        ReActAgentBuilder {
            worker: ReActAgentWorker::builder(llm.clone()),
            runner: AgentRunner::builder().llm(llm),
        }
    }
}

/// Options of a ReAct agent: the worker's and the runner's.
#[derive(Debug)]
pub struct ReActAgentBuilder {
    worker: ReActAgentWorkerBuilder,
    runner: AgentRunnerBuilder,
}

impl ReActAgentBuilder {
    /// The tools (not with a tool retriever).
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.worker = self.worker.tools(tools);
        self
    }

    /// Picks the tools per task from its input.
    pub fn tool_retriever(mut self, retriever: Arc<ToolRetriever>) -> Self {
        self.worker = self.worker.tool_retriever(retriever);
        self
    }

    /// Context for the system header.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.worker = self.worker.context(context);
        self
    }

    /// Changes worker options.
    pub fn worker(
        mut self,
        f: impl FnOnce(ReActAgentWorkerBuilder) -> ReActAgentWorkerBuilder,
    ) -> Self {
        self.worker = f(self.worker);
        self
    }

    /// Changes runner options (memory, tool choice, ...).
    pub fn runner(mut self, f: impl FnOnce(AgentRunnerBuilder) -> AgentRunnerBuilder) -> Self {
        self.runner = f(self.runner);
        self
    }

    /// The shared memory.
    pub fn memory(mut self, memory: Arc<dyn BaseMemory>) -> Self {
        self.runner = self.runner.memory(memory);
        self
    }

    /// Steps a chat may take (default 10).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.runner = self.runner.max_iterations(max_iterations);
        self
    }

    /// Prints steps and reasoning.
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.worker = self.worker.verbose(verbose);
        self.runner = self.runner.verbose(verbose);
        self
    }

    /// The agent.
    pub fn build(self) -> Result<AgentRunner> {
        self.runner.build(Arc::new(self.worker.build()?))
    }
}
