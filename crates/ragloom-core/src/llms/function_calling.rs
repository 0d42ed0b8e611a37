//! Tool calling on top of any [`Llm`]: read the tool calls out of an answer,
//! and `predict_and_call` (ask the model, run the tools it picked, collect their outputs).

use super::llm::Llm;
use super::types::{ChatMessage, ChatResponse, MessageRole, ToolCall, ToolChoice};
use crate::error::{Error, Result};
use crate::tools::{Tool, ToolMetadata, ToolOutput, json_dumps};
use async_trait::async_trait;
use futures::future::join_all;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tracing::Instrument;

/// What [`FunctionCallingLlm::predict_and_call`] produced (LlamaIndex's
/// `AgentChatResponse` for this call).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentCallOutcome {
    /// The tool output's content (several joined by blank lines), or the
    /// model's text when it called no tool.
    pub response: String,
    /// Every tool output, in the order the model called them.
    pub sources: Vec<ToolOutput>,
    /// The tool calls the model made.
    pub tool_calls: Vec<ToolCall>,
}

/// Tool calling for every [`Llm`] (blanket impl): nothing to implement.
#[async_trait]
pub trait FunctionCallingLlm: Llm {
    /// The tool calls in `response`, arguments parsed: a string (arguments
    /// still arriving in a stream, or a provider that sends text) is parsed
    /// as JSON, completing a truncated object; arguments that are not an
    /// object become `{}` as LlamaIndex's `ToolSelection` makes them. No tool
    /// call is an [`Error::OutputParse`] when `error_on_no_tool_call`.
    fn get_tool_calls_from_response(
        &self,
        response: &ChatResponse,
        error_on_no_tool_call: bool,
    ) -> Result<Vec<ToolCall>> {
        let calls: Vec<ToolCall> = response
            .message
            .tool_calls
            .iter()
            .map(|call| ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: Value::Object(arguments_object(&call.arguments)),
            })
            .collect();
        if calls.is_empty() && error_on_no_tool_call {
            return Err(Error::OutputParse(format!(
                "expected at least one tool call from model `{}`, but got 0 tool calls; its reply was: {:?}",
                self.metadata().model_name,
                response.message.content
            )));
        }
        Ok(calls)
    }

    /// Asks the model which tools to call for `user_msg` after
    /// `chat_history`, runs them (concurrently) and returns their outputs.
    ///
    /// A tool that fails or is unknown yields an error [`ToolOutput`], not an
    /// `Err`. Several calls without `allow_parallel_tool_calls` is an error
    /// (and no tool runs). A model without native tool calling is asked for
    /// one call as JSON through [`Llm::structured_chat`].
    async fn predict_and_call(
        &self,
        tools: &[Arc<dyn Tool>],
        user_msg: Option<ChatMessage>,
        chat_history: &[ChatMessage],
        allow_parallel_tool_calls: bool,
    ) -> Result<AgentCallOutcome> {
        let mut messages = chat_history.to_vec();
        messages.extend(user_msg);
        let metadata = self.metadata();
        let span = tracing::info_span!("predict_and_call", model = %metadata.model_name, tools = tools.len());
        async move {
            let (tool_calls, text) = if metadata.is_function_calling_model {
                let tool_metadata: Vec<ToolMetadata> =
                    tools.iter().map(|t| t.metadata().clone()).collect();
                let response = self
                    .chat_with_tools(&messages, &tool_metadata, &ToolChoice::Auto)
                    .await?;
                let calls = self.get_tool_calls_from_response(&response, true)?;
                (calls, response.message.content)
            } else {
                (
                    select_tool_by_json(self, tools, &messages).await?,
                    String::new(),
                )
            };
            if tool_calls.len() > 1 && !allow_parallel_tool_calls {
                return Err(Error::InvalidInput(format!(
                    "model `{}` called {} tools ({}) but allow_parallel_tool_calls is false",
                    metadata.model_name,
                    tool_calls.len(),
                    tool_calls
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let sources = join_all(
                tool_calls
                    .iter()
                    .map(|call| call_tool_with_selection(call, tools)),
            )
            .await;
            let response = if sources.is_empty() {
                text
            } else {
                sources
                    .iter()
                    .map(|o| o.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n")
            };
            Ok(AgentCallOutcome {
                response,
                sources,
                tool_calls,
            })
        }
        .instrument(span)
        .await
    }
}

impl<T: Llm + ?Sized> FunctionCallingLlm for T {}

/// Runs the tool `tool_call` names with its arguments (LlamaIndex's
/// `call_tool_with_selection`): an unknown tool or an `Err` from the tool
/// becomes an error [`ToolOutput`] the model can read.
pub async fn call_tool_with_selection(tool_call: &ToolCall, tools: &[Arc<dyn Tool>]) -> ToolOutput {
    let Some(tool) = tools.iter().find(|t| t.metadata().name == tool_call.name) else {
        let names: Vec<&str> = tools.iter().map(|t| t.metadata().name.as_str()).collect();
        return ToolOutput::error(
            tool_call.name.clone(),
            tool_call.arguments.clone(),
            format!(
                "tool `{}` not found; available tools: {}",
                tool_call.name,
                names.join(", ")
            ),
        );
    };
    call_tool(tool.as_ref(), tool_call.arguments.clone()).await
}

/// Calls `tool`, turning an `Err` into an error [`ToolOutput`] (LlamaIndex's `call_tool`).
pub async fn call_tool(tool: &dyn Tool, arguments: Value) -> ToolOutput {
    let name = tool.metadata().name.clone();
    let span = tracing::info_span!("tool", tool = %name);
    match tool.call(arguments.clone()).instrument(span).await {
        Ok(output) => output,
        Err(e) => ToolOutput::error(name, arguments, e),
    }
}

/// Tool-call arguments as an object: parses strings (completing truncated
/// JSON), and anything that is not an object becomes empty.
pub fn arguments_object(arguments: &Value) -> Map<String, Value> {
    match arguments {
        Value::Object(map) => map.clone(),
        Value::String(s) => match parse_partial_json(s) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// Parses JSON that may have been cut off mid-stream (LlamaIndex's
/// `parse_partial_json`): open strings, arrays and objects are closed, a
/// dangling key is dropped, a key without its value gets `null`, a trailing
/// comma goes. `None` if even that does not parse.
pub fn parse_partial_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let mut repaired = String::with_capacity(text.len() + 8);
    let mut closers: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    // Where the string being read began, to drop it if it was an unfinished key.
    let mut string_start = 0;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if c == '\n' {
                repaired.push_str("\\n");
                continue;
            }
        } else {
            match c {
                '"' => {
                    in_string = true;
                    string_start = repaired.len();
                }
                '{' => closers.push('}'),
                '[' => closers.push(']'),
                // A closer that does not match the innermost opener: malformed.
                '}' | ']' if closers.pop() != Some(c) => return None,
                _ => {}
            }
        }
        repaired.push(c);
    }
    if in_string {
        if escaped {
            repaired.pop();
        }
        // An unfinished string that is an object key (inside an object, after
        // `{` or `,`) cannot be completed meaningfully: drop it.
        let before = repaired[..string_start].trim_end();
        if closers.last() == Some(&'}') && (before.ends_with('{') || before.ends_with(',')) {
            repaired.truncate(string_start);
        } else {
            repaired.push('"');
        }
    }
    let trimmed_len = repaired.trim_end().len();
    repaired.truncate(trimmed_len);
    if repaired.ends_with(':') {
        repaired.push_str(" null");
    } else if repaired.ends_with(',') {
        repaired.pop();
    }
    while let Some(c) = closers.pop() {
        repaired.push(c);
    }
    serde_json::from_str(&repaired).ok()
}

/// Text-prompted tool selection for models without native tool calling:
/// the tools are listed with their argument schemas and the model answers
/// with one call as JSON.
async fn select_tool_by_json<L: Llm + ?Sized>(
    llm: &L,
    tools: &[Arc<dyn Tool>],
    messages: &[ChatMessage],
) -> Result<Vec<ToolCall>> {
    if tools.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<Value> = tools.iter().map(|t| json!(t.metadata().name)).collect();
    let listing = tools
        .iter()
        .map(|t| {
            let m = t.metadata();
            format!(
                "> Tool Name: {}\nTool Description: {}\nTool Args: {}\n",
                m.name,
                m.description,
                m.fn_schema_str()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut prompt = vec![ChatMessage::new(
        MessageRole::System,
        format!(
            "You have access to the following tools:\n{listing}\nChoose exactly one tool for the user's \
             request and give its arguments as `tool_kwargs`."
        ),
    )];
    prompt.extend(messages.iter().cloned());
    let schema = json!({
        "type": "object",
        "properties": {
            "tool_name": {"type": "string", "enum": names},
            "tool_kwargs": {"type": "object"}
        },
        "required": ["tool_name", "tool_kwargs"]
    });
    let reply = llm.structured_chat(&prompt, &schema).await?;
    let name = reply
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Error::OutputParse(format!(
                "model `{}` chose no tool: its reply has no string `tool_name`: {}",
                llm.metadata().model_name,
                json_dumps(&reply)
            ))
        })?
        .to_owned();
    let arguments = Value::Object(arguments_object(
        reply.get("tool_kwargs").unwrap_or(&Value::Null),
    ));
    Ok(vec![ToolCall::new("call_0", name, arguments)])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn partial_json_is_completed() {
        assert_eq!(parse_partial_json(r#"{"a": 1"#), Some(json!({"a": 1})));
        assert_eq!(
            parse_partial_json(r#"{"a": "hel"#),
            Some(json!({"a": "hel"}))
        );
        assert_eq!(
            parse_partial_json(r#"{"a": [1, 2"#),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(parse_partial_json(r#"{"a": 1, "b"#), Some(json!({"a": 1})));
        assert_eq!(parse_partial_json(r#"{"a":"#), Some(json!({"a": null})));
        assert_eq!(parse_partial_json(r#"{"a": 1,"#), Some(json!({"a": 1})));
        assert_eq!(
            parse_partial_json(r#"{"a": "x\"y"#),
            Some(json!({"a": "x\"y"}))
        );
        assert_eq!(parse_partial_json("{]"), None);
    }

    #[test]
    fn arguments_that_are_not_objects_become_empty() {
        assert_eq!(arguments_object(&json!([1])), Map::new());
        assert_eq!(arguments_object(&json!("{\"x\": 2}"))["x"], json!(2));
        assert_eq!(arguments_object(&json!("nonsense")), Map::new());
    }
}
