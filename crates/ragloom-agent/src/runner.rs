//! `AgentRunner`: keeps an agent's tasks and shared memory, and drives its
//! [`AgentWorker`] one [`TaskStep`] at a time — step-wise, or end to end as a chat.

use super::task::{
    AgentResponse, AgentWorker, StepOptions, StepOutput, Task, TaskStep, TaskStepOutput,
};
use async_trait::async_trait;
use indexmap::IndexMap;
use ragloom_core::chat_engine::{AgentChatResponse, ChatEngine, StreamingAgentChatResponse};
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, Llm, ToolChoice};
use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::{QueryBundle, Response};
use ragloom_core::tools::{ToolOutput, source_nodes_of};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use tracing::Instrument;

/// LlamaIndex ReAct's default `max_iterations`.
pub const DEFAULT_MAX_ITERATIONS: usize = 10;

/// One task's progress (LlamaIndex `TaskState`).
#[derive(Clone, Debug)]
pub struct TaskState {
    /// The task.
    pub task: Task,
    /// Steps waiting to run, in order.
    pub step_queue: VecDeque<TaskStep>,
    /// Outputs of the steps run so far.
    pub completed_steps: Vec<TaskStepOutput>,
    /// The task and queue before each completed step, for `undo_step`.
    history: Vec<(Task, VecDeque<TaskStep>)>,
}

type SharedTaskState = Arc<tokio::sync::Mutex<TaskState>>;

/// Every task of a runner by id, in creation order (LlamaIndex `AgentState`).
/// Each task has its own lock, so different tasks can run steps at the same time.
#[derive(Default)]
pub struct AgentState {
    task_dict: Mutex<IndexMap<String, SharedTaskState>>,
}

impl fmt::Debug for AgentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentState")
            .field("task_ids", &self.task_ids())
            .finish()
    }
}

impl AgentState {
    fn dict(&self) -> std::sync::MutexGuard<'_, IndexMap<String, SharedTaskState>> {
        self.task_dict
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The ids of the tasks, oldest first.
    pub fn task_ids(&self) -> Vec<String> {
        self.dict().keys().cloned().collect()
    }

    fn get(&self, task_id: &str) -> Result<SharedTaskState> {
        self.dict()
            .get(task_id)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("agent task `{task_id}`")))
    }

    fn insert(&self, state: TaskState) {
        self.dict().insert(
            state.task.task_id.clone(),
            Arc::new(tokio::sync::Mutex::new(state)),
        );
    }

    fn remove(&self, task_id: &str) -> Option<SharedTaskState> {
        self.dict().shift_remove(task_id)
    }

    fn all(&self) -> Vec<SharedTaskState> {
        self.dict().values().cloned().collect()
    }

    /// Forgets every task.
    pub fn reset(&self) {
        self.dict().clear();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Wait,
    Stream,
}

/// Runs an agent (LlamaIndex `AgentRunner`): creates tasks, runs their steps
/// with its [`AgentWorker`], and writes finished tasks to the memory all its
/// tasks share. Use it step by step (`create_task`, `run_step`,
/// `finalize_response`) or end to end (`chat`, `stream_chat`, `query`).
pub struct AgentRunner {
    agent_worker: Arc<dyn AgentWorker>,
    memory: Arc<dyn BaseMemory>,
    state: AgentState,
    init_task_state: Map<String, Value>,
    delete_task_on_finish: bool,
    default_tool_choice: ToolChoice,
    verbose: bool,
    max_iterations: usize,
}

impl fmt::Debug for AgentRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentRunner")
            .field("agent_worker", &self.agent_worker)
            .field("state", &self.state)
            .field("max_iterations", &self.max_iterations)
            .finish_non_exhaustive()
    }
}

/// Options of an [`AgentRunner`].
#[derive(Debug, Default)]
pub struct AgentRunnerBuilder {
    memory: Option<Arc<dyn BaseMemory>>,
    chat_history: Vec<ChatMessage>,
    llm: Option<Arc<dyn Llm>>,
    init_task_state: Map<String, Value>,
    delete_task_on_finish: bool,
    default_tool_choice: ToolChoice,
    verbose: bool,
    max_iterations: Option<usize>,
}

impl AgentRunnerBuilder {
    /// The shared memory (default: a [`ChatMemoryBuffer`] sized for `llm`).
    pub fn memory(mut self, memory: Arc<dyn BaseMemory>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The conversation so far, for the default memory.
    pub fn chat_history(mut self, chat_history: Vec<ChatMessage>) -> Self {
        self.chat_history = chat_history;
        self
    }

    /// The model whose context window sizes the default memory.
    pub fn llm(mut self, llm: Arc<dyn Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// State every new task starts with in `extra_state` (`init_task_state_kwargs`).
    pub fn init_task_state(mut self, state: Map<String, Value>) -> Self {
        self.init_task_state = state;
        self
    }

    /// Forgets a task once its response is finalized.
    pub fn delete_task_on_finish(mut self, delete: bool) -> Self {
        self.delete_task_on_finish = delete;
        self
    }

    /// The tool choice for each task's first step (default `Auto`).
    pub fn default_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.default_tool_choice = tool_choice;
        self
    }

    /// Prints each step as it runs.
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Steps (model calls) a chat may take before it fails (default 10).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// The runner; `max_iterations` 0 and a memory given with a chat history are errors.
    pub fn build(self, agent_worker: Arc<dyn AgentWorker>) -> Result<AgentRunner> {
        let max_iterations = self.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
        if max_iterations == 0 {
            return Err(Error::InvalidInput(
                "agent max_iterations must be at least 1".to_owned(),
            ));
        }
        let memory: Arc<dyn BaseMemory> = match self.memory {
            Some(memory) if !self.chat_history.is_empty() => {
                let _ = memory;
                return Err(Error::InvalidInput(
                    "give an agent either a memory or a chat_history, not both".to_owned(),
                ));
            }
            Some(memory) => memory,
            None => {
                let mut builder = ChatMemoryBuffer::builder().chat_history(self.chat_history);
                if let Some(llm) = &self.llm {
                    builder = builder.llm(llm.as_ref());
                }
                Arc::new(builder.build()?)
            }
        };
        Ok(AgentRunner {
            agent_worker,
            memory,
            state: AgentState::default(),
            init_task_state: self.init_task_state,
            delete_task_on_finish: self.delete_task_on_finish,
            default_tool_choice: self.default_tool_choice,
            verbose: self.verbose,
            max_iterations,
        })
    }
}

impl AgentRunner {
    /// A runner with default options over `agent_worker`.
    pub fn new(agent_worker: Arc<dyn AgentWorker>) -> Result<Self> {
        Self::builder().build(agent_worker)
    }

    /// Options; finish with [`AgentRunnerBuilder::build`].
    pub fn builder() -> AgentRunnerBuilder {
        AgentRunnerBuilder::default()
    }

    /// The worker.
    pub fn agent_worker(&self) -> &Arc<dyn AgentWorker> {
        &self.agent_worker
    }

    /// The memory shared by all tasks.
    pub fn memory(&self) -> &Arc<dyn BaseMemory> {
        &self.memory
    }

    /// The tasks.
    pub fn state(&self) -> &AgentState {
        &self.state
    }

    /// The most steps a chat takes.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }

    /// Starts a task for `input` and queues its first step (LlamaIndex `create_task`).
    pub async fn create_task(&self, input: &str) -> Result<Task> {
        self.create_task_with_extra_state(input, None).await
    }

    /// [`create_task`](Self::create_task) with the task's `extra_state`;
    /// with `init_task_state` set on the runner too it is an error, as in LlamaIndex.
    pub async fn create_task_with_extra_state(
        &self,
        input: &str,
        extra_state: Option<Map<String, Value>>,
    ) -> Result<Task> {
        let mut task = Task::new(input, self.memory.clone());
        task.extra_state = match extra_state {
            Some(_) if !self.init_task_state.is_empty() => {
                return Err(Error::InvalidInput(
                    "Cannot specify both `extra_state` and `init_task_state_kwargs`".to_owned(),
                ));
            }
            Some(state) => state,
            None => self.init_task_state.clone(),
        };
        let first = self.agent_worker.initialize_step(&mut task)?;
        self.state.insert(TaskState {
            task: task.clone(),
            step_queue: VecDeque::from([first]),
            completed_steps: Vec::new(),
            history: Vec::new(),
        });
        Ok(task)
    }

    /// Forgets a task; what it already wrote to memory stays.
    pub fn delete_task(&self, task_id: &str) -> Result<()> {
        self.state
            .remove(task_id)
            .map(|_| ())
            .ok_or_else(|| Error::NotFound(format!("agent task `{task_id}`")))
    }

    /// Every task, oldest first.
    pub async fn list_tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for state in self.state.all() {
            out.push(state.lock().await.task.clone());
        }
        out
    }

    /// The tasks whose last step finished them.
    pub async fn get_completed_tasks(&self) -> Vec<Task> {
        let mut out = Vec::new();
        for state in self.state.all() {
            let s = state.lock().await;
            if s.completed_steps.last().is_some_and(|o| o.is_last) {
                out.push(s.task.clone());
            }
        }
        out
    }

    /// A task by id.
    pub async fn get_task(&self, task_id: &str) -> Result<Task> {
        Ok(self.state.get(task_id)?.lock().await.task.clone())
    }

    /// The steps waiting to run.
    pub async fn get_upcoming_steps(&self, task_id: &str) -> Result<Vec<TaskStep>> {
        let state = self.state.get(task_id)?;
        let s = state.lock().await;
        Ok(s.step_queue.iter().cloned().collect())
    }

    /// The outputs of the steps run so far.
    pub async fn get_completed_steps(&self, task_id: &str) -> Result<Vec<TaskStepOutput>> {
        Ok(self
            .state
            .get(task_id)?
            .lock()
            .await
            .completed_steps
            .clone())
    }

    /// One completed step's output.
    pub async fn get_completed_step(&self, task_id: &str, step_id: &str) -> Result<TaskStepOutput> {
        self.get_completed_steps(task_id)
            .await?
            .into_iter()
            .find(|o| o.task_step.step_id == step_id)
            .ok_or_else(|| Error::NotFound(format!("step `{step_id}` of agent task `{task_id}`")))
    }

    /// The latest step's output.
    pub async fn get_task_output(&self, task_id: &str) -> Result<TaskStepOutput> {
        self.get_completed_steps(task_id)
            .await?
            .pop()
            .ok_or_else(|| Error::NotFound(format!("completed steps of agent task `{task_id}`")))
    }

    /// Runs the next queued step, or `step`; `input` is new user input for
    /// it (not with `step`). A task's first step uses the runner's default
    /// tool choice, later steps `Auto`.
    pub async fn run_step(
        &self,
        task_id: &str,
        input: Option<&str>,
        step: Option<TaskStep>,
    ) -> Result<TaskStepOutput> {
        self.run_step_inner(task_id, input, step, Mode::Wait, None)
            .await
    }

    /// [`run_step`](Self::run_step), streaming the final answer if this step gives it.
    pub async fn stream_step(
        &self,
        task_id: &str,
        input: Option<&str>,
        step: Option<TaskStep>,
    ) -> Result<TaskStepOutput> {
        self.run_step_inner(task_id, input, step, Mode::Stream, None)
            .await
    }

    async fn run_step_inner(
        &self,
        task_id: &str,
        input: Option<&str>,
        step: Option<TaskStep>,
        mode: Mode,
        tool_choice: Option<ToolChoice>,
    ) -> Result<TaskStepOutput> {
        if step.is_some() && input.is_some() {
            return Err(Error::InvalidInput(
                "Cannot specify both `step` and `input`".to_owned(),
            ));
        }
        let shared = self.state.get(task_id)?;
        let mut guard = shared.lock().await;
        let state = &mut *guard;
        let before = (state.task.clone(), state.step_queue.clone());
        let mut step = match step {
            Some(step) => step,
            None => state.step_queue.pop_front().ok_or_else(|| {
                Error::InvalidInput(format!(
                    "agent task `{task_id}` has no step left to run; call finalize_response"
                ))
            })?,
        };
        if let Some(input) = input {
            step.input = Some(input.to_owned());
        }
        let options = StepOptions {
            tool_choice: if state.completed_steps.is_empty() {
                tool_choice.unwrap_or_else(|| self.default_tool_choice.clone())
            } else {
                ToolChoice::Auto
            },
        };
        if self.verbose {
            println!(
                "> Running step {}. Step input: {}",
                step.step_id,
                step.input.as_deref().unwrap_or("None")
            );
        }
        let span = tracing::info_span!("agent step", task_id, step_id = %step.step_id);
        let result = match mode {
            Mode::Wait => self
                .agent_worker
                .run_step(&mut step, &mut state.task, &options),
            Mode::Stream => self
                .agent_worker
                .stream_step(&mut step, &mut state.task, &options),
        }
        .instrument(span)
        .await;
        match result {
            Ok(output) => {
                state.step_queue.extend(output.next_steps.iter().cloned());
                state.completed_steps.push(output.clone());
                state.history.push(before);
                Ok(output)
            }
            Err(e) => {
                // A failed step (a model error, say) leaves the task as it was, so it can be retried.
                state.task = before.0;
                state.step_queue = before.1;
                Err(e)
            }
        }
    }

    /// Ends a task whose last step is done: the worker writes the task to
    /// memory, and the answer gets every tool output of the task as its
    /// sources (LlamaIndex `finalize_response`).
    pub async fn finalize_response(
        &self,
        task_id: &str,
        step_output: Option<TaskStepOutput>,
    ) -> Result<AgentResponse> {
        let shared = self.state.get(task_id)?;
        let sources = {
            let mut state = shared.lock().await;
            let step_output = match step_output {
                Some(o) => o,
                None => state.completed_steps.last().cloned().ok_or_else(|| {
                    Error::InvalidInput(format!("agent task `{task_id}` has run no step yet"))
                })?,
            };
            if !step_output.is_last {
                return Err(Error::InvalidInput(format!(
                    "agent task `{task_id}`: finalize_response can only be called on the last step output"
                )));
            }
            self.agent_worker.finalize_task(&mut state.task).await?;
            (step_output, state.task.sources.clone())
        };
        if self.delete_task_on_finish {
            self.state.remove(task_id);
        }
        let (step_output, sources) = sources;
        let source_nodes =
            |sources: &[ToolOutput]| sources.iter().flat_map(source_nodes_of).collect();
        Ok(match step_output.output {
            StepOutput::Response(mut r) => {
                r.source_nodes = source_nodes(&sources);
                r.sources = sources;
                AgentResponse::Chat(r)
            }
            StepOutput::Stream(shared) => {
                let mut s = shared.take().ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "agent task `{task_id}`: the streamed answer was already taken"
                    ))
                })?;
                s.source_nodes = source_nodes(&sources);
                s.sources = sources;
                AgentResponse::Stream(s)
            }
        })
    }

    /// Takes back the latest step of a task: the task, its queue and its
    /// completed steps return to what they were before it ran.
    pub async fn undo_step(&self, task_id: &str) -> Result<()> {
        let shared = self.state.get(task_id)?;
        let mut state = shared.lock().await;
        let (task, queue) = state.history.pop().ok_or_else(|| {
            Error::InvalidInput(format!("agent task `{task_id}` has no step to undo"))
        })?;
        state.task = task;
        state.step_queue = queue;
        state.completed_steps.pop();
        Ok(())
    }

    async fn chat_inner(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
        tool_choice: Option<ToolChoice>,
        mode: Mode,
    ) -> Result<AgentResponse> {
        if let Some(history) = chat_history {
            self.memory.set(history).await?;
        }
        let task = self.create_task(message).await?;
        let mut tool_choice = Some(tool_choice.unwrap_or_else(|| self.default_tool_choice.clone()));
        for _ in 0..self.max_iterations {
            let output = self
                .run_step_inner(&task.task_id, None, None, mode, tool_choice.take())
                .await?;
            if output.is_last {
                return self.finalize_response(&task.task_id, Some(output)).await;
            }
        }
        Err(Error::Other(format!(
            "Reached max iterations: agent task `{}` took {} steps without a final answer; \
             raise max_iterations or check the tools and the model",
            task.task_id, self.max_iterations
        )))
    }

    /// Answers `message` with `tool_choice` for the first step (later steps use `Auto`).
    pub async fn chat_with_tool_choice(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
        tool_choice: ToolChoice,
    ) -> Result<AgentChatResponse> {
        self.chat_inner(message, chat_history, Some(tool_choice), Mode::Wait)
            .await?
            .into_chat_response()
            .await
    }
}

#[async_trait]
impl ChatEngine for AgentRunner {
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse> {
        let span = tracing::info_span!("agent chat");
        self.chat_inner(message, chat_history, None, Mode::Wait)
            .instrument(span)
            .await?
            .into_chat_response()
            .await
    }

    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse> {
        let span = tracing::info_span!("agent stream_chat");
        Ok(self
            .chat_inner(message, chat_history, None, Mode::Stream)
            .instrument(span)
            .await?
            .into_stream())
    }

    async fn reset(&self) -> Result<()> {
        self.state.reset();
        self.memory.reset().await
    }

    async fn chat_history(&self) -> Result<Vec<ChatMessage>> {
        self.memory.get_all().await
    }
}

#[async_trait]
impl QueryEngine for AgentRunner {
    /// Chats with an empty history, as LlamaIndex's agents answer queries
    /// (which clears the memory).
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let answer = self
            .chat_with_history(&query.query_str, Some(Vec::new()))
            .await?;
        Ok(Response::new(answer.response, answer.source_nodes))
    }
}
