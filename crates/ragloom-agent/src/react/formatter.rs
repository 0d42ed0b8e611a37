//! `ReActChatFormatter`: the messages a ReAct agent sends — LlamaIndex's
//! system header listing the tools, the chat history, then the reasoning so far.

use super::types::ReasoningStep;
use ragloom_core::error::Result;
use ragloom_core::llms::{ChatMessage, MessageRole};
use ragloom_core::tools::{Tool, ToolMetadata, json_dumps};
use ragloom_core::utils::format_named;
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

/// LlamaIndex's ReAct system header template, with `{context_prompt}` still in it.
const BASE_SYSTEM_HEADER: &str = include_str!("templates/system_header_template.md");

/// The text `{context_prompt}` becomes when there is context.
const CONTEXT_PROMPT: &str =
    "\nHere is some context to help you answer the question and plan:\n{context}\n";

/// LlamaIndex's `REACT_CHAT_SYSTEM_HEADER` (fields `{tool_desc}`, `{tool_names}`).
pub fn react_chat_system_header() -> &'static str {
    static HEADER: OnceLock<String> = OnceLock::new();
    HEADER.get_or_init(|| BASE_SYSTEM_HEADER.replacen("{context_prompt}", "", 1))
}

/// LlamaIndex's `CONTEXT_REACT_CHAT_SYSTEM_HEADER` (adds a `{context}` field).
pub fn context_react_chat_system_header() -> &'static str {
    static HEADER: OnceLock<String> = OnceLock::new();
    HEADER.get_or_init(|| BASE_SYSTEM_HEADER.replacen("{context_prompt}", CONTEXT_PROMPT, 1))
}

/// The tool's argument schema as LlamaIndex's `fn_schema_str` writes it: the
/// keys a model needs, in the schema's own order, dumped as Python's `json.dumps`.
pub fn react_fn_schema_str(metadata: &ToolMetadata) -> String {
    let Value::Object(schema) = &metadata.fn_schema else {
        return metadata.fn_schema_str();
    };
    let kept: Map<String, Value> = schema
        .iter()
        .filter(|(k, _)| {
            matches!(
                k.as_str(),
                "type" | "properties" | "required" | "definitions" | "$defs"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json_dumps(&Value::Object(kept))
}

/// One `> Tool Name: ...` block per tool (LlamaIndex `get_react_tool_descriptions`).
pub fn get_react_tool_descriptions(tools: &[Arc<dyn Tool>]) -> Vec<String> {
    tools
        .iter()
        .map(|tool| {
            let m = tool.metadata();
            format!(
                "> Tool Name: {}\nTool Description: {}\nTool Args: {}\n",
                m.name,
                m.description,
                react_fn_schema_str(m)
            )
        })
        .collect()
}

/// Formats a ReAct conversation (LlamaIndex `ReActChatFormatter`).
#[derive(Clone, Debug, PartialEq)]
pub struct ReActChatFormatter {
    /// The system header template (`{tool_desc}`, `{tool_names}`, and
    /// `{context}` when context is set).
    pub system_header: String,
    /// Context for the context header; empty for none.
    pub context: String,
    /// The role observations are sent with: `User` by default; `Tool` suits
    /// models that would otherwise take observations for the user speaking.
    pub observation_role: MessageRole,
}

impl Default for ReActChatFormatter {
    fn default() -> Self {
        Self {
            system_header: react_chat_system_header().to_owned(),
            context: String::new(),
            observation_role: MessageRole::User,
        }
    }
}

impl ReActChatFormatter {
    /// LlamaIndex's `from_defaults`: the default header, or the context
    /// header when `context` is given, unless `system_header` is given.
    pub fn from_defaults(
        system_header: Option<String>,
        context: Option<String>,
        observation_role: MessageRole,
    ) -> Self {
        let context = context.unwrap_or_default();
        let system_header = system_header.filter(|h| !h.is_empty()).unwrap_or_else(|| {
            if context.is_empty() {
                react_chat_system_header().to_owned()
            } else {
                context_react_chat_system_header().to_owned()
            }
        });
        Self {
            system_header,
            context,
            observation_role,
        }
    }

    /// The system header for `tools`.
    pub fn format_system_header(&self, tools: &[Arc<dyn Tool>]) -> Result<String> {
        let tool_desc = get_react_tool_descriptions(tools).join("\n");
        let tool_names = tools
            .iter()
            .map(|t| t.metadata().name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let context = self.context.as_str();
        let has_context = !context.is_empty();
        format_named(&self.system_header, &|name| match name {
            "tool_desc" => Some(tool_desc.as_str()),
            "tool_names" => Some(tool_names.as_str()),
            "context" if has_context => Some(context),
            _ => None,
        })
    }

    /// The system header, then `chat_history`, then each reasoning step:
    /// observations with `observation_role`, the rest as assistant messages.
    pub fn format(
        &self,
        tools: &[Arc<dyn Tool>],
        chat_history: &[ChatMessage],
        current_reasoning: &[ReasoningStep],
    ) -> Result<Vec<ChatMessage>> {
        let mut messages = Vec::with_capacity(1 + chat_history.len() + current_reasoning.len());
        messages.push(ChatMessage::system(self.format_system_header(tools)?));
        messages.extend_from_slice(chat_history);
        for step in current_reasoning {
            let role = match step {
                ReasoningStep::Observation(_) => self.observation_role,
                _ => MessageRole::Assistant,
            };
            messages.push(ChatMessage::new(role, step.get_content()));
        }
        Ok(messages)
    }
}
