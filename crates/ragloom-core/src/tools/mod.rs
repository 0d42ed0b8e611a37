//! Tools a model can call: their metadata and outputs, the object-safe
//! [`Tool`] trait, and [`FunctionTool`] over typed Rust functions.

pub mod function_tool;
pub mod query_engine;
pub mod retriever_tool;
pub mod types;

pub use function_tool::{FunctionTool, Json, ToolReturn};
pub use query_engine::{QueryEngineTool, response_to_value, source_nodes_of};
pub use retriever_tool::RetrieverTool;
pub use types::{
    MAX_TOOL_DESCRIPTION_LEN, Tool, ToolMetadata, ToolOutput, default_tool_fn_schema, json_dumps,
    normalize_schema, truncate_tool_output,
};
