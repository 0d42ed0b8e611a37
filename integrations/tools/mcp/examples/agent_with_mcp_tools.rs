//! An agent whose tools come from an MCP server.
//!
//! ```sh
//! # offline: the example serves a small MCP server itself and a scripted model calls it
//! cargo run -p ragloom-tools-mcp --example agent_with_mcp_tools
//! # any MCP server: a command line (stdio) or a Streamable HTTP URL
//! cargo run -p ragloom-tools-mcp --example agent_with_mcp_tools -- "python3 server.py"
//! cargo run -p ragloom-tools-mcp --example agent_with_mcp_tools -- http://127.0.0.1:8000/mcp
//! ```
//!
//! It lists the server's tools with their argument schemas, gives them to a
//! `FunctionAgent`, and prints each tool call and its result as the agent runs.

use futures::StreamExt;
use ragloom_agent::{FunctionAgent, ToolCallResult};
use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
use ragloom_core::{Error, Result};
use ragloom_tools_mcp::{McpClient, McpServer, McpToolSpec, workflow_as_mcp};
use ragloom_workflow::{Context, StartEvent, StopEvent, Workflow};
use serde_json::json;
use std::process::ExitCode;
use std::sync::Arc;

/// Serves a one-tool MCP server (a workflow that converts kilometres to
/// miles) on 127.0.0.1, for the offline run.
async fn local_server() -> Result<String> {
    let workflow = Workflow::builder("km_to_miles")
        .step("convert", |ev: StartEvent, _ctx: Context| async move {
            let km: f64 = ev.get("km")?;
            Ok(StopEvent::new(format!("{:.1} miles", km * 0.621_371)))
        })
        .build()?;
    let schema = json!({
        "type": "object",
        "properties": {"km": {"type": "number", "description": "A distance in kilometres."}},
        "required": ["km"]
    });
    let server = workflow_as_mcp(
        workflow,
        "km_to_miles",
        "Converts kilometres to miles.",
        Some(schema),
    )?;
    let router = axum::Router::new().nest_service("/mcp", server.into_http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| Error::Other(format!("cannot listen: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::Other(e.to_string()))?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(format!("http://{addr}/mcp"))
}

async fn run() -> Result<()> {
    let target = match std::env::args().nth(1) {
        Some(t) => t,
        None => local_server().await?,
    };
    let client = McpClient::connect(McpServer::from_command_or_url(&target)?).await?;
    let tools = McpToolSpec::new(client.clone()).to_tool_list().await?;
    println!("MCP server {target} offers:");
    for t in &tools {
        let m = t.metadata();
        println!(
            "  {}: {}\n    arguments: {}",
            m.name, m.description, m.fn_schema
        );
    }
    // Offline, a scripted model plays a capable one; pass a server to see
    // its tools, then plug in a real model (OpenAI, Ollama, llama.cpp) here.
    let llm = Arc::new(
        MockLlm::scripted([
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "km_to_miles", json!({"km": 1230}))],
            ),
            ChatMessage::assistant("The Rhine is about 764 miles long."),
        ])
        .function_calling(true),
    );
    let agent = FunctionAgent::builder(llm).tools(tools).build()?;
    let mut handler = agent.run("The Rhine is 1,230 km long. How long is that in miles?");
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if let Some(r) = ev.downcast_ref::<ToolCallResult>() {
            let flag = if r.tool_output.is_error {
                " (error)"
            } else {
                ""
            };
            println!(
                "tool {}({}) -> {}{flag}",
                r.tool_name,
                serde_json::Value::Object(r.tool_kwargs.clone()),
                r.tool_output.content
            );
        }
    }
    println!("answer: {}", handler.await?.response.content);
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
