//! `OpenAI`: OpenAI's own models through the chat and completion APIs, with
//! LlamaIndex's model table deciding the context window, chat or completion API and tool calling.

use crate::base::{Engine, Params, StructuredMode};
use crate::client::{ClientSettings, DEFAULT_OPENAI_API_BASE, OpenAIClient};
use crate::models::{
    DEFAULT_OPENAI_MODEL, DEFAULT_TEMPERATURE, base_model_name, is_chat_model,
    is_function_calling_model, is_json_schema_supported, is_o1_model,
    openai_modelname_to_contextsize,
};
use ragloom_core::llms::{LlmMetadata, MessageRole};
use ragloom_core::{Error, Result, default_tokenizer};
use serde_json::{Map, Value};
use std::fmt;

/// Said when OpenAI itself is the server and no key was found anywhere.
const MISSING_API_KEY: &str = "OpenAI needs an API key: set OPENAI_API_KEY or call .api_key(...) \
    on the builder (keys are managed at https://platform.openai.com/account/api-keys)";

/// Options both `OpenAI` and `OpenAILike` builders take.
#[derive(Clone)]
pub(crate) struct CommonOptions {
    pub settings: ClientSettings,
    pub temperature: f64,
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub additional_kwargs: Map<String, Value>,
    pub strict: bool,
    pub reasoning_effort: Option<String>,
}

impl Default for CommonOptions {
    fn default() -> Self {
        Self {
            settings: ClientSettings::default(),
            temperature: DEFAULT_TEMPERATURE,
            max_tokens: None,
            seed: None,
            stop: Vec::new(),
            additional_kwargs: Map::new(),
            strict: false,
            reasoning_effort: None,
        }
    }
}

impl fmt::Debug for CommonOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommonOptions")
            .field("settings", &self.settings)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("seed", &self.seed)
            .field("stop", &self.stop)
            .field(
                "additional_kwargs",
                &self.additional_kwargs.keys().collect::<Vec<_>>(),
            )
            .field("strict", &self.strict)
            .field("reasoning_effort", &self.reasoning_effort)
            .finish()
    }
}

impl CommonOptions {
    /// Checks the ranges LlamaIndex's pydantic fields enforce and builds the
    /// parameters; reasoning models get temperature 1, the only one they take.
    pub(crate) fn params(&self, model: &str, reasoning_model: bool) -> Result<Params> {
        if model.trim().is_empty() {
            return Err(Error::InvalidInput("model must not be empty".to_owned()));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(Error::InvalidInput(format!(
                "temperature must be between 0 and 2, got {}",
                self.temperature
            )));
        }
        if self.max_tokens == Some(0) {
            return Err(Error::InvalidInput(
                "max_tokens must be greater than 0".to_owned(),
            ));
        }
        Ok(Params {
            model: model.to_owned(),
            temperature: Some(if reasoning_model {
                1.0
            } else {
                self.temperature
            }),
            max_tokens: self.max_tokens,
            seed: self.seed,
            stop: self.stop.clone(),
            additional_kwargs: self.additional_kwargs.clone(),
            strict: self.strict,
            reasoning_effort: self.reasoning_effort.clone(),
        })
    }

    /// LlamaIndex's `num_output`: `max_tokens`, or -1 for "as many as the model likes".
    pub(crate) fn num_output(&self) -> i64 {
        self.max_tokens.map_or(-1, i64::from)
    }
}

/// The builder methods `OpenAIBuilder` and `OpenAILikeBuilder` share.
macro_rules! common_builder_methods {
    () => {
        /// Sampling temperature, 0 to 2 (LlamaIndex's default 0.1).
        pub fn temperature(mut self, temperature: f64) -> Self {
            self.common.temperature = temperature;
            self
        }

        /// Most tokens to generate (`max_tokens`); unset lets the server decide.
        pub fn max_tokens(mut self, max_tokens: u32) -> Self {
            self.common.max_tokens = Some(max_tokens);
            self
        }

        /// Seed for (best-effort) reproducible sampling.
        pub fn seed(mut self, seed: i64) -> Self {
            self.common.seed = Some(seed);
            self
        }

        /// Sequences at which generation stops.
        pub fn stop<I, S>(mut self, stop: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.common.stop = stop.into_iter().map(Into::into).collect();
            self
        }

        /// Extra request-body fields (LlamaIndex's `additional_kwargs`); they
        /// override the named parameters.
        pub fn additional_kwargs(
            mut self,
            kwargs: serde_json::Map<String, serde_json::Value>,
        ) -> Self {
            self.common.additional_kwargs = kwargs;
            self
        }

        /// Adds one extra request-body field.
        pub fn additional_kwarg(
            mut self,
            key: impl Into<String>,
            value: impl Into<serde_json::Value>,
        ) -> Self {
            self.common
                .additional_kwargs
                .insert(key.into(), value.into());
            self
        }

        /// Whether tool schemas are sent with `strict` (LlamaIndex's `strict`, default false).
        pub fn strict(mut self, strict: bool) -> Self {
            self.common.strict = strict;
            self
        }

        /// `reasoning_effort` for reasoning models ("none" to "xhigh").
        pub fn reasoning_effort(mut self, effort: impl Into<String>) -> Self {
            self.common.reasoning_effort = Some(effort.into());
            self
        }

        /// The API key; unset reads `OPENAI_API_KEY`.
        pub fn api_key(mut self, key: impl Into<$crate::client::ApiKey>) -> Self {
            self.common.settings.api_key = Some(key.into());
            self
        }

        /// The API base URL, e.g. `http://127.0.0.1:8080/v1`; unset reads
        /// `OPENAI_API_BASE` / `OPENAI_BASE_URL`, else OpenAI's.
        pub fn api_base(mut self, base: impl Into<String>) -> Self {
            self.common.settings.api_base = Some(base.into());
            self
        }

        /// The `OpenAI-Organization` header; unset reads `OPENAI_ORG_ID`.
        pub fn organization(mut self, organization: impl Into<String>) -> Self {
            self.common.settings.organization = Some(organization.into());
            self
        }

        /// The `OpenAI-Project` header; unset reads `OPENAI_PROJECT_ID`.
        pub fn project(mut self, project: impl Into<String>) -> Self {
            self.common.settings.project = Some(project.into());
            self
        }

        /// A header sent with every request (LlamaIndex's `default_headers`).
        pub fn default_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.common
                .settings
                .default_headers
                .push((name.into(), value.into()));
            self
        }

        /// The per-request timeout (default 60 s).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.common.settings.timeout = timeout;
            self
        }

        /// Retries after a failed attempt (default 3), keeping the rest of the policy.
        pub fn max_retries(mut self, max_retries: usize) -> Self {
            self.common.settings.retry.max_retries = max_retries;
            self
        }

        /// The whole retry policy.
        pub fn retry_policy(mut self, policy: $crate::client::RetryPolicy) -> Self {
            self.common.settings.retry = policy;
            self
        }

        /// All connection settings at once.
        pub fn client_settings(mut self, settings: $crate::client::ClientSettings) -> Self {
            self.common.settings = settings;
            self
        }
    };
}
pub(crate) use common_builder_methods;

/// OpenAI's models (LlamaIndex's `OpenAI` from llama-index-llms-openai).
///
/// Chat models go through `/chat/completions`, completion models
/// (`gpt-3.5-turbo-instruct`) through `/completions`; streaming, native tool
/// calls ([`ragloom_core::llms::Llm::chat_with_tools`]) and structured output
/// (`response_format` with a JSON schema on the models that take it, else a
/// forced tool call) are supported. The metadata comes from
/// [`crate::models`]: an unknown model is an error unless its
/// `context_window` is given.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::llms::{ChatMessage, Llm};
/// use ragloom_llms_openai::OpenAI;
///
/// let llm = OpenAI::builder().model("gpt-4o-mini").max_tokens(256).build()?;
/// let reply = llm.chat(&[ChatMessage::user("Say hello")]).await?;
/// println!("{}", reply.message.content);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct OpenAI {
    engine: Engine,
}

/// Configures an [`OpenAI`].
#[derive(Debug, Clone)]
pub struct OpenAIBuilder {
    model: String,
    context_window: Option<usize>,
    common: CommonOptions,
}

impl Default for OpenAIBuilder {
    fn default() -> Self {
        Self {
            model: DEFAULT_OPENAI_MODEL.to_owned(),
            context_window: None,
            common: CommonOptions::default(),
        }
    }
}

impl OpenAIBuilder {
    /// The model (default `gpt-3.5-turbo`, as LlamaIndex's).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The context window, for models newer than the table (LlamaIndex has no
    /// such option and refuses unknown models).
    pub fn context_window(mut self, context_window: usize) -> Self {
        self.context_window = Some(context_window);
        self
    }

    common_builder_methods!();

    /// Builds the model. An unknown, discontinued or Responses-only model,
    /// an out-of-range parameter, a missing API key (when talking to OpenAI
    /// itself) or settings that cannot travel in HTTP are errors.
    pub fn build(self) -> Result<OpenAI> {
        let model = self.model.trim().to_owned();
        let context_window = match self.context_window {
            Some(0) => {
                return Err(Error::InvalidInput(
                    "context_window must be greater than 0".to_owned(),
                ));
            }
            Some(n) => n,
            None => openai_modelname_to_contextsize(&model)?,
        };
        let base = base_model_name(&model).to_owned();
        let reasoning_model = is_o1_model(&model);
        let params = self.common.params(&model, reasoning_model)?;
        let client = OpenAIClient::new(&self.common.settings)?;
        if !client.has_api_key() && client.api_base() == DEFAULT_OPENAI_API_BASE {
            return Err(Error::InvalidInput(MISSING_API_KEY.to_owned()));
        }
        // A model given its window but missing from the table is a new chat
        // model: only listed completion models use `/completions`.
        let chat = is_chat_model(&base) || !crate::models::is_known_model(&base);
        let function_calling = is_function_calling_model(&model);
        let metadata = LlmMetadata {
            context_window,
            num_output: self.common.num_output(),
            is_chat_model: chat,
            is_function_calling_model: function_calling,
            model_name: model.clone(),
            system_role: if reasoning_model {
                MessageRole::User
            } else {
                MessageRole::System
            },
        };
        let structured = if is_json_schema_supported(&model) {
            StructuredMode::ResponseFormat
        } else if function_calling {
            StructuredMode::ToolCall
        } else {
            StructuredMode::Prompt
        };
        Ok(OpenAI {
            engine: Engine {
                class_name: "OpenAI",
                client,
                params,
                metadata,
                structured,
                reasoning_model,
                tokenizer: (!chat).then(default_tokenizer),
                messages_to_prompt: None,
                completion_to_prompt: None,
            },
        })
    }
}

impl OpenAI {
    /// A builder with LlamaIndex's defaults.
    pub fn builder() -> OpenAIBuilder {
        OpenAIBuilder::default()
    }

    /// `model` with every other option at its default.
    pub fn new(model: impl Into<String>) -> Result<Self> {
        Self::builder().model(model).build()
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

/// Forwards every `Llm` method to the engine.
macro_rules! delegate_llm {
    ($ty:ty) => {
        #[async_trait::async_trait]
        impl ragloom_core::llms::Llm for $ty {
            fn metadata(&self) -> ragloom_core::llms::LlmMetadata {
                ragloom_core::llms::Llm::metadata(&self.engine)
            }
            async fn chat(
                &self,
                messages: &[ragloom_core::llms::ChatMessage],
            ) -> ragloom_core::Result<ragloom_core::llms::ChatResponse> {
                ragloom_core::llms::Llm::chat(&self.engine, messages).await
            }
            async fn complete(
                &self,
                prompt: &str,
                formatted: bool,
            ) -> ragloom_core::Result<ragloom_core::llms::CompletionResponse> {
                ragloom_core::llms::Llm::complete(&self.engine, prompt, formatted).await
            }
            async fn stream_chat(
                &self,
                messages: &[ragloom_core::llms::ChatMessage],
            ) -> ragloom_core::Result<ragloom_core::llms::ChatResponseStream> {
                ragloom_core::llms::Llm::stream_chat(&self.engine, messages).await
            }
            async fn stream_complete(
                &self,
                prompt: &str,
                formatted: bool,
            ) -> ragloom_core::Result<ragloom_core::llms::CompletionResponseStream> {
                ragloom_core::llms::Llm::stream_complete(&self.engine, prompt, formatted).await
            }
            async fn tool_chat(
                &self,
                request: ragloom_core::llms::ToolChatRequest<'_>,
            ) -> ragloom_core::Result<ragloom_core::llms::ChatResponse> {
                ragloom_core::llms::Llm::tool_chat(&self.engine, request).await
            }
            async fn stream_tool_chat(
                &self,
                request: ragloom_core::llms::ToolChatRequest<'_>,
            ) -> ragloom_core::Result<ragloom_core::llms::ChatResponseStream> {
                ragloom_core::llms::Llm::stream_tool_chat(&self.engine, request).await
            }
            async fn structured_chat(
                &self,
                messages: &[ragloom_core::llms::ChatMessage],
                schema: &serde_json::Value,
            ) -> ragloom_core::Result<serde_json::Value> {
                ragloom_core::llms::Llm::structured_chat(&self.engine, messages, schema).await
            }
        }
    };
}
pub(crate) use delegate_llm;

delegate_llm!(OpenAI);
