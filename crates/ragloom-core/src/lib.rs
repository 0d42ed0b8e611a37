//! ragloom-core: the data model, the traits and the in-process defaults of
//! ragloom — everything from `Document` to `Response`, with no network and no provider SDK.
//!
//! The flow, as in LlamaIndex: a [`readers::Reader`] yields documents, a
//! [`node_parser::SentenceSplitter`] splits them into nodes, an
//! [`embeddings::Embedding`] embeds them into a [`vector_stores::VectorStore`]
//! inside a [`storage::StorageContext`], a [`retrievers::Retriever`] finds them
//! again and a [`response_synthesizers::Synthesizer`] answers with an [`llms::Llm`].
//!
//! ```no_run
//! # async fn run() -> ragloom_core::Result<()> {
//! use ragloom_core::prelude::*;
//! use std::sync::Arc;
//!
//! let documents = SimpleDirectoryReader::new("data").load_data().await?;
//! let index = VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(384))).await?;
//! index.storage_context().persist("./storage").await?;
//! let nodes = index.as_retriever().similarity_top_k(3).retrieve(&"What is it about?".into()).await?;
//! # Ok(()) }
//! ```

pub mod agent;
pub mod callbacks;
pub mod chat_engine;
pub mod data_structs;
pub mod embeddings;
pub mod error;
pub mod indices;
pub mod ingestion;
pub mod llms;
pub mod memory;
pub mod node_parser;
pub mod output_parsers;
pub mod postprocessor;
pub mod prompts;
pub mod query_engine;
pub mod question_gen;
pub mod readers;
pub mod response_synthesizers;
pub mod retrievers;
pub mod schema;
pub mod selectors;
pub mod storage;
pub mod tokenizer;
pub mod tools;
pub mod transform;
pub mod utils;
pub mod vector_stores;

pub use callbacks::TokenCountingHandler;
pub use chat_engine::{AgentChatResponse, ChatEngine, ChatMode, StreamingAgentChatResponse};
pub use data_structs::IndexStruct;
pub use error::{Error, Result};
pub use llms::{
    ChatMessage, ChatResponse, CompletionResponse, Llm, LlmMetadata, MessageRole, MockLlm,
};
pub use memory::{BaseMemory, ChatMemoryBuffer};
pub use node_parser::{NodeParser, SentenceSplitter, TextSplitter, TokenTextSplitter};
pub use schema::*;
pub use tokenizer::{Cl100kTokenizer, Tokenizer, default_tokenizer};
pub use tools::{FunctionTool, Tool, ToolMetadata, ToolOutput};
pub use transform::TransformComponent;

pub use query_engine::{
    CitationQueryEngine, QueryEngine, RetrieverQueryEngine, RouterQueryEngine,
    SubQuestionQueryEngine, TransformQueryEngine,
};
pub use tools::{QueryEngineTool, RetrieverTool};

pub use embeddings::{Embedding, HashEmbedding, MockEmbedding, SimilarityMode};
pub use vector_stores::{
    FilterCondition, FilterOperator, MetadataFilter, MetadataFilters, SimpleVectorStore,
    VectorStore, VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult,
};

/// The names most programs need, in one import.
pub mod prelude {
    pub use crate::chat_engine::{ChatEngine, ChatMode};
    pub use crate::embeddings::{Embedding, HashEmbedding, MockEmbedding};
    pub use crate::error::{Error, Result};
    pub use crate::indices::{VectorStoreIndex, load_index_from_storage};
    pub use crate::llms::{ChatMessage, Llm, MockLlm};
    pub use crate::memory::{BaseMemory, ChatMemoryBuffer};
    pub use crate::node_parser::{NodeParser, SentenceSplitter, TokenTextSplitter};
    pub use crate::query_engine::{QueryEngine, RetrieverQueryEngine};
    pub use crate::readers::{Reader, SimpleDirectoryReader};
    pub use crate::response_synthesizers::ResponseMode;
    pub use crate::retrievers::Retriever;
    pub use crate::schema::{
        Document, MetadataMode, Node, NodeWithScore, QueryBundle, Response, TextNode,
    };
    pub use crate::storage::StorageContext;
    pub use crate::transform::TransformComponent;
    pub use crate::vector_stores::{
        MetadataFilter, MetadataFilters, SimpleVectorStore, VectorStore,
    };
}
