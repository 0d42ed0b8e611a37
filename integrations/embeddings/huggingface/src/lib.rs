//! Local sentence-transformers embeddings for ragloom (LlamaIndex's `HuggingFaceEmbedding`):
//! BERT-family models from a model folder, run in-process on the CPU.
//!
//! [`HuggingFaceEmbedding::from_folder`] loads a sentence-transformers folder
//! (`config.json`, `tokenizer.json`, `model.safetensors`, `modules.json`,
//! `1_Pooling/config.json`, `sentence_bert_config.json`) and honours its pooling,
//! normalisation and maximum sequence length. With the `hub` feature,
//! `HuggingFaceEmbeddingBuilder::from_hub` downloads such a folder by model name.

#![warn(missing_docs)]

mod chunking;
mod embedding;
mod encoder;
mod folder;
#[cfg(feature = "hub")]
mod hub;
mod kernels;
mod pooling;

pub use chunking::ModelTokenizer;
pub use embedding::{
    DEFAULT_EMBED_INSTRUCTION, DEFAULT_QUERY_BGE_INSTRUCTION_EN, DEFAULT_QUERY_BGE_INSTRUCTION_ZH,
    DEFAULT_QUERY_INSTRUCTION, HuggingFaceEmbedding, HuggingFaceEmbeddingBuilder,
    MAX_EMBED_BATCH_SIZE, PROVIDER, default_query_instruction, default_text_instruction,
};
pub use folder::SentenceTransformerConfig;
pub use pooling::{Pooling, PoolingMode};
