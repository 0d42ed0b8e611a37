//! ragloom: a data framework for LLM applications — load, parse, embed, index,
//! retrieve, synthesize, chat and build agents over your own data.
//!
//! This facade re-exports [`ragloom_core`] and, behind feature flags, each
//! integration crate, so one dependency gives the whole toolkit.

#![warn(missing_docs)]

pub use ragloom_core::*;

/// Evaluation (crate `ragloom-evaluation`, LlamaIndex's `evaluation`):
/// response evaluators, retrieval metrics, question sets, batch runs and
/// retrieval modes side by side.
pub use ragloom_evaluation as evaluation;

/// Agents (crate `ragloom-agent`, LlamaIndex's `agent`): `FunctionAgent`,
/// `ReActAgent` and `AgentWorkflow` on workflows, the older runner agents in
/// `legacy`, `as_chat_engine` for indexes, and the agent tools.
pub use ragloom_agent as agent;
pub use ragloom_agent::AsChatEngine;
pub use ragloom_agent::tools::{LoadAndSearchToolSpec, OnDemandLoaderTool};

/// Workflows (crate `ragloom-workflow`, LlamaIndex's `workflow`): async
/// steps passing typed events through a shared, checkpointed context.
pub use ragloom_workflow as workflow;
pub use ragloom_workflow::step_output;

/// The names most programs need, in one import, with the extension traits
/// that give an index `as_query_engine` and `as_chat_engine`.
pub mod prelude {
    pub use ragloom_agent::{AgentWorkflow, AsChatEngine, FunctionAgent, ReActAgent};
    pub use ragloom_core::prelude::*;
}

/// Everything a model can call, in one place as in LlamaIndex's
/// `llama_index.core.tools`: core's base tool types with the adapters that
/// live beside what they adapt (query engines, retrievers, loaders).
pub mod tools {
    pub use ragloom_agent::tools::*;
    pub use ragloom_core::query_engine::QueryEngineTool;
    pub use ragloom_core::retrievers::RetrieverTool;
    pub use ragloom_core::tools::*;
}

/// Retrievers, with `RecursiveRetriever` (which lives with the query
/// engines it can call) where LlamaIndex users look for it.
pub mod retrievers {
    pub use ragloom_core::indices::VectorIndexAutoRetriever;
    pub use ragloom_core::query_engine::RecursiveRetriever;
    pub use ragloom_core::retrievers::*;
}

/// Prompt templates, with `PromptHelper` (`indices::PromptHelper`, as in
/// LlamaIndex) where earlier releases had it.
pub mod prompts {
    pub use ragloom_core::indices::prompt_helper::*;
    pub use ragloom_core::prompts::*;
}

pub mod durable;
pub mod providers;
pub use providers::{EmbedSpec, LlmSpec, ProviderSpec, SettingsFromEnv};

/// `#[tool]` and `#[tool_spec]` (crate `ragloom-macros`): a function or an
/// `impl` block as tools a model can call, described by their doc comments.
///
/// ```
/// use ragloom::tool;
///
/// /// Multiply two integers and returns the result integer
/// #[tool]
/// fn multiply(a: i64, b: i64) -> i64 {
///     a * b
/// }
///
/// use ragloom::tools::Tool;
/// let tool = multiply_tool();
/// assert_eq!(
///     tool.metadata().description,
///     "multiply(a: int, b: int) -> int\nMultiply two integers and returns the result integer"
/// );
/// ```
///
/// ```
/// use ragloom::tool_spec;
/// use ragloom::tools::ToolSpec;
///
/// #[derive(Clone)]
/// struct Greeter {
///     greeting: String,
/// }
///
/// #[tool_spec]
/// impl Greeter {
///     /// Greets someone by name.
///     pub async fn greet(
///         &self,
///         /// Who to greet.
///         name: String,
///     ) -> String {
///         format!("{}, {name}!", self.greeting)
///     }
/// }
///
/// let tools = Greeter { greeting: "Hello".into() }.to_tool_list();
/// assert_eq!(tools[0].metadata().description, "greet(name: str) -> str\nGreets someone by name.");
/// ```
pub use ragloom_macros::{tool, tool_spec};

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

/// PostgreSQL with pgvector, in LlamaIndex's table layouts:
/// [`postgres::PGVectorStore`] (the `ragloom-vector-stores-postgres` crate)
/// and a whole index with transactions, [`postgres::PostgresStore`] (the
/// `ragloom-storage-postgres` crate).
#[cfg(feature = "postgres")]
pub mod postgres {
    pub use ragloom_storage_postgres::*;
    pub use ragloom_vector_stores_postgres::*;
}

/// [`qdrant::QdrantVectorStore`] (the `ragloom-vector-stores-qdrant` crate):
/// Qdrant over gRPC, and with the `qdrant-embedded` feature Qdrant's engine
/// in-process, in LlamaIndex's payload layout.
#[cfg(feature = "qdrant")]
pub mod qdrant {
    pub use ragloom_vector_stores_qdrant::*;
}

/// Local sentence-transformers embeddings (feature `huggingface`):
/// [`HuggingFaceEmbedding`](ragloom_embeddings_huggingface::HuggingFaceEmbedding)
/// from `ragloom-embeddings-huggingface` runs BERT-family models from a model
/// folder in-process on the CPU with candle, with the folder's pooling and normalisation.
#[cfg(feature = "huggingface")]
pub mod huggingface {
    pub use ragloom_embeddings_huggingface::*;
}

/// Cross-encoder reranking (feature `sbert-rerank`):
/// [`SentenceTransformerRerank`](ragloom_postprocessor_sbert_rerank::SentenceTransformerRerank)
/// from `ragloom-postprocessor-sbert-rerank` scores each retrieved node with
/// the query using a BERT cross-encoder folder, in-process with candle.
#[cfg(feature = "sbert-rerank")]
pub mod sbert_rerank {
    pub use ragloom_postprocessor_sbert_rerank::*;
}

/// An in-process LLM (feature `candle`): [`CandleLlm`](ragloom_llms_candle::CandleLlm)
/// from `ragloom-llms-candle` runs llama-family instruct models in GGUF on the
/// CPU with candle's quantized kernels (or llama.cpp's, feature `llama-cpp`),
/// with the file's tokenizer and chat template, streaming and stop sequences.
#[cfg(feature = "candle")]
pub mod candle {
    pub use ragloom_llms_candle::*;
}

/// The embedded store (feature `sqlite`): [`SqliteStore`](ragloom_storage_sqlite::SqliteStore)
/// from `ragloom-storage-sqlite` keeps a whole index (nodes, index structs,
/// vectors, document hashes) in one SQLite file, and its storage context's
/// `transaction()` makes an ingest land whole or not at all.
#[cfg(feature = "sqlite")]
pub mod sqlite {
    pub use ragloom_storage_sqlite::*;
}

/// File readers for [`SimpleDirectoryReader`](ragloom_core::readers::SimpleDirectoryReader):
/// PDF, DOCX, CSV, JSON, Markdown, HTML and EPUB (crate `ragloom-readers-file`,
/// LlamaIndex's `llama-index-readers-file`). `SimpleDirectoryReaderExt` registers
/// them: `SimpleDirectoryReader::new(dir).with_default_file_extractors()`.
#[cfg(feature = "file-readers")]
pub mod file_readers {
    pub use ragloom_readers_file::*;
}

/// Text-to-SQL (LlamaIndex's `SQLDatabase`, `NLSQLRetriever`,
/// `NLSQLTableQueryEngine`): a question becomes SQL a model writes, run
/// read-only under guards (crate `ragloom-sql`, feature `sql`).
#[cfg(feature = "sql")]
pub mod sql {
    pub use ragloom_sql::*;
}

/// A SQL database (SQLite, or PostgreSQL with `postgres`) as agent tools:
/// `list_tables`, `describe_tables` and `load_data(query)`, read-only by default ([`tools_database::DatabaseToolSpec`],
/// crate `ragloom-tools-database`, feature `tools-database`).
#[cfg(feature = "tools-database")]
pub mod tools_database {
    pub use ragloom_tools_database::*;
}

/// HTTP GET and POST tools limited to a base URL and allowed origins
/// ([`tools_requests::RequestsToolSpec`], crate `ragloom-tools-requests`, feature `tools-requests`).
#[cfg(feature = "tools-requests")]
pub mod tools_requests {
    pub use ragloom_tools_requests::*;
}

/// Wikipedia as agent tools (`load_data`, `search_data`) and a reader
/// ([`tools_wikipedia::WikipediaToolSpec`], [`tools_wikipedia::WikipediaReader`],
/// crate `ragloom-tools-wikipedia`, feature `tools-wikipedia`).
#[cfg(feature = "tools-wikipedia")]
pub mod tools_wikipedia {
    pub use ragloom_tools_wikipedia::*;
}

/// An API described by an OpenAPI document as agent tools: LlamaIndex's
/// `load_openapi_spec` and one typed tool per operation
/// ([`tools_openapi::OpenAPIToolSpec`], crate `ragloom-tools-openapi`,
/// feature `tools-openapi`).
#[cfg(feature = "tools-openapi")]
pub mod tools_openapi {
    pub use ragloom_tools_openapi::*;
}

/// Gmail and Google Calendar as agent tools
/// ([`tools_google::GmailToolSpec`], [`tools_google::GoogleCalendarToolSpec`],
/// crate `ragloom-tools-google`, feature `tools-google`), with OAuth 2.0
/// credentials ([`tools_google::OAuthCredentials`]).
#[cfg(feature = "tools-google")]
pub mod tools_google {
    pub use ragloom_tools_google::*;
}

/// Slack as agent tools and a reader ([`tools_slack::SlackToolSpec`],
/// [`tools_slack::SlackReader`], crate `ragloom-tools-slack`, feature `tools-slack`).
#[cfg(feature = "tools-slack")]
pub mod tools_slack {
    pub use ragloom_tools_slack::*;
}

/// A local server answering a script of replies, to run API tools offline
/// ([`replay::ReplayServer`], feature `replay-server`).
#[cfg(feature = "replay-server")]
pub mod replay {
    pub use ragloom_common_oauth::{ReplayReply, ReplayServer, SeenRequest};
}

/// A tool running model-written code in a subprocess, **without a sandbox**
/// ([`tools_code_interpreter::CodeInterpreterToolSpec`], crate
/// `ragloom-tools-code-interpreter`, feature `tools-code-interpreter`, not in `full`).
/// Read the crate's warning first.
#[cfg(feature = "tools-code-interpreter")]
pub mod tools_code_interpreter {
    pub use ragloom_tools_code_interpreter::*;
}

/// The README and every guide under docs/ with Rust code, compiled as doc
/// tests (and run where they need no service or key), so their code cannot
/// drift from the API; build.rs lists them, so a new guide cannot be left
/// out. `RUSTDOCFLAGS='--cfg guide_only --cfg guide="querying"'` tests one
/// alone (`mcp` for docs/integrations/mcp.md, `integration-tools` for
/// docs/integrations/tools.md).
#[cfg(doctest)]
mod guides {
    include!(concat!(env!("OUT_DIR"), "/guides.rs"));
}
