//! `SimpleChatEngine`: a conversation with the LLM alone — prefix messages
//! (the system prompt), then the history that fits the memory, then the new message.

use super::options::{ChatEngineOptions, chat_engine_option_setters};
use super::utils::{chat_span, llm_span, record_usage, write_turn_when_done};
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
    options: ChatEngineOptions,
}

impl SimpleChatEngineBuilder {
    chat_engine_option_setters!(memory, chat_history, system_prompt, prefix_messages);

    /// Builds the engine. Both a system prompt and prefix messages is an error.
    pub fn build(mut self) -> Result<SimpleChatEngine> {
        let memory = self.options.take_memory(self.llm.as_ref())?;
        let prefix_messages = self.options.take_prefix_messages(self.llm.as_ref())?;
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
            options: ChatEngineOptions::default(),
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
