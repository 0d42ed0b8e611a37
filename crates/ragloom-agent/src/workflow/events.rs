//! The events of an agent run, as LlamaIndex streams them: the input an
//! agent is given, its streamed reply, its output, and each tool call and result.

use ragloom_core::llms::{ChatMessage, ToolSelection};
use ragloom_core::tools::ToolOutput;
use ragloom_workflow::Event;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The messages the current agent is about to work on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInput {
    /// The messages.
    pub input: Vec<ChatMessage>,
    /// The agent that works on them.
    pub current_agent_name: String,
}
impl Event for AgentInput {}

/// The input after the system prompt and the state were added.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSetup {
    /// The messages, ready for the model.
    pub input: Vec<ChatMessage>,
    /// The agent that works on them.
    pub current_agent_name: String,
}
impl Event for AgentSetup {}

/// One piece of the model's streamed reply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentStream {
    /// The text that just arrived.
    pub delta: String,
    /// The reply so far.
    pub response: String,
    /// The agent speaking.
    pub current_agent_name: String,
    /// The tool calls parsed so far (arguments complete up to what arrived).
    #[serde(default)]
    pub tool_calls: Vec<ToolSelection>,
    /// The provider's raw chunk; not serialised, as LlamaIndex excludes it.
    #[serde(skip)]
    pub raw: Option<Value>,
    /// Reasoning text that arrived, for models that stream their thinking.
    #[serde(default)]
    pub thinking_delta: Option<String>,
}
impl Event for AgentStream {}

/// What an agent produced in one step: an answer, or tool calls to make.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentOutput {
    /// The model's message.
    pub response: ChatMessage,
    /// The structured answer, when the agent has an output schema.
    #[serde(default)]
    pub structured_response: Option<Map<String, Value>>,
    /// The agent that produced it.
    pub current_agent_name: String,
    /// The provider's raw reply; not serialised, as LlamaIndex excludes it.
    #[serde(skip)]
    pub raw: Option<Value>,
    /// The tool calls asked for; on the final output, every call of the run.
    #[serde(default)]
    pub tool_calls: Vec<ToolSelection>,
    /// Messages to send again when the reply could not be used (a ReAct
    /// reply that did not parse), so the model can correct itself.
    #[serde(default)]
    pub retry_messages: Vec<ChatMessage>,
}
impl Event for AgentOutput {}

impl std::fmt::Display for AgentOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.response.content)
    }
}

/// A tool call about to run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool.
    pub tool_name: String,
    /// Its arguments.
    pub tool_kwargs: Map<String, Value>,
    /// The call's id, which the result answers.
    pub tool_id: String,
}
impl Event for ToolCall {}

/// A tool call's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The tool.
    pub tool_name: String,
    /// Its arguments.
    pub tool_kwargs: Map<String, Value>,
    /// The call's id.
    pub tool_id: String,
    /// What the tool returned (an error output when it failed).
    pub tool_output: ToolOutput,
    /// Whether the output is the run's answer.
    pub return_direct: bool,
}
impl Event for ToolCallResult {}

/// The structured answer, streamed once it is made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentStreamStructuredOutput {
    /// The answer, matching the output schema.
    pub output: Map<String, Value>,
}
impl Event for AgentStreamStructuredOutput {}
