//! `McpClient` (LlamaIndex's `BasicMCPClient`): one MCP server over stdio (a
//! child process) or Streamable HTTP, with timeouts, reconnection and its log.

use ragloom_core::error::{Error, Result};
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// How long a call may take by default (LlamaIndex's `BasicMCPClient` timeout).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Lines of a stdio server's stderr kept to explain its failures.
const STDERR_LINES: usize = 40;

/// Where an MCP server is.
#[derive(Clone, Debug, PartialEq)]
pub enum McpServer {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
    },
    /// A Streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    Http {
        /// The endpoint.
        url: String,
    },
}

impl McpServer {
    /// A stdio server: `command` with `args`.
    pub fn stdio<S: Into<String>>(
        command: impl Into<PathBuf>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        McpServer::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A Streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        McpServer::Http { url: url.into() }
    }

    /// LlamaIndex's `command_or_url`: an `http(s)://` address, else a
    /// command line split on whitespace.
    pub fn from_command_or_url(command_or_url: &str) -> Result<Self> {
        let s = command_or_url.trim();
        if s.starts_with("http://") || s.starts_with("https://") {
            return Ok(Self::http(s));
        }
        let mut parts = s.split_whitespace();
        let command = parts
            .next()
            .ok_or_else(|| Error::InvalidInput("an empty MCP server command".into()))?;
        Ok(Self::stdio(command, parts))
    }

    fn label(&self) -> String {
        match self {
            McpServer::Stdio { command, args, .. } => {
                let mut s = command.display().to_string();
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s
            }
            McpServer::Http { url } => url.clone(),
        }
    }
}

type Session = RunningService<RoleClient, ()>;

/// A client of one MCP server. Cheap to clone; clones share the connection.
///
/// Calls time out after [`DEFAULT_TIMEOUT`] (see [`McpClient::timeout`]). A
/// server that exits or closes the connection fails the call in progress
/// with an error naming it and quoting the end of its stderr; the next call
/// connects again. A stdio server's stderr is read all the time, so a
/// chatty server never blocks on a full pipe.
#[derive(Clone, Debug)]
pub struct McpClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    server: McpServer,
    timeout: Duration,
    /// The open session and its generation (counted per connection), so a
    /// call that failed on an old connection does not close a newer one.
    session: tokio::sync::Mutex<Option<(u64, Session)>>,
    generation: std::sync::atomic::AtomicU64,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl McpClient {
    /// Connects to `server` (starting it, for stdio) and initialises the session.
    pub async fn connect(server: McpServer) -> Result<Self> {
        Self::connect_with_timeout(server, DEFAULT_TIMEOUT).await
    }

    /// Connects, with `timeout` for the connection and for every call.
    pub async fn connect_with_timeout(server: McpServer, timeout: Duration) -> Result<Self> {
        let client = Self {
            inner: Arc::new(Inner {
                server,
                timeout,
                session: tokio::sync::Mutex::new(None),
                generation: std::sync::atomic::AtomicU64::new(0),
                stderr: Arc::new(Mutex::new(VecDeque::new())),
            }),
        };
        client.reconnect().await?;
        Ok(client)
    }

    /// The server this client talks to.
    pub fn server(&self) -> &McpServer {
        &self.inner.server
    }

    /// The server, as a command line or a URL, for messages.
    pub fn server_label(&self) -> String {
        self.inner.server.label()
    }

    /// The time limit of each call.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The last lines a stdio server wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        let lines = self
            .inner
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect()
    }

    /// Drops the connection (stopping a stdio server) and opens a new one.
    pub async fn reconnect(&self) -> Result<()> {
        let mut session = self.inner.session.lock().await;
        if let Some((_, mut old)) = session.take() {
            let _ = old.close().await;
        }
        *session = Some(self.open_in_time().await?);
        Ok(())
    }

    /// A new session within the time limit, with its generation.
    async fn open_in_time(&self) -> Result<(u64, Session)> {
        let fresh = tokio::time::timeout(self.inner.timeout, self.open())
            .await
            .map_err(|_| self.error(format!("did not answer within {:?}", self.inner.timeout)))??;
        Ok((self.next_generation(), fresh))
    }

    /// Closes the connection (a stdio server is stopped).
    pub async fn close(&self) {
        if let Some((_, mut old)) = self.inner.session.lock().await.take() {
            let _ = old.close().await;
        }
    }

    fn next_generation(&self) -> u64 {
        self.inner
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
    }

    async fn open(&self) -> Result<Session> {
        // The tail explains this process's failures, not an earlier one's.
        self.inner
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        match &self.inner.server {
            McpServer::Stdio { command, args, env } => {
                let mut cmd = Command::new(command);
                cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| {
                        Error::provider(
                            "mcp",
                            format!("cannot start `{}`", self.inner.server.label()),
                            e,
                        )
                    })?;
                if let Some(stderr) = stderr {
                    let kept = self.inner.stderr.clone();
                    let name = self.inner.server.label();
                    tokio::spawn(async move {
                        let mut lines = BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::debug!(server = %name, "{line}");
                            let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                            if kept.len() == STDERR_LINES {
                                kept.pop_front();
                            }
                            kept.push_back(line);
                        }
                    });
                }
                ().serve(transport)
                    .await
                    .map_err(|e| self.error(format!("failed to start a session: {e}")))
            }
            McpServer::Http { url } => {
                let transport = StreamableHttpClientTransport::from_uri(url.as_str());
                ().serve(transport)
                    .await
                    .map_err(|e| self.error(format!("failed to start a session: {e}")))
            }
        }
    }

    fn error(&self, what: String) -> Error {
        let mut message = format!("MCP server `{}` {what}", self.inner.server.label());
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            let start = tail.len().saturating_sub(5);
            message.push_str("; its last stderr lines: ");
            message.push_str(&tail[start..].join(" | "));
        }
        Error::Provider {
            provider: "mcp".into(),
            message,
            source: None,
        }
    }

    /// Runs one request on the session, connecting first if the last
    /// connection ended; the time limit covers the request.
    async fn request<T, F, Fut>(&self, what: &str, f: F) -> Result<T>
    where
        F: FnOnce(rmcp::Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, ServiceError>>,
    {
        let (generation, peer) = {
            let mut session = self.inner.session.lock().await;
            if session.as_ref().is_none_or(|(_, s)| s.is_closed()) {
                drop(session.take());
                *session = Some(self.open_in_time().await?);
            }
            session
                .as_ref()
                .map(|(g, s)| (*g, s.peer().clone()))
                .ok_or_else(|| self.error("is not connected".into()))?
        };
        match tokio::time::timeout(self.inner.timeout, f(peer)).await {
            Err(_) => Err(self.error(format!(
                "did not answer {what} within {:?}",
                self.inner.timeout
            ))),
            Ok(Err(e)) => {
                if matches!(
                    e,
                    ServiceError::TransportClosed | ServiceError::TransportSend(_)
                ) {
                    // The connection is gone: the next call opens a new one
                    // (unless another call already did).
                    let mut session = self.inner.session.lock().await;
                    if session.as_ref().is_some_and(|(g, _)| *g == generation) {
                        session.take();
                    }
                    drop(session);
                    // Let the stderr reader catch the server's last words.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(self.error(format!("failed {what}: {e}")))
            }
            Ok(Ok(v)) => Ok(v),
        }
    }

    /// The server's tools: name, description and input schema of each, as JSON.
    pub async fn list_tools(&self) -> Result<Vec<McpToolInfo>> {
        let tools = self
            .request("tools/list", |p| async move { p.list_all_tools().await })
            .await?;
        tools
            .into_iter()
            .map(|t| {
                let v = serde_json::to_value(&t)?;
                Ok(McpToolInfo {
                    name: t.name.to_string(),
                    description: v["description"].as_str().unwrap_or_default().to_string(),
                    input_schema: v.get("inputSchema").cloned().unwrap_or(Value::Null),
                })
            })
            .collect()
    }

    /// Calls the tool `name` with `arguments` (an object).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpCallResult> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let result = self
            .request(&format!("tool `{name}`"), |p| async move {
                p.call_tool(params).await
            })
            .await?;
        let v = serde_json::to_value(&result)?;
        Ok(McpCallResult {
            text: content_text(&v["content"]),
            is_error: v["isError"].as_bool().unwrap_or(false),
            structured: v.get("structuredContent").cloned(),
            raw: v,
        })
    }

    /// The server's resources: `{uri, name, description, mimeType}` each.
    pub async fn list_resources(&self) -> Result<Vec<Value>> {
        let all = self
            .request(
                "resources/list",
                |p| async move { p.list_all_resources().await },
            )
            .await?;
        all.iter().map(|r| Ok(serde_json::to_value(r)?)).collect()
    }

    /// The text of the resource at `uri` (its text parts joined).
    pub async fn read_resource(&self, uri: &str) -> Result<String> {
        let params = ReadResourceRequestParams::new(uri);
        let result = self
            .request(&format!("resource `{uri}`"), |p| async move {
                p.read_resource(params).await
            })
            .await?;
        let v = serde_json::to_value(&result)?;
        Ok(content_text(&v["contents"]))
    }

    /// The server's prompts: `{name, description, arguments}` each.
    pub async fn list_prompts(&self) -> Result<Vec<Value>> {
        let all = self
            .request(
                "prompts/list",
                |p| async move { p.list_all_prompts().await },
            )
            .await?;
        all.iter().map(|r| Ok(serde_json::to_value(r)?)).collect()
    }

    /// The prompt `name` filled with `arguments`, as chat messages.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Vec<ragloom_core::llms::ChatMessage>> {
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        let result = self
            .request(&format!("prompt `{name}`"), |p| async move {
                p.get_prompt(params).await
            })
            .await?;
        let v = serde_json::to_value(&result)?;
        let messages = v["messages"].as_array().cloned().unwrap_or_default();
        Ok(messages
            .iter()
            .map(|m| {
                let text = content_text(&Value::Array(vec![m["content"].clone()]));
                match m["role"].as_str() {
                    Some("assistant") => ragloom_core::llms::ChatMessage::assistant(text),
                    _ => ragloom_core::llms::ChatMessage::user(text),
                }
            })
            .collect())
    }
}

/// A tool a server offers.
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolInfo {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub input_schema: Value,
}

/// What a tool call returned.
#[derive(Clone, Debug, PartialEq)]
pub struct McpCallResult {
    /// The text parts of the result, joined by newlines.
    pub text: String,
    /// Whether the server reports the call failed.
    pub is_error: bool,
    /// The structured result, when the server gives one.
    pub structured: Option<Value>,
    /// The whole result, as JSON.
    pub raw: Value,
}

/// The text of MCP content blocks (`{"type": "text", "text": ...}`, or a
/// resource's `{"text": ...}`), joined by newlines; other blocks are named.
fn content_text(blocks: &Value) -> String {
    let Some(blocks) = blocks.as_array() else {
        return String::new();
    };
    blocks
        .iter()
        .map(|b| match b.get("text").and_then(Value::as_str) {
            Some(text) => text.to_string(),
            None => match b
                .get("resource")
                .and_then(|r| r.get("text"))
                .and_then(Value::as_str)
            {
                Some(text) => text.to_string(),
                None => format!("[{} content]", b["type"].as_str().unwrap_or("binary")),
            },
        })
        .collect::<Vec<_>>()
        .join("\n")
}
