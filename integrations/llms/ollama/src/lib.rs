//! ragloom-llms-ollama: models served by [Ollama](https://ollama.com) as a
//! ragloom [`Llm`](ragloom_core::llms::Llm) — LlamaIndex's `llama-index-llms-ollama`.
//!
//! [`Ollama`] talks to `/api/chat`: chat, completion (sent
//! as chat, as in LlamaIndex), NDJSON streaming with the eval counts as
//! [`TokenUsage`](ragloom_core::llms::TokenUsage), tool calls
//! (`Llm::chat_with_tools`), JSON mode and JSON-schema output
//! (`Llm::structured_chat`, hence `StructuredPredict`), `keep_alive`,
//! `request_timeout` and model options. The server address comes from
//! `OLLAMA_HOST`, read with Ollama's own rules ([`OllamaHost`]).
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use futures::StreamExt;
//! use ragloom_core::llms::{ChatMessage, Llm};
//! use ragloom_llms_ollama::Ollama;
//!
//! let llm = Ollama::builder("llama3.2").request_timeout(std::time::Duration::from_secs(120)).build()?;
//! let mut stream = llm.stream_chat(&[ChatMessage::user("Tell me a joke.")]).await?;
//! while let Some(item) = stream.next().await {
//!     print!("{}", item?.delta.unwrap_or_default());
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod convert;
mod llm;
mod stream;
mod wire;

pub use convert::THINKING_KEY;
pub use llm::{DEFAULT_REQUEST_TIMEOUT, Ollama, OllamaBuilder};
pub use ragloom_common_ollama::{
    DEFAULT_OLLAMA_HOST, KeepAlive, ModelOptions, OLLAMA_HOST_ENV, OllamaHost, PROVIDER, TimeUnit,
    keep_alive_from_duration, parse_keep_alive,
};
pub use stream::THINKING_DELTA_KEY;
