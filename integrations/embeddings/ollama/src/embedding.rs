//! [`OllamaEmbedding`] (LlamaIndex's `OllamaEmbedding`): texts to vectors
//! through Ollama's `/api/embed`, one request per batch of `embed_batch_size` texts.

use async_trait::async_trait;
use ragloom_common_ollama::{Connection, OllamaHost, PROVIDER, ServerOptions};
use ragloom_common_ollama::{EmbedReply, EmbedRequest, KeepAlive, ModelOptions};
use ragloom_core::embeddings::{DEFAULT_EMBED_BATCH_SIZE, Embedding};
use ragloom_core::{Error, Result};
use serde_json::{Map, Value};
use std::fmt;
use std::time::Duration;
use tracing::Instrument;

/// The largest `embed_batch_size` LlamaIndex accepts.
pub const MAX_EMBED_BATCH_SIZE: usize = 2048;

/// An embedding model served by Ollama.
///
/// [`Embedding::embed_texts`] sends its texts in one `/api/embed` request;
/// `embed_in_batches` (and so every index) splits larger inputs into batches
/// of [`Embedding::embed_batch_size`]. Texts and queries are stripped and
/// prefixed with `text_instruction` / `query_instruction` when set, as in LlamaIndex.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::embeddings::{Embedding, embed_in_batches};
/// use ragloom_embeddings_ollama::OllamaEmbedding;
///
/// let embed = OllamaEmbedding::builder("nomic-embed-text").embed_batch_size(32).build()?;
/// let texts = vec!["first chunk".to_string(), "second chunk".to_string()];
/// let vectors = embed_in_batches(&embed, &texts, false).await?;
/// let query = embed.embed_query("which chunk?").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OllamaEmbedding {
    model_name: String,
    host: OllamaHost,
    conn: Connection,
    embed_batch_size: usize,
    options: Option<ModelOptions>,
    query_instruction: Option<String>,
    text_instruction: Option<String>,
    keep_alive: Option<KeepAlive>,
    dimensions: Option<u32>,
    truncate: Option<bool>,
}

impl fmt::Debug for OllamaEmbedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OllamaEmbedding")
            .field("model_name", &self.model_name)
            .field("base_url", &self.conn.base_url)
            .field("embed_batch_size", &self.embed_batch_size)
            .field("options", &self.options)
            .field("query_instruction", &self.query_instruction)
            .field("text_instruction", &self.text_instruction)
            .field("keep_alive", &self.keep_alive)
            .field("dimensions", &self.dimensions)
            .field("truncate", &self.truncate)
            .field("request_timeout", &self.conn.timeout)
            .finish()
    }
}

/// Settings for an [`OllamaEmbedding`]; every one has LlamaIndex's default.
#[derive(Clone, Debug)]
pub struct OllamaEmbeddingBuilder {
    model_name: String,
    server: ServerOptions,
    embed_batch_size: usize,
    ollama_additional_kwargs: Map<String, Value>,
    query_instruction: Option<String>,
    text_instruction: Option<String>,
    dimensions: Option<u32>,
    truncate: Option<bool>,
}

impl OllamaEmbeddingBuilder {
    /// Settings for `model_name` (e.g. `nomic-embed-text`, `all-minilm`).
    pub fn new(model_name: impl Into<String>) -> Self {
        Self {
            model_name: model_name.into(),
            server: ServerOptions::default(),
            embed_batch_size: DEFAULT_EMBED_BATCH_SIZE,
            ollama_additional_kwargs: Map::new(),
            query_instruction: None,
            text_instruction: None,
            dimensions: None,
            truncate: None,
        }
    }

    ragloom_common_ollama::server_option_setters!();

    /// Texts per `/api/embed` request (default 10; 1 to 2048).
    pub fn embed_batch_size(mut self, embed_batch_size: usize) -> Self {
        self.embed_batch_size = embed_batch_size;
        self
    }

    /// One model option sent in `options` (LlamaIndex's `ollama_additional_kwargs`).
    pub fn additional_kwarg(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.ollama_additional_kwargs
            .insert(key.into(), value.into());
        self
    }

    /// Replaces all model options (LlamaIndex's `ollama_additional_kwargs`).
    pub fn ollama_additional_kwargs(mut self, kwargs: Map<String, Value>) -> Self {
        self.ollama_additional_kwargs = kwargs;
        self
    }

    /// Put before every query, e.g. `"search_query:"` for nomic-embed-text.
    pub fn query_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.query_instruction = Some(instruction.into());
        self
    }

    /// Put before every text, e.g. `"search_document:"` for nomic-embed-text.
    pub fn text_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.text_instruction = Some(instruction.into());
        self
    }

    /// Ask the model for vectors of this length (`dimensions`, for models
    /// that support shortening); also what [`Embedding::dimensions`] reports.
    pub fn dimensions(mut self, dimensions: u32) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Whether Ollama may cut texts longer than the model's context
    /// (`truncate`; the server's default is true). With `false` a long text is an error.
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = Some(truncate);
        self
    }

    /// Timeout to connect and for each wait for data; default none, as LlamaIndex's client.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.server.request_timeout = Some(timeout);
        self
    }

    /// Checks the settings and creates the HTTP client.
    pub fn build(self) -> Result<OllamaEmbedding> {
        if self.model_name.trim().is_empty() {
            return Err(Error::InvalidInput(
                "ollama embedding: the model name is empty (e.g. \"nomic-embed-text\")".to_owned(),
            ));
        }
        if self.embed_batch_size == 0 || self.embed_batch_size > MAX_EMBED_BATCH_SIZE {
            return Err(Error::InvalidInput(format!(
                "ollama embedding: embed_batch_size must be between 1 and {MAX_EMBED_BATCH_SIZE}, got {}",
                self.embed_batch_size
            )));
        }
        let options = if self.ollama_additional_kwargs.is_empty() {
            None
        } else {
            Some(
                serde_json::from_value::<ModelOptions>(Value::Object(
                    self.ollama_additional_kwargs,
                ))
                .map_err(|e| {
                    Error::invalid(
                        "ollama embedding: ollama_additional_kwargs are not valid model options",
                        e,
                    )
                })?,
            )
        };
        let (host, conn) = self.server.connect()?;
        Ok(OllamaEmbedding {
            model_name: self.model_name,
            host,
            conn,
            embed_batch_size: self.embed_batch_size,
            options,
            query_instruction: self.query_instruction,
            text_instruction: self.text_instruction,
            keep_alive: self.server.keep_alive,
            dimensions: self.dimensions,
            truncate: self.truncate,
        })
    }
}

/// LlamaIndex's `_format_query` / `_format_text`: the text stripped, after
/// the stripped instruction and a space when there is one.
fn with_instruction(instruction: Option<&str>, text: &str) -> String {
    match instruction.filter(|i| !i.is_empty()) {
        Some(i) => format!("{} {}", i.trim(), text.trim()).trim().to_owned(),
        None => text.trim().to_owned(),
    }
}

impl OllamaEmbedding {
    /// Settings for `model_name`, to adjust and [`OllamaEmbeddingBuilder::build`].
    pub fn builder(model_name: impl Into<String>) -> OllamaEmbeddingBuilder {
        OllamaEmbeddingBuilder::new(model_name)
    }

    /// `model_name` with every default (server from `OLLAMA_HOST`).
    pub fn new(model_name: impl Into<String>) -> Result<Self> {
        Self::builder(model_name).build()
    }

    /// The server address as parsed.
    pub fn host(&self) -> &OllamaHost {
        &self.host
    }

    /// The URL requests go to (ends in `/`).
    pub fn base_url(&self) -> &str {
        &self.conn.base_url
    }

    /// A text as it is sent: stripped, after `text_instruction` if any.
    pub fn format_text(&self, text: &str) -> String {
        with_instruction(self.text_instruction.as_deref(), text)
    }

    /// A query as it is sent: stripped, after `query_instruction` if any.
    pub fn format_query(&self, query: &str) -> String {
        with_instruction(self.query_instruction.as_deref(), query)
    }

    /// One `/api/embed` request for `inputs` (already formatted).
    async fn embed_raw(&self, inputs: Vec<String>) -> Result<Vec<Vec<f32>>> {
        let count = inputs.len();
        let what = format!("embedding {count} text(s) with model `{}`", self.model_name);
        let request = EmbedRequest {
            model: self.model_name.clone(),
            input: inputs,
            truncate: self.truncate,
            options: self.options.clone(),
            keep_alive: self.keep_alive.clone(),
            dimensions: self.dimensions,
        };
        let span = tracing::debug_span!("embedding", provider = PROVIDER, model = %self.model_name, texts = count);
        let (_, reply): (_, EmbedReply) = self
            .conn
            .post_json("api/embed", &what, &request)
            .instrument(span)
            .await?;
        if reply.embeddings.len() != count {
            return Err(Error::Provider {
                provider: PROVIDER.to_owned(),
                message: format!(
                    "{what}: Ollama returned {} embeddings for {count} inputs",
                    reply.embeddings.len()
                ),
                source: None,
            });
        }
        Ok(reply.embeddings)
    }
}

#[async_trait]
impl Embedding for OllamaEmbedding {
    fn model_name(&self) -> &str {
        &self.model_name
    }

    fn dimensions(&self) -> Option<usize> {
        self.dimensions.and_then(|d| usize::try_from(d).ok())
    }

    fn embed_batch_size(&self) -> usize {
        self.embed_batch_size
    }

    async fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed_raw(vec![self.format_query(query)]).await?;
        // embed_raw checked there is exactly one.
        Ok(vectors.pop().unwrap_or_default())
    }

    async fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let inputs = texts.iter().map(|t| self.format_text(t)).collect();
        self.embed_raw(inputs).await
    }
}
