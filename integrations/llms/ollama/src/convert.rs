//! Translation between ragloom's chat types and Ollama's `/api/chat` wire
//! types: messages, roles, tool definitions, tool calls, usage.

use crate::wire::{
    ChatReply, Format, Message as WireMessage, Role as WireRole, ToolCall as WireToolCall,
    ToolCallFunction,
};
use ragloom_common_ollama::PROVIDER;
use ragloom_core::llms::{
    ChatMessage, ChatResponse, MessageRole, TokenUsage, ToolCall, arguments_object,
};
use ragloom_core::tools::ToolMetadata;
use ragloom_core::{Error, Result};
use serde_json::Value;
use std::collections::HashMap;

/// The key under which a model's reasoning (`message.thinking`) is kept in
/// `ChatMessage::additional_kwargs`, and read back when the message is resent.
pub const THINKING_KEY: &str = "thinking";

/// Tool names as sent to Ollama (sanitised to `[a-zA-Z0-9_-]`, as OpenAI-style
/// tool definitions require) mapped back to the caller's names, so the calls a
/// model makes name tools the caller can find.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolNames(HashMap<String, String>);

impl ToolNames {
    fn original<'a>(&'a self, sent: &'a str) -> &'a str {
        self.0.get(sent).map(String::as_str).unwrap_or(sent)
    }
}

/// The role Ollama knows that is closest to `role`: Ollama's chat templates
/// understand `system`, `user`, `assistant` and `tool` only.
fn wire_role(role: MessageRole) -> WireRole {
    match role {
        MessageRole::System | MessageRole::Developer => WireRole::System,
        MessageRole::User => WireRole::User,
        MessageRole::Assistant | MessageRole::Chatbot | MessageRole::Model => WireRole::Assistant,
        MessageRole::Tool | MessageRole::Function => WireRole::Tool,
    }
}

fn core_role(role: WireRole) -> MessageRole {
    match role {
        WireRole::System => MessageRole::System,
        WireRole::User => MessageRole::User,
        WireRole::Assistant => MessageRole::Assistant,
        WireRole::Tool => MessageRole::Tool,
    }
}

/// The name a tool is sent under: characters outside `[a-zA-Z0-9_-]` become `_`.
pub(crate) fn sanitize_tool_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Messages in Ollama's shape (`role`, `content`, `tool_calls` of
/// `{"function": {"name", "arguments"}}`, `thinking`), as LlamaIndex's
/// `_convert_to_ollama_messages` writes them. Tool-call arguments that are
/// still a JSON string are parsed into an object.
pub(crate) fn to_wire_messages(messages: &[ChatMessage]) -> Vec<WireMessage> {
    messages
        .iter()
        .map(|m| WireMessage {
            role: wire_role(m.role),
            content: m.content.clone(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|call| WireToolCall {
                    function: ToolCallFunction {
                        name: sanitize_tool_name(&call.name),
                        arguments: Value::Object(arguments_object(&call.arguments)),
                    },
                })
                .collect(),
            thinking: m
                .additional_kwargs
                .get(THINKING_KEY)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
        })
        .collect()
}

/// Tool definitions in Ollama's `tools` shape (`{"type": "function",
/// "function": {name, description, parameters}}`), with the names to map calls back.
pub(crate) fn to_wire_tools(tools: &[ToolMetadata]) -> Result<(Vec<Value>, ToolNames)> {
    let mut names = HashMap::with_capacity(tools.len());
    let mut infos = Vec::with_capacity(tools.len());
    for tool in tools {
        let spec = tool.to_openai_tool_unchecked();
        let function = &spec["function"];
        if !function["parameters"].is_object() {
            return Err(Error::InvalidInput(format!(
                "tool `{}`: its argument schema cannot be sent to Ollama: it is not a JSON object",
                tool.name
            )));
        }
        let sent = function["name"].as_str().unwrap_or_default().to_owned();
        names.insert(sent, tool.name.clone());
        infos.push(spec);
    }
    Ok((infos, ToolNames(names)))
}

/// One tool call from Ollama. Ollama gives calls no id, so the tool's name
/// serves as one, as in LlamaIndex.
pub(crate) fn tool_call_from_wire(call: &WireToolCall, names: &ToolNames) -> ToolCall {
    let name = names.original(&call.function.name).to_owned();
    ToolCall::new(name.clone(), name, call.function.arguments.clone())
}

/// Token usage from Ollama's eval counts (`prompt_eval_count`, `eval_count`).
pub(crate) fn usage(prompt_eval_count: u64, eval_count: u64) -> TokenUsage {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    TokenUsage::new(to_usize(prompt_eval_count), to_usize(eval_count))
}

/// A whole (non-streamed) `/api/chat` reply as a [`ChatResponse`].
pub(crate) fn chat_response(raw: Value, reply: ChatReply, names: &ToolNames) -> ChatResponse {
    let mut message = ChatMessage::new(core_role(reply.message.role), reply.message.content);
    message.tool_calls = reply
        .message
        .tool_calls
        .iter()
        .map(|call| tool_call_from_wire(call, names))
        .collect();
    if let Some(thinking) = reply.message.thinking.filter(|t| !t.is_empty()) {
        message
            .additional_kwargs
            .insert(THINKING_KEY.to_owned(), Value::String(thinking));
    }
    ChatResponse {
        message,
        delta: None,
        raw: Some(raw),
        usage: match (reply.prompt_eval_count, reply.eval_count) {
            (None, None) => None,
            (prompt, eval) => Some(usage(prompt.unwrap_or(0), eval.unwrap_or(0))),
        },
    }
}

/// `format` for a JSON schema. Ollama wants an object schema.
pub(crate) fn schema_format(schema: &Value) -> Result<Format> {
    if !schema.is_object() {
        return Err(Error::InvalidInput(format!(
            "{PROVIDER}: the structured-output schema must be a JSON object, got {schema}"
        )));
    }
    Ok(Format::Schema(schema.clone()))
}
