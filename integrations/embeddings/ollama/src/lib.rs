//! ragloom-embeddings-ollama: embedding models served by
//! [Ollama](https://ollama.com) — LlamaIndex's `llama-index-embeddings-ollama`.
//!
//! [`OllamaEmbedding`] implements ragloom's
//! [`Embedding`](ragloom_core::embeddings::Embedding) with Ollama's batched
//! `/api/embed` endpoint. The server address comes from
//! `OLLAMA_HOST`, read with Ollama's own rules ([`OllamaHost`]).

#![warn(missing_docs)]

mod embedding;

pub use embedding::{MAX_EMBED_BATCH_SIZE, OllamaEmbedding, OllamaEmbeddingBuilder};
pub use ragloom_common_ollama::{
    DEFAULT_OLLAMA_HOST, OLLAMA_HOST_ENV, OllamaHost, PROVIDER, keep_alive_from_duration,
    parse_keep_alive,
};
pub use ragloom_common_ollama::{KeepAlive, ModelOptions, TimeUnit};
