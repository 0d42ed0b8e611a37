//! Cross-encoder reranking for ragloom (LlamaIndex's `SentenceTransformerRerank`):
//! a BERT-family cross-encoder reads the query and each node together and reorders them.
//!
//! [`CrossEncoder::from_folder`] loads a Hugging Face sequence-classification
//! folder (`config.json`, `tokenizer.json`, `model.safetensors`) and scores
//! pairs as sentence-transformers' `CrossEncoder.predict` does;
//! [`SentenceTransformerRerank`] is the node postprocessor built on it.

#![warn(missing_docs)]

mod cross_encoder;
mod rerank;

pub use cross_encoder::{CrossEncoder, DEFAULT_MAX_LENGTH, PROVIDER};
pub use rerank::SentenceTransformerRerank;
