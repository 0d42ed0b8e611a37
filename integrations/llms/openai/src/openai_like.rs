//! `OpenAILike`: any server that speaks OpenAI's API (llama.cpp, vLLM, LM Studio,
//! LocalAI, proxies), with the model's capabilities given by the user instead of looked up.

use crate::base::{CompletionToPrompt, Engine, MessagesToPrompt, StructuredMode};
use crate::client::OpenAIClient;
use crate::models::is_o1_model;
use crate::openai::{CommonOptions, common_builder_methods, delegate_llm};
use ragloom_core::llms::{ChatMessage, DEFAULT_CONTEXT_WINDOW, LlmMetadata, MessageRole};
use ragloom_core::{Error, Result, Tokenizer};
use std::fmt;
use std::sync::Arc;

/// A model behind an OpenAI-compatible API (LlamaIndex's `OpenAILike` from
/// llama-index-llms-openai-like).
///
/// Nothing is looked up: the context window (default 3900), whether the
/// model is a chat model (default **false**, so `/completions` is used, as in
/// LlamaIndex), whether it calls tools, and whether the server enforces
/// `response_format` JSON schemas are the builder's. Replies are read
/// leniently: a missing `id`, `usage` or `created`, an empty
/// `finish_reason` or `null` content are accepted.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::llms::{ChatMessage, Llm};
/// use ragloom_llms_openai::OpenAILike;
///
/// let llm = OpenAILike::builder("local-model")
///     .api_base("http://127.0.0.1:8080/v1")
///     .api_key("not-needed")
///     .is_chat_model(true)
///     .context_window(2048)
///     .max_tokens(128)
///     .build()?;
/// let reply = llm.chat(&[ChatMessage::user("Say hello")]).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct OpenAILike {
    engine: Engine,
}

/// Configures an [`OpenAILike`].
#[derive(Clone)]
pub struct OpenAILikeBuilder {
    model: String,
    context_window: usize,
    is_chat_model: bool,
    is_function_calling_model: bool,
    should_use_structured_outputs: bool,
    tokenizer: Option<Arc<dyn Tokenizer>>,
    messages_to_prompt: Option<MessagesToPrompt>,
    completion_to_prompt: Option<CompletionToPrompt>,
    common: CommonOptions,
}

impl fmt::Debug for OpenAILikeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAILikeBuilder")
            .field("model", &self.model)
            .field("context_window", &self.context_window)
            .field("is_chat_model", &self.is_chat_model)
            .field("is_function_calling_model", &self.is_function_calling_model)
            .field(
                "should_use_structured_outputs",
                &self.should_use_structured_outputs,
            )
            .field("tokenizer", &self.tokenizer)
            .field("common", &self.common)
            .finish_non_exhaustive()
    }
}

impl OpenAILikeBuilder {
    /// The context window (default 3900, LlamaIndex's `DEFAULT_CONTEXT_WINDOW`).
    pub fn context_window(mut self, context_window: usize) -> Self {
        self.context_window = context_window;
        self
    }

    /// Whether to use `/chat/completions` (true) or `/completions` (false, the default).
    pub fn is_chat_model(mut self, yes: bool) -> Self {
        self.is_chat_model = yes;
        self
    }

    /// Whether the model calls tools natively (default false).
    pub fn is_function_calling_model(mut self, yes: bool) -> Self {
        self.is_function_calling_model = yes;
        self
    }

    /// Whether the server honours `response_format` with a JSON schema, so
    /// `structured_chat` uses it (default false: a forced tool call for
    /// function-calling models, else the schema in the prompt).
    pub fn should_use_structured_outputs(mut self, yes: bool) -> Self {
        self.should_use_structured_outputs = yes;
        self
    }

    /// A tokenizer for the model: with it, `/completions` requests without
    /// `max_tokens` ask for what the context window leaves beside the prompt.
    pub fn tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// How a conversation becomes one prompt for a completion model (default:
    /// LlamaIndex's generic `role: content` lines).
    pub fn messages_to_prompt(
        mut self,
        f: impl Fn(&[ChatMessage]) -> String + Send + Sync + 'static,
    ) -> Self {
        self.messages_to_prompt = Some(Arc::new(f));
        self
    }

    /// How a raw prompt is wrapped before `complete` sends it, unless the
    /// caller says it is already formatted (default: unchanged).
    pub fn completion_to_prompt(
        mut self,
        f: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> Self {
        self.completion_to_prompt = Some(Arc::new(f));
        self
    }

    common_builder_methods!();

    /// Builds the model. An empty model name, a zero context window, an
    /// out-of-range parameter or settings that cannot travel in HTTP are
    /// errors. No API key is fine: many local servers need none.
    pub fn build(self) -> Result<OpenAILike> {
        if self.context_window == 0 {
            return Err(Error::InvalidInput(
                "context_window must be greater than 0".to_owned(),
            ));
        }
        let model = self.model.trim().to_owned();
        let reasoning_model = is_o1_model(&model);
        let params = self.common.params(&model, reasoning_model)?;
        let client = OpenAIClient::new(&self.common.settings)?;
        let metadata = LlmMetadata {
            context_window: self.context_window,
            num_output: self.common.num_output(),
            is_chat_model: self.is_chat_model,
            is_function_calling_model: self.is_function_calling_model,
            model_name: model,
            system_role: MessageRole::System,
        };
        let structured = if self.should_use_structured_outputs {
            StructuredMode::ResponseFormat
        } else if self.is_function_calling_model {
            StructuredMode::ToolCall
        } else {
            StructuredMode::Prompt
        };
        Ok(OpenAILike {
            engine: Engine {
                class_name: "OpenAILike",
                client,
                params,
                metadata,
                structured,
                reasoning_model,
                tokenizer: self.tokenizer,
                messages_to_prompt: self.messages_to_prompt,
                completion_to_prompt: self.completion_to_prompt,
            },
        })
    }
}

impl OpenAILike {
    /// A builder for `model` with LlamaIndex's `OpenAILike` defaults.
    pub fn builder(model: impl Into<String>) -> OpenAILikeBuilder {
        OpenAILikeBuilder {
            model: model.into(),
            context_window: DEFAULT_CONTEXT_WINDOW,
            is_chat_model: false,
            is_function_calling_model: false,
            should_use_structured_outputs: false,
            tokenizer: None,
            messages_to_prompt: None,
            completion_to_prompt: None,
            common: CommonOptions::default(),
        }
    }

    /// The model name.
    pub fn model(&self) -> &str {
        &self.engine.params.model
    }

    /// The connection (base URL, timeout, retry policy).
    pub fn client(&self) -> &OpenAIClient {
        &self.engine.client
    }
}

delegate_llm!(OpenAILike);
