//! Streamed replies: server-sent chunks folded into ragloom's stream items, each
//! carrying its text delta and the message so far, with tool calls assembled from their fragments.

use crate::client::OpenAIClient;
use crate::wire::{
    WireChatCompletion, WireToolCall, content_text, error_text, parse_arguments, parse_role,
};
use async_openai::error::OpenAIError;
use futures::stream::{BoxStream, StreamExt};
use ragloom_core::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    MessageRole, ToolCall,
};
use ragloom_core::{Error, Result};
use serde_json::{Map, Value};

/// A tool call whose fragments are still arriving.
#[derive(Clone, Debug, Default, PartialEq)]
struct PartialToolCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Assembles streamed tool-call fragments.
///
/// OpenAI sends each call's `id` and `name` in its first fragment and the
/// arguments in pieces after it, every fragment tagged with the call's
/// `index`; parallel calls have distinct indexes, and one chunk may carry
/// fragments of several. Servers that omit `index` get a new call whenever a
/// fragment brings a new `id`. Names and ids are appended like the arguments
/// (as LlamaIndex's `update_tool_calls` does), except that a fragment
/// repeating the whole value, as some servers send, is not doubled.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolCallAssembler {
    calls: Vec<PartialToolCall>,
}

impl ToolCallAssembler {
    pub(crate) fn push(&mut self, fragments: &[WireToolCall]) {
        for fragment in fragments {
            let id = fragment.id.as_deref().unwrap_or("");
            let index = match fragment.index {
                Some(i) => i,
                None => match self.calls.last() {
                    Some(last) if id.is_empty() || last.id == id || last.id.is_empty() => {
                        last.index
                    }
                    // Saturating: the index came from the server.
                    Some(last) => last.index.saturating_add(1),
                    None => 0,
                },
            };
            let position = match self.calls.iter().position(|c| c.index == index) {
                Some(p) => p,
                None => {
                    self.calls.push(PartialToolCall {
                        index,
                        ..Default::default()
                    });
                    self.calls.len() - 1
                }
            };
            let call = &mut self.calls[position];
            append_fragment(&mut call.id, id);
            if let Some(function) = &fragment.function {
                append_fragment(&mut call.name, function.name.as_deref().unwrap_or(""));
                match &function.arguments {
                    Value::String(s) => call.arguments.push_str(s),
                    Value::Null => {}
                    // A server sending the arguments object whole.
                    other => call.arguments = other.to_string(),
                }
            }
        }
    }

    /// The calls so far, in index order, arguments parsed as far as they go.
    pub(crate) fn tool_calls(&self) -> Vec<ToolCall> {
        let mut calls = self.calls.clone();
        calls.sort_by_key(|c| c.index);
        calls
            .into_iter()
            .map(|c| ToolCall::new(c.id, c.name, parse_arguments(&Value::String(c.arguments))))
            .collect()
    }
}

fn append_fragment(value: &mut String, fragment: &str) {
    if !fragment.is_empty() && value != fragment {
        value.push_str(fragment);
    }
}

/// One streamed event, raw and read as a chunk; an error when the transport
/// failed, the event is unreadable or it is a provider error rather than a chunk.
fn read_chunk(
    client: &OpenAIClient,
    what: &str,
    item: std::result::Result<Value, OpenAIError>,
) -> Result<(Value, WireChatCompletion)> {
    let raw = item.map_err(|e| client.map_error(what, e))?;
    let chunk: WireChatCompletion = serde_json::from_value(raw.clone()).map_err(|e| {
        Error::provider(
            crate::client::PROVIDER,
            format!("{what}: unreadable stream chunk ({e}): {raw}"),
            e,
        )
    })?;
    match &chunk.error {
        Some(e) => Err(Error::Provider {
            provider: crate::client::PROVIDER.to_owned(),
            message: format!(
                "{what}: the server reported an error mid-stream: {}",
                client.scrub(&error_text(e))
            ),
            source: None,
        }),
        None => Ok((raw, chunk)),
    }
}

/// Folds streamed chat chunks into chat responses: each carries the chunk's
/// text as `delta`, the message so far (tool calls included, arguments parsed
/// as far as they have arrived) and the raw chunk.
pub(crate) fn chat_stream(
    chunks: BoxStream<'static, std::result::Result<Value, OpenAIError>>,
    client: OpenAIClient,
    what: String,
) -> ChatResponseStream {
    let mut content = String::new();
    let mut role = MessageRole::Assistant;
    let mut assembler = ToolCallAssembler::default();
    let what_end = what.clone();
    let responses = chunks
        .map(move |item| -> Result<ChatResponse> {
            let (raw, chunk) = read_chunk(&client, &what, item)?;
            let mut delta = String::new();
            if let Some(d) = chunk.choices.first().and_then(|c| c.delta.as_ref()) {
                if d.role.is_some() {
                    role = parse_role(d.role.as_deref());
                }
                delta = content_text(&d.content);
                content.push_str(&delta);
                if let Some(fragments) = &d.tool_calls {
                    assembler.push(fragments);
                }
            }
            let message = ChatMessage {
                role,
                content: content.clone(),
                tool_calls: assembler.tool_calls(),
                tool_call_id: None,
                additional_kwargs: Map::new(),
            };
            Ok(ChatResponse {
                message,
                delta: Some(delta),
                raw: Some(raw),
                usage: chunk.usage.map(|u| u.to_usage()),
            })
        })
        .boxed();
    require_finish(responses, |r| finished(r.raw.as_ref()), what_end)
}

/// Whether a raw chunk ends a choice (a non-empty `finish_reason`).
fn finished(raw: Option<&Value>) -> bool {
    raw.and_then(|r| r.get("choices"))
        .and_then(Value::as_array)
        .is_some_and(|choices| {
            choices.iter().any(|c| {
                c.get("finish_reason")
                    .and_then(Value::as_str)
                    .is_some_and(|f| !f.is_empty())
            })
        })
}

/// `stream`, with an error at its end when no item finished a choice: a
/// reply cut off cleanly (the connection closed before `[DONE]`) reads like
/// a complete one to the SSE layer, and an answer cut short must not pass
/// for a whole one.
fn require_finish<T: Send + 'static>(
    stream: BoxStream<'static, Result<T>>,
    is_final: impl Fn(&T) -> bool + Send + Sync + 'static,
    what: String,
) -> BoxStream<'static, Result<T>> {
    let is_final = std::sync::Arc::new(is_final);
    let state = (stream, false, false, Some(what));
    futures::stream::unfold(state, move |(mut stream, done, failed, what)| {
        let is_final = std::sync::Arc::clone(&is_final);
        async move {
            let what = what?;
            match stream.next().await {
                Some(item) => {
                    let done = done || item.as_ref().is_ok_and(|i| is_final(i));
                    let failed = failed || item.is_err();
                    Some((item, (stream, done, failed, Some(what))))
                }
                None if done || failed => None,
                None => Some((
                    Err(Error::Provider {
                        provider: crate::client::PROVIDER.to_owned(),
                        message: format!(
                            "{what}: the stream ended before the model finished \
                             (no finish_reason and no [DONE]): the connection was cut"
                        ),
                        source: None,
                    }),
                    (stream, done, true, None),
                )),
            }
        }
    })
    .boxed()
}

/// Folds streamed `/completions` chunks into completion responses.
pub(crate) fn completion_stream(
    chunks: BoxStream<'static, std::result::Result<Value, OpenAIError>>,
    client: OpenAIClient,
    what: String,
) -> CompletionResponseStream {
    let mut text = String::new();
    let what_end = what.clone();
    let responses = chunks
        .map(move |item| -> Result<CompletionResponse> {
            let (raw, chunk) = read_chunk(&client, &what, item)?;
            let delta = chunk
                .choices
                .first()
                .and_then(|c| c.text.clone())
                .unwrap_or_default();
            text.push_str(&delta);
            Ok(CompletionResponse {
                text: text.clone(),
                delta: Some(delta),
                raw: Some(raw),
                usage: chunk.usage.map(|u| u.to_usage()),
            })
        })
        .boxed();
    require_finish(responses, |r| finished(r.raw.as_ref()), what_end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fragments(v: Value) -> Vec<WireToolCall> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn parallel_calls_assemble_by_index() {
        let mut a = ToolCallAssembler::default();
        a.push(&fragments(json!([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}])));
        a.push(&fragments(
            json!([{"index": 0, "function": {"arguments": "{\"city\": \"Pa"}}]),
        ));
        a.push(&fragments(json!([{"index": 1, "id": "call_b", "function": {"name": "get_time", "arguments": "{\"tz\""}}])));
        a.push(&fragments(json!([{"index": 0, "function": {"arguments": "ris\"}"}}, {"index": 1, "function": {"arguments": ": \"CET\"}"}}])));
        let calls = a.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call_a", "get_weather")
        );
        assert_eq!(calls[0].arguments, json!({"city": "Paris"}));
        assert_eq!(
            (calls[1].id.as_str(), calls[1].name.as_str()),
            ("call_b", "get_time")
        );
        assert_eq!(calls[1].arguments, json!({"tz": "CET"}));
    }

    #[test]
    fn calls_without_index_split_on_new_ids_and_repeats_are_not_doubled() {
        let mut a = ToolCallAssembler::default();
        a.push(&fragments(
            json!([{"id": "x1", "function": {"name": "f", "arguments": "{\"a\":"}}]),
        ));
        a.push(&fragments(
            json!([{"id": "x1", "function": {"name": "f", "arguments": " 1}"}}]),
        ));
        a.push(&fragments(
            json!([{"id": "x2", "function": {"name": "g", "arguments": "{}"}}]),
        ));
        let calls = a.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "f");
        assert_eq!(calls[0].arguments, json!({"a": 1}));
        assert_eq!(calls[1].name, "g");
    }

    #[test]
    fn the_largest_index_a_server_can_send_does_not_overflow() {
        let mut a = ToolCallAssembler::default();
        a.push(&fragments(
            json!([{"index": u64::MAX, "id": "x1", "function": {"name": "f", "arguments": "{}"}}]),
        ));
        a.push(&fragments(
            json!([{"id": "x2", "function": {"name": "g", "arguments": "{}"}}]),
        ));
        let calls = a.tool_calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].id, "x1x2");
    }

    #[test]
    fn partial_arguments_are_completed_while_streaming() {
        let mut a = ToolCallAssembler::default();
        a.push(&fragments(json!([{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{\"q\": \"hel"}}])));
        assert_eq!(a.tool_calls()[0].arguments, json!({"q": "hel"}));
    }
}
