//! Ollama's `/api/chat` request and reply as serde types (the options and
//! keep-alive they carry are `ragloom-common-ollama`'s, shared with embeddings).

use ragloom_common_ollama::{KeepAlive, ModelOptions};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A chat message's role as Ollama's chat templates know them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of `/api/chat`, sent or received.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
}

/// A tool call: Ollama gives no id, only the function and its arguments.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    pub function: ToolCallFunction,
}

/// The function a [`ToolCall`] names; older servers said `parameters`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ToolCallFunction {
    pub name: String,
    #[serde(default, alias = "parameters")]
    pub arguments: Value,
}

/// `format`: any JSON, or a JSON schema the reply must follow.
#[derive(Clone, Debug)]
pub(crate) enum Format {
    Json,
    Schema(Value),
}

impl Serialize for Format {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Format::Json => serializer.serialize_str("json"),
            Format::Schema(schema) => schema.serialize(serializer),
        }
    }
}

/// The body of a `/api/chat` request.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    /// Tool definitions, already in `{"type": "function", "function": {...}}` form.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<ModelOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<KeepAlive>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<bool>,
}

/// A whole `/api/chat` reply (or one line of a stream).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ChatReply {
    pub message: Message,
    #[serde(default)]
    pub prompt_eval_count: Option<u64>,
    #[serde(default)]
    pub eval_count: Option<u64>,
}
