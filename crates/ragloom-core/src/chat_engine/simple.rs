//! `SimpleChatEngine`: a conversation with the LLM alone — prefix messages
//! (the system prompt), then the history that fits the memory, then the new message.

use super::utils::{chat_span, default_memory, llm_span, record_usage, write_turn_when_done};
use super::{AgentChatResponse, ChatEngine, StreamingAgentChatResponse};
use crate::error::{Error, Result};
use crate::llms::{ChatMessage, Llm};
use crate::memory::BaseMemory;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// Chats with the LLM, without a knowledge base (LlamaIndex `SimpleChatEngine`).
#[derive(Clone, Debug)]
pub struct SimpleChatEngine {
    llm: Arc<dyn Llm>,
    memory: Arc<dyn BaseMemory>,
    prefix_messages: Vec<ChatMessage>,
}

/// Options of a [`SimpleChatEngine`] (LlamaIndex `SimpleChatEngine.from_defaults`).
#[derive(Debug)]
pub struct SimpleChatEngineBuilder {
    llm: Arc<dyn Llm>,
    memory: Option<Arc<dyn BaseMemory>>,
    chat_history: Vec<ChatMessage>,
    system_prompt: Option<String>,
    prefix_messages: Option<Vec<ChatMessage>>,
}

impl SimpleChatEngineBuilder {
    /// The memory (default: a `ChatMemoryBuffer` of the LLM's context window
    /// minus 256 tokens, holding [`chat_history`](Self::chat_history)).
    pub fn memory(mut self, memory: Arc<dyn BaseMemory>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The conversation so far, for the default memory (ignored when a
    /// memory is given, as in LlamaIndex).
    pub fn chat_history(mut self, chat_history: Vec<ChatMessage>) -> Self {
        self.chat_history = chat_history;
        self
    }

    /// A system prompt, sent first with the LLM's system role.
    pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }

    /// Messages sent before the history on every turn (instead of a system prompt).
    pub fn prefix_messages(mut self, prefix_messages: Vec<ChatMessage>) -> Self {
        self.prefix_messages = Some(prefix_messages);
        self
    }

    /// Builds the engine. Both a system prompt and prefix messages is an error.
    pub fn build(self) -> Result<SimpleChatEngine> {
        let memory = match self.memory {
            Some(m) => m,
            None => default_memory(self.llm.as_ref(), self.chat_history)?,
        };
        let prefix_messages = match (self.system_prompt, self.prefix_messages) {
            (Some(_), Some(_)) => {
                return Err(Error::InvalidInput(
                    "give a chat engine either `system_prompt` or `prefix_messages`, not both"
                        .to_owned(),
                ));
            }
            (Some(prompt), None) => vec![ChatMessage::new(self.llm.metadata().system_role, prompt)],
            (None, Some(messages)) => messages,
            (None, None) => Vec::new(),
        };
        Ok(SimpleChatEngine {
            llm: self.llm,
            memory,
            prefix_messages,
        })
    }
}

impl SimpleChatEngine {
    /// An engine over `llm`, `memory` and `prefix_messages`.
    pub fn new(
        llm: Arc<dyn Llm>,
        memory: Arc<dyn BaseMemory>,
        prefix_messages: Vec<ChatMessage>,
    ) -> Self {
        Self {
            llm,
            memory,
            prefix_messages,
        }
    }

    /// An engine over `llm` with the default memory and no system prompt.
    pub fn from_defaults(llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(llm).build()
    }

    /// A builder over `llm`.
    pub fn builder(llm: Arc<dyn Llm>) -> SimpleChatEngineBuilder {
        SimpleChatEngineBuilder {
            llm,
            memory: None,
            chat_history: Vec::new(),
            system_prompt: None,
            prefix_messages: None,
        }
    }

    /// The memory.
    pub fn memory(&self) -> &Arc<dyn BaseMemory> {
        &self.memory
    }

    /// The messages one turn sends: the prefix, then the history and the new
    /// message trimmed together to the memory's limit less the prefix's tokens.
    async fn messages_for(
        &self,
        user_message: &ChatMessage,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<Vec<ChatMessage>> {
        if let Some(history) = chat_history {
            self.memory.set(history).await?;
        }
        let initial_token_count = match self.memory.tokenizer() {
            Some(tokenizer) => {
                let prefix = self
                    .prefix_messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                tokenizer.count(&prefix)
            }
            None => 0,
        };
        let mut messages = self.prefix_messages.clone();
        messages.extend(
            self.memory
                .get_with_pending(std::slice::from_ref(user_message), initial_token_count)
                .await?,
        );
        Ok(messages)
    }
}

#[async_trait]
impl ChatEngine for SimpleChatEngine {
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse> {
        async {
            let user_message = ChatMessage::user(message);
            let messages = self.messages_for(&user_message, chat_history).await?;
            let reply = async {
                let reply = self.llm.chat(&messages).await?;
                record_usage(reply.usage.as_ref());
                Ok::<_, Error>(reply)
            }
            .instrument(llm_span(self.llm.as_ref()))
            .await?;
            let response = reply.message.content_str().to_owned();
            self.memory
                .put_messages(vec![user_message, reply.message])
                .await?;
            Ok(AgentChatResponse::new(response))
        }
        .instrument(chat_span("simple", message, false))
        .await
    }

    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse> {
        let span = chat_span("simple", message, true);
        async {
            let user_message = ChatMessage::user(message);
            let messages = self.messages_for(&user_message, chat_history).await?;
            let stream = self
                .llm
                .stream_chat(&messages)
                .instrument(llm_span(self.llm.as_ref()))
                .await?;
            let deltas = write_turn_when_done(
                stream,
                self.memory.clone(),
                user_message,
                tracing::Span::current(),
            );
            Ok(StreamingAgentChatResponse::new(
                deltas,
                Vec::new(),
                Vec::new(),
            ))
        }
        .instrument(span)
        .await
    }

    async fn reset(&self) -> Result<()> {
        self.memory.reset().await
    }

    async fn chat_history(&self) -> Result<Vec<ChatMessage>> {
        self.memory.get_all().await
    }
}
