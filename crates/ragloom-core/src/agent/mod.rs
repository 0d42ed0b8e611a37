//! Agents: an [`AgentRunner`] keeps tasks and memory and drives an
//! [`AgentWorker`] (ReAct or function calling) one [`TaskStep`] at a time.
//!
//! LlamaIndex dropped this step-wise API in 0.13 for workflow agents; ragloom
//! keeps it (LlamaIndex 0.12's `AgentRunner`, `ReActAgentWorker`,
//! `FunctionCallingAgentWorker`), with the ReAct prompt and parser of 0.14.
//!
//! ```
//! # futures::executor::block_on(async {
//! use ragloom_core::agent::ReActAgent;
//! use ragloom_core::chat_engine::ChatEngine;
//! use ragloom_core::llms::MockLlm;
//! use ragloom_core::tools::{FunctionTool, Tool};
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
//! let agent = ReActAgent::from_tools(vec![multiply], llm)?;
//!
//! // Step by step ...
//! let task = agent.create_task("What is 6 * 7?").await?;
//! let first = agent.run_step(&task.task_id, None, None).await?;
//! assert!(!first.is_last);
//! assert_eq!(agent.get_upcoming_steps(&task.task_id).await?.len(), 1);
//! let last = agent.run_step(&task.task_id, None, None).await?;
//! assert!(last.is_last);
//! let answer = agent.finalize_response(&task.task_id, None).await?.into_chat_response().await?;
//! assert_eq!(answer.response, "42");
//! assert_eq!(answer.sources[0].content, "42");
//! // ... the finished task is in the shared memory: the question and the answer.
//! assert_eq!(agent.chat_history().await?.len(), 2);
//! # Ok::<(), ragloom_core::Error>(()) }).unwrap();
//! ```

pub mod function_calling;
mod index_ext;
pub mod react;
pub mod runner;
pub mod task;
pub mod tool_retriever;
pub mod tools;

pub use function_calling::{
    DEFAULT_MAX_FUNCTION_CALLS, FunctionCallingAgent, FunctionCallingAgentBuilder,
    FunctionCallingAgentWorker, FunctionCallingAgentWorkerBuilder,
};
pub use index_ext::AsChatEngine;
pub use react::worker::DEFAULT_MAX_TOOL_OUTPUT_LEN;
pub use react::{
    ActionReasoningStep, ObservationReasoningStep, ReActAgent, ReActAgentBuilder, ReActAgentWorker,
    ReActChatFormatter, ReActOutputParser, ReasoningStep, ResponseReasoningStep,
};
pub use runner::{AgentRunner, AgentRunnerBuilder, AgentState, DEFAULT_MAX_ITERATIONS, TaskState};
pub use task::{
    AgentResponse, AgentWorker, SharedStream, StepOptions, StepOutput, Task, TaskStep,
    TaskStepOutput,
};
pub use tool_retriever::{ObjectIndex, ObjectIndexRetriever, ObjectRetriever};
