//! What every workflow agent has (LlamaIndex's `BaseWorkflowAgent` fields),
//! the [`WorkflowAgent`] trait an agent kind implements, and the run's memory.

use super::events::AgentStream;
use super::events::{AgentOutput, ToolCallResult};
use super::prompts::DEFAULT_STATE_PROMPT;
use crate::tool_retriever::ToolRetriever;
use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, ChatResponse, ChatResponseStream, FunctionCallingLlm, Llm};
use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
use ragloom_core::tools::{Tool, call_context, with_call_context};
use ragloom_workflow::Context;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// LlamaIndex's default agent name; several agents must each have their own.
pub const DEFAULT_AGENT_NAME: &str = "Agent";
/// LlamaIndex's default agent description.
pub const DEFAULT_AGENT_DESCRIPTION: &str = "An agent that can perform a task";
/// Model calls a run may make before it stops (LlamaIndex's default).
pub const DEFAULT_MAX_ITERATIONS: usize = 20;

/// What a run does when it reaches its maximum number of iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EarlyStoppingMethod {
    /// Fail with an error saying so (LlamaIndex's default).
    #[default]
    Force,
    /// Ask the model once more, without tools, for a final answer.
    Generate,
}

/// Makes the structured answer from the run's messages (LlamaIndex's `structured_output_fn`).
pub type StructuredOutputFn =
    Arc<dyn Fn(&[ChatMessage]) -> Result<Map<String, Value>> + Send + Sync>;

/// The settings every agent kind shares.
#[derive(Clone)]
pub struct AgentSpec {
    /// The agent's name; other agents hand off to it by this name.
    pub name: String,
    /// What the agent does; other agents read it to decide on a handoff.
    pub description: String,
    /// Sent first, as a system message.
    pub system_prompt: Option<String>,
    /// The tools it may call.
    pub tools: Vec<Arc<dyn Tool>>,
    /// Finds more tools for each request.
    pub tool_retriever: Option<Arc<ToolRetriever>>,
    /// The agents it may hand off to; `None` for all of them.
    pub can_handoff_to: Option<Vec<String>>,
    /// Its model.
    pub llm: Arc<dyn Llm>,
    /// The run's state when it starts (a single agent only; an
    /// [`AgentWorkflow`](super::AgentWorkflow) has its own).
    pub initial_state: Map<String, Value>,
    /// How the state is shown to the model: `{state}` and `{msg}`.
    pub state_prompt: String,
    /// A JSON schema the final answer is also given in.
    pub output_schema: Option<Value>,
    /// Makes the structured answer itself; ignored when `output_schema` is set.
    pub structured_output_fn: Option<StructuredOutputFn>,
    /// Whether the model's reply is streamed as [`AgentStream`](super::AgentStream) events.
    pub streaming: bool,
    /// What to do at the iteration limit.
    pub early_stopping_method: EarlyStoppingMethod,
}

impl AgentSpec {
    /// LlamaIndex's defaults for an agent answering with `llm`.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            name: DEFAULT_AGENT_NAME.to_string(),
            description: DEFAULT_AGENT_DESCRIPTION.to_string(),
            system_prompt: None,
            tools: Vec::new(),
            tool_retriever: None,
            can_handoff_to: None,
            llm,
            initial_state: Map::new(),
            state_prompt: DEFAULT_STATE_PROMPT.to_string(),
            output_schema: None,
            structured_output_fn: None,
            streaming: true,
            early_stopping_method: EarlyStoppingMethod::Force,
        }
    }

    /// Checks what LlamaIndex checks when an agent is made.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.tools.iter().any(|t| t.metadata().name == "handoff") {
            return Err(Error::InvalidInput(
                "'handoff' is a reserved tool name. Please use a different name.".into(),
            ));
        }
        check_placeholders(
            &self.state_prompt,
            &["{state}", "{msg}"],
            "State prompt must contain {state} and {msg}",
        )
    }
}

pub(crate) fn check_placeholders(template: &str, needed: &[&str], message: &str) -> Result<()> {
    match needed.iter().all(|p| template.contains(p)) {
        true => Ok(()),
        false => Err(Error::InvalidInput(message.to_string())),
    }
}

impl fmt::Debug for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("can_handoff_to", &self.can_handoff_to)
            .field("llm", &self.llm.metadata().model_name)
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

/// One kind of agent: how it asks its model for a step and how it takes
/// tool results back. [`FunctionAgent`](super::FunctionAgent) and
/// [`ReActAgent`](super::ReActAgent) implement it; an
/// [`AgentWorkflow`](super::AgentWorkflow) runs any of them.
///
/// An agent keeps what it is working on in the run's store, so a
/// checkpoint holds it and a resumed run goes on from it.
#[async_trait]
pub trait WorkflowAgent: Send + Sync + fmt::Debug {
    /// The settings.
    fn spec(&self) -> &AgentSpec;

    /// Asks the model for the next step given `llm_input` (the memory, with
    /// the system prompt and state) and the tools on offer; writes
    /// [`AgentInput`](super::AgentInput) and
    /// [`AgentStream`](super::AgentStream) events to the stream.
    async fn take_step(
        &self,
        ctx: &Context,
        llm_input: Vec<ChatMessage>,
        tools: &[Arc<dyn Tool>],
    ) -> Result<AgentOutput>;

    /// Takes the results of the tool calls of the last step.
    async fn handle_tool_call_results(
        &self,
        ctx: &Context,
        results: &[ToolCallResult],
    ) -> Result<()>;

    /// Ends the agent's turn: what it worked on goes into the memory.
    async fn finalize(&self, ctx: &Context, output: AgentOutput) -> Result<AgentOutput>;
}

/// The run's memory: every message, oldest first, kept in the store so a
/// checkpoint holds it.
pub(crate) const MEMORY_KEY: &str = "memory";

/// Appends `messages` to the run's memory.
pub fn memory_put(ctx: &Context, messages: Vec<ChatMessage>) -> Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let mut all: Vec<ChatMessage> = ctx.store().get_or(MEMORY_KEY, Vec::new())?;
    all.extend(messages);
    ctx.store().set(MEMORY_KEY, all)
}

/// The run's memory as the model is shown it: trimmed to the token limit
/// of `llm`'s context window, as LlamaIndex's default `ChatMemoryBuffer`.
pub(crate) async fn memory_get(ctx: &Context, llm: &dyn Llm) -> Result<Vec<ChatMessage>> {
    let all: Vec<ChatMessage> = ctx.store().get_or(MEMORY_KEY, Vec::new())?;
    let buffer = ChatMemoryBuffer::builder()
        .llm(llm)
        .chat_history(all)
        .build()?;
    buffer.get(0).await
}

/// The context of the agent run calling the tool now, for tools that read
/// or change the run's state (LlamaIndex's tools with a `ctx: Context`
/// parameter). `None` outside an agent's tool call. Works in tools made
/// with `FunctionTool::from_fn`, whose function runs on another thread.
///
/// ```
/// # use ragloom_agent::tool_context;
/// // In a tool's `call`:
/// if let Some(ctx) = tool_context() {
///     let state: serde_json::Value = ctx.store().get_or("state", serde_json::json!({})).unwrap();
/// # let _ = state;
/// }
/// ```
pub fn tool_context() -> Option<Context> {
    call_context().and_then(|lent| lent.downcast_ref::<Context>().cloned())
}

pub(crate) async fn with_tool_context<F: std::future::Future>(ctx: Context, fut: F) -> F::Output {
    with_call_context(Arc::new(ctx), fut).await
}

/// Writes the run's messages back to the caller's memory when a run ends.
pub(crate) async fn save_memory(ctx: &Context, memory: &dyn BaseMemory) -> Result<()> {
    let all: Vec<ChatMessage> = ctx.store().get_or(MEMORY_KEY, Vec::new())?;
    memory.set(all).await
}

/// Reads a streamed reply, writing an [`AgentStream`] event for each piece
/// (with the tool calls parsed so far when `tool_calls_of` is the model);
/// the last piece, holding the whole reply, or `None` for an empty stream.
pub(crate) async fn stream_reply(
    ctx: &Context,
    agent_name: &str,
    mut stream: ChatResponseStream,
    tool_calls_of: Option<&dyn Llm>,
) -> Result<Option<ChatResponse>> {
    let mut last = None;
    while let Some(item) = stream.next().await {
        let item = item?;
        let tool_calls = match tool_calls_of {
            Some(llm) => llm.get_tool_calls_from_response(&item, false)?,
            None => Vec::new(),
        };
        ctx.write_event_to_stream(AgentStream {
            delta: item.delta.clone().unwrap_or_default(),
            response: item.message.content.clone(),
            current_agent_name: agent_name.to_string(),
            tool_calls,
            raw: item.raw.clone(),
            thinking_delta: item
                .message
                .additional_kwargs
                .get("thinking_delta")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
        last = Some(item);
    }
    Ok(last)
}
