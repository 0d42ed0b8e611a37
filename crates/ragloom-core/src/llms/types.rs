//! The values that travel to and from a language model: chat messages and their
//! roles, tool calls, chat and completion responses (whole or streamed), usage and metadata.

use crate::error::Result;
use crate::schema::py_repr;
use futures::stream::BoxStream;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};
use std::fmt;

/// LlamaIndex's `DEFAULT_CONTEXT_WINDOW`: tokens a model sees per call when it does not say.
pub const DEFAULT_CONTEXT_WINDOW: usize = 3900;
/// LlamaIndex's `DEFAULT_NUM_OUTPUTS`: tokens reserved for the model's answer.
pub const DEFAULT_NUM_OUTPUTS: i64 = 256;

/// Who said a chat message. Serialised as LlamaIndex's lowercase strings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// Instructions that frame the conversation.
    System,
    /// OpenAI's newer name for system instructions.
    Developer,
    /// The human (LlamaIndex's default role).
    #[default]
    User,
    /// The model.
    Assistant,
    /// Legacy OpenAI function result.
    Function,
    /// A tool's result, answering one tool call.
    Tool,
    /// Cohere's name for the model.
    Chatbot,
    /// Gemini's name for the model.
    Model,
}

impl MessageRole {
    /// The lowercase string LlamaIndex uses (`MessageRole.value`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageRole::System => "system",
            MessageRole::Developer => "developer",
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::Function => "function",
            MessageRole::Tool => "tool",
            MessageRole::Chatbot => "chatbot",
            MessageRole::Model => "model",
        }
    }
}

impl fmt::Display for MessageRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call of a tool requested by a model (LlamaIndex's `ToolSelection` /
/// `ToolCallBlock`). Serialised with `ToolSelection`'s field names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; a tool result answers it by this id.
    #[serde(rename = "tool_id", alias = "id", alias = "tool_call_id", default)]
    pub id: String,
    /// The tool's name.
    #[serde(rename = "tool_name", alias = "name")]
    pub name: String,
    /// The arguments: normally a JSON object; a string while a stream is still
    /// delivering them (see `get_tool_calls_from_response`, which parses it).
    #[serde(rename = "tool_kwargs", alias = "arguments", default)]
    pub arguments: Value,
}

/// LlamaIndex's name for a [`ToolCall`].
pub type ToolSelection = ToolCall;

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    /// `ToolSelection.tool_id`.
    pub fn tool_id(&self) -> &str {
        &self.id
    }

    /// `ToolSelection.tool_name`.
    pub fn tool_name(&self) -> &str {
        &self.name
    }

    /// `ToolSelection.tool_kwargs`.
    pub fn tool_kwargs(&self) -> &Value {
        &self.arguments
    }
}

/// One message of a conversation.
///
/// JSON is LlamaIndex's `ChatMessage.model_dump()` shape (`role`,
/// `additional_kwargs`, `blocks` of text and tool-call blocks, the tool call id
/// inside `additional_kwargs`), so chat stores persisted by either side load in
/// the other. Reading also accepts the older `{"role", "content"}` shape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatMessage {
    /// Who said it.
    pub role: MessageRole,
    /// The text (LlamaIndex's `content`: its text blocks joined by newlines).
    pub content: String,
    /// Tools the model asked to call (assistant messages only).
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// Provider-specific extras, kept as given.
    pub additional_kwargs: Map<String, Value>,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: MessageRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            ..Default::default()
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(MessageRole::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(MessageRole::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(MessageRole::Assistant, content)
    }

    /// An assistant message that calls tools (its text may be empty).
    pub fn assistant_with_tool_calls(
        content: impl Into<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        Self {
            tool_calls,
            ..Self::assistant(content)
        }
    }

    /// A tool's result answering the call `tool_call_id`; the tool's name goes
    /// into `additional_kwargs["name"]`, where OpenAI-style providers look for it.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let mut additional_kwargs = Map::new();
        additional_kwargs.insert("name".to_owned(), Value::String(name.into()));
        Self {
            role: MessageRole::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
            additional_kwargs,
        }
    }

    /// Replaces the tool calls.
    pub fn with_tool_calls(mut self, tool_calls: Vec<ToolCall>) -> Self {
        self.tool_calls = tool_calls;
        self
    }

    /// Adds one entry to `additional_kwargs`.
    pub fn with_additional_kwarg(
        mut self,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        self.additional_kwargs.insert(key.into(), value.into());
        self
    }

    /// `additional_kwargs` as LlamaIndex holds them: the tool call id, when
    /// there is one, comes first under `tool_call_id`.
    pub fn llama_additional_kwargs(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(id) = &self.tool_call_id {
            out.insert("tool_call_id".to_owned(), Value::String(id.clone()));
        }
        for (k, v) in &self.additional_kwargs {
            if k != "tool_call_id" || self.tool_call_id.is_none() {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }

    /// The content as Python's f-strings render `ChatMessage.content`: a
    /// message made only of tool calls has no text block there, so `None`.
    pub fn content_str(&self) -> &str {
        if self.content.is_empty() && !self.tool_calls.is_empty() {
            "None"
        } else {
            &self.content
        }
    }
}

impl fmt::Display for ChatMessage {
    /// `role: content`, as LlamaIndex's `ChatMessage.__str__`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.role, self.content_str())
    }
}

impl From<&str> for ChatMessage {
    /// A user message, as LlamaIndex turns a bare string into one.
    fn from(text: &str) -> Self {
        ChatMessage::user(text)
    }
}

impl From<String> for ChatMessage {
    /// A user message, as LlamaIndex turns a bare string into one.
    fn from(text: String) -> Self {
        ChatMessage::user(text)
    }
}

impl Serialize for ChatMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut blocks = Vec::with_capacity(1 + self.tool_calls.len());
        // LlamaIndex keeps an empty text block for `content=""` but none for a
        // message made only of tool calls; mirror that so dumps compare equal.
        if !self.content.is_empty() || self.tool_calls.is_empty() {
            blocks.push(json!({"block_type": "text", "text": self.content}));
        }
        for call in &self.tool_calls {
            blocks.push(json!({
                "block_type": "tool_call",
                "tool_call_id": call.id,
                "tool_name": call.name,
                "tool_kwargs": call.arguments,
            }));
        }
        let mut map = Map::new();
        map.insert(
            "role".to_owned(),
            Value::String(self.role.as_str().to_owned()),
        );
        map.insert(
            "additional_kwargs".to_owned(),
            Value::Object(self.llama_additional_kwargs()),
        );
        map.insert("blocks".to_owned(), Value::Array(blocks));
        map.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ChatMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let raw = Map::<String, Value>::deserialize(deserializer)?;
        chat_message_from_map(raw).map_err(D::Error::custom)
    }
}

fn chat_message_from_map(mut raw: Map<String, Value>) -> std::result::Result<ChatMessage, String> {
    let role = match raw.remove("role") {
        None | Some(Value::Null) => MessageRole::User,
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|_| format!("chat message field `role`: unknown role {v}"))?,
    };
    let mut additional_kwargs = match raw.remove("additional_kwargs") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "chat message field `additional_kwargs`: expected an object, got {other}"
            ));
        }
    };
    let tool_call_id = match additional_kwargs.remove("tool_call_id") {
        Some(Value::String(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let mut texts: Vec<String> = Vec::new();
    let mut tool_calls = Vec::new();
    match raw.remove("blocks") {
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.into_iter().enumerate() {
                let kind = block
                    .get("block_type")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match kind {
                    "text" => texts.push(
                        block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                    ),
                    "tool_call" => {
                        let call: ToolCall = serde_json::from_value(json!({
                            "tool_id": block.get("tool_call_id").and_then(Value::as_str).unwrap_or(""),
                            "tool_name": block.get("tool_name").cloned().unwrap_or(Value::Null),
                            "tool_kwargs": block.get("tool_kwargs").cloned().unwrap_or_else(|| json!({})),
                        }))
                        .map_err(|e| format!("chat message `blocks[{i}]` (tool_call): {e}"))?;
                        tool_calls.push(call);
                    }
                    // Images, audio, documents, thinking: not modelled here;
                    // dropped rather than failing a whole chat history.
                    _ => {}
                }
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => {
            return Err(format!(
                "chat message field `blocks`: expected a list, got {other}"
            ));
        }
    }
    if let Some(content) = raw.remove("content") {
        match content {
            Value::String(s) => texts.push(s),
            Value::Null => {}
            other => {
                return Err(format!(
                    "chat message field `content`: expected a string, got {other}"
                ));
            }
        }
    }
    Ok(ChatMessage {
        role,
        content: texts.join("\n"),
        tool_calls,
        tool_call_id,
        additional_kwargs,
    })
}

/// Tokens a call used, as the provider reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated.
    pub completion_tokens: usize,
    /// Their sum (as reported; providers may count extra tokens).
    pub total_tokens: usize,
}

impl TokenUsage {
    /// Usage with `total_tokens` the sum of the two.
    pub fn new(prompt_tokens: usize, completion_tokens: usize) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
        }
    }
}

/// A chat model's answer. When streamed, each item carries the newest `delta`
/// and the `message` accumulated so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message (whole, or so far when streaming).
    pub message: ChatMessage,
    /// The text that arrived with this stream item.
    #[serde(default)]
    pub delta: Option<String>,
    /// The provider's raw response, for inspection.
    #[serde(default)]
    pub raw: Option<Value>,
    /// Token usage, when the provider reports it.
    #[serde(default)]
    pub usage: Option<TokenUsage>,
}

impl ChatResponse {
    /// A response carrying `message`.
    pub fn new(message: ChatMessage) -> Self {
        Self {
            message,
            ..Default::default()
        }
    }
}

impl fmt::Display for ChatResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message.fmt(f)
    }
}

/// A completion model's answer. When streamed, each item carries the newest
/// `delta` and the `text` accumulated so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionResponse {
    /// The text (whole, or so far when streaming).
    pub text: String,
    /// The text that arrived with this stream item.
    #[serde(default)]
    pub delta: Option<String>,
    /// The provider's raw response, for inspection.
    #[serde(default)]
    pub raw: Option<Value>,
    /// Token usage, when the provider reports it.
    #[serde(default)]
    pub usage: Option<TokenUsage>,
}

impl CompletionResponse {
    /// A response with `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Default::default()
        }
    }
}

impl fmt::Display for CompletionResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A streamed chat answer.
pub type ChatResponseStream = BoxStream<'static, Result<ChatResponse>>;
/// A streamed completion.
pub type CompletionResponseStream = BoxStream<'static, Result<CompletionResponse>>;

/// What a model can do and how much it can read and write, as LlamaIndex's
/// `LLMMetadata` (same defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmMetadata {
    /// Tokens the model can take in and put out in one call.
    pub context_window: usize,
    /// Tokens reserved for the answer. Signed because LlamaIndex's `MockLLM`
    /// reports -1 ("no limit") and prompt packing depends on the exact value.
    pub num_output: i64,
    /// Whether the model takes a list of messages rather than one prompt.
    pub is_chat_model: bool,
    /// Whether the model supports native tool calling (`chat_with_tools`).
    pub is_function_calling_model: bool,
    /// The model's name, for logs and error messages.
    pub model_name: String,
    /// The role system instructions are sent with.
    pub system_role: MessageRole,
}

impl Default for LlmMetadata {
    fn default() -> Self {
        Self {
            context_window: DEFAULT_CONTEXT_WINDOW,
            num_output: DEFAULT_NUM_OUTPUTS,
            is_chat_model: false,
            is_function_calling_model: false,
            model_name: "unknown".to_owned(),
            system_role: MessageRole::System,
        }
    }
}

/// Whether and which tool a model must call (OpenAI's `tool_choice`, LlamaIndex's `tool_required`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool may be called.
    None,
    /// Some tool must be called (LlamaIndex's `tool_required=True`).
    Required,
    /// This tool must be called.
    Named(String),
}

impl ToolChoice {
    /// The OpenAI wire form: `"auto"`, `"none"`, `"required"` or
    /// `{"type": "function", "function": {"name": ...}}`.
    pub fn to_openai(&self) -> Value {
        match self {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        }
    }
}

/// Renders `additional_kwargs` as Python's `str(dict)` (used in prompts built from messages).
pub(crate) fn py_dict_repr(map: &Map<String, Value>) -> String {
    py_repr(&Value::Object(map.clone()))
}
