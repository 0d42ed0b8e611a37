//! ragloom: a data framework for LLM applications — load, parse, embed, index,
//! retrieve, synthesize, chat and build agents over your own data.
//!
//! This facade re-exports [`ragloom_core`] and, behind feature flags, each
//! integration crate, so one dependency gives the whole toolkit.

pub use ragloom_core::*;

/// Models served by [Ollama](https://ollama.com) (feature `ollama`): the
/// [`Ollama`](ragloom_llms_ollama::Ollama) LLM from `ragloom-llms-ollama` and
/// the [`OllamaEmbedding`](ragloom_embeddings_ollama::OllamaEmbedding) model
/// from `ragloom-embeddings-ollama`, both finding the server through `OLLAMA_HOST`.
#[cfg(feature = "ollama")]
pub mod ollama {
    pub use ragloom_embeddings_ollama::{
        MAX_EMBED_BATCH_SIZE, OllamaEmbedding, OllamaEmbeddingBuilder,
    };
    pub use ragloom_llms_ollama::*;
}

/// OpenAI and any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...):
/// the `OpenAI` and `OpenAILike` LLMs from `ragloom-llms-openai` and
/// `OpenAIEmbedding` from `ragloom-embeddings-openai` (feature `openai`).
#[cfg(feature = "openai")]
pub mod openai {
    pub use ragloom_embeddings_openai::*;
    pub use ragloom_llms_openai::*;
}

/// PostgreSQL with pgvector as a vector store, in LlamaIndex's table layout:
/// [`postgres::PGVectorStore`] (the `ragloom-vector-stores-postgres` crate).
#[cfg(feature = "postgres")]
pub mod postgres {
    pub use ragloom_vector_stores_postgres::*;
}

/// Local sentence-transformers embeddings (feature `huggingface`):
/// [`HuggingFaceEmbedding`](ragloom_embeddings_huggingface::HuggingFaceEmbedding)
/// from `ragloom-embeddings-huggingface` runs BERT-family models from a model
/// folder in-process on the CPU with candle, with the folder's pooling and normalisation.
#[cfg(feature = "huggingface")]
pub mod huggingface {
    pub use ragloom_embeddings_huggingface::*;
}

/// An in-process LLM (feature `candle`): [`CandleLlm`](ragloom_llms_candle::CandleLlm)
/// from `ragloom-llms-candle` runs llama-family instruct models in GGUF on the
/// CPU with candle's quantized kernels, with the file's tokenizer and chat
/// template, streaming and stop sequences.
#[cfg(feature = "candle")]
pub mod candle {
    pub use ragloom_llms_candle::*;
}

/// File readers for [`SimpleDirectoryReader`](ragloom_core::readers::SimpleDirectoryReader):
/// PDF, DOCX, CSV, JSON, Markdown, HTML and EPUB (crate `ragloom-readers-file`,
/// LlamaIndex's `llama-index-readers-file`). `SimpleDirectoryReaderExt` registers
/// them: `SimpleDirectoryReader::new(dir).with_default_file_extractors()`.
#[cfg(feature = "file-readers")]
pub mod file_readers {
    pub use ragloom_readers_file::*;
}
