//! ragloom-embeddings-openai: OpenAI's embedding models, and any OpenAI-compatible
//! `/embeddings` endpoint, as a ragloom [`Embedding`] — LlamaIndex's `OpenAIEmbedding`, on async-openai.
//!
//! Texts go out in batches of `embed_batch_size` (default 100, as
//! LlamaIndex's), newlines replaced by spaces as LlamaIndex does, with
//! `dimensions` for the text-embedding-3 models. The connection, timeout and
//! retry policy are `ragloom-llms-openai`'s [`OpenAIClient`], shared with the LLMs.
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_core::embeddings::Embedding;
//! use ragloom_embeddings_openai::OpenAIEmbedding;
//!
//! let embed_model = OpenAIEmbedding::builder()
//!     .model("text-embedding-3-small")
//!     .dimensions(256)
//!     .build()?;
//! let vector = embed_model.embed_query("What did the author do growing up?").await?;
//! assert_eq!(vector.len(), 256);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

use async_trait::async_trait;
use ragloom_common_openai::{
    ApiKey, ClientSettings, DEFAULT_OPENAI_API_BASE, OpenAIClient, PROVIDER, RetryPolicy,
};
use ragloom_core::embeddings::Embedding;
use ragloom_core::{Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::fmt;
use std::time::Duration;

/// LlamaIndex's default embedding model.
pub const DEFAULT_OPENAI_EMBEDDING_MODEL: &str = "text-embedding-ada-002";
/// LlamaIndex's default batch size for OpenAI embeddings.
pub const DEFAULT_EMBED_BATCH_SIZE: usize = 100;
/// OpenAI accepts at most this many inputs per request (LlamaIndex asserts it).
pub const MAX_EMBED_BATCH_SIZE: usize = 2048;
/// LlamaIndex's default retry count for embeddings (`max_retries=10`).
pub const DEFAULT_EMBEDDING_MAX_RETRIES: usize = 10;

/// The vector length of OpenAI's embedding models, when not shortened with `dimensions`.
pub fn openai_embedding_dimensions(model: &str) -> Option<usize> {
    match model {
        "text-embedding-ada-002" | "text-embedding-3-small" => Some(1536),
        "text-embedding-3-large" => Some(3072),
        _ => None,
    }
}

/// An OpenAI (or OpenAI-compatible) embedding model.
#[derive(Clone)]
pub struct OpenAIEmbedding {
    client: OpenAIClient,
    model: String,
    dimensions: Option<usize>,
    embed_batch_size: usize,
    additional_kwargs: Map<String, Value>,
}

impl fmt::Debug for OpenAIEmbedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAIEmbedding")
            .field("model", &self.model)
            .field("dimensions", &self.dimensions)
            .field("embed_batch_size", &self.embed_batch_size)
            .field(
                "additional_kwargs",
                &self.additional_kwargs.keys().collect::<Vec<_>>(),
            )
            .field("client", &self.client)
            .finish()
    }
}

/// Configures an [`OpenAIEmbedding`].
#[derive(Clone, Debug)]
pub struct OpenAIEmbeddingBuilder {
    model: String,
    dimensions: Option<usize>,
    embed_batch_size: usize,
    additional_kwargs: Map<String, Value>,
    settings: ClientSettings,
}

impl Default for OpenAIEmbeddingBuilder {
    fn default() -> Self {
        Self {
            model: DEFAULT_OPENAI_EMBEDDING_MODEL.to_owned(),
            dimensions: None,
            embed_batch_size: DEFAULT_EMBED_BATCH_SIZE,
            additional_kwargs: Map::new(),
            settings: ClientSettings {
                retry: RetryPolicy::new(DEFAULT_EMBEDDING_MAX_RETRIES),
                ..ClientSettings::default()
            },
        }
    }
}

impl OpenAIEmbeddingBuilder {
    /// The model (default `text-embedding-ada-002`); any name the server knows.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Shortens the vectors (text-embedding-3 models, and servers that take it).
    pub fn dimensions(mut self, dimensions: usize) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Texts per request (default 100, at most 2048).
    pub fn embed_batch_size(mut self, size: usize) -> Self {
        self.embed_batch_size = size;
        self
    }

    /// Extra request-body fields (LlamaIndex's `additional_kwargs`), e.g. `user`.
    pub fn additional_kwargs(mut self, kwargs: Map<String, Value>) -> Self {
        self.additional_kwargs = kwargs;
        self
    }

    /// The API key; unset reads `OPENAI_API_KEY`.
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.settings.api_key = Some(key.into());
        self
    }

    /// The API base URL; unset reads `OPENAI_API_BASE` / `OPENAI_BASE_URL`, else OpenAI's.
    pub fn api_base(mut self, base: impl Into<String>) -> Self {
        self.settings.api_base = Some(base.into());
        self
    }

    /// A header sent with every request.
    pub fn default_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings
            .default_headers
            .push((name.into(), value.into()));
        self
    }

    /// The per-request timeout (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// Retries after a failed attempt (default 10, LlamaIndex's), keeping the rest of the policy.
    pub fn max_retries(mut self, max_retries: usize) -> Self {
        self.settings.retry.max_retries = max_retries;
        self
    }

    /// The whole retry policy.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.settings.retry = policy;
        self
    }

    /// All connection settings at once.
    pub fn client_settings(mut self, settings: ClientSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Builds the model. A batch size outside 1..=2048, zero `dimensions`,
    /// `dimensions` on `text-embedding-ada-002` (which cannot shorten its
    /// vectors), a missing key for OpenAI itself, or settings that cannot
    /// travel in HTTP are errors.
    pub fn build(self) -> Result<OpenAIEmbedding> {
        let model = self.model.trim().to_owned();
        if model.is_empty() {
            return Err(Error::InvalidInput("model must not be empty".to_owned()));
        }
        if !(1..=MAX_EMBED_BATCH_SIZE).contains(&self.embed_batch_size) {
            return Err(Error::InvalidInput(format!(
                "embed_batch_size must be between 1 and {MAX_EMBED_BATCH_SIZE}, got {}",
                self.embed_batch_size
            )));
        }
        match self.dimensions {
            Some(0) => {
                return Err(Error::InvalidInput(
                    "dimensions must be greater than 0".to_owned(),
                ));
            }
            Some(_) if model == "text-embedding-ada-002" => {
                return Err(Error::InvalidInput(
                    "dimensions is only supported by the text-embedding-3 models, not text-embedding-ada-002"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        let client = OpenAIClient::new(&self.settings)?;
        if !client.has_api_key() && client.api_base() == DEFAULT_OPENAI_API_BASE {
            return Err(Error::InvalidInput(
                "OpenAI needs an API key: set OPENAI_API_KEY or call .api_key(...) on the builder"
                    .to_owned(),
            ));
        }
        Ok(OpenAIEmbedding {
            client,
            model,
            dimensions: self.dimensions,
            embed_batch_size: self.embed_batch_size,
            additional_kwargs: self.additional_kwargs,
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireEmbeddings {
    data: Vec<WireEmbedding>,
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireEmbedding {
    index: Option<usize>,
    embedding: Value,
}

impl OpenAIEmbedding {
    /// A builder with LlamaIndex's defaults.
    pub fn builder() -> OpenAIEmbeddingBuilder {
        OpenAIEmbeddingBuilder::default()
    }

    /// `text-embedding-ada-002` with every option at its default.
    pub fn new() -> Result<Self> {
        Self::builder().build()
    }

    /// The connection (base URL, timeout, retry policy).
    pub fn client(&self) -> &OpenAIClient {
        &self.client
    }

    fn error(&self, message: String) -> Error {
        Error::Provider {
            provider: PROVIDER.to_owned(),
            message: format!("embeddings with model `{}`: {message}", self.model),
            source: None,
        }
    }

    /// One request: the vectors of `texts`, in their order.
    async fn embed_request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let what = format!("embeddings with model `{}`", self.model);
        // LlamaIndex replaces newlines, which older models embedded poorly.
        let input: Vec<String> = texts.iter().map(|t| t.replace('\n', " ")).collect();
        let mut body = Map::new();
        body.insert("input".to_owned(), json!(input));
        body.insert("model".to_owned(), json!(self.model));
        if let Some(d) = self.dimensions {
            body.insert("dimensions".to_owned(), json!(d));
        }
        for (k, v) in &self.additional_kwargs {
            body.insert(k.clone(), v.clone());
        }
        let raw: Value = self
            .client
            .sdk()
            .embeddings()
            .create_byot(Value::Object(body))
            .await
            .map_err(|e| self.client.map_error(&what, e))?;
        let reply: WireEmbeddings = serde_json::from_value(raw)
            .map_err(|e| Error::provider(PROVIDER, format!("{what}: unreadable reply: {e}"), e))?;
        if let Some(error) = reply.error {
            return Err(self.error(format!("the server reported an error: {error}")));
        }
        if reply.data.len() != texts.len() {
            return Err(self.error(format!(
                "returned {} embeddings for a batch of {} texts",
                reply.data.len(),
                texts.len()
            )));
        }
        let expected = self
            .dimensions
            .or_else(|| openai_embedding_dimensions(&self.model));
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in reply.data.into_iter().enumerate() {
            // OpenAI returns them in order with their index; trust the index
            // when present, so a server that reorders cannot scramble texts.
            let index = item.index.unwrap_or(position);
            let vector: Vec<f32> = serde_json::from_value(item.embedding).map_err(|e| {
                self.error(format!(
                    "embedding {index} is not a list of numbers ({e}); base64 replies are not supported"
                ))
            })?;
            if let Some(n) = expected {
                if vector.len() != n {
                    return Err(self.error(format!(
                        "embedding {index} has {} dimensions, expected {n}",
                        vector.len()
                    )));
                }
            }
            match out.get_mut(index) {
                Some(slot @ None) => *slot = Some(vector),
                Some(Some(_)) => {
                    return Err(self.error(format!("index {index} appears twice in the reply")));
                }
                None => {
                    return Err(self.error(format!(
                        "index {index} is out of range for a batch of {} texts",
                        texts.len()
                    )));
                }
            }
        }
        // Every slot is filled: as many items as texts, no duplicates, all in range.
        Ok(out.into_iter().flatten().collect())
    }
}

#[async_trait]
impl Embedding for OpenAIEmbedding {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn dimensions(&self) -> Option<usize> {
        self.dimensions
            .or_else(|| openai_embedding_dimensions(&self.model))
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_batch_size
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed_request(&[query.to_owned()]).await?;
        vectors
            .pop()
            .ok_or_else(|| self.error("returned no embedding for the query".to_owned()))
    }

    /// Embeds `texts`, in requests of at most `embed_batch_size` (so OpenAI's
    /// 2048-input limit holds even when called with more).
    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.embed_batch_size) {
            out.extend(self.embed_request(batch).await?);
        }
        Ok(out)
    }
}
