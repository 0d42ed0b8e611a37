//! `MockLlm`: a model for tests and offline runs that echoes its prompt as
//! LlamaIndex's `MockLLM` does, or plays scripted replies, and records every request.

use super::llm::{
    Llm, ToolChatRequest, messages_to_prompt, messages_with_schema_instructions, parse_json_reply,
};
use super::types::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    LlmMetadata, MessageRole, ToolCall, ToolChoice,
};
use crate::error::{Error, Result};
use crate::tools::ToolMetadata;
use async_trait::async_trait;
use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Which method a [`MockRequest`] came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MockRequestKind {
    /// `chat` / `stream_chat`.
    Chat,
    /// `complete` / `stream_complete`.
    Complete,
    /// `chat_with_tools` / `stream_chat_with_tools`.
    ChatWithTools,
    /// `structured_chat`.
    Structured,
}

/// One request a [`MockLlm`] received.
#[derive(Clone, Debug, PartialEq)]
pub struct MockRequest {
    /// The method called.
    pub kind: MockRequestKind,
    /// Whether it was the streaming variant.
    pub stream: bool,
    /// The messages (empty for completions).
    pub messages: Vec<ChatMessage>,
    /// The prompt (completions only).
    pub prompt: Option<String>,
    /// The `formatted` flag (completions only).
    pub formatted: bool,
    /// The tools offered (`chat_with_tools` only).
    pub tools: Vec<ToolMetadata>,
    /// The tool choice (`chat_with_tools` only).
    pub tool_choice: Option<ToolChoice>,
    /// The JSON schema asked for (`structured_chat` only).
    pub schema: Option<Value>,
}

impl MockRequest {
    fn new(kind: MockRequestKind, stream: bool) -> Self {
        Self {
            kind,
            stream,
            messages: Vec::new(),
            prompt: None,
            formatted: false,
            tools: Vec::new(),
            tool_choice: None,
            schema: None,
        }
    }

    /// What the model was shown, as text: the prompt of a completion, or the
    /// messages of a chat rendered as `messages_to_prompt` renders them.
    pub fn prompt_text(&self) -> String {
        match &self.prompt {
            Some(p) => p.clone(),
            None => crate::llms::messages_to_prompt(&self.messages),
        }
    }
}

/// What a scripted [`MockLlm`] does once its replies are used up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhenExhausted {
    /// Fail with an error saying the script ran out (catches tests that call
    /// the model more often than they meant to).
    #[default]
    Error,
    /// Fall back to echoing, as an unscripted mock does.
    Echo,
}

#[derive(Clone, Debug)]
enum MockReply {
    Message(ChatMessage),
    Error(String),
}

/// A model for tests.
///
/// Unscripted ([`MockLlm::new`]) it behaves as LlamaIndex's `MockLLM`:
/// `complete` returns the prompt, `chat` returns the prompt
/// [`messages_to_prompt`] makes of the messages, and with `max_tokens` set
/// both return `"text"` that many times. Scripted ([`MockLlm::scripted`]) it
/// answers every call, whatever the method, with the next reply in order; a
/// reply may carry tool calls. Streaming splits the answer into word-sized
/// deltas whose concatenation is the answer. Every request is recorded for
/// [`MockLlm::requests`].
#[derive(Debug)]
pub struct MockLlm {
    metadata: LlmMetadata,
    max_tokens: Option<usize>,
    replies: Mutex<VecDeque<MockReply>>,
    when_exhausted: WhenExhausted,
    requests: Mutex<Vec<MockRequest>>,
    served: AtomicUsize,
}

impl Default for MockLlm {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A test that panicked while holding the lock should not hide its own
    // failure behind a poisoned-lock panic here.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl MockLlm {
    /// An echoing mock with `MockLLM()`'s metadata (`num_output` -1, context window 3900).
    pub fn new() -> Self {
        Self {
            metadata: LlmMetadata {
                num_output: -1,
                ..LlmMetadata::default()
            },
            max_tokens: None,
            replies: Mutex::new(VecDeque::new()),
            when_exhausted: WhenExhausted::Echo,
            requests: Mutex::new(Vec::new()),
            served: AtomicUsize::new(0),
        }
    }

    /// `MockLLM(max_tokens=n)`: every answer is `"text"` `n` times, and
    /// `num_output` is `n` (0 echoes, as in Python where 0 is falsy).
    pub fn with_max_tokens(max_tokens: usize) -> Self {
        let mut llm = Self::new();
        if max_tokens > 0 {
            llm.max_tokens = Some(max_tokens);
            llm.metadata.num_output = i64::try_from(max_tokens).unwrap_or(i64::MAX);
        }
        llm
    }

    /// A mock answering with `replies` in order (each becomes an assistant
    /// message), failing once they are used up (see [`Self::when_exhausted`]).
    pub fn scripted<I, M>(replies: I) -> Self
    where
        I: IntoIterator<Item = M>,
        M: Into<ChatMessage>,
    {
        let llm = Self {
            when_exhausted: WhenExhausted::Error,
            ..Self::new()
        };
        for reply in replies {
            llm.push_reply(reply);
        }
        llm
    }

    /// What to do once the scripted replies are used up.
    pub fn when_exhausted(mut self, when_exhausted: WhenExhausted) -> Self {
        self.when_exhausted = when_exhausted;
        self
    }

    /// Replaces the metadata.
    pub fn with_metadata(mut self, metadata: LlmMetadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the context window.
    pub fn context_window(mut self, context_window: usize) -> Self {
        self.metadata.context_window = context_window;
        self
    }

    /// Sets `num_output`.
    pub fn num_output(mut self, num_output: i64) -> Self {
        self.metadata.num_output = num_output;
        self
    }

    /// Says whether the mock supports native tool calling (`chat_with_tools`).
    pub fn function_calling(mut self, is_function_calling_model: bool) -> Self {
        self.metadata.is_function_calling_model = is_function_calling_model;
        self
    }

    /// Says whether the mock is a chat model.
    pub fn chat_model(mut self, is_chat_model: bool) -> Self {
        self.metadata.is_chat_model = is_chat_model;
        self
    }

    /// Sets the model name.
    pub fn model_name(mut self, model_name: impl Into<String>) -> Self {
        self.metadata.model_name = model_name.into();
        self
    }

    /// Appends a scripted reply (made an assistant message).
    pub fn push_reply(&self, reply: impl Into<ChatMessage>) {
        let mut message = reply.into();
        message.role = MessageRole::Assistant;
        lock(&self.replies).push_back(MockReply::Message(message));
    }

    /// Appends a scripted failure: that call returns [`Error::Provider`] with `message`.
    pub fn push_error(&self, message: impl Into<String>) {
        lock(&self.replies).push_back(MockReply::Error(message.into()));
    }

    /// Scripted replies not yet used.
    pub fn remaining_replies(&self) -> usize {
        lock(&self.replies).len()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<MockRequest> {
        lock(&self.requests).clone()
    }

    /// The latest request, if any.
    pub fn last_request(&self) -> Option<MockRequest> {
        lock(&self.requests).last().cloned()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    fn record(&self, request: MockRequest) {
        tracing::debug!(kind = ?request.kind, stream = request.stream, "mock llm request");
        lock(&self.requests).push(request);
    }

    /// The next scripted reply; `None` means echo.
    fn next_reply(&self) -> Result<Option<ChatMessage>> {
        let next = lock(&self.replies).pop_front();
        let served = self.served.fetch_add(1, Ordering::SeqCst);
        match next {
            Some(MockReply::Message(m)) => Ok(Some(m)),
            Some(MockReply::Error(message)) => Err(Error::Provider {
                provider: "mock".to_owned(),
                message,
                source: None,
            }),
            None => match self.when_exhausted {
                WhenExhausted::Echo => Ok(None),
                WhenExhausted::Error => Err(Error::Provider {
                    provider: "mock".to_owned(),
                    message: format!(
                        "MockLlm has no scripted reply left for request {} (all replies used up)",
                        served + 1
                    ),
                    source: None,
                }),
            },
        }
    }

    /// `MockLLM.complete`'s echo.
    fn echo(&self, prompt: &str) -> String {
        match self.max_tokens {
            Some(n) => vec!["text"; n].join(" "),
            None => prompt.to_owned(),
        }
    }

    fn chat_reply(&self, messages: &[ChatMessage]) -> Result<ChatMessage> {
        Ok(match self.next_reply()? {
            Some(m) => m,
            None => ChatMessage::assistant(self.echo(&messages_to_prompt(messages))),
        })
    }

    fn complete_reply(&self, prompt: &str) -> Result<String> {
        Ok(match self.next_reply()? {
            Some(m) => m.content,
            None => self.echo(prompt),
        })
    }

    /// `MockFunctionCallingLLM`'s default answer: after tool results, done;
    /// otherwise call every offered tool with its optional arguments' defaults.
    fn tool_echo(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolMetadata],
        choice: &ToolChoice,
    ) -> ChatMessage {
        if messages.iter().any(|m| m.role == MessageRole::Tool) {
            return ChatMessage::assistant("Tool calls complete.");
        }
        let offered: Vec<&ToolMetadata> = match choice {
            ToolChoice::None => Vec::new(),
            ToolChoice::Named(name) => tools.iter().filter(|t| &t.name == name).collect(),
            ToolChoice::Auto | ToolChoice::Required => tools.iter().collect(),
        };
        if offered.is_empty() {
            return ChatMessage::assistant("No tools available.");
        }
        let calls = offered
            .into_iter()
            .enumerate()
            .map(|(i, tool)| {
                ToolCall::new(
                    format!("mock-tool-call-{i}"),
                    tool.name.clone(),
                    Value::Object(optional_defaults(&tool.fn_schema)),
                )
            })
            .collect();
        ChatMessage::assistant_with_tool_calls("", calls)
    }

    fn require_function_calling(&self) -> Result<()> {
        if self.metadata.is_function_calling_model {
            Ok(())
        } else {
            Err(Error::Unsupported(format!(
                "model `{}` does not support native tool calling (chat_with_tools); build the mock \
                 with `.function_calling(true)`",
                self.metadata.model_name
            )))
        }
    }

    fn tools_request(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolMetadata],
        tool_choice: &ToolChoice,
        stream: bool,
    ) -> Result<ChatMessage> {
        let mut request = MockRequest::new(MockRequestKind::ChatWithTools, stream);
        request.messages = messages.to_vec();
        request.tools = tools.to_vec();
        request.tool_choice = Some(tool_choice.clone());
        self.record(request);
        self.require_function_calling()?;
        Ok(match self.next_reply()? {
            Some(m) => m,
            None => self.tool_echo(messages, tools, tool_choice),
        })
    }
}

/// The defaults of the optional properties of an arguments schema.
fn optional_defaults(schema: &Value) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            if !required.contains(&name.as_str()) {
                out.insert(
                    name.clone(),
                    prop.get("default").cloned().unwrap_or(Value::Null),
                );
            }
        }
    }
    out
}

/// Splits `text` into word-sized pieces, each a word with the whitespace
/// after it (leading whitespace stays with the first word); their
/// concatenation is `text`. Empty text is one empty piece.
pub fn split_into_word_deltas(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut seen_word = false;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else {
            if seen_word && in_space {
                pieces.push(&text[start..i]);
                start = i;
            }
            seen_word = true;
            in_space = false;
        }
    }
    if start < text.len() || pieces.is_empty() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Streams `message` as word deltas; the tool calls ride on the last item.
fn stream_message(message: ChatMessage) -> ChatResponseStream {
    let pieces: Vec<String> = split_into_word_deltas(&message.content)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let last = pieces.len().saturating_sub(1);
    let mut so_far = String::new();
    let items: Vec<Result<ChatResponse>> = pieces
        .into_iter()
        .enumerate()
        .map(|(i, delta)| {
            so_far.push_str(&delta);
            let mut partial = ChatMessage {
                content: so_far.clone(),
                tool_calls: Vec::new(),
                ..message.clone()
            };
            if i == last {
                partial.tool_calls = message.tool_calls.clone();
            }
            Ok(ChatResponse {
                message: partial,
                delta: Some(delta),
                raw: None,
                usage: None,
            })
        })
        .collect();
    stream::iter(items).boxed()
}

fn stream_text(text: &str) -> CompletionResponseStream {
    let mut so_far = String::new();
    let items: Vec<Result<CompletionResponse>> = split_into_word_deltas(text)
        .into_iter()
        .map(|delta| {
            so_far.push_str(delta);
            Ok(CompletionResponse {
                text: so_far.clone(),
                delta: Some(delta.to_owned()),
                raw: None,
                usage: None,
            })
        })
        .collect();
    stream::iter(items).boxed()
}

#[async_trait]
impl Llm for MockLlm {
    fn metadata(&self) -> LlmMetadata {
        self.metadata.clone()
    }

    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        let mut request = MockRequest::new(MockRequestKind::Chat, false);
        request.messages = messages.to_vec();
        self.record(request);
        Ok(ChatResponse::new(self.chat_reply(messages)?))
    }

    async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse> {
        let mut request = MockRequest::new(MockRequestKind::Complete, false);
        request.prompt = Some(prompt.to_owned());
        request.formatted = formatted;
        self.record(request);
        Ok(CompletionResponse::new(self.complete_reply(prompt)?))
    }

    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        let mut request = MockRequest::new(MockRequestKind::Chat, true);
        request.messages = messages.to_vec();
        self.record(request);
        Ok(stream_message(self.chat_reply(messages)?))
    }

    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> Result<CompletionResponseStream> {
        let mut request = MockRequest::new(MockRequestKind::Complete, true);
        request.prompt = Some(prompt.to_owned());
        request.formatted = formatted;
        self.record(request);
        Ok(stream_text(&self.complete_reply(prompt)?))
    }

    async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
        let message =
            self.tools_request(request.messages, request.tools, request.tool_choice, false)?;
        Ok(ChatResponse::new(message))
    }

    async fn stream_tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponseStream> {
        let message =
            self.tools_request(request.messages, request.tools, request.tool_choice, true)?;
        Ok(stream_message(message))
    }

    async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
        let mut request = MockRequest::new(MockRequestKind::Structured, false);
        request.messages = messages.to_vec();
        request.schema = Some(schema.clone());
        self.record(request);
        let text = match self.next_reply()? {
            Some(m) => m.content,
            // Echo what the default implementation would have sent.
            None => self.echo(&messages_to_prompt(&messages_with_schema_instructions(
                messages, schema,
            )?)),
        };
        parse_json_reply(&text)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn word_deltas_concatenate_to_the_text() {
        for text in [
            "",
            "one",
            "Hello big  world\n",
            "  lead and trail  ",
            "é ü\tx",
        ] {
            let pieces = split_into_word_deltas(text);
            assert_eq!(pieces.concat(), text);
            assert!(!pieces.is_empty());
        }
        assert_eq!(split_into_word_deltas("a bc  d"), ["a ", "bc  ", "d"]);
        assert_eq!(
            split_into_word_deltas("text text text"),
            ["text ", "text ", "text"]
        );
    }
}
