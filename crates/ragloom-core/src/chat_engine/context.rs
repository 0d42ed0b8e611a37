//! `ContextChatEngine`: retrieves with the user's message and answers with the
//! context in the system prompt, then the history, then the message (LlamaIndex's prompts, verbatim).

use super::options::{ChatEngineOptions, chat_engine_option_setters};
use super::utils::{
    ContextPrompts, answer_turn, chat_span, retrieve_context, retriever_source, stream_turn,
};
use super::{AgentChatResponse, ChatEngine, StreamingAgentChatResponse};
use crate::error::Result;
use crate::llms::{ChatMessage, Llm, MessageRole};
use crate::memory::BaseMemory;
use crate::postprocessor::NodePostprocessor;
use crate::response_synthesizers::CompactAndRefine;
use crate::retrievers::Retriever;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// LlamaIndex 0.14.25's context template (`context.DEFAULT_CONTEXT_TEMPLATE`), verbatim.
pub const DEFAULT_CONTEXT_TEMPLATE: &str = "Use the context information below to assist the user.\n--------------------\n{context_str}\n--------------------\n";

/// LlamaIndex 0.14.25's refine template for context that does not fit one
/// call (`context.DEFAULT_REFINE_TEMPLATE`), verbatim.
pub const DEFAULT_REFINE_TEMPLATE: &str = "Using the context below, refine the following existing answer using the provided context to assist the user.\nIf the context isn't helpful, just repeat the existing answer and nothing more.\n\n--------------------\n{context_msg}\n--------------------\nExisting Answer:\n{existing_answer}\n--------------------\n";

/// Retrieves context for each message and answers with it in the system
/// prompt (LlamaIndex `ContextChatEngine`).
#[derive(Clone, Debug)]
pub struct ContextChatEngine {
    retriever: Arc<dyn Retriever>,
    llm: Arc<dyn Llm>,
    memory: Arc<dyn BaseMemory>,
    prefix_messages: Vec<ChatMessage>,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
    prompts: ContextPrompts,
}

/// Options of a [`ContextChatEngine`] (LlamaIndex `ContextChatEngine.from_defaults`).
#[derive(Debug)]
pub struct ContextChatEngineBuilder {
    retriever: Arc<dyn Retriever>,
    llm: Arc<dyn Llm>,
    options: ChatEngineOptions,
    context_template: Option<String>,
    context_refine_template: Option<String>,
}

impl ContextChatEngineBuilder {
    chat_engine_option_setters!(
        memory,
        chat_history,
        system_prompt,
        prefix_messages,
        node_postprocessor
    );

    /// The context template (default [`DEFAULT_CONTEXT_TEMPLATE`]); it must have `{context_str}`.
    pub fn context_template(mut self, template: impl Into<String>) -> Self {
        self.context_template = Some(template.into());
        self
    }

    /// The refine template (default [`DEFAULT_REFINE_TEMPLATE`]); it must
    /// have `{context_msg}` and `{existing_answer}`.
    pub fn context_refine_template(mut self, template: impl Into<String>) -> Self {
        self.context_refine_template = Some(template.into());
        self
    }

    /// Builds the engine. Both a system prompt and prefix messages, or a
    /// template without its variables, is an error.
    pub fn build(mut self) -> Result<ContextChatEngine> {
        let prompts = ContextPrompts::new(
            "context template",
            self.context_template,
            DEFAULT_CONTEXT_TEMPLATE,
            self.context_refine_template,
            DEFAULT_REFINE_TEMPLATE,
        )?;
        let memory = self.options.take_memory(self.llm.as_ref())?;
        let prefix_messages = self.options.take_prefix_messages(self.llm.as_ref())?;
        Ok(ContextChatEngine {
            retriever: self.retriever,
            llm: self.llm,
            memory,
            prefix_messages,
            node_postprocessors: self.options.node_postprocessors,
            prompts,
        })
    }
}

impl ContextChatEngine {
    /// An engine retrieving with `retriever` and answering with `llm`, default options.
    pub fn from_defaults(retriever: Arc<dyn Retriever>, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(retriever, llm).build()
    }

    /// A builder.
    pub fn builder(retriever: Arc<dyn Retriever>, llm: Arc<dyn Llm>) -> ContextChatEngineBuilder {
        ContextChatEngineBuilder {
            retriever,
            llm,
            options: ChatEngineOptions::default(),
            context_template: None,
            context_refine_template: None,
        }
    }

    /// The memory.
    pub fn memory(&self) -> &Arc<dyn BaseMemory> {
        &self.memory
    }

    /// The synthesizer for one turn: its prompts carry the system prompt,
    /// the prefix messages and `chat_history`.
    fn synthesizer(&self, chat_history: &[ChatMessage]) -> CompactAndRefine {
        let (system_prompt, prefix) = match self.prefix_messages.split_first() {
            Some((first, rest)) if first.role == MessageRole::System => {
                (first.content.as_str(), rest)
            }
            _ => ("", self.prefix_messages.as_slice()),
        };
        self.prompts
            .synthesizer(self.llm.clone(), system_prompt, prefix, chat_history)
    }

    async fn prepare(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<(CompactAndRefine, Vec<crate::schema::NodeWithScore>)> {
        if let Some(history) = chat_history {
            self.memory.set(history).await?;
        }
        let nodes =
            retrieve_context(self.retriever.as_ref(), &self.node_postprocessors, message).await?;
        tracing::Span::current().record("nodes", nodes.len());
        let history = self.memory.get(0).await?;
        Ok((self.synthesizer(&history), nodes))
    }
}

#[async_trait]
impl ChatEngine for ContextChatEngine {
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse> {
        async {
            let (synthesizer, nodes) = self.prepare(message, chat_history).await?;
            let source = retriever_source(message, &nodes);
            answer_turn(synthesizer, self.memory.as_ref(), message, source, nodes).await
        }
        .instrument(chat_span("context", message, false))
        .await
    }

    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse> {
        async {
            let (synthesizer, nodes) = self.prepare(message, chat_history).await?;
            let source = retriever_source(message, &nodes);
            stream_turn(synthesizer, self.memory.clone(), message, source, nodes).await
        }
        .instrument(chat_span("context", message, true))
        .await
    }

    async fn reset(&self) -> Result<()> {
        self.memory.reset().await
    }

    async fn chat_history(&self) -> Result<Vec<ChatMessage>> {
        self.memory.get_all().await
    }
}
