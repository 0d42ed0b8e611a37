//! Two workflow agents that hand a request to each other (LlamaIndex's
//! `AgentWorkflow`): a researcher that looks facts up and a writer that
//! turns them into a short report, sharing a state the tools write to.
//!
//! ```sh
//! cargo run -p ragloom-examples --example agent_handoff
//! # with a real model that calls tools, behind any OpenAI-compatible server:
//! OPENAI_API_BASE=http://127.0.0.1:8080/v1 \
//!   cargo run -p ragloom-examples --features openai --example agent_handoff
//! ```
//!
//! Offline (the default) a `MockLlm` plays the replies a good model gives,
//! so what is printed is what the workflow does around the model: the
//! events it streams, who holds the request, the handoff and the state.

use futures::StreamExt;
use ragloom::agent::{
    AgentOutput, AgentStream, AgentWorkflow, FunctionAgent, ToolCallResult, tool_context,
};
use ragloom::llms::{ChatMessage, Llm, MockLlm, ToolCall};
use ragloom::tools::{FunctionTool, Tool};
use ragloom::{Error, Result};
use serde_json::{Map, Value, json};
use std::process::ExitCode;
use std::sync::Arc;

/// What to look up.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    /// The subject, e.g. "the Rhine".
    topic: String,
}

/// Looks up a fact and keeps it in the run's state as a note.
fn research(args: Topic) -> Result<String> {
    let fact = match args.topic.to_lowercase().as_str() {
        t if t.contains("rhine") => {
            "The Rhine is about 1,230 km long and flows into the North Sea."
        }
        _ => "No notes on that topic.",
    };
    // The run's context is reachable from any tool an agent calls.
    let ctx = tool_context().ok_or_else(|| Error::Other("called outside an agent run".into()))?;
    let mut state: Map<String, Value> = ctx.store().get_or("state", Map::new())?;
    let notes = state.entry("notes").or_insert_with(|| json!([]));
    if let Value::Array(list) = notes {
        list.push(json!(fact));
    }
    ctx.store().set("state", state)?;
    Ok(fact.to_string())
}

/// The replies a capable model gives, in order: the researcher calls its
/// tool, then hands off; the writer answers.
fn scripted_llm() -> Arc<dyn Llm> {
    Arc::new(
        MockLlm::scripted([
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "research", json!({"topic": "the Rhine"}))],
            ),
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new(
                    "c2",
                    "handoff",
                    json!({"to_agent": "writer", "reason": "The facts are gathered; a report is needed."}),
                )],
            ),
            ChatMessage::assistant(
                "Report: the Rhine runs about 1,230 km before it reaches the North Sea.",
            ),
        ])
        .function_calling(true),
    )
}

#[cfg(feature = "openai")]
fn real_llm() -> Result<Option<Arc<dyn Llm>>> {
    let Some(api_base) = std::env::var("OPENAI_API_BASE")
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(None);
    };
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "local-model".to_string());
    let llm = ragloom::openai::OpenAILike::builder(model)
        .api_base(api_base)
        .is_chat_model(true)
        .is_function_calling_model(true)
        .max_tokens(256)
        .build()?;
    Ok(Some(Arc::new(llm)))
}

#[cfg(not(feature = "openai"))]
fn real_llm() -> Result<Option<Arc<dyn Llm>>> {
    Ok(None)
}

async fn run() -> Result<()> {
    let llm = match real_llm()? {
        Some(llm) => llm,
        None => {
            println!("Offline: a scripted MockLlm plays the model.\n");
            scripted_llm()
        }
    };
    let research_tool: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn(
        "research",
        Some("Looks up facts about a topic."),
        research,
    ));
    let researcher = FunctionAgent::builder(llm.clone())
        .name("researcher")
        .description("Looks up facts about a topic.")
        .system_prompt("Look up what is asked, then hand off to the writer.")
        .tool(research_tool)
        .can_handoff_to(["writer"])
        .build()?;
    let writer = FunctionAgent::builder(llm)
        .name("writer")
        .description("Writes a short report from the notes.")
        .system_prompt("Write a two-sentence report from the notes in the state.")
        .can_handoff_to(Vec::<String>::new())
        .build()?;
    let workflow = AgentWorkflow::builder()
        .agent(researcher)
        .agent(writer)
        .root_agent("researcher")
        .initial_state(
            json!({"notes": []})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
        .build()?;

    let mut handler = workflow.run("Write a short report on the Rhine.");
    let ctx = handler.ctx().clone();
    let mut events = handler.stream_events();
    let mut speaking = String::new();
    while let Some(ev) = events.next().await {
        if let Some(chunk) = ev.downcast_ref::<AgentStream>() {
            if chunk.current_agent_name != speaking {
                speaking = chunk.current_agent_name.clone();
                println!("[{speaking}]");
            }
        } else if let Some(result) = ev.downcast_ref::<ToolCallResult>() {
            println!("  {} -> {}", result.tool_name, result.tool_output.content);
        } else if let Some(out) = ev.downcast_ref::<AgentOutput>()
            && !out.response.content.is_empty()
        {
            println!("  says: {}", out.response.content);
        }
    }
    let output = handler.await?;
    println!(
        "\nanswered by {}: {}",
        output.current_agent_name, output.response.content
    );
    let state: Value = ctx.store().get_or("state", Value::Null)?;
    println!("state: {state}");
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
