//! Tools a model can call: their metadata and outputs, the object-safe
//! [`Tool`] trait, [`FunctionTool`] over typed Rust functions, [`ToolSpec`] groups of tools
//! and the JSON-schema helpers every layer above uses.
//!
//! The tools that adapt higher layers live beside them: `QueryEngineTool` in
//! `query_engine`, `RetrieverTool` in `retrievers`, `OnDemandLoaderTool` and
//! `LoadAndSearchToolSpec` in crate `ragloom-agent` (`ragloom::agent::tools`).

mod call_context;
mod engine_io;
pub mod function_tool;
pub mod schema;
mod spec_function;
pub mod tool_spec;
pub mod types;

pub use crate::utils::json_dumps;
pub use call_context::{CallContext, call_context, with_call_context};
pub(crate) use engine_io::retriever_query_str;
pub use engine_io::{nodes_to_value, response_to_value, source_nodes_of};
pub use function_tool::{FunctionTool, Json, ToolReturn};
pub use schema::normalize_schema;
pub use spec_function::{
    SpecFunctionTool, SpecFunctions, ToolArgs, documents_output, recorded_metadata,
    spec_function_tools, unknown_function,
};
pub use tool_spec::{MaxOutputLen, ToolSpec, WithMetadata};
pub use types::{
    MAX_TOOL_DESCRIPTION_LEN, Tool, ToolMetadata, ToolOutput, default_tool_fn_schema,
    truncate_tool_output,
};
