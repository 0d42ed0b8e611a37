//! OpenAI's chat and completion wire format: ragloom messages and tools to request
//! JSON, and replies (whole or streamed) back, read leniently so OpenAI-compatible servers pass.
//!
//! Replies are read into these crate's own serde types rather than
//! async-openai's: servers such as llama.cpp, vLLM or LM Studio send empty
//! `finish_reason`s, omit `id`, `created` or `usage`, or send `null` where
//! OpenAI sends a string, and strict types would reject the whole reply.

use ragloom_core::llms::{ChatMessage, MessageRole, TokenUsage, ToolCall, parse_partial_json};
use ragloom_core::tools::json_dumps;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// A chat completion (`object: "chat.completion"`), every field optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireChatCompletion {
    pub choices: Vec<WireChoice>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
}

/// One choice of a chat completion or of a streamed chunk.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireChoice {
    pub message: Option<WireMessage>,
    pub delta: Option<WireMessage>,
    /// Text of a `/completions` choice.
    pub text: Option<String>,
    pub finish_reason: Option<String>,
}

/// A message or a streamed delta.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireMessage {
    pub role: Option<String>,
    /// A string, `null`, or (some servers) a list of `{"type": "text", "text"}` parts.
    pub content: Value,
    pub tool_calls: Option<Vec<WireToolCall>>,
}

/// A tool call, whole or a streamed fragment of one.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireToolCall {
    pub index: Option<u64>,
    pub id: Option<String>,
    pub function: Option<WireFunction>,
}

/// The function part of a tool call.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireFunction {
    pub name: Option<String>,
    /// A JSON string per OpenAI; some servers send the object itself.
    pub arguments: Value,
}

/// Token counts; servers omit some or all.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
}

impl WireUsage {
    pub(crate) fn to_usage(self) -> TokenUsage {
        let prompt = self.prompt_tokens.unwrap_or(0) as usize;
        let completion = self.completion_tokens.unwrap_or(0) as usize;
        TokenUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: self
                .total_tokens
                .map(|t| t as usize)
                .unwrap_or(prompt + completion),
        }
    }
}

/// The text of a message's `content`: a string, the text parts of a list joined, or "".
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                other => other.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A role string from the wire; unknown or absent roles are the assistant's.
pub(crate) fn parse_role(role: Option<&str>) -> MessageRole {
    role.and_then(|r| serde_json::from_value(Value::String(r.to_owned())).ok())
        .unwrap_or(MessageRole::Assistant)
}

/// Tool-call arguments as JSON: the object when the string parses (a
/// truncated one is completed as LlamaIndex's `parse_partial_json` does), `{}`
/// when empty, and the string itself when it is not JSON at all, so the caller
/// sees what the model wrote.
pub(crate) fn parse_arguments(arguments: &Value) -> Value {
    match arguments {
        Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
        Value::String(s) => parse_partial_json(s).unwrap_or_else(|| Value::String(s.clone())),
        Value::Null => Value::Object(Map::new()),
        other => other.clone(),
    }
}

/// A whole reply's message as a ragloom message.
pub(crate) fn message_from_wire(message: &WireMessage) -> ChatMessage {
    let tool_calls = message
        .tool_calls
        .iter()
        .flatten()
        .map(|call| {
            let function = call.function.clone().unwrap_or_default();
            ToolCall::new(
                call.id.clone().unwrap_or_default(),
                function.name.unwrap_or_default(),
                parse_arguments(&function.arguments),
            )
        })
        .collect();
    ChatMessage {
        role: parse_role(message.role.as_deref()),
        content: content_text(&message.content),
        tool_calls,
        tool_call_id: None,
        additional_kwargs: Map::new(),
    }
}

/// One message as OpenAI's chat format takes it (LlamaIndex's
/// `to_openai_message_dict` for text and tool calls): `content` a string,
/// `null` for an assistant turn made only of tool calls; tool calls with
/// their arguments as a JSON string; `tool_call_id` on tool results;
/// `system` becomes `developer` for reasoning models.
pub(crate) fn message_to_wire(message: &ChatMessage, developer_role: bool) -> Value {
    let role = match message.role {
        MessageRole::System if developer_role => "developer",
        other => other.as_str(),
    };
    let legacy_calls = message.tool_calls.is_empty()
        && (message.additional_kwargs.contains_key("tool_calls")
            || message.additional_kwargs.contains_key("function_call"));
    let content = if message.content.is_empty()
        && message.role == MessageRole::Assistant
        && (!message.tool_calls.is_empty() || legacy_calls)
    {
        Value::Null
    } else {
        Value::String(message.content.clone())
    };
    let mut out = Map::new();
    out.insert("role".to_owned(), Value::String(role.to_owned()));
    out.insert("content".to_owned(), content);
    if !message.tool_calls.is_empty() {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .map(|call| {
                let arguments = match &call.arguments {
                    Value::String(s) => s.clone(),
                    other => json_dumps(other),
                };
                json!({
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                    "id": call.id,
                })
            })
            .collect();
        out.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    if legacy_calls {
        // Messages built by hand with OpenAI's own tool_calls in the kwargs,
        // as LlamaIndex passes them through.
        for (k, v) in &message.additional_kwargs {
            out.insert(k.clone(), v.clone());
        }
    }
    let tool_call_id = message.tool_call_id.clone().or_else(|| {
        message
            .additional_kwargs
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(id) = tool_call_id {
        out.insert("tool_call_id".to_owned(), Value::String(id));
    }
    Value::Object(out)
}

/// A provider error carried in a 200 reply's body (`{"error": ...}`), as text.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string()),
        other => other.to_string(),
    }
}

/// A schema made acceptable to OpenAI's strict structured outputs, as the
/// openai SDK's `to_strict_json_schema` does for LlamaIndex: every object
/// closed (`additionalProperties: false`) and listing all its properties as
/// required, `"default": null` dropped, recursively through properties,
/// items, `anyOf`/`allOf`/`oneOf` and definitions.
pub(crate) fn to_strict_json_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            "properties" | "$defs" | "definitions" => match value {
                Value::Object(children) => Value::Object(
                    children
                        .iter()
                        .map(|(k, v)| (k.clone(), to_strict_json_schema(v)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" => to_strict_json_schema(value),
            "anyOf" | "allOf" | "oneOf" | "prefixItems" => match value {
                Value::Array(variants) => {
                    Value::Array(variants.iter().map(to_strict_json_schema).collect())
                }
                other => other.clone(),
            },
            "default" if value.is_null() => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    let is_object =
        out.get("type").and_then(Value::as_str) == Some("object") || out.contains_key("properties");
    if is_object {
        out.entry("additionalProperties")
            .or_insert(Value::Bool(false));
        if let Some(Value::Object(props)) = out.get("properties") {
            let required: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
            out.insert("required".to_owned(), Value::Array(required));
        }
    }
    Value::Object(out)
}

/// The name a JSON schema goes by in a request: its `title`, made a valid
/// name, or `output`.
pub(crate) fn schema_name(schema: &serde_json::Value) -> String {
    schema
        .get("title")
        .and_then(serde_json::Value::as_str)
        .map(sanitize_name)
        .unwrap_or_else(|| "output".to_owned())
}

/// OpenAI's name rule for response formats and functions (`^[a-zA-Z0-9_-]{1,64}$`).
pub(crate) fn sanitize_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "output".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lenient_reply_parses() {
        let raw = json!({
            "choices": [{"message": {"role": "assistant", "content": "Hi"}, "finish_reason": ""}]
        });
        let reply: WireChatCompletion = serde_json::from_value(raw).unwrap();
        assert!(reply.usage.is_none());
        let msg = message_from_wire(reply.choices[0].message.as_ref().unwrap());
        assert_eq!(msg.content, "Hi");
        assert_eq!(msg.role, MessageRole::Assistant);
    }

    #[test]
    fn content_parts_and_nulls() {
        assert_eq!(content_text(&json!(null)), "");
        assert_eq!(
            content_text(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])),
            "ab"
        );
    }

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments(&json!("{\"a\": 1}")), json!({"a": 1}));
        assert_eq!(
            parse_arguments(&json!("{\"a\": [1, 2")),
            json!({"a": [1, 2]})
        );
        assert_eq!(parse_arguments(&json!("")), json!({}));
        assert_eq!(parse_arguments(&json!({"b": 2})), json!({"b": 2}));
        assert_eq!(parse_arguments(&json!("not json")), json!("not json"));
    }

    #[test]
    fn messages_go_out_in_openai_shape() {
        let call = ToolCall::new("call_1", "add", json!({"a": 1}));
        let m = ChatMessage::assistant_with_tool_calls("", vec![call]);
        assert_eq!(
            message_to_wire(&m, false),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "add", "arguments": "{\"a\": 1}"}, "id": "call_1"}
            ]})
        );
        let r = ChatMessage::tool_result("call_1", "add", "2");
        assert_eq!(
            message_to_wire(&r, false),
            json!({"role": "tool", "content": "2", "tool_call_id": "call_1"})
        );
        let s = ChatMessage::system("be brief");
        assert_eq!(message_to_wire(&s, true)["role"], "developer");
        assert_eq!(message_to_wire(&s, false)["role"], "system");
    }

    #[test]
    fn strict_schema_closes_objects_and_requires_everything() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "string", "default": null}}}}
            },
            "required": ["name"]
        });
        let strict = to_strict_json_schema(&schema);
        assert_eq!(strict["additionalProperties"], json!(false));
        assert_eq!(strict["required"], json!(["name", "tags"]));
        let inner = &strict["properties"]["tags"]["items"];
        assert_eq!(inner["additionalProperties"], json!(false));
        assert_eq!(inner["required"], json!(["t"]));
        assert!(inner["properties"]["t"].get("default").is_none());
    }

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize_name("My Output!"), "My_Output_");
        assert_eq!(sanitize_name(""), "output");
        assert_eq!(sanitize_name(&"x".repeat(80)).len(), 64);
    }
}
