//! `ChatMemoryBuffer`: the whole conversation kept in memory, of which the
//! newest messages that fit a token limit are sent, as LlamaIndex 0.14.25 counts and cuts them.

use super::BaseMemory;
use crate::error::{Error, Result};
use crate::llms::{ChatMessage, Llm, MessageRole};
use crate::tokenizer::{Tokenizer, default_tokenizer};
use async_trait::async_trait;
use std::sync::{Arc, Mutex, MutexGuard};

/// LlamaIndex's `DEFAULT_TOKEN_LIMIT` for a buffer built without an LLM.
pub const DEFAULT_TOKEN_LIMIT: usize = 3000;
/// Share of the LLM's context window a buffer built from an LLM may fill.
pub const DEFAULT_TOKEN_LIMIT_RATIO: f64 = 0.75;

/// Keeps every message and hands out the newest ones whose text fits
/// `token_limit` (LlamaIndex `ChatMemoryBuffer`).
///
/// Messages are dropped oldest first and whole, and a window of more than
/// one message never opens on an assistant or tool message, so a tool call
/// and its results go or stay together. When little fits, the newest
/// message alone is returned (with the call it answers, if it is a tool
/// result) so that the model, not the memory, reports an overflow.
///
/// ```
/// # futures::executor::block_on(async {
/// use ragloom_core::llms::ChatMessage;
/// use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
///
/// let memory = ChatMemoryBuffer::builder().token_limit(8).build()?;
/// memory.put_messages(vec![
///     ChatMessage::user("Tell me a long story about dragons."),
///     ChatMessage::assistant("Once upon a time there was a dragon."),
///     ChatMessage::user("Shorter!"),
/// ]).await?;
/// let window = memory.get(0).await?;
/// assert_eq!(window, vec![ChatMessage::user("Shorter!")]);
/// assert_eq!(memory.get_all().await?.len(), 3);
/// # Ok::<(), ragloom_core::Error>(()) }).unwrap();
/// ```
#[derive(Debug)]
pub struct ChatMemoryBuffer {
    token_limit: usize,
    tokenizer: Arc<dyn Tokenizer>,
    messages: Mutex<Vec<ChatMessage>>,
}

/// Options of a [`ChatMemoryBuffer`] (LlamaIndex `ChatMemoryBuffer.from_defaults`).
#[derive(Debug, Default)]
pub struct ChatMemoryBufferBuilder {
    token_limit: Option<usize>,
    context_window: Option<usize>,
    chat_history: Vec<ChatMessage>,
    tokenizer: Option<Arc<dyn Tokenizer>>,
}

impl ChatMemoryBufferBuilder {
    /// The token limit (default: 3000, or 75% of the LLM's context window
    /// when [`llm`](Self::llm) is given). Must be at least 1.
    pub fn token_limit(mut self, token_limit: usize) -> Self {
        self.token_limit = Some(token_limit);
        self
    }

    /// Sizes the default limit from `llm`'s context window.
    pub fn llm(mut self, llm: &dyn Llm) -> Self {
        self.context_window = Some(llm.metadata().context_window);
        self
    }

    /// The conversation so far.
    pub fn chat_history(mut self, chat_history: Vec<ChatMessage>) -> Self {
        self.chat_history = chat_history;
        self
    }

    /// Counts tokens with `tokenizer` (default: core's `cl100k_base`, as LlamaIndex's `get_tokenizer()`).
    pub fn tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// Builds the buffer; a token limit of 0 is an error.
    pub fn build(self) -> Result<ChatMemoryBuffer> {
        let token_limit = match (self.token_limit, self.context_window) {
            (Some(limit), _) => limit,
            // `int(context_window * 0.75)` in Python: truncation toward zero.
            (None, Some(window)) => (window as f64 * DEFAULT_TOKEN_LIMIT_RATIO) as usize,
            (None, None) => DEFAULT_TOKEN_LIMIT,
        };
        if token_limit == 0 {
            return Err(Error::InvalidInput(
                "chat memory `token_limit` must be at least 1".to_owned(),
            ));
        }
        Ok(ChatMemoryBuffer {
            token_limit,
            tokenizer: self.tokenizer.unwrap_or_else(default_tokenizer),
            messages: Mutex::new(self.chat_history),
        })
    }
}

impl Default for ChatMemoryBuffer {
    fn default() -> Self {
        Self::from_defaults()
    }
}

impl ChatMemoryBuffer {
    /// An empty buffer with LlamaIndex's default limit of 3000 tokens.
    pub fn from_defaults() -> Self {
        Self {
            token_limit: DEFAULT_TOKEN_LIMIT,
            tokenizer: default_tokenizer(),
            messages: Mutex::new(Vec::new()),
        }
    }

    /// A builder for the other options.
    pub fn builder() -> ChatMemoryBufferBuilder {
        ChatMemoryBufferBuilder::default()
    }

    /// The token limit.
    pub fn token_limit(&self) -> usize {
        self.token_limit
    }

    fn lock(&self) -> MutexGuard<'_, Vec<ChatMessage>> {
        // The vector is only ever replaced or extended whole, so a panic
        // elsewhere cannot leave it half-changed; keep serving it.
        self.messages
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tokens of the messages' texts joined by spaces, as LlamaIndex counts
    /// them (`" ".join(str(m.content))`, so a tool-call-only message counts as `None`).
    fn token_count(&self, messages: &[ChatMessage]) -> usize {
        if messages.is_empty() {
            return 0;
        }
        let joined = messages
            .iter()
            .map(ChatMessage::content_str)
            .collect::<Vec<_>>()
            .join(" ");
        self.tokenizer.count(&joined)
    }

    /// The index where the window sent with the next call starts.
    ///
    /// LlamaIndex tries window sizes from the whole history down and keeps
    /// the first that fits, counting each one afresh: quadratic in the
    /// history's length once it overflows. Token counts shrink as windows
    /// shrink (up to a token where a message's first word tokenizes
    /// differently after a space), so long histories bisect the same
    /// sequence of sizes, check that the next larger size does not fit, and
    /// fall back to LlamaIndex's scan if it does.
    fn window_start(&self, history: &[ChatMessage], initial_token_count: usize) -> Result<usize> {
        if initial_token_count > self.token_limit {
            return Err(Error::InvalidInput(format!(
                "initial token count {initial_token_count} (the prefix messages) exceeds the chat \
                 memory's token limit {}",
                self.token_limit
            )));
        }
        let n = history.len();
        let fits = |count: usize| {
            self.token_count(&history[n - count..]) + initial_token_count <= self.token_limit
        };
        let sizes = window_sizes(history);
        let scan = |sizes: &[usize]| sizes.iter().position(|&c| fits(c));
        let found = if fits(sizes[0]) {
            Some(0)
        } else if sizes.len() <= LINEAR_SCAN_MAX {
            scan(&sizes[1..]).map(|i| i + 1)
        } else {
            match first_fit_bisect(&sizes, &fits) {
                Some(i) if fits(sizes[i - 1]) => scan(&sizes[..i]),
                other => other,
            }
        };
        Ok(match found {
            Some(i) if sizes[i] > 0 => keep_results_with_their_call(history, n - sizes[i]),
            // Nothing fits (or nothing is stored): the newest message alone.
            _ => keep_results_with_their_call(history, n.saturating_sub(1)),
        })
    }
}

/// Histories with at most this many candidate windows are scanned exactly
/// as LlamaIndex scans them.
const LINEAR_SCAN_MAX: usize = 16;

/// The next window LlamaIndex tries after the last `count` messages: one
/// message fewer, then fewer still while it would open on an assistant or
/// tool message, down to 1.
fn smaller_window(history: &[ChatMessage], mut count: usize) -> usize {
    let n = history.len();
    count -= 1;
    while count > 1
        && matches!(
            history[n - count].role,
            MessageRole::Assistant | MessageRole::Tool
        )
    {
        count -= 1;
    }
    count
}

/// The window sizes LlamaIndex tries, largest first: the whole history, then
/// one message fewer each time, skipping sizes whose window would open on an
/// assistant or tool message (an answer without its question), down to 1.
fn window_sizes(history: &[ChatMessage]) -> Vec<usize> {
    let n = history.len();
    let mut sizes = vec![n];
    let mut count = n;
    while count > 1 {
        count = smaller_window(history, count);
        sizes.push(count);
    }
    sizes
}

/// The first index of `sizes` (after 0, which is known not to fit) whose
/// window fits, by bisection; `None` when the smallest does not fit.
fn first_fit_bisect(sizes: &[usize], fits: &dyn Fn(usize) -> bool) -> Option<usize> {
    let last = sizes.len() - 1;
    if !fits(sizes[last]) {
        return None;
    }
    // Invariant: sizes[lo] does not fit, sizes[hi] fits.
    let (mut lo, mut hi) = (0, last);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(sizes[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Moves `start` back over tool results so that they keep the call they
/// answer. LlamaIndex can return a lone tool result here (when only the
/// newest message is kept); providers reject a result without its call.
fn keep_results_with_their_call(history: &[ChatMessage], mut start: usize) -> usize {
    while start > 0
        && start < history.len()
        && matches!(
            history[start].role,
            MessageRole::Tool | MessageRole::Function
        )
    {
        start -= 1;
    }
    start
}

#[async_trait]
impl BaseMemory for ChatMemoryBuffer {
    async fn get_with_pending(
        &self,
        pending: &[ChatMessage],
        initial_token_count: usize,
    ) -> Result<Vec<ChatMessage>> {
        let mut history = self.lock().clone();
        history.extend_from_slice(pending);
        let start = self.window_start(&history, initial_token_count)?;
        Ok(history.split_off(start))
    }

    async fn get_all(&self) -> Result<Vec<ChatMessage>> {
        Ok(self.lock().clone())
    }

    async fn put_messages(&self, messages: Vec<ChatMessage>) -> Result<()> {
        self.lock().extend(messages);
        Ok(())
    }

    async fn set(&self, messages: Vec<ChatMessage>) -> Result<()> {
        *self.lock() = messages;
        Ok(())
    }

    async fn reset(&self) -> Result<()> {
        self.lock().clear();
        Ok(())
    }

    fn tokenizer(&self) -> Option<Arc<dyn Tokenizer>> {
        Some(self.tokenizer.clone())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llms::{MockLlm, ToolCall};
    use futures::executor::block_on;

    /// One token per word, so limits are easy to reason about.
    #[derive(Debug)]
    struct Words;
    impl Tokenizer for Words {
        fn encode(&self, text: &str) -> Vec<u32> {
            text.split_whitespace().map(|_| 0).collect()
        }
    }

    fn buffer(limit: usize, history: Vec<ChatMessage>) -> ChatMemoryBuffer {
        ChatMemoryBuffer::builder()
            .token_limit(limit)
            .tokenizer(Arc::new(Words))
            .chat_history(history)
            .build()
            .unwrap()
    }

    #[test]
    fn defaults_follow_llama_index() {
        assert_eq!(ChatMemoryBuffer::from_defaults().token_limit(), 3000);
        let llm = MockLlm::new().context_window(1000);
        let m = ChatMemoryBuffer::builder().llm(&llm).build().unwrap();
        assert_eq!(m.token_limit(), 750);
        let m = ChatMemoryBuffer::builder()
            .llm(&llm)
            .token_limit(10)
            .build()
            .unwrap();
        assert_eq!(m.token_limit(), 10);
        assert!(ChatMemoryBuffer::builder().token_limit(0).build().is_err());
    }

    #[test]
    fn empty_history_is_empty() {
        let m = buffer(5, Vec::new());
        assert!(block_on(m.get(0)).unwrap().is_empty());
        assert!(block_on(m.get(6)).is_err_and(|e| e.to_string().contains("token limit 5")));
    }

    /// LlamaIndex's loop, transcribed.
    fn reference_start(m: &ChatMemoryBuffer, history: &[ChatMessage], initial: usize) -> usize {
        let n = history.len();
        let mut count = n;
        let mut tokens = m.token_count(history) + initial;
        while tokens > m.token_limit && count > 1 {
            count = smaller_window(history, count);
            tokens = m.token_count(&history[n - count..]) + initial;
        }
        let start = if tokens > m.token_limit || count == 0 {
            n.saturating_sub(1)
        } else {
            n - count
        };
        keep_results_with_their_call(history, start)
    }

    #[test]
    fn bisection_finds_the_window_the_scan_finds() {
        let call = ToolCall::new("c", "f", serde_json::json!({}));
        let history: Vec<ChatMessage> = (0..60)
            .map(|i| {
                let text = "w ".repeat(i % 7 + 1);
                match i % 6 {
                    0 | 4 => ChatMessage::user(text),
                    2 => ChatMessage::assistant_with_tool_calls("", vec![call.clone()]),
                    3 => ChatMessage::tool_result("c", "f", text),
                    _ => ChatMessage::assistant(text),
                }
            })
            .collect();
        assert!(window_sizes(&history).len() > LINEAR_SCAN_MAX);
        for limit in 1..300 {
            for initial in [0, 3] {
                if initial > limit {
                    continue;
                }
                let m = buffer(limit, Vec::new());
                assert_eq!(
                    m.window_start(&history, initial).unwrap(),
                    reference_start(&m, &history, initial),
                    "limit {limit} initial {initial}"
                );
            }
        }
    }

    #[test]
    fn a_lone_tool_result_keeps_its_call() {
        let call = ToolCall::new("c1", "add", serde_json::json!({"a": 1}));
        let history = vec![
            ChatMessage::user("one two three four five six"),
            ChatMessage::assistant_with_tool_calls("", vec![call]),
            ChatMessage::tool_result("c1", "add", "3"),
        ];
        // Only the newest message fits: LlamaIndex would send the result alone.
        let m = buffer(2, history.clone());
        let got = block_on(m.get(0)).unwrap();
        assert_eq!(got, history[1..].to_vec());
        // Pending messages count as stored ones but are not stored.
        let got = block_on(m.get_with_pending(&[ChatMessage::user("next")], 0)).unwrap();
        assert_eq!(got, vec![ChatMessage::user("next")]);
        assert_eq!(block_on(m.get_all()).unwrap(), history);
    }
}
