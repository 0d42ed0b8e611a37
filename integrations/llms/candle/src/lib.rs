//! `ragloom-llms-candle`: an in-process LLM for ragloom. Llama-family instruct
//! models in GGUF run on the CPU with candle's quantized kernels ([`CandleLlm`]),
//! or with llama.cpp compiled in (feature `llama-cpp`, [`Engine::LlamaCpp`]).
//!
//! The GGUF file is all that is needed: its metadata gives the tokenizer
//! (`tokenizer.ggml.*`, rebuilt as a byte-level BPE with the `tokenizers`
//! crate), the chat template (`tokenizer.chat_template`, rendered with
//! minijinja; ChatML when absent), the end-of-turn tokens and the context
//! length. Answers stream token by token, stop at end-of-turn tokens and at
//! user stop strings (which are cut from the answer), and generation stops
//! when the stream is dropped.

#![warn(missing_docs)]

mod chat_template;
mod gguf;
mod gguf_check;
#[cfg(feature = "llama-cpp")]
mod llama_cpp;
mod llm;
mod stop;

pub use chat_template::{CHATML_TEMPLATE, ChatTemplate};
pub use llm::{
    CandleLlm, CandleLlmBuilder, DEFAULT_MAX_NEW_TOKENS, DEFAULT_SEED, Engine, REPEAT_LAST_N,
};

/// The provider name in [`ragloom_core::Error::Provider`].
pub const PROVIDER: &str = "candle";
