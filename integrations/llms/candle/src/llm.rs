//! [`CandleLlm`]: a llama-family instruct model in GGUF run in-process with
//! candle's quantized kernels, on a thread of its own per request.

use crate::PROVIDER;
use crate::chat_template::ChatTemplate;
use crate::gguf::{self, Specials};
use crate::stop::StopScanner;
use async_trait::async_trait;
use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::quantized_llama::{MAX_SEQ_LEN, ModelWeights};
use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use ragloom_core::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    LlmMetadata, MessageRole, TokenUsage,
};
use ragloom_core::{Error, Llm, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokenizers::Tokenizer;

/// Default `max_new_tokens`.
pub const DEFAULT_MAX_NEW_TOKENS: usize = 256;
/// Default seed of the sampler (only used when `temperature` > 0).
pub const DEFAULT_SEED: u64 = 299_792_458;
/// Tokens looked back at by the repeat penalty.
pub const REPEAT_LAST_N: usize = 64;

/// Architectures whose GGUF tensors and `llama.*` keys candle's quantized llama reads.
const SUPPORTED_ARCHITECTURES: [&str; 1] = ["llama"];

/// What runs the model's forward passes. Everything else (the tokenizer,
/// chat template, sampling, stop strings, streaming) is the same for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Engine {
    /// candle's quantized kernels: pure Rust, always built.
    #[default]
    Candle,
    /// llama.cpp, compiled into the binary with the crate's `llama-cpp`
    /// feature (cmake and a C++ compiler at build time). Several times faster
    /// on the CPU; building without the feature makes this choice an error.
    LlamaCpp,
}

/// The loaded weights, in the engine that runs them.
enum Weights {
    // Boxed: candle's model is a few hundred bytes, llama.cpp's a pointer.
    Candle(Box<ModelWeights>),
    #[cfg(feature = "llama-cpp")]
    LlamaCpp(crate::llama_cpp::LlamaCppModel),
}

/// Settings for a [`CandleLlm`]; [`CandleLlmBuilder::build`] loads the model.
#[derive(Clone, Debug)]
pub struct CandleLlmBuilder {
    path: PathBuf,
    tokenizer_json: Option<PathBuf>,
    settings: Settings,
    context_window: Option<usize>,
    model_name: Option<String>,
    engine: Engine,
}

impl CandleLlmBuilder {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            tokenizer_json: None,
            settings: Settings {
                max_new_tokens: DEFAULT_MAX_NEW_TOKENS,
                temperature: 0.0,
                top_p: None,
                seed: DEFAULT_SEED,
                repeat_penalty: 1.0,
                stop: Vec::new(),
            },
            context_window: None,
            model_name: None,
            engine: Engine::Candle,
        }
    }

    /// Most tokens generated per answer (default 256).
    pub fn max_new_tokens(mut self, n: usize) -> Self {
        self.settings.max_new_tokens = n;
        self
    }

    /// Sampling temperature; 0 (the default) is greedy decoding.
    pub fn temperature(mut self, t: f64) -> Self {
        self.settings.temperature = t;
        self
    }

    /// Nucleus sampling: keep the smallest set of tokens whose probability reaches `p`.
    pub fn top_p(mut self, p: f64) -> Self {
        self.settings.top_p = Some(p);
        self
    }

    /// Seed of the sampler, for reproducible sampled answers.
    pub fn seed(mut self, seed: u64) -> Self {
        self.settings.seed = seed;
        self
    }

    /// Penalty on the last [`REPEAT_LAST_N`] tokens' logits (1.0, the default, is none).
    pub fn repeat_penalty(mut self, penalty: f32) -> Self {
        self.settings.repeat_penalty = penalty;
        self
    }

    /// Strings that end generation; they are not part of the answer.
    pub fn stop<I, S>(mut self, stop: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.settings.stop = stop.into_iter().map(Into::into).collect();
        self
    }

    /// Caps the context window below the model's `llama.context_length`.
    pub fn context_window(mut self, tokens: usize) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// A tokenizer.json to use instead of the tokenizer rebuilt from the GGUF metadata.
    pub fn tokenizer_json(mut self, path: impl Into<PathBuf>) -> Self {
        self.tokenizer_json = Some(path.into());
        self
    }

    /// The name reported in [`LlmMetadata::model_name`] (default: GGUF
    /// `general.name`, else the file stem).
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// Which engine runs the forward passes (default [`Engine::Candle`]).
    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    /// Loads the model, its tokenizer and chat template.
    pub fn build(self) -> Result<CandleLlm> {
        // NaN is rejected too.
        if self.settings.temperature.is_nan() || self.settings.temperature < 0.0 {
            return Err(Error::InvalidInput(format!(
                "temperature must be 0 or more, got {}",
                self.settings.temperature
            )));
        }
        if let Some(p) = self.settings.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return Err(Error::InvalidInput(format!(
                    "top_p must be in (0, 1], got {p}"
                )));
            }
        }
        if self.context_window == Some(0) {
            return Err(Error::InvalidInput(
                "context_window must be positive".into(),
            ));
        }
        #[cfg(not(feature = "llama-cpp"))]
        if self.engine == Engine::LlamaCpp {
            return Err(Error::Unsupported(
                "the llama.cpp engine is not in this build: enable the `llama-cpp` feature of ragloom-llms-candle (or of ragloom)".into(),
            ));
        }
        let path = &self.path;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io("opening", path, e))?;
        // Checked before parsing: the parser allocates whatever the header declares.
        crate::gguf_check::check_file(&mut file)
            .map_err(|e| Error::io("reading", path, e))?
            .map_err(|m| Error::CorruptFile {
                path: path.clone(),
                message: format!("not a readable GGUF file: {m}"),
            })?;
        let content = gguf_file::Content::read(&mut file).map_err(|e| {
            Error::provider(
                PROVIDER,
                format!("{} is not a readable GGUF file: {e}", path.display()),
                e,
            )
        })?;
        let arch = gguf::get_str(&content, "general.architecture").unwrap_or("");
        if !SUPPORTED_ARCHITECTURES.contains(&arch) {
            return Err(Error::Unsupported(format!(
                "{}: architecture `{arch}` is not supported (supported: {})",
                path.display(),
                SUPPORTED_ARCHITECTURES.join(", ")
            )));
        }
        let (tokenizer, specials) = match &self.tokenizer_json {
            None => gguf::tokenizer_from_gguf(&content, path)?,
            Some(json) => {
                let tokenizer = Tokenizer::from_file(json).map_err(|e| Error::CorruptFile {
                    path: json.clone(),
                    message: format!("not a tokenizer.json: {e}"),
                })?;
                let (tokens, types) = gguf::vocabulary(&content, path)?;
                (tokenizer, gguf::specials_from(&content, &tokens, &types))
            }
        };
        let template = match gguf::get_str(&content, "tokenizer.chat_template") {
            Some(source) => ChatTemplate::new(source, &specials.bos_token, &specials.eos_token)?,
            None => ChatTemplate::chatml(&specials.bos_token, &specials.eos_token),
        };
        let model_context =
            gguf::get_u32(&content, "llama.context_length").map_or(MAX_SEQ_LEN, |n| n as usize);
        // candle's rotary tables stop at MAX_SEQ_LEN positions.
        let mut context_window = match self.engine {
            Engine::Candle => model_context.min(MAX_SEQ_LEN),
            Engine::LlamaCpp => model_context,
        };
        if let Some(cap) = self.context_window {
            context_window = context_window.min(cap);
        }
        let model_name = self
            .model_name
            .clone()
            .or_else(|| gguf::get_str(&content, "general.name").map(str::to_owned))
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "gguf".to_owned());
        let weights = match self.engine {
            Engine::Candle => Weights::Candle(Box::new(
                ModelWeights::from_gguf(content, &mut file, &Device::Cpu).map_err(|e| {
                    Error::provider(
                        PROVIDER,
                        format!("loading the weights of {}: {e}", path.display()),
                        e,
                    )
                })?,
            )),
            #[cfg(feature = "llama-cpp")]
            Engine::LlamaCpp => Weights::LlamaCpp(crate::llama_cpp::LlamaCppModel::load(path)?),
            #[cfg(not(feature = "llama-cpp"))]
            Engine::LlamaCpp => unreachable!("refused above without the feature"),
        };
        Ok(CandleLlm {
            inner: Arc::new(Inner {
                model: Mutex::new(weights),
                tokenizer,
                specials,
            }),
            template,
            path: self.path.clone(),
            model_name,
            context_window,
            settings: self.settings,
        })
    }
}

/// Generation settings, copied into each request.
#[derive(Clone, Debug)]
struct Settings {
    max_new_tokens: usize,
    temperature: f64,
    top_p: Option<f64>,
    seed: u64,
    repeat_penalty: f32,
    stop: Vec<String>,
}

/// The loaded model, shared by every clone and request; requests take turns on it.
struct Inner {
    model: Mutex<Weights>,
    tokenizer: Tokenizer,
    specials: Specials,
}

/// How one generation went.
#[derive(Debug)]
struct Outcome {
    text: String,
    prompt_tokens: usize,
    completion_tokens: usize,
    finish_reason: &'static str,
}

/// A llama-family instruct model in GGUF (Llama, SmolLM, TinyLlama, Mistral
/// ...) run in-process on the CPU with candle's quantized kernels.
///
/// The tokenizer is rebuilt from the file's `tokenizer.ggml.*` metadata
/// (byte-level BPE) unless a tokenizer.json is given; chats are rendered
/// with the file's `tokenizer.chat_template` (ChatML when absent).
/// Generation runs on a thread of its own, never on the async executor;
/// candle spreads each step over all cores (`RAYON_NUM_THREADS` and
/// `CANDLE_NUM_THREADS` set the thread count for the process). One model
/// answers one request at a time; clones share it.
///
/// ```no_run
/// # async fn run() -> ragloom_core::Result<()> {
/// use ragloom_core::Llm;
/// use ragloom_core::llms::ChatMessage;
/// use ragloom_llms_candle::CandleLlm;
///
/// let llm = CandleLlm::builder("SmolLM2-135M-Instruct.Q4_1.gguf")
///     .max_new_tokens(64)
///     .stop(["\n\n"])
///     .build()?;
/// let reply = llm.chat(&[ChatMessage::user("What is the capital of France?")]).await?;
/// println!("{}", reply.message.content);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CandleLlm {
    inner: Arc<Inner>,
    template: ChatTemplate,
    path: PathBuf,
    model_name: String,
    context_window: usize,
    settings: Settings,
}

impl fmt::Debug for CandleLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CandleLlm")
            .field("path", &self.path)
            .field("model_name", &self.model_name)
            .field("context_window", &self.context_window)
            .field("max_new_tokens", &self.settings.max_new_tokens)
            .field("temperature", &self.settings.temperature)
            .field("top_p", &self.settings.top_p)
            .field("seed", &self.settings.seed)
            .field("repeat_penalty", &self.settings.repeat_penalty)
            .field("stop", &self.settings.stop)
            .finish()
    }
}

impl CandleLlm {
    /// Settings for the GGUF file at `path`, to adjust and [`CandleLlmBuilder::build`].
    pub fn builder(path: impl Into<PathBuf>) -> CandleLlmBuilder {
        CandleLlmBuilder::new(path.into())
    }

    /// Loads the GGUF file at `path` with every default.
    pub fn from_gguf(path: impl Into<PathBuf>) -> Result<Self> {
        Self::builder(path).build()
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The chat template in use.
    pub fn chat_template(&self) -> &ChatTemplate {
        &self.template
    }

    /// The prompt `messages` become (the chat template with the generation prompt).
    pub fn messages_to_prompt(&self, messages: &[ChatMessage]) -> Result<String> {
        self.template.render(messages, true)
    }

    /// The prompt a completion of `prompt` sends: as is when `formatted`,
    /// else the chat template around one user message (as LlamaIndex's `HuggingFaceLLM`).
    pub fn completion_to_prompt(&self, prompt: &str, formatted: bool) -> Result<String> {
        if formatted {
            Ok(prompt.to_owned())
        } else {
            self.messages_to_prompt(&[ChatMessage::user(prompt)])
        }
    }

    /// Token ids of `text` as the model reads it (no BOS added).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        self.inner.encode(text, false)
    }

    /// Generates from a finished prompt on a new thread; `on_delta` gets each
    /// piece of text and returns false to stop.
    fn spawn_generation(
        &self,
        prompt: String,
        on_delta: impl FnMut(&str) -> bool + Send + 'static,
    ) -> Result<oneshot::Receiver<Result<Outcome>>> {
        let inner = Arc::clone(&self.inner);
        let settings = self.settings.clone();
        let context_window = self.context_window;
        let (done_tx, done_rx) = oneshot::channel();
        let span = tracing::debug_span!("generate", provider = PROVIDER, model = %self.model_name);
        std::thread::Builder::new()
            .name("ragloom-candle-llm".into())
            .spawn(move || {
                let outcome =
                    span.in_scope(|| inner.generate(&prompt, &settings, context_window, on_delta));
                let _ = done_tx.send(outcome);
            })
            .map_err(|e| Error::provider(PROVIDER, "starting the generation thread", e))?;
        Ok(done_rx)
    }

    async fn generate(&self, prompt: String) -> Result<Outcome> {
        let done = self.spawn_generation(prompt, |_| true)?;
        done.await.map_err(|_| self.thread_died())?
    }

    /// A stream of text deltas ending with the outcome.
    fn generate_stream(
        &self,
        prompt: String,
    ) -> Result<futures::stream::BoxStream<'static, Result<StreamEvent>>> {
        let (tx, rx) = mpsc::unbounded::<Result<StreamEvent>>();
        let delta_tx = tx.clone();
        // A failed send means the stream was dropped: stop generating.
        let done = self.spawn_generation(prompt, move |delta| {
            delta_tx
                .unbounded_send(Ok(StreamEvent::Delta(delta.to_owned())))
                .is_ok()
        })?;
        let died = self.thread_died();
        let finish = async move {
            let event = match done.await {
                Ok(Ok(_)) => Ok(StreamEvent::Done),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(died),
            };
            futures::stream::iter([event])
        };
        drop(tx);
        Ok(rx.chain(futures::stream::once(finish).flatten()).boxed())
    }

    fn thread_died(&self) -> Error {
        Error::Other(format!(
            "the generation thread of model `{}` stopped without an answer",
            self.model_name
        ))
    }
}

/// Threads for llama.cpp: `CANDLE_NUM_THREADS`, else `RAYON_NUM_THREADS`,
/// else one per core, as candle sizes its own pool.
#[cfg(feature = "llama-cpp")]
fn threads() -> usize {
    std::env::var("CANDLE_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(candle_core::utils::get_num_threads)
}

/// One generation's forward passes, in the engine's own way.
enum Stepper<'a> {
    Candle(&'a mut ModelWeights),
    #[cfg(feature = "llama-cpp")]
    LlamaCpp(crate::llama_cpp::Session<'a>),
}

impl Stepper<'_> {
    /// Runs `ids` at positions `position..`; the logits after the last one.
    fn forward(&mut self, ids: &[u32], position: usize) -> Result<Tensor> {
        match self {
            Stepper::Candle(model) => Tensor::new(ids, &Device::Cpu)
                .and_then(|t| t.unsqueeze(0))
                .and_then(|input| model.forward(&input, position))
                .and_then(|l| l.squeeze(0))
                .map_err(|e| candle_error("running the model", e)),
            #[cfg(feature = "llama-cpp")]
            Stepper::LlamaCpp(session) => {
                let logits = session.forward(ids, position)?;
                let n = logits.len();
                Tensor::from_vec(logits, n, &Device::Cpu)
                    .map_err(|e| candle_error("reading the logits", e))
            }
        }
    }
}

/// What the generation thread streams.
#[derive(Debug)]
enum StreamEvent {
    Delta(String),
    Done,
}

fn candle_error(doing: &str, e: candle_core::Error) -> Error {
    Error::provider(PROVIDER, format!("{doing}: {e}"), e)
}

impl Inner {
    fn encode(&self, text: &str, add_bos: bool) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| Error::Provider {
                provider: PROVIDER.to_owned(),
                message: format!("tokenizing: {e}"),
                source: Some(e),
            })?;
        let mut ids = encoding.get_ids().to_vec();
        if add_bos {
            if let Some(bos) = self.specials.bos_id {
                if ids.first() != Some(&bos) {
                    ids.insert(0, bos);
                }
            }
        }
        Ok(ids)
    }

    fn decode(&self, ids: &[u32]) -> Result<String> {
        self.tokenizer
            .decode(ids, true)
            .map_err(|e| Error::Provider {
                provider: PROVIDER.to_owned(),
                message: format!("decoding: {e}"),
                source: Some(e),
            })
    }

    /// Runs one generation to its end: an end-of-turn token, a stop string,
    /// `max_new_tokens`, the context window, or `on_delta` returning false.
    fn generate(
        &self,
        prompt: &str,
        settings: &Settings,
        context_window: usize,
        mut on_delta: impl FnMut(&str) -> bool,
    ) -> Result<Outcome> {
        let prompt_ids = self.encode(prompt, self.specials.add_bos)?;
        if prompt_ids.is_empty() {
            return Err(Error::InvalidInput("the prompt is empty".into()));
        }
        if prompt_ids.len() >= context_window {
            return Err(Error::InvalidInput(format!(
                "the prompt has {} tokens, the context window {context_window}",
                prompt_ids.len()
            )));
        }
        let budget = settings
            .max_new_tokens
            .min(context_window - prompt_ids.len());
        let sampling = if settings.temperature <= 0.0 {
            Sampling::ArgMax
        } else {
            match settings.top_p {
                Some(p) => Sampling::TopP {
                    p,
                    temperature: settings.temperature,
                },
                None => Sampling::All {
                    temperature: settings.temperature,
                },
            }
        };
        let mut sampler = LogitsProcessor::from_sampling(settings.seed, sampling);
        let mut scanner = StopScanner::new(&settings.stop);
        let mut weights = self
            .model
            .lock()
            .map_err(|_| Error::Other("the model was poisoned by a failed generation".into()))?;
        let mut stepper = match &mut *weights {
            Weights::Candle(model) => {
                model.clear_kv_cache();
                Stepper::Candle(model)
            }
            #[cfg(feature = "llama-cpp")]
            Weights::LlamaCpp(model) => Stepper::LlamaCpp(model.session(
                prompt_ids.len() + budget,
                prompt_ids.len(),
                threads(),
            )?),
        };
        let mut all_ids = prompt_ids.clone();
        let mut generated: Vec<u32> = Vec::new();
        let mut text = String::new();
        let mut input = prompt_ids.clone();
        let mut position = 0;
        let mut finish_reason = "length";
        while generated.len() < budget {
            let logits = stepper.forward(&input, position)?;
            position += input.len();
            let logits = if settings.repeat_penalty == 1.0 {
                logits
            } else {
                let start = all_ids.len().saturating_sub(REPEAT_LAST_N);
                candle_transformers::utils::apply_repeat_penalty(
                    &logits,
                    settings.repeat_penalty,
                    &all_ids[start..],
                )
                .map_err(|e| candle_error("applying the repeat penalty", e))?
            };
            let next = sampler
                .sample(&logits)
                .map_err(|e| candle_error("sampling", e))?;
            if self.specials.eos_ids.contains(&next) {
                finish_reason = "stop";
                break;
            }
            generated.push(next);
            all_ids.push(next);
            text = self.decode(&generated)?;
            let step = scanner.step(&text);
            if !step.delta.is_empty() && !on_delta(&step.delta) {
                finish_reason = "cancelled";
                break;
            }
            if step.stopped {
                finish_reason = "stop";
                return Ok(Outcome {
                    text: text_before_stop(&text, &scanner),
                    prompt_tokens: prompt_ids.len(),
                    completion_tokens: generated.len(),
                    finish_reason,
                });
            }
            input = vec![next];
        }
        let rest = scanner.finish(&text);
        if !rest.is_empty() && finish_reason != "cancelled" {
            on_delta(&rest);
        }
        Ok(Outcome {
            text,
            prompt_tokens: prompt_ids.len(),
            completion_tokens: generated.len(),
            finish_reason,
        })
    }
}

fn text_before_stop(text: &str, scanner: &StopScanner) -> String {
    text.get(..scanner.emitted()).unwrap_or(text).to_owned()
}

fn raw(outcome: &Outcome) -> serde_json::Value {
    serde_json::json!({ "finish_reason": outcome.finish_reason })
}

#[async_trait]
impl Llm for CandleLlm {
    fn metadata(&self) -> LlmMetadata {
        LlmMetadata {
            context_window: self.context_window,
            num_output: i64::try_from(self.settings.max_new_tokens).unwrap_or(i64::MAX),
            is_chat_model: true,
            is_function_calling_model: false,
            model_name: self.model_name.clone(),
            system_role: MessageRole::System,
        }
    }

    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        let prompt = self.messages_to_prompt(messages)?;
        let outcome = self.generate(prompt).await?;
        let mut response = ChatResponse::new(ChatMessage::assistant(outcome.text.clone()));
        response.usage = Some(TokenUsage::new(
            outcome.prompt_tokens,
            outcome.completion_tokens,
        ));
        response.raw = Some(raw(&outcome));
        Ok(response)
    }

    async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse> {
        let prompt = self.completion_to_prompt(prompt, formatted)?;
        let outcome = self.generate(prompt).await?;
        let mut response = CompletionResponse::new(outcome.text.clone());
        response.usage = Some(TokenUsage::new(
            outcome.prompt_tokens,
            outcome.completion_tokens,
        ));
        response.raw = Some(raw(&outcome));
        Ok(response)
    }

    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        let prompt = self.messages_to_prompt(messages)?;
        Ok(cumulative(
            self.generate_stream(prompt)?,
            |so_far, delta| {
                let mut r = ChatResponse::new(ChatMessage::assistant(so_far));
                r.delta = Some(delta);
                r
            },
        ))
    }

    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> Result<CompletionResponseStream> {
        let prompt = self.completion_to_prompt(prompt, formatted)?;
        Ok(cumulative(
            self.generate_stream(prompt)?,
            |so_far, delta| {
                let mut r = CompletionResponse::new(so_far);
                r.delta = Some(delta);
                r
            },
        ))
    }
}

/// Turns text deltas into responses holding the text so far and the delta,
/// built by `response(so_far, delta)`.
fn cumulative<R: Send + 'static>(
    events: futures::stream::BoxStream<'static, Result<StreamEvent>>,
    response: impl Fn(String, String) -> R + Send + 'static,
) -> futures::stream::BoxStream<'static, Result<R>> {
    let mut so_far = String::new();
    events
        .filter_map(move |event| {
            let item = match event {
                Ok(StreamEvent::Delta(delta)) => {
                    so_far.push_str(&delta);
                    Some(Ok(response(so_far.clone(), delta)))
                }
                // The last delta already carried the text; the end adds nothing.
                Ok(StreamEvent::Done) => None,
                Err(e) => Some(Err(e)),
            };
            futures::future::ready(item)
        })
        .boxed()
}
