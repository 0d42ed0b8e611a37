//! Workflow agents: FunctionAgent, ReActAgent and AgentWorkflow on scripted
//! models — the messages each model call is sent, the events streamed,
//! handoff, state, structured output, limits, memory, checkpoint and resume.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use async_trait::async_trait;
use futures::StreamExt;
use ragloom_agent::{
    AgentInput, AgentOutput, AgentStream, AgentWorkflow, EarlyStoppingMethod, FunctionAgent,
    ReActAgent, RunOptions, ToolCall as ToolCallEvent, ToolCallResult, tool_context,
};
use ragloom_core::Error;
use ragloom_core::llms::{
    ChatMessage, MessageRole, MockLlm, MockRequestKind, ToolCall, ToolChoice,
};
use ragloom_core::memory::{BaseMemory, ChatMemoryBuffer};
use ragloom_core::tools::{FunctionTool, Tool, ToolMetadata, ToolOutput};
use ragloom_workflow::{AnyEvent, HumanResponseEvent, InputRequiredEvent};
use serde_json::{Value, json};
use std::sync::Arc;

/// Multiplies two integers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct MulArgs {
    a: i64,
    b: i64,
}

fn multiply() -> Arc<dyn Tool> {
    Arc::new(FunctionTool::from_fn("multiply", None, |x: MulArgs| {
        x.a * x.b
    }))
}

fn calls(calls: &[(&str, &str, Value)]) -> ChatMessage {
    ChatMessage::assistant_with_tool_calls(
        "",
        calls
            .iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, args.clone()))
            .collect(),
    )
}

fn fc_llm(replies: Vec<ChatMessage>) -> Arc<MockLlm> {
    Arc::new(MockLlm::scripted(replies).function_calling(true))
}

async fn names_of(mut handler: ragloom_agent::AgentHandler) -> (Vec<String>, AgentOutput) {
    let mut names = Vec::new();
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        let name = ev.name();
        if names.last() != Some(&name) || name != "AgentStream" {
            names.push(name);
        }
    }
    (names, handler.await.unwrap())
}

fn roles(messages: &[ChatMessage]) -> Vec<&'static str> {
    messages.iter().map(|m| m.role.as_str()).collect()
}

#[tokio::test]
async fn function_agent_calls_a_tool_then_answers_and_streams_llamaindex_events() {
    let llm = fc_llm(vec![
        calls(&[("c1", "multiply", json!({"a": 6, "b": 7}))]),
        ChatMessage::assistant("It is 42."),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .system_prompt("You multiply.")
        .tool(multiply())
        .build()
        .unwrap();
    let (names, output) = names_of(agent.run("What is 6 * 7?")).await;
    assert_eq!(
        names,
        [
            "AgentInput",
            "AgentStream",
            "AgentOutput",
            "ToolCall",
            "ToolCallResult",
            "AgentInput",
            "AgentStream",
            "AgentOutput",
            "StopEvent"
        ]
    );
    assert_eq!(output.response.content, "It is 42.");
    assert_eq!(output.tool_calls.len(), 1);
    assert_eq!(output.tool_calls[0].name, "multiply");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests
            .iter()
            .all(|r| r.kind == MockRequestKind::ChatWithTools && r.stream)
    );
    assert_eq!(roles(&requests[0].messages), ["system", "user"]);
    assert_eq!(requests[0].tools[0].name, "multiply");
    let second = &requests[1].messages;
    assert_eq!(roles(second), ["system", "user", "assistant", "tool"]);
    assert_eq!(second[2].tool_calls[0].id, "c1");
    assert_eq!(second[3].content, "42");
    assert_eq!(second[3].tool_call_id.as_deref(), Some("c1"));
}

#[tokio::test]
async fn two_parallel_calls_both_run_and_both_results_go_back() {
    let llm = fc_llm(vec![
        calls(&[
            ("a", "multiply", json!({"a": 2, "b": 3})),
            ("b", "multiply", json!({"a": 4, "b": 5})),
        ]),
        ChatMessage::assistant("6 and 20"),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(multiply())
        .streaming(false)
        .build()
        .unwrap();
    let output = agent.run("two products").await.unwrap();
    assert_eq!(output.tool_calls.len(), 2);
    let second = &llm.requests()[1].messages;
    assert_eq!(roles(second), ["user", "assistant", "tool", "tool"]);
    let mut results: Vec<(String, String)> = second[2..]
        .iter()
        .map(|m| (m.tool_call_id.clone().unwrap(), m.content.clone()))
        .collect();
    results.sort();
    assert_eq!(
        results,
        [("a".into(), "6".into()), ("b".into(), "20".into())]
    );
    assert!(!llm.requests()[0].stream);
}

#[tokio::test]
async fn without_parallel_calls_only_the_first_runs() {
    let llm = fc_llm(vec![
        calls(&[
            ("a", "multiply", json!({"a": 2, "b": 3})),
            ("b", "multiply", json!({"a": 4, "b": 5})),
        ]),
        ChatMessage::assistant("6"),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(multiply())
        .allow_parallel_tool_calls(false)
        .initial_tool_choice("multiply")
        .build()
        .unwrap();
    let output = agent.run("products").await.unwrap();
    assert_eq!(output.tool_calls.len(), 1);
    // The history holds no call without its answer.
    let sent = &llm.requests()[1].messages;
    assert_eq!(roles(sent), ["user", "assistant", "tool"]);
    assert_eq!(sent[1].tool_calls.len(), 1);
    let requests = llm.requests();
    assert_eq!(
        requests[0].tool_choice,
        Some(ToolChoice::Named("multiply".into()))
    );
    // Only the first step is forced: the second ends with a tool result.
    assert_eq!(requests[1].tool_choice, Some(ToolChoice::Auto));
}

#[tokio::test]
async fn function_agent_refuses_a_model_without_tool_calling() {
    let llm = Arc::new(MockLlm::scripted(["hi"]).model_name("plain-model"));
    let agent = FunctionAgent::builder(llm).build().unwrap();
    let err = agent.run("hello").await.unwrap_err().to_string();
    assert!(err.contains("LLM must be a FunctionCallingLLM"), "{err}");
    assert!(
        err.contains(".function_calling(true)"),
        "the likely fix is named: {err}"
    );
    assert!(err.contains("plain-model"), "{err}");
}

#[tokio::test]
async fn a_failing_or_unknown_tool_reaches_the_model_as_an_error() {
    #[derive(Debug)]
    struct Broken(ToolMetadata);
    #[async_trait]
    impl Tool for Broken {
        fn metadata(&self) -> &ToolMetadata {
            &self.0
        }
        async fn call(&self, _: Value) -> ragloom_core::Result<ToolOutput> {
            Err(Error::InvalidInput("service down".into()))
        }
    }
    let llm = fc_llm(vec![
        calls(&[("a", "broken", json!({})), ("b", "nosuch", json!({}))]),
        ChatMessage::assistant("sorry"),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(Arc::new(Broken(ToolMetadata::new("broken", "fails"))))
        .build()
        .unwrap();
    let mut handler = agent.run("go");
    let mut results = Vec::new();
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if let Some(r) = ev.downcast::<ToolCallResult>() {
            results.push(r);
        }
    }
    assert_eq!(handler.await.unwrap().response.content, "sorry");
    results.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
    assert!(results.iter().all(|r| r.tool_output.is_error));
    assert!(results[0].tool_output.content.contains("service down"));
    assert_eq!(
        results[1].tool_output.content,
        "Tool nosuch not found. Please select a tool that is available."
    );
}

#[tokio::test]
async fn a_return_direct_tool_ends_the_run_with_its_output() {
    let tool: Arc<dyn Tool> = Arc::new(
        FunctionTool::from_fn("lookup", Some("Looks up."), |_: Value| "from the tool")
            .return_direct(true),
    );
    let llm = fc_llm(vec![calls(&[("a", "lookup", json!({}))])]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(tool)
        .build()
        .unwrap();
    let output = agent.run("find it").await.unwrap();
    assert_eq!(output.response.content, "from the tool");
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn react_agent_formats_the_conversation_as_llamaindex_and_strips_the_answer() {
    let llm = Arc::new(MockLlm::scripted([
        "Thought: I need to multiply.\nAction: multiply\nAction Input: {\"a\": 6, \"b\": 7}",
        "Thought: I can answer without using any more tools.\nAnswer: 42",
    ]));
    let agent = ReActAgent::builder(llm.clone())
        .system_prompt("Be terse.")
        .tool(multiply())
        .build()
        .unwrap();
    let memory: Arc<dyn BaseMemory> = Arc::new(ChatMemoryBuffer::from_defaults());
    let handler = agent
        .run_with(RunOptions::new("What is 6 * 7?").memory(memory.clone()))
        .await
        .unwrap();
    let output = handler.await.unwrap();
    assert_eq!(output.response.content, "42");
    let requests = llm.requests();
    assert!(requests.iter().all(|r| r.kind == MockRequestKind::Chat));
    let first = &requests[0].messages;
    assert_eq!(roles(first), ["system", "user"]);
    assert!(first[0].content.contains("Be terse."));
    assert!(first[0].content.contains("> Tool Name: multiply"));
    let second = &requests[1].messages;
    assert_eq!(roles(second), ["system", "user", "assistant", "user"]);
    assert_eq!(
        second[2].content,
        "Thought: I need to multiply.\nAction: multiply\nAction Input: {'a': 6, 'b': 7}"
    );
    assert_eq!(second[3].content, "Observation: 42");
    // The memory holds the question and the whole reasoning.
    let kept = memory.get_all().await.unwrap();
    assert_eq!(roles(&kept), ["user", "assistant"]);
    assert!(
        kept[1].content.ends_with("Answer: 42"),
        "{}",
        kept[1].content
    );
}

#[tokio::test]
async fn a_react_reply_that_does_not_parse_is_sent_back_for_correction() {
    let llm = Arc::new(MockLlm::scripted([
        "Thought: hmm\nAction: multiply",
        "",
        "Thought: ok\nAnswer: fixed",
    ]));
    let agent = ReActAgent::builder(llm.clone())
        .tool(multiply())
        .streaming(false)
        .build()
        .unwrap();
    let output = agent.run("q").await.unwrap();
    assert_eq!(output.response.content, "fixed");
    let requests = llm.requests();
    let retry = &requests[1].messages;
    assert_eq!(
        roles(retry),
        ["system", "user", "user", "assistant", "user"]
    );
    assert!(
        retry[4]
            .content
            .starts_with("Error while parsing the output: "),
        "{}",
        retry[4].content
    );
    let empty = &requests[2].messages;
    assert!(
        empty
            .last()
            .unwrap()
            .content
            .starts_with("FAILURE: Your previous response was empty.")
    );
}

fn two_agents(llm: Arc<MockLlm>) -> AgentWorkflow {
    let triage = FunctionAgent::builder(llm.clone())
        .name("triage")
        .description("Routes requests.")
        .system_prompt("You route.")
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
        .build()
        .unwrap()
}

#[tokio::test]
async fn handoff_passes_the_request_and_the_conversation_to_the_other_agent() {
    let llm = fc_llm(vec![
        calls(&[(
            "h1",
            "handoff",
            json!({"to_agent": "writer", "reason": "a poem"}),
        )]),
        ChatMessage::assistant("Roses are red."),
    ]);
    let (names, output) = names_of(two_agents(llm.clone()).run("A poem please")).await;
    assert_eq!(output.current_agent_name, "writer");
    assert_eq!(output.response.content, "Roses are red.");
    assert_eq!(names.iter().filter(|n| *n == "ToolCallResult").count(), 1);
    let requests = llm.requests();
    let handoff = &requests[0].tools[0];
    assert_eq!(handoff.name, "handoff");
    assert!(handoff.return_direct);
    assert_eq!(
        handoff.description,
        "Useful for handing off to another agent.\nIf you are currently not equipped to handle \
         the user's request, or another agent is better suited to handle the request, please \
         hand off to the appropriate agent.\n\nCurrently available agents:\n{'writer': 'Writes \
         poems.'}\n"
    );
    // The writer may hand off to nobody, so it has no handoff tool.
    assert!(requests[1].tools.is_empty());
    let second = &requests[1].messages;
    assert_eq!(roles(second), ["user", "assistant", "tool"]);
    assert_eq!(
        second[2].content,
        "Agent writer is now handling the request due to the following reason: a poem.\nPlease \
         continue with the current request."
    );
}

#[tokio::test]
async fn a_handoff_to_an_unknown_agent_is_answered_and_the_agent_carries_on() {
    let llm = fc_llm(vec![
        calls(&[(
            "h1",
            "handoff",
            json!({"to_agent": "painter", "reason": "art"}),
        )]),
        ChatMessage::assistant("I'll do it myself."),
    ]);
    let output = two_agents(llm.clone()).run("Paint").await.unwrap();
    assert_eq!(output.current_agent_name, "triage");
    let tool_msg = &llm.requests()[1].messages[3];
    assert_eq!(
        tool_msg.content,
        "Agent painter not found. Please select a valid agent to hand off to. Valid agents: writer"
    );
}

#[tokio::test]
async fn agent_workflow_checks_its_agents_with_llamaindex_messages() {
    let llm = fc_llm(vec![]);
    let named = |n: &str| {
        FunctionAgent::builder(llm.clone())
            .name(n)
            .description("d")
            .build()
            .unwrap()
    };
    let err = |r: ragloom_core::Result<AgentWorkflow>| r.unwrap_err().to_string();
    assert!(err(AgentWorkflow::builder().build()).contains("At least one agent must be provided"));
    assert!(
        err(AgentWorkflow::builder()
            .agent(named("a"))
            .agent(named("b"))
            .build())
        .contains("Exactly one root agent must be provided")
    );
    assert!(
        err(AgentWorkflow::builder()
            .agent(named("a"))
            .agent(named("b"))
            .root_agent("c")
            .build())
        .contains("Root agent c not found in provided agents")
    );
    let unnamed = FunctionAgent::builder(llm.clone()).build().unwrap();
    assert!(
        err(AgentWorkflow::builder()
            .agent(unnamed)
            .agent(named("b"))
            .root_agent("b")
            .build())
        .contains("All agents must have a name in a multi-agent workflow")
    );
    assert!(
        err(AgentWorkflow::builder()
            .agent(named("a"))
            .handoff_prompt("no placeholder")
            .build())
        .contains("Handoff prompt must contain {agent_info}")
    );
    let handoff_tool: Arc<dyn Tool> =
        Arc::new(FunctionTool::from_fn("handoff", None, |_: Value| 1));
    let reserved = FunctionAgent::builder(llm).tool(handoff_tool).build();
    assert!(
        reserved
            .unwrap_err()
            .to_string()
            .contains("'handoff' is a reserved tool name.")
    );
}

#[tokio::test]
async fn state_is_shown_with_the_message_and_tools_change_it_through_the_context() {
    #[derive(Debug)]
    struct Remember(ToolMetadata);
    #[async_trait]
    impl Tool for Remember {
        fn metadata(&self) -> &ToolMetadata {
            &self.0
        }
        async fn call(&self, input: Value) -> ragloom_core::Result<ToolOutput> {
            let ctx = tool_context().expect("called by an agent");
            let mut state: serde_json::Map<String, Value> =
                ctx.store().get_or("state", Default::default())?;
            state.insert("name".into(), input["name"].clone());
            ctx.store().set("state", state)?;
            Ok(ToolOutput::new("remember", "saved", input, Value::Null))
        }
    }
    let llm = fc_llm(vec![
        calls(&[("r", "remember", json!({"name": "Ada"}))]),
        ChatMessage::assistant("Noted."),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(Arc::new(Remember(ToolMetadata::new(
            "remember",
            "Saves a name.",
        ))))
        .initial_state(json!({"k": 1}).as_object().unwrap().clone())
        .build()
        .unwrap();
    let handler = agent.run("hi");
    let ctx = handler.ctx().clone();
    handler.await.unwrap();
    let requests = llm.requests();
    assert_eq!(
        requests[0].messages[0].content,
        "Current state:\n{'k': 1}\n\nCurrent message:\nhi\n"
    );
    // As in LlamaIndex, the message keeps the state it was shown with.
    assert_eq!(
        requests[1].messages[0].content,
        requests[0].messages[0].content
    );
    let state: Value = ctx.store().get("state").unwrap().unwrap();
    assert_eq!(state, json!({"k": 1, "name": "Ada"}));
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Weather {
    city: String,
    celsius: i64,
}

#[tokio::test]
async fn output_cls_asks_the_model_for_the_structured_answer() {
    let llm = fc_llm(vec![
        ChatMessage::assistant("It is 21 degrees in Paris."),
        ChatMessage::assistant("{\"city\": \"Paris\", \"celsius\": 21}"),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .system_prompt("Report weather.")
        .output_cls::<Weather>()
        .build()
        .unwrap();
    let mut handler = agent.run("Weather in Paris?");
    let names: Vec<String> = handler.stream_events().map(|e| e.name()).collect().await;
    let output = handler.await.unwrap();
    assert_eq!(
        Value::Object(output.structured_response.unwrap()),
        json!({"city": "Paris", "celsius": 21})
    );
    assert!(names.contains(&"AgentStreamStructuredOutput".to_string()));
    let structured = llm.requests().pop().unwrap();
    assert_eq!(structured.kind, MockRequestKind::Structured);
    assert_eq!(roles(&structured.messages), ["system", "user"]);
    let xml = &structured.messages[1].content;
    assert!(xml.starts_with("<current_conversation>\n"), "{xml}");
    assert!(
        xml.contains("\t\t<message>Weather in Paris?</message>\n"),
        "{xml}"
    );
    assert!(
        xml.ends_with(
            "Given the conversation, format the output according to the provided schema."
        )
    );
}

#[tokio::test]
async fn the_iteration_limit_fails_or_generates_a_last_answer() {
    let looping = || {
        fc_llm(vec![
            calls(&[("1", "multiply", json!({"a": 1, "b": 1}))]),
            calls(&[("2", "multiply", json!({"a": 1, "b": 1}))]),
            ChatMessage::assistant("best guess"),
        ])
    };
    let agent = FunctionAgent::builder(looping())
        .tool(multiply())
        .build()
        .unwrap();
    let handler = agent
        .run_with(RunOptions::new("loop").max_iterations(2))
        .await
        .unwrap();
    let err = handler.await.unwrap_err().to_string();
    assert!(err.contains("Max iterations of 2 reached!"), "{err}");

    let llm = looping();
    let agent = FunctionAgent::builder(llm.clone())
        .tool(multiply())
        .early_stopping_method(EarlyStoppingMethod::Generate)
        .build()
        .unwrap();
    let handler = agent
        .run_with(RunOptions::new("loop").max_iterations(2))
        .await
        .unwrap();
    let output = handler.await.unwrap();
    assert_eq!(output.response.content, "best guess");
    let last = llm.requests().pop().unwrap();
    assert_eq!(last.kind, MockRequestKind::Chat);
    let prompt = last.messages.last().unwrap();
    assert_eq!(prompt.role, MessageRole::System);
    assert!(
        prompt
            .content
            .starts_with("You have reached the maximum number of iterations (2).")
    );
}

#[tokio::test]
async fn a_memory_carries_the_conversation_into_the_next_run() {
    let llm = fc_llm(vec![
        ChatMessage::assistant("Hello Ada."),
        ChatMessage::assistant("Your name is Ada."),
    ]);
    let agent = FunctionAgent::builder(llm.clone()).build().unwrap();
    let memory: Arc<dyn BaseMemory> = Arc::new(ChatMemoryBuffer::from_defaults());
    for question in ["I am Ada.", "Who am I?"] {
        agent
            .run_with(RunOptions::new(question).memory(memory.clone()))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let second = &llm.requests()[1].messages;
    assert_eq!(roles(second), ["user", "assistant", "user"]);
    assert_eq!(memory.get_all().await.unwrap().len(), 4);
}

/// Asks a person before it answers: parks the tool call until a
/// `HumanResponseEvent` comes.
#[derive(Debug)]
struct AskHuman(ToolMetadata);

#[async_trait]
impl Tool for AskHuman {
    fn metadata(&self) -> &ToolMetadata {
        &self.0
    }
    async fn call(&self, input: Value) -> ragloom_core::Result<ToolOutput> {
        let ctx = tool_context().expect("called by an agent");
        let answer: HumanResponseEvent = ctx.wait_for_event(
            Some(AnyEvent::new(InputRequiredEvent::new("Approve?"))),
            None,
        )?;
        Ok(ToolOutput::new(
            "ask",
            answer.response.clone(),
            input,
            Value::Null,
        ))
    }
}

#[tokio::test]
async fn an_agent_waiting_for_a_person_is_checkpointed_and_resumed_with_its_memory() {
    let script = || {
        vec![
            calls(&[("q", "ask", json!({}))]),
            ChatMessage::assistant("Approved, done."),
        ]
    };
    let make = |llm: Arc<MockLlm>| {
        FunctionAgent::builder(llm)
            .tool(Arc::new(AskHuman(ToolMetadata::new(
                "ask",
                "Asks a person.",
            ))))
            .build()
            .unwrap()
    };
    let first_llm = fc_llm(script());
    let mut handler = make(first_llm).run("Deploy?");
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if ev.is::<InputRequiredEvent>() {
            break;
        }
    }
    let checkpoint = serde_json::to_string(&handler.checkpoint().unwrap()).unwrap();
    handler.cancel_run();

    // A new process: a new model whose first reply was already used.
    let llm = fc_llm(script()[1..].to_vec());
    let workflow = AgentWorkflow::builder()
        .agent(make(llm.clone()))
        .build()
        .unwrap();
    let handler = workflow
        .resume(&serde_json::from_str(&checkpoint).unwrap())
        .unwrap();
    handler.send_event(HumanResponseEvent::new("yes")).unwrap();
    let output = handler.await.unwrap();
    assert_eq!(output.response.content, "Approved, done.");
    let resumed = &llm.requests()[0].messages;
    assert_eq!(roles(resumed), ["user", "assistant", "tool"]);
    assert_eq!(resumed[0].content, "Deploy?");
    assert_eq!(resumed[2].content, "yes");
}

#[tokio::test]
async fn from_tools_or_functions_picks_the_agent_by_the_model() {
    let fc =
        AgentWorkflow::from_tools_or_functions(vec![multiply()], fc_llm(vec![]), None).unwrap();
    let react = AgentWorkflow::from_tools_or_functions(
        vec![multiply()],
        Arc::new(MockLlm::scripted(["Thought: done\nAnswer: 1"])),
        Some("sys".into()),
    )
    .unwrap();
    assert!(format!("{fc:?}").contains("FunctionAgent"));
    assert!(format!("{react:?}").contains("ReActAgent"));
    assert_eq!(react.run("q").await.unwrap().response.content, "1");
}

#[test]
fn agent_events_serialise_with_llamaindex_field_names() {
    let ev = AgentStream {
        delta: "a".into(),
        response: "ab".into(),
        current_agent_name: "Agent".into(),
        raw: Some(json!({"x": 1})),
        ..AgentStream::default()
    };
    let v = serde_json::to_value(&ev).unwrap();
    assert_eq!(
        v,
        json!({"delta": "a", "response": "ab", "current_agent_name": "Agent", "tool_calls": [], "thinking_delta": null})
    );
    let call = ToolCallEvent {
        tool_name: "t".into(),
        tool_kwargs: Default::default(),
        tool_id: "1".into(),
    };
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        json!({"tool_name": "t", "tool_kwargs": {}, "tool_id": "1"})
    );
    let input = AgentInput::default();
    assert!(serde_json::to_value(&input).unwrap().get("input").is_some());
}

#[tokio::test]
async fn a_blocking_function_tool_reaches_the_run_context_too() {
    /// Who to greet.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Who {
        name: String,
    }
    let tool: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn("greet", None, |w: Who| {
        // Runs on Tokio's blocking pool, another thread than the step's.
        let ctx = tool_context().ok_or("no run context")?;
        ctx.store()
            .set("greeted", &w.name)
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("hello {}", w.name))
    }));
    let llm = fc_llm(vec![
        calls(&[("g", "greet", json!({"name": "Ada"}))]),
        ChatMessage::assistant("done"),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(tool)
        .build()
        .unwrap();
    let handler = agent.run("greet Ada");
    let ctx = handler.ctx().clone();
    handler.await.unwrap();
    assert_eq!(llm.requests()[1].messages[2].content, "hello Ada");
    assert_eq!(
        ctx.store().get::<String>("greeted").unwrap().as_deref(),
        Some("Ada")
    );
    assert!(tool_context().is_none());
}

#[tokio::test]
async fn a_function_tool_that_waits_for_a_person_parks_the_agent() {
    /// What to approve.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct What {
        action: String,
    }
    let tool: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn("approve", None, |w: What| {
        let ctx = tool_context().ok_or("no run context")?;
        // FunctionTool turns this error into text; the agent still parks.
        let answer: HumanResponseEvent = ctx
            .wait_for_event(
                Some(AnyEvent::new(InputRequiredEvent::new("Approve?"))),
                None,
            )
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("{}: {}", w.action, answer.response))
    }));
    let llm = fc_llm(vec![
        calls(&[("a", "approve", json!({"action": "deploy"}))]),
        ChatMessage::assistant("Deployed."),
    ]);
    let agent = FunctionAgent::builder(llm.clone())
        .tool(tool)
        .build()
        .unwrap();
    let mut handler = agent.run("Deploy");
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if ev.is::<InputRequiredEvent>() {
            break;
        }
    }
    handler.send_event(HumanResponseEvent::new("yes")).unwrap();
    let output = handler.await.unwrap();
    assert_eq!(output.response.content, "Deployed.");
    assert_eq!(llm.requests()[1].messages[2].content, "deploy: yes");
}

#[tokio::test]
async fn can_handoff_to_limits_the_handoff_tool_and_its_answers() {
    let llm = fc_llm(vec![
        calls(&[(
            "h1",
            "handoff",
            json!({"to_agent": "critic", "reason": "a review"}),
        )]),
        ChatMessage::assistant("I'll answer myself."),
    ]);
    let agent = |name: &str, targets: &[&str]| {
        FunctionAgent::builder(llm.clone())
            .name(name)
            .description(format!("The {name}."))
            .can_handoff_to(targets.iter().copied())
            .build()
            .unwrap()
    };
    let wf = AgentWorkflow::builder()
        .agent(agent("triage", &["writer"]))
        .agent(agent("writer", &[]))
        .agent(agent("critic", &[]))
        .root_agent("triage")
        .build()
        .unwrap();
    let output = wf.run("Review this").await.unwrap();
    assert_eq!(output.current_agent_name, "triage");
    let first = &llm.requests()[0];
    // Only the allowed agent is offered.
    assert!(
        first.tools[0]
            .description
            .ends_with("{'writer': 'The writer.'}\n")
    );
    // LlamaIndex's answer, with its names the other way round.
    assert_eq!(
        llm.requests()[1].messages[2].content,
        "Agent critic cannot hand off to triage. Please select a valid agent to hand off to."
    );
}
