//! `CondensePlusContextChatEngine`: condenses the conversation into a
//! standalone question, retrieves with it, and answers the user's message
//! with the context prompt and the history (LlamaIndex's prompts, verbatim).

use super::options::{ChatEngineOptions, chat_engine_option_setters};
use super::utils::{
    ContextPrompts, answer_turn, chat_span, llm_span, record_usage, require_vars, retrieve_context,
    retriever_source, stream_turn,
};
use super::{AgentChatResponse, ChatEngine, StreamingAgentChatResponse};
use crate::error::Result;
use crate::llms::{ChatMessage, Llm, messages_to_history_str};
use crate::memory::BaseMemory;
use crate::postprocessor::NodePostprocessor;
use crate::prompts::PromptTemplate;
use crate::response_synthesizers::CompactAndRefine;
use crate::retrievers::Retriever;
use crate::schema::NodeWithScore;
use crate::tools::ToolOutput;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// LlamaIndex 0.14.25's `DEFAULT_CONTEXT_PROMPT_TEMPLATE`, verbatim (its
/// leading newline and two-space indents included).
pub const DEFAULT_CONTEXT_PROMPT_TEMPLATE: &str = "\n  The following is a friendly conversation between a user and an AI assistant.\n  The assistant is talkative and provides lots of specific details from its context.\n  If the assistant does not know the answer to a question, it truthfully says it\n  does not know.\n\n  Here are the relevant documents for the context:\n\n  {context_str}\n\n  Instruction: Based on the above documents, provide a detailed answer for the user question below.\n  Answer \"don't know\" if not present in the document.\n  ";

/// LlamaIndex 0.14.25's `DEFAULT_CONTEXT_REFINE_PROMPT_TEMPLATE`, verbatim.
pub const DEFAULT_CONTEXT_REFINE_PROMPT_TEMPLATE: &str = "\n  The following is a friendly conversation between a user and an AI assistant.\n  The assistant is talkative and provides lots of specific details from its context.\n  If the assistant does not know the answer to a question, it truthfully says it\n  does not know.\n\n  Here are the relevant documents for the context:\n\n  {context_msg}\n\n  Existing Answer:\n  {existing_answer}\n\n  Instruction: Refine the existing answer using the provided context to assist the user.\n  If the context isn't helpful, just repeat the existing answer and nothing more.\n  ";

/// LlamaIndex 0.14.25's `DEFAULT_CONDENSE_PROMPT_TEMPLATE`, verbatim.
pub const DEFAULT_CONDENSE_PROMPT_TEMPLATE: &str = "\n  Given the following conversation between a user and an AI assistant and a follow up question from user,\n  rephrase the follow up question to be a standalone question.\n\n  Chat History:\n  {chat_history}\n  Follow Up Input: {question}\n  Standalone question:";

/// Condenses, retrieves with the standalone question, and answers with the
/// context (LlamaIndex `CondensePlusContextChatEngine`, the default of
/// `as_chat_engine`).
#[derive(Clone, Debug)]
pub struct CondensePlusContextChatEngine {
    retriever: Arc<dyn Retriever>,
    llm: Arc<dyn Llm>,
    memory: Arc<dyn BaseMemory>,
    prompts: ContextPrompts,
    condense_prompt: PromptTemplate,
    system_prompt: Option<String>,
    skip_condense: bool,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

/// Options of a [`CondensePlusContextChatEngine`].
#[derive(Debug)]
pub struct CondensePlusContextChatEngineBuilder {
    retriever: Arc<dyn Retriever>,
    llm: Arc<dyn Llm>,
    options: ChatEngineOptions,
    context_prompt: Option<String>,
    context_refine_prompt: Option<String>,
    condense_prompt: Option<PromptTemplate>,
    skip_condense: bool,
}

impl CondensePlusContextChatEngineBuilder {
    chat_engine_option_setters!(memory, chat_history, system_prompt, node_postprocessor);

    /// The context prompt (default [`DEFAULT_CONTEXT_PROMPT_TEMPLATE`]); it must have `{context_str}`.
    pub fn context_prompt(mut self, template: impl Into<String>) -> Self {
        self.context_prompt = Some(template.into());
        self
    }

    /// The refine prompt (default [`DEFAULT_CONTEXT_REFINE_PROMPT_TEMPLATE`]);
    /// it must have `{context_msg}` and `{existing_answer}`.
    pub fn context_refine_prompt(mut self, template: impl Into<String>) -> Self {
        self.context_refine_prompt = Some(template.into());
        self
    }

    /// The condense prompt (default [`DEFAULT_CONDENSE_PROMPT_TEMPLATE`]); it
    /// must have `{chat_history}` and `{question}`.
    pub fn condense_prompt(mut self, template: impl Into<PromptTemplate>) -> Self {
        self.condense_prompt = Some(template.into());
        self
    }

    /// Retrieve with the user's message as it is, without condensing.
    pub fn skip_condense(mut self, skip: bool) -> Self {
        self.skip_condense = skip;
        self
    }

    /// Builds the engine; a prompt without its variables is an error.
    pub fn build(mut self) -> Result<CondensePlusContextChatEngine> {
        let prompts = ContextPrompts::new(
            "context prompt",
            self.context_prompt,
            DEFAULT_CONTEXT_PROMPT_TEMPLATE,
            self.context_refine_prompt,
            DEFAULT_CONTEXT_REFINE_PROMPT_TEMPLATE,
        )?;
        let condense_prompt = self
            .condense_prompt
            .unwrap_or_else(|| PromptTemplate::new(DEFAULT_CONDENSE_PROMPT_TEMPLATE));
        require_vars(
            &condense_prompt.template,
            "condense prompt",
            &["chat_history", "question"],
        )?;
        let memory = self.options.take_memory(self.llm.as_ref())?;
        Ok(CondensePlusContextChatEngine {
            retriever: self.retriever,
            llm: self.llm,
            memory,
            prompts,
            condense_prompt,
            system_prompt: self.options.system_prompt,
            skip_condense: self.skip_condense,
            node_postprocessors: self.options.node_postprocessors,
        })
    }
}

impl CondensePlusContextChatEngine {
    /// An engine retrieving with `retriever` and answering with `llm`, default options.
    pub fn from_defaults(retriever: Arc<dyn Retriever>, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(retriever, llm).build()
    }

    /// A builder.
    pub fn builder(
        retriever: Arc<dyn Retriever>,
        llm: Arc<dyn Llm>,
    ) -> CondensePlusContextChatEngineBuilder {
        CondensePlusContextChatEngineBuilder {
            retriever,
            llm,
            options: ChatEngineOptions::default(),
            context_prompt: None,
            context_refine_prompt: None,
            condense_prompt: None,
            skip_condense: false,
        }
    }

    /// The memory.
    pub fn memory(&self) -> &Arc<dyn BaseMemory> {
        &self.memory
    }

    /// The standalone question for `latest_message` after `chat_history`,
    /// from one completion call; with no history or `skip_condense`, the
    /// message itself.
    pub async fn condense_question(
        &self,
        chat_history: &[ChatMessage],
        latest_message: &str,
    ) -> Result<String> {
        if self.skip_condense || chat_history.is_empty() {
            return Ok(latest_message.to_owned());
        }
        let history = messages_to_history_str(chat_history);
        tracing::debug!(chat_history = %history, "condensing");
        let prompt = self
            .condense_prompt
            .format(&[("chat_history", &history), ("question", latest_message)])?;
        async {
            let reply = self.llm.complete(&prompt, false).await?;
            record_usage(reply.usage.as_ref());
            Ok(reply.text)
        }
        .instrument(llm_span(self.llm.as_ref()))
        .await
    }

    fn synthesizer(&self, chat_history: &[ChatMessage]) -> CompactAndRefine {
        let system_prompt = self.system_prompt.as_deref().unwrap_or_default();
        self.prompts
            .synthesizer(self.llm.clone(), system_prompt, &[], chat_history)
    }

    /// LlamaIndex's `_run_c3`: condense, retrieve, build the synthesizer.
    async fn run_c3(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<(CompactAndRefine, ToolOutput, Vec<NodeWithScore>)> {
        if let Some(history) = chat_history {
            self.memory.set(history).await?;
        }
        let history = self.memory.get(0).await?;
        let question = self.condense_question(&history, message).await?;
        let span = tracing::Span::current();
        span.record("condensed_question", question.as_str());
        tracing::info!(question = %question, "condensed question");
        let nodes = retrieve_context(
            self.retriever.as_ref(),
            &self.node_postprocessors,
            &question,
        )
        .await?;
        span.record("nodes", nodes.len());
        let source = retriever_source(&question, &nodes);
        Ok((self.synthesizer(&history), source, nodes))
    }
}

#[async_trait]
impl ChatEngine for CondensePlusContextChatEngine {
    async fn chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<AgentChatResponse> {
        async {
            let (synthesizer, source, nodes) = self.run_c3(message, chat_history).await?;
            answer_turn(synthesizer, self.memory.as_ref(), message, source, nodes).await
        }
        .instrument(chat_span("condense_plus_context", message, false))
        .await
    }

    async fn stream_chat_with_history(
        &self,
        message: &str,
        chat_history: Option<Vec<ChatMessage>>,
    ) -> Result<StreamingAgentChatResponse> {
        async {
            let (synthesizer, source, nodes) = self.run_c3(message, chat_history).await?;
            stream_turn(synthesizer, self.memory.clone(), message, source, nodes).await
        }
        .instrument(chat_span("condense_plus_context", message, true))
        .await
    }

    async fn reset(&self) -> Result<()> {
        self.memory.reset().await
    }

    async fn chat_history(&self) -> Result<Vec<ChatMessage>> {
        self.memory.get_all().await
    }
}
