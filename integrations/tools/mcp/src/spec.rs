//! `McpToolSpec`: a server's tools as ragloom tools, with their schemas and
//! descriptions; what a call returns, or how it failed, is a `ToolOutput`.

use crate::client::{McpClient, McpServer};
use async_trait::async_trait;
use ragloom_core::error::Result;
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The tools of one MCP server (LlamaIndex's `McpToolSpec`).
///
/// ```no_run
/// # async fn demo() -> ragloom_core::Result<()> {
/// use ragloom_tools_mcp::{McpClient, McpServer, McpToolSpec};
/// let client = McpClient::connect(McpServer::stdio("python", ["server.py"])).await?;
/// let tools = McpToolSpec::new(client)
///     .allowed_tools(["add", "search"])
///     .to_tool_list()
///     .await?;
/// # let _ = tools; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct McpToolSpec {
    client: McpClient,
    allowed_tools: Option<Vec<String>>,
    include_resources: bool,
    prefix: String,
}

impl McpToolSpec {
    /// All the tools of the server `client` talks to.
    pub fn new(client: McpClient) -> Self {
        Self {
            client,
            allowed_tools: None,
            include_resources: false,
            prefix: String::new(),
        }
    }

    /// Only these tools (LlamaIndex's `allowed_tools`); a name the server
    /// does not offer is an error when the list is made.
    pub fn allowed_tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.allowed_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Also a tool for each resource, reading it (LlamaIndex's `include_resources`).
    pub fn include_resources(mut self, include: bool) -> Self {
        self.include_resources = include;
        self
    }

    /// Prefixes each tool's name, so several servers' tools cannot clash.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The tools, asked of the server now.
    pub async fn to_tool_list(&self) -> Result<Vec<Arc<dyn Tool>>> {
        let offered = self.client.list_tools().await?;
        if let Some(allowed) = &self.allowed_tools {
            let missing: Vec<&str> = allowed
                .iter()
                .filter(|a| !offered.iter().any(|t| &t.name == *a))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
                return Err(ragloom_core::Error::NotFound(format!(
                    "MCP server `{}` has no tool {}; it offers: {}",
                    self.client.server_label(),
                    missing.join(", "),
                    names.join(", ")
                )));
            }
        }
        let mut tools: Vec<Arc<dyn Tool>> = offered
            .into_iter()
            .filter(|t| {
                self.allowed_tools
                    .as_ref()
                    .is_none_or(|a| a.contains(&t.name))
            })
            .map(|t| {
                let schema = match t.input_schema {
                    Value::Object(_) => t.input_schema,
                    _ => serde_json::json!({"type": "object", "properties": {}}),
                };
                let metadata =
                    ToolMetadata::new(format!("{}{}", self.prefix, t.name), t.description)
                        .with_fn_schema(schema);
                Arc::new(McpTool {
                    client: self.client.clone(),
                    remote_name: t.name,
                    metadata,
                }) as Arc<dyn Tool>
            })
            .collect();
        if self.include_resources {
            for r in self.client.list_resources().await? {
                let uri = r["uri"].as_str().unwrap_or_default().to_string();
                let name = r["name"].as_str().unwrap_or(&uri).to_string();
                let description = r["description"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("Reads the resource {uri}."));
                tools.push(Arc::new(McpResourceTool {
                    client: self.client.clone(),
                    uri,
                    metadata: ToolMetadata::new(format!("{}{name}", self.prefix), description)
                        .with_fn_schema(serde_json::json!({"type": "object", "properties": {}})),
                }));
            }
        }
        Ok(tools)
    }
}

/// The tools of the server at `command_or_url` (LlamaIndex's
/// `get_tools_from_mcp_url`): an `http(s)://` URL, or a command line.
pub async fn get_tools_from_mcp_url(
    command_or_url: &str,
    allowed_tools: Option<Vec<String>>,
) -> Result<Vec<Arc<dyn Tool>>> {
    let client = McpClient::connect(McpServer::from_command_or_url(command_or_url)?).await?;
    let mut spec = McpToolSpec::new(client);
    if let Some(allowed) = allowed_tools {
        spec = spec.allowed_tools(allowed);
    }
    spec.to_tool_list().await
}

/// One tool of an MCP server.
#[derive(Debug)]
struct McpTool {
    client: McpClient,
    remote_name: String,
    metadata: ToolMetadata,
}

#[async_trait]
impl Tool for McpTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    /// A failed call (the server's error, a timeout, a server that died)
    /// is an error output the model reads, never an `Err`: the agent goes on.
    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let arguments = match &input {
            Value::Object(map) => map.clone(),
            Value::Null => Map::new(),
            other => {
                return Ok(ToolOutput::error(
                    self.metadata.name.clone(),
                    input.clone(),
                    format!("the arguments must be a JSON object, not {other}"),
                ));
            }
        };
        match self.client.call_tool(&self.remote_name, arguments).await {
            Ok(result) if result.is_error => Ok(ToolOutput {
                content: result.text.clone(),
                tool_name: self.metadata.name.clone(),
                raw_input: input,
                raw_output: result.raw,
                is_error: true,
            }),
            Ok(result) => Ok(ToolOutput::new(
                self.metadata.name.clone(),
                result.text,
                input,
                result.structured.unwrap_or(result.raw),
            )),
            Err(e) => Ok(ToolOutput::error(self.metadata.name.clone(), input, e)),
        }
    }
}

/// A resource of an MCP server, read as a tool without arguments.
#[derive(Debug)]
struct McpResourceTool {
    client: McpClient,
    uri: String,
    metadata: ToolMetadata,
}

#[async_trait]
impl Tool for McpResourceTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        match self.client.read_resource(&self.uri).await {
            Ok(text) => Ok(ToolOutput::new(
                self.metadata.name.clone(),
                text.clone(),
                input,
                Value::String(text),
            )),
            Err(e) => Ok(ToolOutput::error(self.metadata.name.clone(), input, e)),
        }
    }
}
