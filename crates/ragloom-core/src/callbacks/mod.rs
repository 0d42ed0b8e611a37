//! Observing what models cost: the [`TokenCountingHandler`] sums prompt,
//! completion and embedding tokens of the LLMs and embedding models it wraps.
//!
//! LlamaIndex counts tokens in a callback handler fed by every LLM and
//! embedding event. ragloom has no global callback manager, so the handler
//! wraps the models instead ([`TokenCountingHandler::wrap_llm`],
//! [`TokenCountingHandler::wrap_embedding`]): the counts are exact for the
//! components it wraps, work with any `tracing` setup or none, and are
//! taken with core's tokenizer when a provider reports no usage.
//!
//! ```
//! # futures::executor::block_on(async {
//! use ragloom_core::callbacks::TokenCountingHandler;
//! use ragloom_core::llms::{ChatMessage, Llm, MockLlm};
//! use std::sync::Arc;
//!
//! let counter = TokenCountingHandler::new();
//! let llm = counter.wrap_llm(Arc::new(MockLlm::scripted(["The answer is 42."])));
//! llm.chat(&[ChatMessage::user("What is the answer?")]).await?;
//! assert_eq!(counter.completion_llm_token_count(), 8); // "assistant: The answer is 42."
//! assert!(counter.prompt_llm_token_count() > 0);
//! # Ok::<(), ragloom_core::Error>(()) }).unwrap();
//! ```

mod token_counting;

pub use token_counting::{
    TokenCounter, TokenCountingEmbedding, TokenCountingEvent, TokenCountingHandler,
    TokenCountingLlm,
};
