//! ragloom: a data framework for LLM applications — load, parse, embed, index,
//! retrieve, synthesize, chat and build agents over your own data.
//!
//! This facade re-exports [`ragloom_core`] and, behind feature flags, each
//! integration crate, so one dependency gives the whole toolkit.

pub use ragloom_core::*;

/// OpenAI and any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...):
/// the `OpenAI` and `OpenAILike` LLMs from `ragloom-llms-openai` and
/// `OpenAIEmbedding` from `ragloom-embeddings-openai` (feature `openai`).
#[cfg(feature = "openai")]
pub mod openai {
    pub use ragloom_embeddings_openai::*;
    pub use ragloom_llms_openai::*;
}
