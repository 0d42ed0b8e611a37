//! The [`Ollama`] LLM (LlamaIndex's `llama_index.llms.ollama.Ollama`): chat,
//! completion, streaming, tool calls and JSON output over Ollama's `/api/chat`.

use crate::convert::{
    ToolNames, chat_response, sanitize_tool_name, schema_format, to_wire_messages, to_wire_tools,
};
use crate::stream::{StreamContext, decode_chat_stream};
use crate::wire::{ChatReply, ChatRequest, Format};
use async_trait::async_trait;
use ragloom_common_ollama::{Connection, OllamaHost, PROVIDER, ServerOptions, server_error_text};
use ragloom_common_ollama::{KeepAlive, ModelOptions};
use ragloom_core::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    DEFAULT_CONTEXT_WINDOW, DEFAULT_NUM_OUTPUTS, Llm, LlmMetadata, MessageRole, ToolChatRequest,
    ToolChoice, chat_response_to_completion_response, parse_json_reply,
    stream_chat_response_to_completion_response,
};
use ragloom_core::tools::ToolMetadata;
use ragloom_core::{Error, Result};
use serde_json::{Map, Value};
use std::fmt;
use std::time::Duration;
use tracing::Instrument;

/// LlamaIndex's `DEFAULT_REQUEST_TIMEOUT` for Ollama: 30 seconds.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A model served by Ollama, used through `/api/chat` (LlamaIndex's `Ollama`).
///
/// Built with [`Ollama::builder`]; the server address comes from
/// `OLLAMA_HOST` (parsed as Ollama parses it) unless
/// [`OllamaBuilder::base_url`] gives one. Completion goes through chat, as in
/// LlamaIndex; streams are read as Ollama's NDJSON.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::llms::{ChatMessage, Llm};
/// use ragloom_llms_ollama::Ollama;
///
/// let llm = Ollama::builder("llama3.2").temperature(0.2).context_window(8192).build()?;
/// let reply = llm.chat(&[ChatMessage::user("Why is the sky blue?")]).await?;
/// println!("{}", reply.message.content);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Ollama {
    model: String,
    host: OllamaHost,
    conn: Connection,
    context_window: usize,
    options: ModelOptions,
    keep_alive: Option<KeepAlive>,
    json_mode: bool,
    is_function_calling_model: bool,
    thinking: Option<bool>,
}

impl fmt::Debug for Ollama {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ollama")
            .field("model", &self.model)
            .field("base_url", &self.conn.base_url)
            .field("context_window", &self.context_window)
            .field("options", &self.options)
            .field("keep_alive", &self.keep_alive)
            .field("json_mode", &self.json_mode)
            .field("is_function_calling_model", &self.is_function_calling_model)
            .field("thinking", &self.thinking)
            .field("request_timeout", &self.conn.timeout)
            .finish()
    }
}

/// Settings for an [`Ollama`] LLM; every one has LlamaIndex's default.
#[derive(Clone, Debug)]
pub struct OllamaBuilder {
    model: String,
    server: ServerOptions,
    temperature: Option<f32>,
    context_window: Option<usize>,
    num_ctx: Option<u64>,
    seed: Option<i32>,
    stop: Option<Vec<String>>,
    additional_kwargs: Map<String, Value>,
    json_mode: bool,
    is_function_calling_model: bool,
    thinking: Option<bool>,
}

impl OllamaBuilder {
    /// Settings for `model` (an Ollama model name such as `llama3.2` or `qwen3:8b`).
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            server: ServerOptions::with_timeout(Some(DEFAULT_REQUEST_TIMEOUT)),
            temperature: None,
            context_window: None,
            num_ctx: None,
            seed: None,
            stop: None,
            additional_kwargs: Map::new(),
            json_mode: false,
            is_function_calling_model: true,
            thinking: None,
        }
    }

    ragloom_common_ollama::server_option_setters!();

    /// Sampling temperature (`options.temperature`); unset leaves the model's default.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Tokens the model reads and writes per call, reported in
    /// [`LlmMetadata::context_window`] and sent as `options.num_ctx` unless
    /// [`Self::num_ctx`] says otherwise. Default: `num_ctx` if set, else 3900.
    pub fn context_window(mut self, context_window: usize) -> Self {
        self.context_window = Some(context_window);
        self
    }

    /// Ollama's `options.num_ctx`; also the context window when
    /// [`Self::context_window`] is not set.
    pub fn num_ctx(mut self, num_ctx: u64) -> Self {
        self.num_ctx = Some(num_ctx);
        self
    }

    /// `options.seed`, for reproducible output.
    pub fn seed(mut self, seed: i32) -> Self {
        self.seed = Some(seed);
        self
    }

    /// `options.stop`: sequences that end generation.
    pub fn stop<I, S>(mut self, stop: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.stop = Some(stop.into_iter().map(Into::into).collect());
        self
    }

    /// Any other model option (`top_k`, `num_predict`, `repeat_penalty`, ...),
    /// sent in `options`; it wins over the typed setters, as LlamaIndex's
    /// `additional_kwargs` do.
    pub fn additional_kwarg(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.additional_kwargs.insert(key.into(), value.into());
        self
    }

    /// Replaces all [`Self::additional_kwarg`]s.
    pub fn additional_kwargs(mut self, kwargs: Map<String, Value>) -> Self {
        self.additional_kwargs = kwargs;
        self
    }

    /// How long to wait to connect and, after that, for each piece of the
    /// reply (default 30 s, LlamaIndex's). A non-streamed answer arrives in
    /// one piece, so slow models need more.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.server.request_timeout = Some(timeout);
        self
    }

    /// No timeout at all.
    pub fn no_request_timeout(mut self) -> Self {
        self.server.request_timeout = None;
        self
    }

    /// Ask for JSON output on every chat (`"format": "json"`, LlamaIndex's `json_mode`).
    pub fn json_mode(mut self, json_mode: bool) -> Self {
        self.json_mode = json_mode;
        self
    }

    /// Whether the model supports tool calling (default true, as in
    /// LlamaIndex; Ollama cannot tell without asking the model).
    pub fn is_function_calling_model(mut self, yes: bool) -> Self {
        self.is_function_calling_model = yes;
        self
    }

    /// Turns a reasoning model's thinking on or off (`think`); the reasoning
    /// comes back in `additional_kwargs["thinking"]`.
    pub fn thinking(mut self, thinking: bool) -> Self {
        self.thinking = Some(thinking);
        self
    }

    /// Checks the settings and creates the HTTP client.
    pub fn build(self) -> Result<Ollama> {
        if self.model.trim().is_empty() {
            return Err(Error::InvalidInput(
                "ollama: the model name is empty (e.g. \"llama3.2\")".to_owned(),
            ));
        }
        let kwarg_num_ctx = self
            .additional_kwargs
            .get("num_ctx")
            .and_then(Value::as_u64);
        let context_window = self
            .context_window
            .or_else(|| self.num_ctx.and_then(|n| usize::try_from(n).ok()))
            .or_else(|| kwarg_num_ctx.and_then(|n| usize::try_from(n).ok()))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW);
        if context_window == 0 {
            return Err(Error::InvalidInput(
                "ollama: context_window must be greater than 0".to_owned(),
            ));
        }
        // additional_kwargs first, so its keys land in ModelOptions' own
        // fields (no key is sent twice) and win over the typed setters.
        let mut options: ModelOptions =
            serde_json::from_value(Value::Object(self.additional_kwargs.clone())).map_err(|e| {
                Error::invalid("ollama: additional_kwargs are not valid model options", e)
            })?;
        let given = |key: &str| self.additional_kwargs.contains_key(key);
        if let (Some(t), false) = (self.temperature, given("temperature")) {
            options = options.temperature(t);
        }
        if !given("num_ctx") {
            // As LlamaIndex does: the server gets the window the caller plans with.
            options = options.num_ctx(self.num_ctx.unwrap_or(context_window as u64));
        }
        if let (Some(seed), false) = (self.seed, given("seed")) {
            options = options.seed(seed);
        }
        if let (Some(stop), false) = (self.stop, given("stop")) {
            options = options.stop(stop);
        }
        let (host, conn) = self.server.connect()?;
        Ok(Ollama {
            model: self.model,
            host,
            conn,
            context_window,
            options,
            keep_alive: self.server.keep_alive,
            json_mode: self.json_mode,
            is_function_calling_model: self.is_function_calling_model,
            thinking: self.thinking,
        })
    }
}

impl Ollama {
    /// Settings for `model`, to adjust and [`OllamaBuilder::build`].
    pub fn builder(model: impl Into<String>) -> OllamaBuilder {
        OllamaBuilder::new(model)
    }

    /// `model` with every default (server from `OLLAMA_HOST`).
    pub fn new(model: impl Into<String>) -> Result<Self> {
        Self::builder(model).build()
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The server address as parsed.
    pub fn host(&self) -> &OllamaHost {
        &self.host
    }

    /// The URL requests go to (ends in `/`).
    pub fn base_url(&self) -> &str {
        &self.conn.base_url
    }

    /// The `options` object sent with every request.
    pub fn options(&self) -> &ModelOptions {
        &self.options
    }

    fn what(&self) -> String {
        format!("chat with model `{}`", self.model)
    }

    /// The request every call starts from: model, messages, options, keep_alive, think.
    fn request(&self, messages: &[ChatMessage]) -> ChatRequest {
        ChatRequest {
            model: self.model.clone(),
            messages: to_wire_messages(messages),
            tools: Vec::new(),
            options: Some(self.options.clone()),
            format: self.json_mode.then_some(Format::Json),
            keep_alive: self.keep_alive.clone(),
            stream: false,
            think: self.thinking,
        }
    }

    /// The tools a request carries for `tool_choice`: Ollama has no
    /// `tool_choice`, so `None` sends no tools and `Named` sends only that one.
    fn tools_for(
        &self,
        tools: &[ToolMetadata],
        tool_choice: &ToolChoice,
    ) -> Result<Vec<ToolMetadata>> {
        match tool_choice {
            ToolChoice::None => Ok(Vec::new()),
            ToolChoice::Auto | ToolChoice::Required => Ok(tools.to_vec()),
            ToolChoice::Named(name) => {
                let chosen: Vec<ToolMetadata> = tools
                    .iter()
                    .filter(|t| &t.name == name || sanitize_tool_name(&t.name) == *name)
                    .cloned()
                    .collect();
                if chosen.is_empty() {
                    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                    return Err(Error::InvalidInput(format!(
                        "ollama: tool_choice names `{name}`, which is not among the tools given ({})",
                        names.join(", ")
                    )));
                }
                Ok(chosen)
            }
        }
    }

    /// One non-streamed `/api/chat` call.
    async fn send(&self, request: ChatRequest, names: &ToolNames) -> Result<ChatResponse> {
        let span = tracing::info_span!(
            "llm",
            provider = PROVIDER,
            model = %self.model,
            stream = false,
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
        );
        async move {
            let (raw, reply): (Value, ChatReply) = self
                .conn
                .post_json("api/chat", &self.what(), &request)
                .await?;
            let response = chat_response(raw, reply, names);
            if let Some(u) = &response.usage {
                let span = tracing::Span::current();
                span.record("prompt_tokens", u.prompt_tokens);
                span.record("completion_tokens", u.completion_tokens);
            }
            Ok(response)
        }
        .instrument(span)
        .await
    }

    /// One streamed `/api/chat` call (`"stream": true`), read line by line.
    async fn open_stream(
        &self,
        mut request: ChatRequest,
        names: ToolNames,
    ) -> Result<ChatResponseStream> {
        let what = self.what();
        request.stream = true;
        let span =
            tracing::info_span!("llm", provider = PROVIDER, model = %self.model, stream = true);
        let response = self
            .conn
            .http
            .post(format!("{}api/chat", self.conn.base_url))
            .json(&request)
            .send()
            .instrument(span)
            .await
            .map_err(|e| self.conn.http_error(&what, e))?;
        let status = response.status();
        if !status.is_success() {
            let body = self
                .conn
                .read_reply(&what, response)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body).into_owned();
            return Err(Error::provider(
                PROVIDER,
                format!("{what}: HTTP {status}: {}", server_error_text(&text)),
                text,
            ));
        }
        let ctx = StreamContext {
            what,
            conn: self.conn.clone(),
            tool_names: names,
        };
        Ok(decode_chat_stream(response.bytes_stream(), ctx))
    }

    fn with_tools(&self, offer: ToolChatRequest<'_>) -> Result<(ChatRequest, ToolNames)> {
        let chosen = self.tools_for(offer.tools, offer.tool_choice)?;
        let (infos, names) = to_wire_tools(&chosen)?;
        let mut request = self.request(offer.messages);
        request.tools = infos;
        Ok((request, names))
    }
}

#[async_trait]
impl Llm for Ollama {
    fn metadata(&self) -> LlmMetadata {
        LlmMetadata {
            context_window: self.context_window,
            num_output: DEFAULT_NUM_OUTPUTS,
            // Ollama serves every model through its chat API.
            is_chat_model: true,
            is_function_calling_model: self.is_function_calling_model,
            model_name: self.model.clone(),
            system_role: MessageRole::System,
        }
    }

    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        self.send(self.request(messages), &ToolNames::default())
            .await
    }

    /// The prompt is sent as one user message through chat, as LlamaIndex's
    /// Ollama does; `formatted` changes nothing.
    async fn complete(&self, prompt: &str, _formatted: bool) -> Result<CompletionResponse> {
        let response = self.chat(&[ChatMessage::user(prompt)]).await?;
        Ok(chat_response_to_completion_response(response))
    }

    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        self.open_stream(self.request(messages), ToolNames::default())
            .await
    }

    async fn stream_complete(
        &self,
        prompt: &str,
        _formatted: bool,
    ) -> Result<CompletionResponseStream> {
        let stream = self.stream_chat(&[ChatMessage::user(prompt)]).await?;
        Ok(stream_chat_response_to_completion_response(stream))
    }

    async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
        let (body, names) = self.with_tools(request)?;
        self.send(body, &names).await
    }

    async fn stream_tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponseStream> {
        let (body, names) = self.with_tools(request)?;
        self.open_stream(body, names).await
    }

    /// Ollama's structured outputs: the schema goes in `format`, so the
    /// server constrains the reply to it; the reply's JSON is returned.
    async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
        let mut request = self.request(messages);
        request.format = Some(schema_format(schema)?);
        let response = self.send(request, &ToolNames::default()).await?;
        parse_json_reply(&response.message.content)
    }
}
