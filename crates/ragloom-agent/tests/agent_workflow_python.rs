//! The workflow agents send the model what LlamaIndex 0.14.25's send for the
//! same scripted replies: every message of every call, the tools offered,
//! the events streamed and the result (`data/agent/gen_workflow_agents.py`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use futures::StreamExt;
use ragloom_agent::{AgentWorkflow, EarlyStoppingMethod, FunctionAgent, ReActAgent, RunOptions};
use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
use ragloom_core::tools::{FunctionTool, Tool, ToolMetadata};
use serde_json::{Value, json};
use std::sync::Arc;

fn recorded() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/agent/workflow_agents.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TwoInts {
    a: i64,
    b: i64,
}

/// `multiply` with the description and schema Python's `FunctionTool` gives it.
fn multiply(recorded: &Value) -> Arc<dyn Tool> {
    let t = &recorded["tool"];
    let metadata = ToolMetadata::new(
        t["name"].as_str().unwrap(),
        t["description"].as_str().unwrap(),
    )
    .with_fn_schema(serde_json::from_str(t["fn_schema_str"].as_str().unwrap()).unwrap());
    Arc::new(
        FunctionTool::from_fn("multiply", None, |x: TwoInts| x.a * x.b).with_metadata(metadata),
    )
}

/// A recorded reply: text, or a list of `[id, name, args]` calls.
fn reply(v: &Value) -> ChatMessage {
    match v {
        Value::String(s) => ChatMessage::assistant(s.clone()),
        Value::Array(calls) => ChatMessage::assistant_with_tool_calls(
            "",
            calls
                .iter()
                .map(|c| {
                    ToolCall::new(c[0].as_str().unwrap(), c[1].as_str().unwrap(), c[2].clone())
                })
                .collect(),
        ),
        other => panic!("unexpected reply {other}"),
    }
}

/// A message as the Python script dumps it.
fn dump(m: &ChatMessage) -> Value {
    json!({
        "role": m.role.as_str(),
        "content": m.content,
        "tool_call_id": m.tool_call_id,
        "tool_calls": m.tool_calls.iter().map(|c| json!([c.id, c.name, c.arguments])).collect::<Vec<_>>(),
    })
}

fn workflow(name: &str, llm: Arc<MockLlm>, tool: Arc<dyn Tool>) -> AgentWorkflow {
    let single = AgentWorkflow::from_agent;
    match name {
        "function_agent_tool_then_answer" => single(Arc::new(
            FunctionAgent::builder(llm)
                .tool(tool)
                .system_prompt("You multiply.")
                .build()
                .unwrap(),
        )),
        "function_agent_state" => single(Arc::new(
            FunctionAgent::builder(llm)
                .tool(tool)
                .initial_state(json!({"k": 1}).as_object().unwrap().clone())
                .build()
                .unwrap(),
        )),
        "function_agent_early_stop_generate" => single(Arc::new(
            FunctionAgent::builder(llm)
                .tool(tool)
                .early_stopping_method(EarlyStoppingMethod::Generate)
                .build()
                .unwrap(),
        )),
        "react_agent_tool_then_answer" => single(Arc::new(
            ReActAgent::builder(llm)
                .tool(tool)
                .system_prompt("Be terse.")
                .build()
                .unwrap(),
        )),
        "react_agent_parse_error_then_answer" => single(Arc::new(
            ReActAgent::builder(llm).tool(tool).build().unwrap(),
        )),
        "agent_workflow_handoff" | "agent_workflow_handoff_unknown" => {
            let triage = FunctionAgent::builder(llm.clone())
                .name("triage")
                .description("Routes requests.")
                .system_prompt("You route.")
                .tool(tool)
                .build()
                .unwrap();
            let writer = FunctionAgent::builder(llm)
                .name("writer")
                .description("Writes poems.")
                .can_handoff_to(Vec::<String>::new())
                .build()
                .unwrap();
            AgentWorkflow::builder()
                .agent(triage)
                .agent(writer)
                .root_agent("triage")
                .initial_state(json!({"topic": "roses"}).as_object().unwrap().clone())
                .build()
                .unwrap()
        }
        other => panic!("no Rust twin for scenario {other}"),
    }
}

#[tokio::test]
async fn every_scenario_sends_what_llamaindex_sends() {
    let recorded = recorded();
    let scenarios = recorded["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 7);
    for s in scenarios {
        let name = s["name"].as_str().unwrap();
        let replies: Vec<ChatMessage> =
            s["replies"].as_array().unwrap().iter().map(reply).collect();
        let llm = Arc::new(MockLlm::scripted(replies).function_calling(!name.starts_with("react")));
        let wf = workflow(name, llm.clone(), multiply(&recorded));
        let mut options = RunOptions::new(s["user_msg"].as_str().unwrap());
        if let Some(n) = s["run"]["max_iterations"].as_u64() {
            options = options.max_iterations(n as usize);
        }
        let mut handler = wf.run_with(options).await.unwrap();
        let mut events: Vec<String> = Vec::new();
        let mut stream = handler.stream_events();
        while let Some(ev) = stream.next().await {
            let ev = ev.name();
            if !(events.last() == Some(&ev) && ev == "AgentStream") {
                events.push(ev);
            }
        }
        let result = match handler.await {
            Ok(out) => json!({"response": out.response.content, "agent": out.current_agent_name}),
            Err(e) => json!({"error": e.to_string()}),
        };
        assert_eq!(result, s["result"], "{name}: result");
        assert_eq!(Value::from(events), s["events"], "{name}: events");
        let requests = llm.requests();
        let expected = s["requests"].as_array().unwrap();
        assert_eq!(requests.len(), expected.len(), "{name}: model calls");
        for (i, (got, want)) in requests.iter().zip(expected).enumerate() {
            let messages: Vec<Value> = got.messages.iter().map(dump).collect();
            assert_eq!(
                Value::from(messages),
                want["messages"],
                "{name}: call {i} messages"
            );
            let tools: Vec<&str> = got.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(json!(tools), want["tools"], "{name}: call {i} tools");
        }
    }
}
