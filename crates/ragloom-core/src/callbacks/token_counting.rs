//! `TokenCountingHandler` and the `TokenCountingLlm` / `TokenCountingEmbedding`
//! wrappers that feed it, counting as LlamaIndex's handler and `TokenCounter` count.

use crate::embeddings::Embedding;
use crate::error::{Error, Result};
use crate::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    Llm, LlmMetadata, MessageRole, ToolCall, ToolChatRequest,
};
use crate::tokenizer::{Tokenizer, default_tokenizer};
use async_trait::async_trait;
use futures::stream::{Stream, StreamExt};
use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

/// Counts tokens in strings and chat messages (LlamaIndex `TokenCounter`).
#[derive(Clone, Debug)]
pub struct TokenCounter {
    tokenizer: Arc<dyn Tokenizer>,
}

impl Default for TokenCounter {
    fn default() -> Self {
        Self::new(default_tokenizer())
    }
}

impl TokenCounter {
    /// A counter using `tokenizer`.
    pub fn new(tokenizer: Arc<dyn Tokenizer>) -> Self {
        Self { tokenizer }
    }

    /// Tokens in `text`.
    pub fn get_string_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    /// LlamaIndex's estimate for a conversation: per message its role, its
    /// text and each tool call (as the JSON of LlamaIndex's `ToolCallBlock`),
    /// plus 3, minus 2 for tool and function results.
    pub fn estimate_tokens_in_messages(&self, messages: &[ChatMessage]) -> usize {
        messages
            .iter()
            .map(|m| {
                let mut tokens = self.get_string_tokens(m.role.as_str())
                    + self.get_string_tokens(&m.content)
                    + m.tool_calls
                        .iter()
                        .map(|c| self.get_string_tokens(&tool_call_block_json(c)))
                        .sum::<usize>()
                    + 3;
                if matches!(m.role, MessageRole::Tool | MessageRole::Function) {
                    tokens = tokens.saturating_sub(2);
                }
                tokens
            })
            .sum()
    }
}

/// A tool call as pydantic's compact `ToolCallBlock.model_dump_json()`.
fn tool_call_block_json(call: &ToolCall) -> String {
    json!({
        "block_type": "tool_call",
        "tool_call_id": call.id,
        "tool_name": call.name,
        "tool_kwargs": call.arguments,
    })
    .to_string()
}

/// The tokens of one LLM call or of one embedded text (LlamaIndex `TokenCountingEvent`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenCountingEvent {
    /// The prompt (for chats, one `role: content` line per message).
    pub prompt: String,
    /// The completion (for chats, `assistant: content`, as LlamaIndex renders it).
    pub completion: String,
    /// Tokens in the prompt.
    pub prompt_token_count: usize,
    /// Tokens in the completion (0 for embeddings).
    pub completion_token_count: usize,
    /// Their sum.
    pub total_token_count: usize,
    /// An id for this event.
    pub event_id: String,
}

impl TokenCountingEvent {
    fn new(
        prompt: String,
        completion: String,
        prompt_token_count: usize,
        completion_token_count: usize,
    ) -> Self {
        Self {
            prompt,
            completion,
            prompt_token_count,
            completion_token_count,
            total_token_count: prompt_token_count + completion_token_count,
            event_id: uuid::Uuid::new_v4().to_string(),
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    llm: Vec<TokenCountingEvent>,
    embedding: Vec<TokenCountingEvent>,
}

/// Sums the tokens of the LLM calls and embeddings of the models it wraps
/// (LlamaIndex `TokenCountingHandler`). Clones share the counts, so one
/// handler can watch several models and be read from anywhere.
///
/// Each LLM call counts the usage the provider reports; where it reports
/// none, the prompt and the completion are counted with the tokenizer
/// (core's `cl100k_base` unless changed), exactly as LlamaIndex does. The
/// counts are also recorded on the current `llm` tracing span
/// (`prompt_tokens`, `completion_tokens`) when it has those fields.
#[derive(Clone, Debug, Default)]
pub struct TokenCountingHandler {
    counter: TokenCounter,
    token_budget: Option<usize>,
    counts: Arc<Mutex<Counts>>,
}

impl TokenCountingHandler {
    /// A handler counting with core's default tokenizer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts with `tokenizer` instead.
    pub fn tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.counter = TokenCounter::new(tokenizer);
        self
    }

    /// Fails LLM calls once the total LLM tokens exceed `budget` (LlamaIndex
    /// `token_budget`): a call is refused when the budget is already spent,
    /// and the call that overspends it returns the error instead of its answer.
    pub fn token_budget(mut self, budget: usize) -> Self {
        self.token_budget = Some(budget);
        self
    }

    /// `llm`, counted by this handler.
    pub fn wrap_llm(&self, llm: Arc<dyn Llm>) -> Arc<TokenCountingLlm> {
        Arc::new(TokenCountingLlm {
            llm,
            handler: self.clone(),
        })
    }

    /// `embed_model`, counted by this handler.
    pub fn wrap_embedding(&self, embed_model: Arc<dyn Embedding>) -> Arc<TokenCountingEmbedding> {
        Arc::new(TokenCountingEmbedding {
            embed_model,
            handler: self.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        // Counts are appended whole; a panic elsewhere leaves them consistent.
        self.counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One event per LLM call, oldest first.
    pub fn llm_token_counts(&self) -> Vec<TokenCountingEvent> {
        self.lock().llm.clone()
    }

    /// One event per embedded text, oldest first.
    pub fn embedding_token_counts(&self) -> Vec<TokenCountingEvent> {
        self.lock().embedding.clone()
    }

    /// Prompt tokens of all LLM calls.
    pub fn prompt_llm_token_count(&self) -> usize {
        self.lock().llm.iter().map(|e| e.prompt_token_count).sum()
    }

    /// Completion tokens of all LLM calls.
    pub fn completion_llm_token_count(&self) -> usize {
        self.lock()
            .llm
            .iter()
            .map(|e| e.completion_token_count)
            .sum()
    }

    /// Prompt and completion tokens of all LLM calls.
    pub fn total_llm_token_count(&self) -> usize {
        self.lock().llm.iter().map(|e| e.total_token_count).sum()
    }

    /// Tokens of all embedded texts.
    pub fn total_embedding_token_count(&self) -> usize {
        self.lock()
            .embedding
            .iter()
            .map(|e| e.total_token_count)
            .sum()
    }

    /// Forgets every count.
    pub fn reset_counts(&self) {
        let mut counts = self.lock();
        counts.llm.clear();
        counts.embedding.clear();
    }

    /// An error when the LLM token budget is exceeded.
    pub fn check_budget(&self) -> Result<()> {
        match self.token_budget {
            Some(limit) => {
                let current = self.total_llm_token_count();
                if current > limit {
                    Err(Error::Other(format!(
                        "token budget exceeded: limit {limit}, current {current} LLM tokens"
                    )))
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }

    /// Counts one chat call: `messages` sent, `response` received.
    pub fn count_chat(&self, messages: &[ChatMessage], response: &ChatResponse) -> Result<()> {
        let usage = reported_usage(response.usage.as_ref(), response.raw.as_ref());
        self.record_chat(messages, response.to_string(), usage)
    }

    /// Counts one completion call.
    pub fn count_completion(&self, prompt: &str, response: &CompletionResponse) -> Result<()> {
        let usage = reported_usage(response.usage.as_ref(), response.raw.as_ref());
        self.record_completion(prompt, response.text.clone(), usage)
    }

    /// Counts texts sent to an embedding model, one event each.
    pub fn count_embedding(&self, texts: &[String]) {
        let events: Vec<TokenCountingEvent> = texts
            .iter()
            .map(|t| {
                let tokens = self.counter.get_string_tokens(t);
                TokenCountingEvent::new(t.clone(), String::new(), tokens, 0)
            })
            .collect();
        self.lock().embedding.extend(events);
    }

    fn record_chat(
        &self,
        messages: &[ChatMessage],
        completion: String,
        usage: (usize, usize),
    ) -> Result<()> {
        let prompt = messages
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        let prompt_tokens = match usage.0 {
            0 => self.counter.estimate_tokens_in_messages(messages),
            n => n,
        };
        self.record_llm(prompt, prompt_tokens, completion, usage.1)
    }

    fn record_completion(
        &self,
        prompt: &str,
        completion: String,
        usage: (usize, usize),
    ) -> Result<()> {
        let prompt_tokens = match usage.0 {
            0 => self.counter.get_string_tokens(prompt),
            n => n,
        };
        self.record_llm(prompt.to_owned(), prompt_tokens, completion, usage.1)
    }

    fn record_llm(
        &self,
        prompt: String,
        prompt_tokens: usize,
        completion: String,
        completion_tokens: usize,
    ) -> Result<()> {
        let completion_tokens = match completion_tokens {
            0 => self.counter.get_string_tokens(&completion),
            n => n,
        };
        let span = tracing::Span::current();
        span.record("prompt_tokens", prompt_tokens);
        span.record("completion_tokens", completion_tokens);
        self.lock().llm.push(TokenCountingEvent::new(
            prompt,
            completion,
            prompt_tokens,
            completion_tokens,
        ));
        self.check_budget()
    }
}

/// Prompt and completion tokens as the provider reports them (0 = not
/// reported): `usage`, else a `usage` / `usage_metadata` object in the raw
/// response under any of the key names LlamaIndex looks for.
fn reported_usage(usage: Option<&crate::llms::TokenUsage>, raw: Option<&Value>) -> (usize, usize) {
    if let Some(u) = usage {
        return (u.prompt_tokens, u.completion_tokens);
    }
    let Some(found) = raw.and_then(|r| r.get("usage").or_else(|| r.get("usage_metadata"))) else {
        return (0, 0);
    };
    let first = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| found.get(*k).and_then(Value::as_u64))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    };
    (
        first(&["prompt_tokens", "input_tokens", "prompt_token_count"]),
        first(&[
            "completion_tokens",
            "output_tokens",
            "candidates_token_count",
        ]),
    )
}

/// An [`Llm`] whose calls a [`TokenCountingHandler`] counts; everything else
/// is the wrapped model's. Build with [`TokenCountingHandler::wrap_llm`].
#[derive(Debug)]
pub struct TokenCountingLlm {
    llm: Arc<dyn Llm>,
    handler: TokenCountingHandler,
}

impl TokenCountingLlm {
    /// The wrapped model.
    pub fn inner(&self) -> &Arc<dyn Llm> {
        &self.llm
    }

    /// The handler counting it.
    pub fn handler(&self) -> &TokenCountingHandler {
        &self.handler
    }

    fn chat_stream(
        &self,
        messages: &[ChatMessage],
        stream: ChatResponseStream,
    ) -> ChatResponseStream {
        let handler = self.handler.clone();
        let messages = messages.to_vec();
        CountingStream::new(
            stream,
            |seen, item: &ChatResponse| {
                seen.text
                    .push_str(item.delta.as_deref().unwrap_or_default());
                seen.role = item.message.role;
                seen.has_tool_calls = !item.message.tool_calls.is_empty();
                seen.note_usage(reported_usage(item.usage.as_ref(), item.raw.as_ref()));
            },
            Box::new(move |seen| {
                // `str(ChatResponse)`: a reply made only of tool calls reads `None`.
                let text = if seen.text.is_empty() && seen.has_tool_calls {
                    "None"
                } else {
                    &seen.text
                };
                let completion = format!("{}: {text}", seen.role);
                handler.record_chat(&messages, completion, seen.usage)
            }),
        )
        .boxed()
    }
}

#[async_trait]
impl Llm for TokenCountingLlm {
    fn metadata(&self) -> LlmMetadata {
        self.llm.metadata()
    }

    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        self.handler.check_budget()?;
        let response = self.llm.chat(messages).await?;
        self.handler.count_chat(messages, &response)?;
        Ok(response)
    }

    async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse> {
        self.handler.check_budget()?;
        let response = self.llm.complete(prompt, formatted).await?;
        self.handler.count_completion(prompt, &response)?;
        Ok(response)
    }

    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        self.handler.check_budget()?;
        let stream = self.llm.stream_chat(messages).await?;
        Ok(self.chat_stream(messages, stream))
    }

    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> Result<CompletionResponseStream> {
        self.handler.check_budget()?;
        let stream = self.llm.stream_complete(prompt, formatted).await?;
        let handler = self.handler.clone();
        let prompt = prompt.to_owned();
        Ok(CountingStream::new(
            stream,
            |seen, item: &CompletionResponse| {
                seen.text
                    .push_str(item.delta.as_deref().unwrap_or_default());
                seen.note_usage(reported_usage(item.usage.as_ref(), item.raw.as_ref()));
            },
            Box::new(move |seen| handler.record_completion(&prompt, seen.text, seen.usage)),
        )
        .boxed())
    }

    async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
        self.handler.check_budget()?;
        let response = self.llm.tool_chat(request).await?;
        self.handler.count_chat(request.messages, &response)?;
        Ok(response)
    }

    async fn stream_tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponseStream> {
        self.handler.check_budget()?;
        let stream = self.llm.stream_tool_chat(request).await?;
        Ok(self.chat_stream(request.messages, stream))
    }

    /// Counted as a chat whose answer is the JSON value's text.
    async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
        self.handler.check_budget()?;
        let value = self.llm.structured_chat(messages, schema).await?;
        let reply = ChatMessage::assistant(value.to_string());
        self.handler
            .record_chat(messages, reply.to_string(), (0, 0))?;
        Ok(value)
    }
}

/// An [`Embedding`] whose texts a [`TokenCountingHandler`] counts. Build with
/// [`TokenCountingHandler::wrap_embedding`].
#[derive(Debug)]
pub struct TokenCountingEmbedding {
    embed_model: Arc<dyn Embedding>,
    handler: TokenCountingHandler,
}

impl TokenCountingEmbedding {
    /// The wrapped model.
    pub fn inner(&self) -> &Arc<dyn Embedding> {
        &self.embed_model
    }
}

#[async_trait]
impl Embedding for TokenCountingEmbedding {
    fn model_name(&self) -> &str {
        self.embed_model.model_name()
    }

    fn dimensions(&self) -> Option<usize> {
        self.embed_model.dimensions()
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_model.embed_batch_size()
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let vector = self.embed_model.embed_query(query).await?;
        self.handler.count_embedding(&[query.to_owned()]);
        Ok(vector)
    }

    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let vectors = self.embed_model.embed_texts(texts).await?;
        self.handler.count_embedding(texts);
        Ok(vectors)
    }
}

/// What a stream delivered so far.
#[derive(Debug)]
struct Seen {
    text: String,
    usage: (usize, usize),
    role: MessageRole,
    has_tool_calls: bool,
}

impl Seen {
    fn note_usage(&mut self, usage: (usize, usize)) {
        if usage.0 > 0 {
            self.usage.0 = usage.0;
        }
        if usage.1 > 0 {
            self.usage.1 = usage.1;
        }
    }
}

type OnEnd = Box<dyn FnOnce(Seen) -> Result<()> + Send>;

/// Passes a stream through, noting each item, and counts once: when the
/// stream ends, or when it is dropped early (then what arrived is counted,
/// since the provider charged for it).
struct CountingStream<T> {
    inner: futures::stream::BoxStream<'static, Result<T>>,
    seen: Option<Seen>,
    observe: fn(&mut Seen, &T),
    on_end: Option<OnEnd>,
    ended: bool,
}

impl<T> CountingStream<T> {
    fn new(
        inner: futures::stream::BoxStream<'static, Result<T>>,
        observe: fn(&mut Seen, &T),
        on_end: OnEnd,
    ) -> Self {
        Self {
            inner,
            seen: Some(Seen {
                text: String::new(),
                usage: (0, 0),
                role: MessageRole::Assistant,
                has_tool_calls: false,
            }),
            observe,
            on_end: Some(on_end),
            ended: false,
        }
    }

    fn finish(&mut self) -> Result<()> {
        match (self.on_end.take(), self.seen.take()) {
            (Some(on_end), Some(seen)) => on_end(seen),
            _ => Ok(()),
        }
    }
}

impl<T: Unpin> Stream for CountingStream<T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        match this.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(item))) => {
                if let Some(seen) = this.seen.as_mut() {
                    (this.observe)(seen, &item);
                }
                Poll::Ready(Some(Ok(item)))
            }
            Poll::Ready(None) => {
                this.ended = true;
                // A budget overspent by this answer surfaces as the last item.
                match this.finish() {
                    Ok(()) => Poll::Ready(None),
                    Err(e) => Poll::Ready(Some(Err(e))),
                }
            }
            other => other,
        }
    }
}

impl<T> Drop for CountingStream<T> {
    fn drop(&mut self) {
        // Nothing can be reported from a drop; the count is what matters.
        let _ = self.finish();
    }
}
