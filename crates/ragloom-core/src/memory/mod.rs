//! Chat memory: what a chat engine remembers of a conversation, and how much of
//! it goes out with the next turn ([`ChatMemoryBuffer`] keeps the newest messages within a token limit).

mod chat_memory_buffer;

pub use chat_memory_buffer::{
    ChatMemoryBuffer, ChatMemoryBufferBuilder, DEFAULT_TOKEN_LIMIT, DEFAULT_TOKEN_LIMIT_RATIO,
};

use crate::error::Result;
use crate::llms::ChatMessage;
use crate::tokenizer::Tokenizer;
use async_trait::async_trait;
use std::sync::Arc;

/// A conversation's memory (LlamaIndex `BaseMemory`). Engines share it as
/// `Arc<dyn BaseMemory>` and change it through `&self`, so implementations
/// keep their messages behind interior mutability.
///
/// A chat turn reads with [`get_with_pending`](Self::get_with_pending) and
/// writes the user's message and the answer together with
/// [`put_messages`](Self::put_messages) once the answer is complete, so a
/// failed or abandoned turn leaves the memory as it was.
#[async_trait]
pub trait BaseMemory: Send + Sync + std::fmt::Debug {
    /// The history to send with the next call, trimmed to the memory's limit;
    /// `initial_token_count` tokens of the limit are already spoken for (a
    /// system prompt, say).
    async fn get(&self, initial_token_count: usize) -> Result<Vec<ChatMessage>> {
        self.get_with_pending(&[], initial_token_count).await
    }

    /// Like [`get`](Self::get) for the stored history followed by `pending`
    /// messages that are not stored yet (the user's new message), trimmed as
    /// if they were.
    async fn get_with_pending(
        &self,
        pending: &[ChatMessage],
        initial_token_count: usize,
    ) -> Result<Vec<ChatMessage>>;

    /// Every stored message, oldest first.
    async fn get_all(&self) -> Result<Vec<ChatMessage>>;

    /// Stores one message.
    async fn put(&self, message: ChatMessage) -> Result<()> {
        self.put_messages(vec![message]).await
    }

    /// Stores messages in order, all or none (a chat turn is one call).
    async fn put_messages(&self, messages: Vec<ChatMessage>) -> Result<()>;

    /// Replaces the whole history.
    async fn set(&self, messages: Vec<ChatMessage>) -> Result<()>;

    /// Forgets everything.
    async fn reset(&self) -> Result<()>;

    /// The tokenizer the memory counts with, if it counts tokens; engines use
    /// it to charge their prefix messages against the limit.
    fn tokenizer(&self) -> Option<Arc<dyn Tokenizer>> {
        None
    }
}
