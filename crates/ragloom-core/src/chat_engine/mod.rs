//! Chat engines: conversations over your data with a memory. The
//! [`ChatEngine`] trait, its answers, and LlamaIndex's four engines.
//!
//! | [`ChatMode`] | engine | what one turn does |
//! |---|---|---|
//! | `Simple` | [`SimpleChatEngine`] | the LLM alone, with the history |
//! | `CondenseQuestion` | [`CondenseQuestionChatEngine`] | history + message → standalone question → query engine |
//! | `Context` | [`ContextChatEngine`] | retrieve with the message, context in the system prompt, history, message |
//! | `CondensePlusContext` (default) | [`CondensePlusContextChatEngine`] | condense, retrieve with the question, context prompt, history, message |
//!
//! Engines keep the conversation in a [`BaseMemory`](crate::memory::BaseMemory)
//! (a [`ChatMemoryBuffer`](crate::memory::ChatMemoryBuffer) by default) and
//! change it through `&self`, so one engine can be shared as `Arc<dyn ChatEngine>`.
//! A turn is written to memory only once its answer is complete: a failed
//! turn, or a stream dropped before its end, leaves the history as it was.
//!
//! ```
//! # futures::executor::block_on(async {
//! use ragloom_core::chat_engine::{ChatEngine, SimpleChatEngine};
//! use ragloom_core::llms::MockLlm;
//! use std::sync::Arc;
//!
//! let llm = Arc::new(MockLlm::scripted(["Hello!", "You said hi."]));
//! let engine = SimpleChatEngine::from_defaults(llm)?;
//! assert_eq!(engine.chat("Hi").await?.response, "Hello!");
//! assert_eq!(engine.chat("What did I say?").await?.to_string(), "You said hi.");
//! assert_eq!(engine.chat_history().await?.len(), 4);
//! engine.reset().await?;
//! assert!(engine.chat_history().await?.is_empty());
//! # Ok::<(), ragloom_core::Error>(()) }).unwrap();
//! ```

pub mod condense_plus_context;
pub mod condense_question;
pub mod context;
mod options;
pub mod simple;
mod utils;

pub use condense_plus_context::{
    CondensePlusContextChatEngine, CondensePlusContextChatEngineBuilder,
};
pub use condense_question::{CondenseQuestionChatEngine, CondenseQuestionChatEngineBuilder};
pub use context::{ContextChatEngine, ContextChatEngineBuilder};
pub use options::ChatEngineOptions;
pub use simple::{SimpleChatEngine, SimpleChatEngineBuilder};

use crate::error::{Error, Result};
use crate::llms::ChatMessage;
use crate::schema::{NodeWithScore, py_strip};
use crate::tools::ToolOutput;
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// A conversation partner that remembers (LlamaIndex `BaseChatEngine`).
#[async_trait]
pub trait ChatEngine: Send + Sync + fmt::Debug {
    /// Answers `message`, continuing the conversation in memory.
    async fn chat(&self, message: &str) -> Result<AgentChatResponse> {
        self.chat_with_history(message, None).await
    }

    /// Answers `message`; a given `chat_history` stands for the conversation
    /// so far (most engines replace their memory with it, as LlamaIndex does).
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse>;

    /// Answers `message` as a stream of text deltas; the turn is written to
    /// memory when the stream ends.
    async fn stream_chat(&self, message: &str) -> Result<StreamingAgentChatResponse> {
        self.stream_chat_with_history(message, None).await
    }

    /// [`stream_chat`](Self::stream_chat) with a given history, as in
    /// [`chat_with_history`](Self::chat_with_history).
    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse>;

    /// Forgets the conversation.
    async fn reset(&self) -> Result<()>;

    /// The whole conversation in memory, oldest first.
    async fn chat_history(&self) -> Result<Vec<ChatMessage>>;
}

/// How `VectorStoreIndex::as_chat_engine` chats (LlamaIndex `ChatMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChatMode {
    /// [`SimpleChatEngine`]: the LLM alone, no knowledge base.
    Simple,
    /// [`CondenseQuestionChatEngine`]: a standalone question for the query engine.
    CondenseQuestion,
    /// [`ContextChatEngine`]: retrieved context in the system prompt.
    Context,
    /// [`CondensePlusContextChatEngine`]: condense, then retrieve and answer with context.
    #[default]
    CondensePlusContext,
    /// A ReAct agent (`ragloom::agent::legacy::ReActAgent`) with a query engine
    /// tool; built by `AsChatEngine` in crate `ragloom-agent`.
    React,
    /// A function-calling agent (`ragloom::agent::FunctionCallingAgent`) with a
    /// query engine tool (any model with native tool calling, not only OpenAI).
    OpenAi,
    /// The function-calling agent if the model calls tools natively, else ReAct.
    Best,
}

impl ChatMode {
    /// LlamaIndex's string for the mode (`"condense_plus_context"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ChatMode::Simple => "simple",
            ChatMode::CondenseQuestion => "condense_question",
            ChatMode::Context => "context",
            ChatMode::CondensePlusContext => "condense_plus_context",
            ChatMode::React => "react",
            ChatMode::OpenAi => "openai",
            ChatMode::Best => "best",
        }
    }

    /// Every mode, in LlamaIndex's order.
    pub const ALL: [ChatMode; 7] = [
        ChatMode::Simple,
        ChatMode::CondenseQuestion,
        ChatMode::Context,
        ChatMode::CondensePlusContext,
        ChatMode::React,
        ChatMode::OpenAi,
        ChatMode::Best,
    ];
}

impl fmt::Display for ChatMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ChatMode {
    type Err = Error;

    /// Parses LlamaIndex's strings; an unknown one is an error listing the known ones.
    fn from_str(s: &str) -> Result<Self> {
        ChatMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = ChatMode::ALL.iter().map(|m| m.as_str()).collect();
                Error::InvalidInput(format!(
                    "unknown chat mode `{s}`; expected one of: {}",
                    known.join(", ")
                ))
            })
    }
}

/// A chat engine's (or agent's) answer (LlamaIndex `AgentChatResponse`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentChatResponse {
    /// The answer text.
    pub response: String,
    /// What the answer was made from, as tool outputs (the retriever's nodes,
    /// the query engine's response).
    pub sources: Vec<ToolOutput>,
    /// The nodes the answer drew on.
    pub source_nodes: Vec<NodeWithScore>,
    /// Whether `response` is replayed as a stream without a model behind it.
    pub is_dummy_stream: bool,
    /// Free-form extras.
    pub metadata: Option<Map<String, Value>>,
}

impl AgentChatResponse {
    /// An answer with no sources.
    pub fn new(response: impl Into<String>) -> Self {
        Self {
            response: response.into(),
            ..Default::default()
        }
    }
}

impl fmt::Display for AgentChatResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.response)
    }
}

/// A chat answer arriving as text deltas (LlamaIndex
/// `StreamingAgentChatResponse`). The sources are known before the first
/// delta. The engine writes the turn to memory when `response_gen` reports
/// its end; dropping it earlier leaves the history unchanged.
pub struct StreamingAgentChatResponse {
    /// Text deltas; their concatenation is the answer.
    pub response_gen: BoxStream<'static, Result<String>>,
    /// What the answer is made from, as tool outputs.
    pub sources: Vec<ToolOutput>,
    /// The nodes the answer draws on.
    pub source_nodes: Vec<NodeWithScore>,
}

impl fmt::Debug for StreamingAgentChatResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingAgentChatResponse")
            .field("sources", &self.sources)
            .field("source_nodes", &self.source_nodes.len())
            .finish_non_exhaustive()
    }
}

impl StreamingAgentChatResponse {
    /// A streaming answer.
    pub fn new(
        response_gen: BoxStream<'static, Result<String>>,
        sources: Vec<ToolOutput>,
        source_nodes: Vec<NodeWithScore>,
    ) -> Self {
        Self {
            response_gen,
            sources,
            source_nodes,
        }
    }

    /// Reads the stream to its end (so the turn is written to memory) and
    /// returns the whole answer, stripped of surrounding whitespace as
    /// LlamaIndex's `response` is.
    pub async fn get_response(self) -> Result<AgentChatResponse> {
        let mut text = String::new();
        let mut stream = self.response_gen;
        while let Some(delta) = stream.next().await {
            text.push_str(&delta?);
        }
        Ok(AgentChatResponse {
            response: py_strip(&text).to_owned(),
            sources: self.sources,
            source_nodes: self.source_nodes,
            is_dummy_stream: false,
            metadata: None,
        })
    }
}
