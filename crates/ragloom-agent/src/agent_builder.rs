//! What the step-wise agents' builders share: a worker builder and the
//! runner's options, set together, for ReAct and function-calling agents alike.

use super::runner::{AgentRunner, AgentRunnerBuilder};
use super::task::AgentWorker;
use super::tool_retriever::ToolRetriever;
use ragloom_core::error::Result;
use ragloom_core::llms::Llm;
use ragloom_core::memory::BaseMemory;
use ragloom_core::tools::Tool;
use std::fmt;
use std::sync::Arc;

/// The options every step-wise worker's builder has, so an [`AgentBuilder`]
/// can set them whatever its worker.
pub trait WorkerBuilder: Sized + fmt::Debug {
    /// The worker it builds.
    type Worker: AgentWorker + 'static;

    /// The tools (not with a tool retriever).
    fn with_tools(self, tools: Vec<Arc<dyn Tool>>) -> Self;

    /// Picks the tools per task from its input instead of a fixed list.
    fn with_tool_retriever(self, retriever: Arc<ToolRetriever>) -> Self;

    /// Prints the worker's steps.
    fn with_verbose(self, verbose: bool) -> Self;

    /// The worker, or why its options do not go together.
    fn build_worker(self) -> Result<Self::Worker>;
}

/// Options of a step-wise agent: its worker's and its runner's
/// (`ReActAgent::builder`, `FunctionCallingAgent::builder`).
#[derive(Debug)]
pub struct AgentBuilder<W> {
    worker: W,
    runner: AgentRunnerBuilder,
}

impl<W: WorkerBuilder> AgentBuilder<W> {
    /// A builder over `worker`, its runner answering with `llm`.
    pub(crate) fn new(worker: W, llm: Arc<dyn Llm>) -> Self {
        Self {
            worker,
            runner: AgentRunner::builder().llm(llm),
        }
    }

    /// The tools (not with a tool retriever).
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.worker = self.worker.with_tools(tools);
        self
    }

    /// Picks the tools per task from its input.
    pub fn tool_retriever(mut self, retriever: Arc<ToolRetriever>) -> Self {
        self.worker = self.worker.with_tool_retriever(retriever);
        self
    }

    /// Changes worker options.
    pub fn worker(mut self, f: impl FnOnce(W) -> W) -> Self {
        self.worker = f(self.worker);
        self
    }

    /// Changes runner options (memory, max_iterations, tool choice, ...).
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

    /// Prints each step: a ReAct worker's reasoning, a function-calling
    /// worker's replies and tool calls, and the runner's steps.
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.worker = self.worker.with_verbose(verbose);
        self.runner = self.runner.verbose(verbose);
        self
    }

    /// The agent.
    pub fn build(self) -> Result<AgentRunner> {
        self.runner.build(Arc::new(self.worker.build_worker()?))
    }
}

/// [`WorkerBuilder`] for a worker builder whose own setters have the names.
macro_rules! worker_builder {
    ($builder:ty => $worker:ty) => {
        impl $crate::agent_builder::WorkerBuilder for $builder {
            type Worker = $worker;

            fn with_tools(self, tools: Vec<Arc<dyn Tool>>) -> Self {
                self.tools(tools)
            }

            fn with_tool_retriever(self, retriever: Arc<ToolRetriever>) -> Self {
                self.tool_retriever(retriever)
            }

            fn with_verbose(self, verbose: bool) -> Self {
                self.verbose(verbose)
            }

            fn build_worker(self) -> ragloom_core::Result<$worker> {
                self.build()
            }
        }
    };
}
pub(crate) use worker_builder;
