//! ragloom-llms-openai: OpenAI's models and any OpenAI-compatible server as
//! ragloom [`Llm`](ragloom_core::llms::Llm)s — LlamaIndex's `OpenAI` and `OpenAILike`, on async-openai.
//!
//! - [`OpenAI`]: OpenAI's models, their context windows and capabilities
//!   looked up in [`models`] (LlamaIndex's table).
//! - [`OpenAILike`]: llama.cpp, vLLM, LM Studio, LocalAI, proxies: base URL,
//!   key, model, context window and flags given by the user; lenient about
//!   the replies such servers send.
//!
//! Both chat and complete (streaming too), call tools natively
//! ([`Llm::chat_with_tools`](ragloom_core::llms::Llm::chat_with_tools), with
//! tool-call deltas assembled while streaming), produce structured output
//! ([`Llm::structured_chat`](ragloom_core::llms::Llm::structured_chat) through
//! `response_format` JSON schemas), and go through one [`client::OpenAIClient`]:
//! a per-request timeout and retries with exponential backoff on 429, 5xx and
//! connection errors that honour `Retry-After`. The API key comes from
//! `OPENAI_API_KEY` unless given, and never shows in `Debug` output, logs or errors.
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_core::llms::{ChatMessage, Llm};
//! use ragloom_llms_openai::OpenAILike;
//!
//! let llm = OpenAILike::builder("smollm2")
//!     .api_base("http://127.0.0.1:8080/v1")
//!     .is_chat_model(true)
//!     .context_window(2048)
//!     .build()?;
//! let answer = llm.chat(&[ChatMessage::user("What is Rust?")]).await?;
//! println!("{}", answer.message.content);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod base;
pub mod models;
mod openai;
mod openai_like;
mod stream;
mod wire;

pub use base::{CompletionToPrompt, MessagesToPrompt};
pub use openai::{OpenAI, OpenAIBuilder};
pub use openai_like::{OpenAILike, OpenAILikeBuilder};
/// The client both OpenAI crates share (crate `ragloom-common-openai`).
pub use ragloom_common_openai as client;
pub use ragloom_common_openai::{ApiKey, ClientSettings, OpenAIClient, RetryPolicy};
