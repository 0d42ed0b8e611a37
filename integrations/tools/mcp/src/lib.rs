//! MCP tools for ragloom agents (LlamaIndex's `llama-index-tools-mcp`).
//!
//! [`McpClient`] talks to one MCP server, a program on stdio or a
//! Streamable HTTP endpoint; [`McpToolSpec`] turns its tools into ragloom
//! [`Tool`](ragloom_core::tools::Tool)s with their schemas and descriptions,
//! so any agent can call them. [`workflow_as_mcp`] and [`agent_as_mcp`] go
//! the other way: a workflow or an agent served as an MCP tool.
//!
//! ```no_run
//! # async fn demo(llm: std::sync::Arc<dyn ragloom_core::llms::Llm>) -> ragloom_core::Result<()> {
//! use ragloom_agent::FunctionAgent;
//! use ragloom_tools_mcp::{McpClient, McpServer, McpToolSpec};
//!
//! let files = McpClient::connect(McpServer::stdio("mcp-server-files", ["--root", "."])).await?;
//! let search = McpClient::connect(McpServer::http("http://127.0.0.1:8000/mcp")).await?;
//! let mut tools = McpToolSpec::new(files).prefix("files_").to_tool_list().await?;
//! tools.extend(McpToolSpec::new(search).allowed_tools(["search"]).to_tool_list().await?);
//! let agent = FunctionAgent::builder(llm).tools(tools).build()?;
//! let answer = agent.run("Which files mention the Rhine?").await?;
//! # let _ = answer; Ok(()) }
//! ```

#![warn(missing_docs)]

mod client;
mod serve;
mod spec;

pub use client::{DEFAULT_TIMEOUT, McpCallResult, McpClient, McpServer, McpToolInfo};
pub use serve::{WorkflowMcpServer, agent_as_mcp, workflow_as_mcp};
pub use spec::{McpToolSpec, get_tools_from_mcp_url};

/// LlamaIndex's name for [`McpClient`].
pub type BasicMcpClient = McpClient;
