//! Tools a model can call: their metadata and outputs, the object-safe
//! [`Tool`] trait, [`FunctionTool`] over typed Rust functions and [`ToolSpec`] groups of tools.

pub mod function_tool;
pub mod load_and_search;
pub mod ondemand_loader;
pub mod query_engine;
pub mod retriever_tool;
pub mod tool_spec;
pub mod types;

pub use function_tool::{FunctionTool, Json, ToolReturn};
pub use load_and_search::LoadAndSearchToolSpec;
pub use ondemand_loader::{FnLoader, LoadArgsReader, OnDemandLoaderTool, ReaderLoader, ToolLoader};
pub use query_engine::{QueryEngineTool, response_to_value, source_nodes_of};
pub use retriever_tool::RetrieverTool;
pub use tool_spec::{MaxOutputLen, ToolSpec, WithMetadata};
pub use types::{
    MAX_TOOL_DESCRIPTION_LEN, Tool, ToolMetadata, ToolOutput, default_tool_fn_schema, json_dumps,
    normalize_schema, truncate_tool_output,
};
