//! What an agent run is made of: a [`Task`] (one user input), its
//! [`TaskStep`]s, each step's [`TaskStepOutput`], and the [`AgentWorker`] that runs them.

use super::react::types::ReasoningStep;
use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::chat_engine::{AgentChatResponse, StreamingAgentChatResponse};
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, ToolChoice};
use ragloom_core::memory::BaseMemory;
use ragloom_core::tools::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::{Arc, Mutex};

/// One run of an agent for one user input (LlamaIndex `Task`).
///
/// LlamaIndex keeps its workers' state in the `extra_state` dict; here the
/// state every worker shares has typed fields (`sources`, `new_memory`,
/// `current_reasoning`, `n_function_calls`) and `extra_state` holds what the
/// user adds (`init_task_state`).
#[derive(Clone, Debug)]
pub struct Task {
    /// A fresh UUID.
    pub task_id: String,
    /// The user's input.
    pub input: String,
    /// The conversation before this task; shared with the runner and its other tasks.
    pub memory: Arc<dyn BaseMemory>,
    /// User-specified state, free to change during the task.
    pub extra_state: Map<String, Value>,
    /// Every tool output of the task so far.
    pub sources: Vec<ToolOutput>,
    /// Messages of this task not yet in `memory` (the user's input, tool
    /// calls, the answer); the worker's `finalize_task` moves them there.
    pub new_memory: Vec<ChatMessage>,
    /// ReAct's reasoning so far (thoughts, actions, observations).
    pub current_reasoning: Vec<ReasoningStep>,
    /// Tool calls made so far (function-calling agents).
    pub n_function_calls: usize,
}

impl Task {
    /// A task for `input` over `memory`, with a new id.
    pub fn new(input: impl Into<String>, memory: Arc<dyn BaseMemory>) -> Self {
        Self {
            task_id: uuid::Uuid::new_v4().to_string(),
            input: input.into(),
            memory,
            extra_state: Map::new(),
            sources: Vec::new(),
            new_memory: Vec::new(),
            current_reasoning: Vec::new(),
            n_function_calls: 0,
        }
    }
}

/// One step of a task (LlamaIndex `TaskStep`).
///
/// LlamaIndex links steps by holding the steps themselves; here
/// `next_steps` and `prev_steps` hold step ids, which keeps steps plain
/// values without reference cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskStep {
    /// The task this step belongs to.
    pub task_id: String,
    /// A fresh UUID.
    pub step_id: String,
    /// New user input for this step; `None` continues the task.
    pub input: Option<String>,
    /// Worker state carried from step to step (ReAct's `is_first`).
    pub step_state: Map<String, Value>,
    /// Ids of the steps that follow this one.
    pub next_steps: Vec<String>,
    /// Ids of the steps this one depends on.
    pub prev_steps: Vec<String>,
    /// Whether the step can run now.
    pub is_ready: bool,
}

impl TaskStep {
    /// A ready step of `task_id` with a new id.
    pub fn new(task_id: impl Into<String>, input: Option<String>) -> Self {
        Self {
            task_id: task_id.into(),
            step_id: uuid::Uuid::new_v4().to_string(),
            input,
            step_state: Map::new(),
            next_steps: Vec::new(),
            prev_steps: Vec::new(),
            is_ready: true,
        }
    }

    /// The step after this one: same task, this step's state unless
    /// `step_state` is given (LlamaIndex `get_next_step`).
    pub fn get_next_step(
        &self,
        step_id: impl Into<String>,
        input: Option<String>,
        step_state: Option<Map<String, Value>>,
    ) -> TaskStep {
        TaskStep {
            task_id: self.task_id.clone(),
            step_id: step_id.into(),
            input,
            step_state: step_state.unwrap_or_else(|| self.step_state.clone()),
            next_steps: Vec::new(),
            prev_steps: Vec::new(),
            is_ready: true,
        }
    }

    /// [`get_next_step`](Self::get_next_step) with a new id and no input, as workers continue a task.
    pub fn next_step(&self) -> TaskStep {
        self.get_next_step(uuid::Uuid::new_v4().to_string(), None, None)
    }

    /// Records that `next_step` follows this step, on both steps (LlamaIndex `link_step`).
    pub fn link_step(&mut self, next_step: &mut TaskStep) {
        if !self.next_steps.contains(&next_step.step_id) {
            self.next_steps.push(next_step.step_id.clone());
        }
        if !next_step.prev_steps.contains(&self.step_id) {
            next_step.prev_steps.push(self.step_id.clone());
        }
    }
}

/// A streamed answer that several copies of a [`TaskStepOutput`] can share;
/// the first to [`take`](Self::take) it gets the stream.
#[derive(Clone, Default)]
pub struct SharedStream(Arc<Mutex<Option<StreamingAgentChatResponse>>>);

impl SharedStream {
    /// Shares `stream`.
    pub fn new(stream: StreamingAgentChatResponse) -> Self {
        Self(Arc::new(Mutex::new(Some(stream))))
    }

    /// The stream, if no one took it yet.
    pub fn take(&self) -> Option<StreamingAgentChatResponse> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

impl fmt::Debug for SharedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let taken = self.0.lock().map(|s| s.is_none()).unwrap_or(true);
        f.debug_struct("SharedStream")
            .field("taken", &taken)
            .finish()
    }
}

/// What a step produced: an answer (intermediate or final), or the final
/// answer as a stream (LlamaIndex's `AGENT_CHAT_RESPONSE_TYPE`).
#[derive(Clone, Debug)]
pub enum StepOutput {
    /// A whole answer.
    Response(AgentChatResponse),
    /// The final answer, streaming.
    Stream(SharedStream),
}

impl StepOutput {
    /// The answer text; empty for a stream.
    pub fn response_text(&self) -> &str {
        match self {
            StepOutput::Response(r) => &r.response,
            StepOutput::Stream(_) => "",
        }
    }

    /// The whole answer, if this is one.
    pub fn as_response(&self) -> Option<&AgentChatResponse> {
        match self {
            StepOutput::Response(r) => Some(r),
            StepOutput::Stream(_) => None,
        }
    }
}

/// The result of one step (LlamaIndex `TaskStepOutput`).
#[derive(Clone, Debug)]
pub struct TaskStepOutput {
    /// What the step produced.
    pub output: StepOutput,
    /// The step that ran.
    pub task_step: TaskStep,
    /// The steps to run next (none when `is_last`).
    pub next_steps: Vec<TaskStep>,
    /// Whether the task is done.
    pub is_last: bool,
}

impl TaskStepOutput {
    /// A step's output; `is_last` exactly when there is no next step.
    pub fn new(output: StepOutput, task_step: TaskStep, next_steps: Vec<TaskStep>) -> Self {
        let is_last = next_steps.is_empty();
        Self {
            output,
            task_step,
            next_steps,
            is_last,
        }
    }
}

impl fmt::Display for TaskStepOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.output.response_text())
    }
}

/// An agent's final answer (LlamaIndex's `AGENT_CHAT_RESPONSE_TYPE`).
#[derive(Debug)]
pub enum AgentResponse {
    /// A whole answer.
    Chat(AgentChatResponse),
    /// A streamed answer; the turn reaches memory when the stream ends.
    Stream(StreamingAgentChatResponse),
}

impl AgentResponse {
    /// The whole answer, reading a stream to its end.
    pub async fn into_chat_response(self) -> Result<AgentChatResponse> {
        match self {
            AgentResponse::Chat(r) => Ok(r),
            AgentResponse::Stream(s) => s.get_response().await,
        }
    }

    /// The answer as a stream; a whole answer becomes one delta (LlamaIndex's `is_dummy_stream`).
    pub fn into_stream(self) -> StreamingAgentChatResponse {
        match self {
            AgentResponse::Stream(s) => s,
            AgentResponse::Chat(r) => StreamingAgentChatResponse::new(
                futures::stream::once(async move { Ok(r.response) }).boxed(),
                r.sources,
                r.source_nodes,
            ),
        }
    }
}

/// Per-step options the runner passes to its worker (LlamaIndex's `**kwargs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepOptions {
    /// Whether and which tool the model must call. The runner sets it on a
    /// task's first step only and `Auto` afterwards, so a forced tool cannot loop.
    pub tool_choice: ToolChoice,
}

/// Runs the steps of a task (LlamaIndex `BaseAgentWorker`). Stateless
/// between calls: all state lives in the [`Task`] and the [`TaskStep`].
#[async_trait]
pub trait AgentWorker: Send + Sync + fmt::Debug {
    /// Sets up `task`'s state and returns its first step.
    fn initialize_step(&self, task: &mut Task) -> Result<TaskStep>;

    /// Runs one step.
    async fn run_step(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<TaskStepOutput>;

    /// Runs one step, streaming the final answer if this step gives it.
    /// Default: [`run_step`](Self::run_step), a final answer then replayed
    /// as one delta (`is_dummy_stream`).
    async fn stream_step(
        &self,
        step: &mut TaskStep,
        task: &mut Task,
        options: &StepOptions,
    ) -> Result<TaskStepOutput> {
        let mut output = self.run_step(step, task, options).await?;
        if output.is_last {
            if let StepOutput::Response(r) = &mut output.output {
                r.is_dummy_stream = true;
            }
        }
        Ok(output)
    }

    /// Ends the task: its new messages go to the shared memory. Default:
    /// `task.new_memory` appended to `task.memory`, as LlamaIndex's workers do.
    async fn finalize_task(&self, task: &mut Task) -> Result<()> {
        let messages = std::mem::take(&mut task.new_memory);
        if messages.is_empty() {
            return Ok(());
        }
        task.memory.put_messages(messages).await
    }
}

/// The tool-choice error for a named tool the worker does not have.
pub(crate) fn unknown_tool_choice(name: &str, available: &[String]) -> Error {
    Error::InvalidInput(format!(
        "tool_choice names tool `{name}`, which the agent does not have; available tools: {}",
        available.join(", ")
    ))
}
