//! `CondenseQuestionChatEngine`: rewrites the history and the new message
//! into one standalone question with LlamaIndex's condense prompt, then asks the query engine.

use super::options::{ChatEngineOptions, chat_engine_option_setters};
use super::utils::{
    chat_span, finish_turn, query_engine_source, text_to_chat_stream, write_turn_when_done,
};
use super::{AgentChatResponse, ChatEngine, StreamingAgentChatResponse};
use crate::error::Result;
use crate::llms::{ChatMessage, Llm, messages_to_history_str, predict};
use crate::memory::BaseMemory;
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::query_engine::QueryEngine;
use crate::schema::QueryBundle;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// LlamaIndex 0.14.25's condense prompt (`condense_question.DEFAULT_TEMPLATE`), verbatim.
pub const DEFAULT_TEMPLATE: &str = "Given a conversation (between Human and Assistant) and a follow up message from Human, rewrite the message to be a standalone question that captures all relevant context from the conversation.\n\n<Chat History>\n{chat_history}\n\n<Follow Up Message>\n{question}\n\n<Standalone question>\n";

/// Condenses the conversation into a standalone question and answers it with
/// a query engine (LlamaIndex `CondenseQuestionChatEngine`).
#[derive(Clone, Debug)]
pub struct CondenseQuestionChatEngine {
    query_engine: Arc<dyn QueryEngine>,
    condense_question_prompt: BasePromptTemplate,
    memory: Arc<dyn BaseMemory>,
    llm: Arc<dyn Llm>,
}

/// Options of a [`CondenseQuestionChatEngine`].
#[derive(Debug)]
pub struct CondenseQuestionChatEngineBuilder {
    query_engine: Arc<dyn QueryEngine>,
    llm: Arc<dyn Llm>,
    condense_question_prompt: Option<BasePromptTemplate>,
    options: ChatEngineOptions,
}

impl CondenseQuestionChatEngineBuilder {
    chat_engine_option_setters!(memory, chat_history);
    /// The condense prompt (default [`DEFAULT_TEMPLATE`]); it must have
    /// `{chat_history}` and `{question}`.
    pub fn condense_question_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.condense_question_prompt = Some(prompt.into());
        self
    }

    /// Builds the engine.
    pub fn build(mut self) -> Result<CondenseQuestionChatEngine> {
        let prompt = match self.condense_question_prompt {
            Some(p) => {
                p.require_vars(&["chat_history", "question"])?;
                p
            }
            None => PromptTemplate::new(DEFAULT_TEMPLATE).into(),
        };
        let memory = self.options.take_memory(self.llm.as_ref())?;
        Ok(CondenseQuestionChatEngine {
            query_engine: self.query_engine,
            condense_question_prompt: prompt,
            memory,
            llm: self.llm,
        })
    }
}

impl CondenseQuestionChatEngine {
    /// An engine asking `query_engine`, condensing with `llm`, default options.
    pub fn from_defaults(query_engine: Arc<dyn QueryEngine>, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(query_engine, llm).build()
    }

    /// A builder.
    pub fn builder(
        query_engine: Arc<dyn QueryEngine>,
        llm: Arc<dyn Llm>,
    ) -> CondenseQuestionChatEngineBuilder {
        CondenseQuestionChatEngineBuilder {
            query_engine,
            llm,
            condense_question_prompt: None,
            options: ChatEngineOptions::default(),
        }
    }

    /// The memory.
    pub fn memory(&self) -> &Arc<dyn BaseMemory> {
        &self.memory
    }

    /// The standalone question for `last_message` after `chat_history`; with
    /// no history, the message itself (no LLM call).
    pub async fn condense_question(
        &self,
        chat_history: &[ChatMessage],
        last_message: &str,
    ) -> Result<String> {
        if chat_history.is_empty() {
            return Ok(last_message.to_owned());
        }
        let history = messages_to_history_str(chat_history);
        tracing::debug!(chat_history = %history, "condensing");
        predict(
            self.llm.as_ref(),
            &self.condense_question_prompt,
            &[("question", last_message), ("chat_history", &history)],
        )
        .await
    }

    /// The standalone question for this turn. LlamaIndex uses a given
    /// history as it is (without storing it) and falls back to the memory
    /// when it is absent or empty.
    async fn question_for(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<String> {
        let history = match chat_history {
            Some(h) if !h.is_empty() => h,
            _ => self.memory.get(0).await?,
        };
        let question = self.condense_question(&history, message).await?;
        tracing::Span::current().record("condensed_question", question.as_str());
        tracing::info!(question = %question, "querying with the condensed question");
        Ok(question)
    }
}

#[async_trait]
impl ChatEngine for CondenseQuestionChatEngine {
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse> {
        async {
            let question = self.question_for(message, chat_history).await?;
            let response = self
                .query_engine
                .query(&QueryBundle::new(&question))
                .await?;
            let source = query_engine_source(&question, Some(&response));
            let text = response.to_string();
            finish_turn(
                self.memory.as_ref(),
                message,
                text,
                source,
                response.source_nodes,
            )
            .await
        }
        .instrument(chat_span("condense_question", message, false))
        .await
    }

    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse> {
        async {
            let question = self.question_for(message, chat_history).await?;
            let streaming = self
                .query_engine
                .stream_query(&QueryBundle::new(&question))
                .await?;
            let deltas = write_turn_when_done(
                text_to_chat_stream(streaming.response_gen),
                self.memory.clone(),
                ChatMessage::user(message),
                tracing::Span::current(),
            );
            Ok(StreamingAgentChatResponse::new(
                deltas,
                vec![query_engine_source(&question, None)],
                streaming.source_nodes,
            ))
        }
        .instrument(chat_span("condense_question", message, true))
        .await
    }

    async fn reset(&self) -> Result<()> {
        self.memory.reset().await
    }

    async fn chat_history(&self) -> Result<Vec<ChatMessage>> {
        self.memory.get_all().await
    }
}
