//! `workflow_as_mcp` the other way round: a workflow or an agent served as
//! one MCP tool, over stdio or Streamable HTTP (LlamaIndex's `workflow_as_mcp`).

use futures::future::BoxFuture;
use ragloom_agent::AgentWorkflow;
use ragloom_core::error::{Error, Result};
use ragloom_workflow::{StartEvent, Workflow};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;

type RunFn = Arc<dyn Fn(Map<String, Value>) -> BoxFuture<'static, Result<String>> + Send + Sync>;

/// Ends a run when the request serving it is dropped unfinished.
struct CancelOnDrop(ragloom_workflow::Context);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel_run();
    }
}

/// An MCP server with one tool that runs a workflow or an agent.
#[derive(Clone)]
pub struct WorkflowMcpServer {
    name: String,
    description: String,
    schema: Arc<JsonObject>,
    run: RunFn,
}

impl std::fmt::Debug for WorkflowMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowMcpServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Serves `workflow` as the MCP tool `name`: the call's arguments are the
/// start event's fields, the result is the stop event's (a string as it
/// is, anything else as JSON). `input_schema` describes the arguments for
/// the model (default: any object). A failed run is an error result.
pub fn workflow_as_mcp(
    workflow: Workflow,
    name: &str,
    description: &str,
    input_schema: Option<Value>,
) -> Result<WorkflowMcpServer> {
    let schema = match input_schema.unwrap_or_else(|| json!({"type": "object"})) {
        Value::Object(map) => map,
        other => {
            return Err(Error::InvalidInput(format!(
                "an MCP tool's input schema must be an object, not {other}"
            )));
        }
    };
    let run: RunFn = Arc::new(move |args| {
        let workflow = workflow.clone();
        Box::pin(async move {
            // A client that gives up (a cancelled request, a dropped
            // connection) stops the run instead of leaving it working.
            let handler = workflow.start(StartEvent(args));
            let _stop = CancelOnDrop(handler.ctx().clone());
            let result = handler.await?;
            Ok(match result {
                Value::String(s) => s,
                other => other.to_string(),
            })
        })
    });
    Ok(WorkflowMcpServer {
        name: name.to_string(),
        description: description.to_string(),
        schema: Arc::new(schema),
        run,
    })
}

/// Serves an agent (or several, as an [`AgentWorkflow`]) as the MCP tool
/// `name`, taking `{"user_msg": "..."}` and answering with the agent's reply.
pub fn agent_as_mcp(agent: AgentWorkflow, name: &str, description: &str) -> WorkflowMcpServer {
    let schema = json!({
        "type": "object",
        "properties": {"user_msg": {"type": "string", "description": "The request for the agent."}},
        "required": ["user_msg"]
    });
    let run: RunFn = Arc::new(move |args| {
        let agent = agent.clone();
        Box::pin(async move {
            let msg = args
                .get("user_msg")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::InvalidInput("`user_msg` (a string) is required".into()))?;
            let handler = agent.run(msg);
            let _stop = CancelOnDrop(handler.ctx().clone());
            Ok(handler.await?.response.content)
        })
    });
    WorkflowMcpServer {
        name: name.to_string(),
        description: description.to_string(),
        schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
        run,
    }
}

impl WorkflowMcpServer {
    /// Serves MCP on stdin and stdout until the client closes them.
    pub async fn serve_stdio(self) -> Result<()> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::failed("MCP over stdio did not start", e))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::failed("the MCP server stopped", e))?;
        Ok(())
    }

    /// The Streamable HTTP service, to mount in an axum router (e.g. at `/mcp`).
    pub fn into_http_service(self) -> StreamableHttpService<Self, LocalSessionManager> {
        StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        )
    }
}

impl ServerHandler for WorkflowMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            self.name.clone(),
            self.description.clone(),
            self.schema.clone(),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        if request.name != self.name {
            return Err(ErrorData::invalid_params(
                format!("no tool is named `{}`: {}", request.name, self.name),
                None,
            ));
        }
        let outcome = (self.run)(request.arguments.unwrap_or_default()).await;
        Ok(match outcome {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        }
        .into())
    }
}
