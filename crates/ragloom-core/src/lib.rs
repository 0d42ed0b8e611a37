//! ragloom-core: the data model, the traits and the in-process defaults of
//! ragloom — everything from `Document` to `Response`, with no network and no provider SDK.
//!
//! The flow: a [`readers::Reader`] yields documents, node parsers split them
//! into nodes, an [`embeddings::Embedding`] embeds them, a vector store holds
//! them inside a storage context, a retriever finds them again and a
//! synthesizer turns them into an answer with an [`llms::Llm`].

pub mod error;
pub mod schema;
pub mod utils;

pub use error::{Error, Result};
pub use schema::*;
pub mod transform;
pub use transform::TransformComponent;
pub mod node_parser;
pub mod tokenizer;
pub use node_parser::{NodeParser, SentenceSplitter, TextSplitter, TokenTextSplitter};
pub use tokenizer::{Cl100kTokenizer, Tokenizer, default_tokenizer};
