//! The `Llm` trait every model implements (chat, complete, stream, native tool
//! calling, JSON output) and the helpers that adapt chat and completion models to each other.

use super::types::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    LlmMetadata, MessageRole, ToolChoice, py_dict_repr,
};
use crate::error::{Error, Result};
use crate::tools::ToolMetadata;
use crate::tools::json_dumps;
use async_trait::async_trait;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;
use std::sync::Arc;

/// A language model. Shared as `Arc<dyn Llm>`; generic conveniences
/// (`structured_predict`, `predict_and_call`) live in extension traits with
/// blanket impls so this trait stays object-safe.
///
/// Providers implement `metadata`, `chat` and `complete`, and override the
/// streaming, tool-calling and structured methods where their API has them.
#[async_trait]
pub trait Llm: Send + Sync + std::fmt::Debug {
    /// What the model can do and how much it reads and writes.
    fn metadata(&self) -> LlmMetadata;

    /// Answers a conversation.
    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse>;

    /// Completes a prompt. `formatted` says the prompt already went through
    /// the model's `completion_to_prompt` template (LlamaIndex's flag).
    async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse>;

    /// Streams an answer; each item carries the delta and the message so far.
    /// Default: one item holding all of [`Llm::chat`]'s answer.
    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        let response = self.chat(messages).await?;
        Ok(single_chat_item(response))
    }

    /// Streams a completion; each item carries the delta and the text so far.
    /// Default: one item holding all of [`Llm::complete`]'s answer.
    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> Result<CompletionResponseStream> {
        let mut response = self.complete(prompt, formatted).await?;
        if response.delta.is_none() {
            response.delta = Some(response.text.clone());
        }
        Ok(stream::once(async move { Ok(response) }).boxed())
    }

    /// Native tool calling in the provider's wire format: the answer's
    /// message carries the tool calls. Providers implement
    /// [`tool_chat`](Self::tool_chat), which this calls, and leave this as
    /// it is (wrappers such as the token counter call `tool_chat`).
    async fn chat_with_tools(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolMetadata],
        tool_choice: &ToolChoice,
    ) -> Result<ChatResponse> {
        self.tool_chat(ToolChatRequest::new(messages, tools, tool_choice))
            .await
    }

    /// Streams [`Llm::chat_with_tools`]; the tool calls are complete on the
    /// last item. Providers implement [`stream_tool_chat`](Self::stream_tool_chat).
    async fn stream_chat_with_tools(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolMetadata],
        tool_choice: &ToolChoice,
    ) -> Result<ChatResponseStream> {
        self.stream_tool_chat(ToolChatRequest::new(messages, tools, tool_choice))
            .await
    }

    /// The provider's side of [`chat_with_tools`](Self::chat_with_tools): one
    /// request value, so options added to it later reach every provider
    /// without a change of signature. Default: [`Error::Unsupported`] naming the model.
    async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
        let _ = request;
        Err(no_tool_calling(&self.metadata()))
    }

    /// The provider's side of [`stream_chat_with_tools`](Self::stream_chat_with_tools).
    /// Default: one item holding all of [`tool_chat`](Self::tool_chat)'s answer.
    async fn stream_tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponseStream> {
        let response = self.tool_chat(request).await?;
        Ok(single_chat_item(response))
    }

    /// A JSON value matching `schema`. Providers override this with their
    /// constrained output (`response_format`, `format`). Default: the schema
    /// is appended to the prompt as LlamaIndex's `PydanticOutputParser` does,
    /// and the JSON object is taken from the reply (code fences and prose
    /// around it are ignored); an unparseable reply is [`Error::OutputParse`] quoting it.
    async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
        let prompt = messages_with_schema_instructions(messages, schema)?;
        let reply = self.chat(&prompt).await?;
        parse_json_reply(&reply.message.content)
    }
}

fn no_tool_calling(metadata: &LlmMetadata) -> Error {
    Error::Unsupported(format!(
        "model `{}` does not support native tool calling (chat_with_tools); use a function-calling \
         model or a ReAct agent",
        metadata.model_name
    ))
}

/// A chat turn that offers tools: what a provider's [`Llm::tool_chat`]
/// receives. Options added later arrive as fields (hence `non_exhaustive`:
/// build one with [`ToolChatRequest::new`]).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ToolChatRequest<'a> {
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    /// The tools the model may call.
    pub tools: &'a [ToolMetadata],
    /// Whether the model must call a tool, and which.
    pub tool_choice: &'a ToolChoice,
}

impl<'a> ToolChatRequest<'a> {
    /// A request offering `tools` after `messages`, under `tool_choice`.
    pub fn new(
        messages: &'a [ChatMessage],
        tools: &'a [ToolMetadata],
        tool_choice: &'a ToolChoice,
    ) -> Self {
        Self {
            messages,
            tools,
            tool_choice,
        }
    }
}

/// One stream item holding a whole chat answer, its delta the full text.
pub(crate) fn single_chat_item(mut response: ChatResponse) -> ChatResponseStream {
    if response.delta.is_none() {
        response.delta = Some(response.message.content.clone());
    }
    stream::once(async move { Ok(response) }).boxed()
}

macro_rules! forward_llm {
    ($($ptr:ident)::+) => {
        #[async_trait]
        impl<T: Llm + ?Sized> Llm for $($ptr)::+<T> {
            fn metadata(&self) -> LlmMetadata {
                (**self).metadata()
            }
            async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
                (**self).chat(messages).await
            }
            async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse> {
                (**self).complete(prompt, formatted).await
            }
            async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
                (**self).stream_chat(messages).await
            }
            async fn stream_complete(
                &self,
                prompt: &str,
                formatted: bool,
            ) -> Result<CompletionResponseStream> {
                (**self).stream_complete(prompt, formatted).await
            }
            // Both forms go through, so a model that overrides either works behind a pointer.
            async fn chat_with_tools(
                &self,
                messages: &[ChatMessage],
                tools: &[ToolMetadata],
                tool_choice: &ToolChoice,
            ) -> Result<ChatResponse> {
                (**self).chat_with_tools(messages, tools, tool_choice).await
            }
            async fn stream_chat_with_tools(
                &self,
                messages: &[ChatMessage],
                tools: &[ToolMetadata],
                tool_choice: &ToolChoice,
            ) -> Result<ChatResponseStream> {
                (**self).stream_chat_with_tools(messages, tools, tool_choice).await
            }
            async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
                (**self).tool_chat(request).await
            }
            async fn stream_tool_chat(
                &self,
                request: ToolChatRequest<'_>,
            ) -> Result<ChatResponseStream> {
                (**self).stream_tool_chat(request).await
            }
            async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
                (**self).structured_chat(messages, schema).await
            }
        }
    };
}

forward_llm!(Arc);
forward_llm!(Box);

/// LlamaIndex's generic `messages_to_prompt`: one `role: content` line per
/// message (its `additional_kwargs`, if any, on the next line as a Python
/// dict), then `assistant: ` for the model to continue.
pub fn messages_to_prompt(messages: &[ChatMessage]) -> String {
    let mut lines = history_lines(messages);
    lines.push(format!("{}: ", MessageRole::Assistant));
    lines.join("\n")
}

/// LlamaIndex's `messages_to_history_str`: [`messages_to_prompt`] without the
/// trailing `assistant: `.
pub fn messages_to_history_str(messages: &[ChatMessage]) -> String {
    history_lines(messages).join("\n")
}

fn history_lines(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let mut line = format!("{}: {}", m.role, m.content_str());
            let kwargs = m.llama_additional_kwargs();
            if !kwargs.is_empty() {
                line.push('\n');
                line.push_str(&py_dict_repr(&kwargs));
            }
            line
        })
        .collect()
}

/// LlamaIndex's `default_completion_to_prompt`: the prompt unchanged.
pub fn default_completion_to_prompt(prompt: &str) -> String {
    prompt.to_owned()
}

/// LlamaIndex's `prompt_to_messages`: the prompt as one user message.
pub fn prompt_to_messages(prompt: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::user(prompt)]
}

/// A completion seen as an assistant message.
pub fn completion_response_to_chat_response(response: CompletionResponse) -> ChatResponse {
    ChatResponse {
        message: ChatMessage::assistant(response.text),
        delta: response.delta,
        raw: response.raw,
        usage: response.usage,
    }
}

/// A chat answer seen as a completion (its text).
pub fn chat_response_to_completion_response(response: ChatResponse) -> CompletionResponse {
    CompletionResponse {
        text: response.message.content,
        delta: response.delta,
        raw: response.raw,
        usage: response.usage,
    }
}

/// A completion stream seen as a chat stream.
pub fn stream_completion_response_to_chat_response(
    stream: CompletionResponseStream,
) -> ChatResponseStream {
    stream
        .map(|item| item.map(completion_response_to_chat_response))
        .boxed()
}

/// A chat stream seen as a completion stream.
pub fn stream_chat_response_to_completion_response(
    stream: ChatResponseStream,
) -> CompletionResponseStream {
    stream
        .map(|item| item.map(chat_response_to_completion_response))
        .boxed()
}

/// The text deltas of a chat stream (LlamaIndex's `stream_chat_response_to_tokens`).
pub fn stream_chat_response_to_tokens(stream: ChatResponseStream) -> TokenStream {
    deltas(stream, |r| r.delta)
}

/// The text deltas of a completion stream (LlamaIndex's `stream_completion_response_to_tokens`).
pub fn stream_completion_response_to_tokens(stream: CompletionResponseStream) -> TokenStream {
    deltas(stream, |r| r.delta)
}

/// A stream of text deltas (what rustdoc shows expanded).
type TokenStream = BoxStream<'static, Result<String>>;

/// Each item's delta (empty when it has none), errors passed on.
fn deltas<T: Send + 'static>(
    stream: BoxStream<'static, Result<T>>,
    delta: fn(T) -> Option<String>,
) -> TokenStream {
    stream
        .map(move |item| item.map(|r| delta(r).unwrap_or_default()))
        .boxed()
}

/// The instruction LlamaIndex's `PydanticOutputParser` appends (`PYDANTIC_FORMAT_TMPL`).
pub fn json_schema_instructions(schema: &Value) -> String {
    format!(
        "\nHere's a JSON schema to follow:\n{}\n\nOutput a valid JSON object but do not repeat the schema.\n",
        json_dumps(schema)
    )
}

/// `messages` with [`json_schema_instructions`] appended, as LlamaIndex's
/// output parsers do: to a leading system message if there is one, else to
/// the last message. No messages is an error.
pub fn messages_with_schema_instructions(
    messages: &[ChatMessage],
    schema: &Value,
) -> Result<Vec<ChatMessage>> {
    let mut out = messages.to_vec();
    let index = match out.first() {
        None => {
            return Err(Error::InvalidInput(
                "structured output needs at least one message".to_owned(),
            ));
        }
        Some(first) if first.role == MessageRole::System => 0,
        Some(_) => out.len() - 1,
    };
    let target = &mut out[index];
    target.content = format!("{}\n\n{}", target.content, json_schema_instructions(schema));
    Ok(out)
}

/// The JSON in a model's reply: the whole reply if it parses, else the body
/// of a fenced code block, else the span from the first `{` to the last `}`
/// (LlamaIndex's `extract_json_str`), else from the first `[` to the last `]`.
/// Nothing parseable is [`Error::OutputParse`] quoting the reply.
pub fn parse_json_reply(text: &str) -> Result<Value> {
    let trimmed = text.trim();
    let mut candidates: Vec<&str> = vec![trimmed];
    if let Some(body) = fenced_block(trimmed) {
        candidates.push(body);
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(start), Some(end)) = (trimmed.find(open), trimmed.rfind(close)) {
            if start < end {
                candidates.push(&trimmed[start..=end]);
            }
        }
    }
    let mut last_error = None;
    for candidate in candidates {
        match serde_json::from_str::<Value>(candidate) {
            Ok(value) if value.is_object() || value.is_array() => return Ok(value),
            Ok(_) => {}
            Err(e) => last_error = Some(e),
        }
    }
    let why = last_error
        .map(|e| e.to_string())
        .unwrap_or_else(|| "no JSON object in it".to_owned());
    Err(Error::OutputParse(format!(
        "could not extract JSON from the model's reply ({why}); the reply was: {text:?}"
    )))
}

/// The body of the first ``` fenced block (any language tag), if closed.
fn fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n')? + 1;
    let body = &after[body_start..];
    let end = body.find("```")?;
    Some(body[..end].trim())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parse_json_reply_handles_fences_and_prose() {
        let v = parse_json_reply("Sure!\n```json\n{\"a\": 1}\n```\nDone.").unwrap();
        assert_eq!(v, json!({"a": 1}));
        let v = parse_json_reply("The answer is {\"a\": {\"b\": [1]}} as asked.").unwrap();
        assert_eq!(v, json!({"a": {"b": [1]}}));
        let v = parse_json_reply("[1, 2]").unwrap();
        assert_eq!(v, json!([1, 2]));
    }

    #[test]
    fn parse_json_reply_rejects_prose() {
        let err = parse_json_reply("I cannot answer that.").unwrap_err();
        assert!(matches!(err, Error::OutputParse(_)));
        assert!(err.to_string().contains("I cannot answer that."), "{err}");
    }

    #[test]
    fn schema_instructions_go_to_system_message_first() {
        let schema = json!({"type": "object"});
        let msgs = [ChatMessage::system("Be terse."), ChatMessage::user("Hi")];
        let out = messages_with_schema_instructions(&msgs, &schema).unwrap();
        assert!(
            out[0]
                .content
                .contains("Here's a JSON schema to follow:\n{\"type\": \"object\"}")
        );
        assert_eq!(out[1].content, "Hi");
        let out = messages_with_schema_instructions(&msgs[1..], &schema).unwrap();
        assert!(out[0].content.starts_with("Hi\n\n\nHere's a JSON schema"));
        assert!(messages_with_schema_instructions(&[], &schema).is_err());
    }
}
