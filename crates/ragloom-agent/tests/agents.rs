//! Agents: the ReAct parser and formatter against LlamaIndex 0.14.25
//! (`tests/data/agent/gen_react.py`), the ReAct agent's messages against
//! LlamaIndex 0.12.52's `ReActAgent` (`gen_react_agent_0_12.py`), the
//! step-wise runner, function calling with parallel tools, and the agent chat modes.
#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use futures::StreamExt;
use ragloom_agent::AsChatEngine;
use ragloom_agent::legacy::ReActAgent;
use ragloom_agent::react::PARSE_FAILURE_MESSAGE;
use ragloom_agent::{
    ActionReasoningStep, AgentRunner, FunctionCallingAgent, ObjectIndex, ObservationReasoningStep,
    ReActAgentWorker, ReActChatFormatter, ReActOutputParser, ReasoningStep, ResponseReasoningStep,
    StepOutput, TaskStep,
};
use ragloom_core::chat_engine::{ChatEngine, ChatMode};
use ragloom_core::llms::{
    ChatMessage, MessageRole, MockLlm, MockRequestKind, ToolCall, ToolChoice,
};
use ragloom_core::prelude::*;
use ragloom_core::tools::{FunctionTool, Tool, ToolMetadata, ToolOutput};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn data(name: &str) -> Value {
    let path = format!("{}/tests/data/agent/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TwoInts {
    a: i64,
    b: i64,
}

/// multiply and add with the metadata Python's `FunctionTool.from_defaults` gives them.
fn python_tools(recorded: &Value) -> Vec<Arc<dyn Tool>> {
    let meta = |i: usize| {
        let t = &recorded["tools"][i];
        ToolMetadata::new(
            t["name"].as_str().unwrap(),
            t["description"].as_str().unwrap(),
        )
        .with_fn_schema(serde_json::from_str(t["fn_schema_str"].as_str().unwrap()).unwrap())
    };
    vec![
        Arc::new(
            FunctionTool::from_fn("multiply", None, |x: TwoInts| x.a * x.b).with_metadata(meta(0)),
        ),
        Arc::new(FunctionTool::from_fn("add", None, |x: TwoInts| x.a + x.b).with_metadata(meta(1))),
    ]
}

fn calculator_tools() -> Vec<Arc<dyn Tool>> {
    python_tools(&data("react_formatter.json"))
}

fn roles_and_contents(messages: &[ChatMessage]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| (m.role.as_str().to_owned(), m.content.clone()))
        .collect()
}

fn recorded_messages(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn react_parser_agrees_with_llama_index() {
    let cases = data("react_parser_cases.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 20);
    let parser = ReActOutputParser::new();
    for (i, case) in cases.iter().enumerate() {
        let reply = case["reply"].as_str().unwrap();
        let parsed = parser.parse(reply, false);
        if let Some(err) = case.get("error") {
            assert_eq!(err["class"], "ValueError", "case {i}");
            match parsed {
                Err(Error::OutputParse(message)) => {
                    assert_eq!(message, err["message"].as_str().unwrap(), "case {i}")
                }
                other => panic!("case {i}: expected an OutputParse error, got {other:?}"),
            }
            continue;
        }
        let ok = &case["ok"];
        let step = parsed.unwrap_or_else(|e| panic!("case {i}: {e}"));
        match (&step, ok["kind"].as_str().unwrap()) {
            (ReasoningStep::Action(a), "action") => {
                assert_eq!(a.thought, ok["thought"].as_str().unwrap(), "case {i}");
                assert_eq!(a.action, ok["action"].as_str().unwrap(), "case {i}");
                assert_eq!(
                    Value::Object(a.action_input.clone()),
                    ok["action_input"],
                    "case {i}"
                );
            }
            (ReasoningStep::Response(r), "response") => {
                assert_eq!(r.thought, ok["thought"].as_str().unwrap(), "case {i}");
                assert_eq!(r.response, ok["response"].as_str().unwrap(), "case {i}");
            }
            (step, kind) => panic!("case {i}: expected {kind}, got {step:?}"),
        }
        let content = ok["content"].as_str().unwrap();
        // dirtyjson's nested objects print as `AttributedDict([...])` in
        // Python; ragloom prints them as the dicts they are.
        if !content.contains("AttributedDict") {
            assert_eq!(step.get_content(), content, "case {i}");
        }
    }
}

#[test]
fn react_formatter_matches_llama_index() {
    let recorded = data("react_formatter.json");
    let tools = calculator_tools();
    let reasoning = vec![
        ReasoningStep::Action(ActionReasoningStep {
            thought: "I need to multiply.".into(),
            action: "multiply".into(),
            action_input: json!({"a": 121, "b": 3}).as_object().unwrap().clone(),
        }),
        ReasoningStep::Observation(ObservationReasoningStep {
            observation: "363".into(),
            return_direct: false,
        }),
        ReasoningStep::Response(ResponseReasoningStep {
            thought: "done".into(),
            response: "405".into(),
            is_streaming: false,
        }),
        ReasoningStep::Response(ResponseReasoningStep {
            thought: "streaming".into(),
            response: "40".into(),
            is_streaming: true,
        }),
    ];
    let formatter = ReActChatFormatter::default();
    let messages = formatter
        .format(
            &tools,
            &[ChatMessage::user("What is (121 * 3) + 42?")],
            &reasoning,
        )
        .unwrap();
    assert_eq!(
        roles_and_contents(&messages),
        recorded_messages(&recorded["messages"])
    );
    let with_context =
        ReActChatFormatter::from_defaults(None, Some("Some context.".into()), MessageRole::User);
    assert_eq!(
        with_context.format_system_header(&tools).unwrap(),
        recorded["context_system_header"].as_str().unwrap()
    );
    assert_eq!(
        formatter.format_system_header(&[]).unwrap(),
        recorded["no_tools_system_header"].as_str().unwrap()
    );
}

#[tokio::test]
async fn react_agent_two_tool_task_sends_what_llama_index_0_12_sends() {
    let recorded = data("react_agent_0_12.json");
    let replies: Vec<&str> = recorded["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let llm = Arc::new(MockLlm::scripted(replies));
    let agent = ReActAgent::from_tools(python_tools(&recorded), llm.clone()).unwrap();
    let answer = agent
        .chat(recorded["question"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(answer.response, recorded["response"].as_str().unwrap());
    assert_eq!(answer.response, "(121 * 3) + 42 = 405");
    let sources: Vec<&str> = answer.sources.iter().map(|s| s.content.as_str()).collect();
    assert_eq!(sources, ["363", "405"]);
    let requests = llm.requests();
    let expected = recorded["requests"].as_array().unwrap();
    assert_eq!(requests.len(), expected.len());
    for (i, (request, want)) in requests.iter().zip(expected).enumerate() {
        assert_eq!(request.kind, MockRequestKind::Chat);
        assert_eq!(
            roles_and_contents(&request.messages),
            recorded_messages(want),
            "request {i}"
        );
    }
    assert_eq!(
        roles_and_contents(&agent.chat_history().await.unwrap()),
        recorded_messages(&recorded["chat_history"])
    );
}

fn two_step_llm() -> Arc<MockLlm> {
    Arc::new(MockLlm::scripted([
        "Thought: I need to multiply.\nAction: multiply\nAction Input: {\"a\": 121, \"b\": 3}",
        "Thought: Now add.\nAction: add\nAction Input: {\"a\": 363, \"b\": 42}",
        "Thought: I can answer without using any more tools.\nAnswer: 405",
    ]))
}

#[tokio::test]
async fn step_wise_api_runs_inspects_and_finalizes_a_task() {
    let agent = ReActAgent::from_tools(calculator_tools(), two_step_llm()).unwrap();
    let task = agent.create_task("What is (121 * 3) + 42?").await.unwrap();
    assert_eq!(agent.list_tasks().await.len(), 1);
    let upcoming = agent.get_upcoming_steps(&task.task_id).await.unwrap();
    assert_eq!(upcoming.len(), 1);
    assert_eq!(
        upcoming[0].input.as_deref(),
        Some("What is (121 * 3) + 42?")
    );

    let first = agent.run_step(&task.task_id, None, None).await.unwrap();
    assert!(!first.is_last);
    assert_eq!(first.task_step.step_id, upcoming[0].step_id);
    assert_eq!(first.next_steps.len(), 1);
    assert!(first.to_string().contains("Observation: 363"), "{first}");
    let state = agent.get_task(&task.task_id).await.unwrap();
    assert_eq!(state.current_reasoning.len(), 2);
    assert_eq!(state.sources[0].content, "363");

    // Undo takes the step back: task state, queue and completed steps.
    agent.undo_step(&task.task_id).await.unwrap();
    assert!(
        agent
            .get_completed_steps(&task.task_id)
            .await
            .unwrap()
            .is_empty()
    );
    let again = agent.get_upcoming_steps(&task.task_id).await.unwrap();
    assert_eq!(again[0].step_id, upcoming[0].step_id);
    assert!(
        agent
            .get_task(&task.task_id)
            .await
            .unwrap()
            .current_reasoning
            .is_empty()
    );
    // The scripted model has used its first reply; start over with a fresh one.
    let agent = ReActAgent::from_tools(calculator_tools(), two_step_llm()).unwrap();
    let task = agent.create_task("What is (121 * 3) + 42?").await.unwrap();

    let mut outputs = Vec::new();
    loop {
        let out = agent.run_step(&task.task_id, None, None).await.unwrap();
        let last = out.is_last;
        outputs.push(out);
        if last {
            break;
        }
    }
    assert_eq!(outputs.len(), 3);
    let completed = agent.get_completed_steps(&task.task_id).await.unwrap();
    assert_eq!(completed.len(), 3);
    let second_id = &outputs[1].task_step.step_id;
    let second = agent
        .get_completed_step(&task.task_id, second_id)
        .await
        .unwrap();
    assert!(second.to_string().contains("Observation: 405"));
    assert!(
        agent
            .get_upcoming_steps(&task.task_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(agent.get_completed_tasks().await.len(), 1);
    // Nothing reaches the shared memory before the task is finalized.
    assert!(agent.chat_history().await.unwrap().is_empty());
    let answer = agent
        .finalize_response(&task.task_id, None)
        .await
        .unwrap()
        .into_chat_response()
        .await
        .unwrap();
    assert_eq!(answer.response, "405");
    assert_eq!(answer.sources.len(), 2);
    assert_eq!(agent.chat_history().await.unwrap().len(), 2);
    assert!(matches!(
        agent.run_step(&task.task_id, None, None).await,
        Err(Error::InvalidInput(_))
    ));
    agent.delete_task(&task.task_id).unwrap();
    assert!(matches!(
        agent.get_task(&task.task_id).await,
        Err(Error::NotFound(_))
    ));
}

#[tokio::test]
async fn step_input_and_explicit_steps() {
    let llm = Arc::new(MockLlm::scripted([
        "Thought: I need to multiply.\nAction: multiply\nAction Input: {\"a\": 2, \"b\": 3}",
        "Thought: The user wants more.\nAnswer: 6, and 7",
    ]));
    let agent = ReActAgent::from_tools(calculator_tools(), llm.clone()).unwrap();
    let task = agent.create_task("What is 2 * 3?").await.unwrap();
    let first = agent.run_step(&task.task_id, None, None).await.unwrap();
    let step = agent
        .get_upcoming_steps(&task.task_id)
        .await
        .unwrap()
        .remove(0);
    let err = agent
        .run_step(&task.task_id, Some("also 7"), Some(step.clone()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("both `step` and `input`"));
    // Input given to a later step reaches the model as an observation.
    let mut with_input: TaskStep = step;
    with_input.input = Some("Also say 7.".into());
    let last = agent
        .run_step(&task.task_id, None, Some(with_input))
        .await
        .unwrap();
    assert!(last.is_last && !first.is_last);
    let sent = &llm.requests()[1].messages;
    assert_eq!(sent.last().unwrap().content, "Observation: Also say 7.");
    assert_eq!(sent.last().unwrap().role, MessageRole::User);
}

#[tokio::test]
async fn max_iterations_ends_the_task_with_a_clear_error() {
    let action = "Thought: again\nAction: add\nAction Input: {\"a\": 1, \"b\": 1}";
    let llm = Arc::new(MockLlm::scripted([action; 5]));
    let agent = ReActAgent::builder(llm.clone())
        .tools(calculator_tools())
        .max_iterations(3)
        .build()
        .unwrap();
    let err = agent.chat("Loop forever").await.unwrap_err();
    assert!(err.to_string().contains("Reached max iterations"), "{err}");
    assert!(err.to_string().contains("3 steps"), "{err}");
    assert_eq!(llm.requests().len(), 3);
    assert_eq!(agent.max_iterations(), 3);
    assert!(agent.chat_history().await.unwrap().is_empty());
}

#[derive(Debug)]
struct FailingTool(ToolMetadata);

#[async_trait]
impl Tool for FailingTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.0
    }
    async fn call(&self, _input: Value) -> Result<ToolOutput> {
        Err(Error::Tool {
            tool: "divide".into(),
            message: "division by zero".into(),
        })
    }
}

#[tokio::test]
async fn tool_errors_and_unknown_tools_become_observations() {
    let llm = Arc::new(MockLlm::scripted([
        "Thought: divide\nAction: divide\nAction Input: {\"a\": 1, \"b\": 0}",
        "Thought: try another\nAction: modulo\nAction Input: {\"a\": 1}",
        "Thought: I cannot answer the question with the provided tools.\nAnswer: Undefined.",
    ]));
    let mut tools = calculator_tools();
    tools.push(Arc::new(FailingTool(ToolMetadata::new(
        "divide", "Divides.",
    ))));
    let agent = ReActAgent::from_tools(tools, llm.clone()).unwrap();
    let answer = agent.chat("What is 1 / 0?").await.unwrap();
    assert_eq!(answer.response, "Undefined.");
    assert!(answer.sources.iter().all(|s| s.is_error));
    assert_eq!(
        answer.sources[0].content,
        "Error: tool `divide` failed: division by zero"
    );
    assert_eq!(
        answer.sources[1].content,
        "Error: No such tool named `modulo`."
    );
    let last = &llm.requests()[2].messages;
    assert_eq!(
        last[last.len() - 3].content,
        "Observation: Error: tool `divide` failed: division by zero"
    );
    assert_eq!(
        last.last().unwrap().content,
        "Observation: Error: No such tool named `modulo`."
    );
}

#[tokio::test]
async fn malformed_replies_are_fed_back_and_the_agent_recovers() {
    let cases = data("react_parser_cases.json");
    let bad: Vec<&str> = cases
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("error").is_some())
        .map(|c| c["reply"].as_str().unwrap())
        .collect();
    assert!(bad.len() >= 5);
    for reply in bad {
        let llm = Arc::new(MockLlm::scripted([reply, "Thought: ok\nAnswer: done"]));
        let agent = ReActAgent::from_tools(calculator_tools(), llm.clone()).unwrap();
        let answer = agent.chat("Hi").await.unwrap();
        assert_eq!(answer.response, "done", "{reply:?}");
        assert_eq!(answer.sources[0].tool_name, "unknown");
        let second = &llm.requests()[1].messages;
        // The unreadable reply is dropped; the model sees only the request for the format.
        assert_eq!(second.len(), 3, "{reply:?}");
        assert_eq!(
            second[2].content,
            format!("Observation: {PARSE_FAILURE_MESSAGE}")
        );
    }
}

#[tokio::test]
async fn react_stream_chat_streams_the_final_answer_and_then_writes_memory() {
    let agent = ReActAgent::from_tools(calculator_tools(), two_step_llm()).unwrap();
    let stream = agent.stream_chat("What is (121 * 3) + 42?").await.unwrap();
    assert_eq!(stream.sources.len(), 2);
    assert!(agent.chat_history().await.unwrap().is_empty());
    let deltas: Vec<String> = stream
        .response_gen
        .map(|d| d.unwrap())
        .collect::<Vec<_>>()
        .await;
    assert_eq!(deltas.concat(), "405");
    let history = agent.chat_history().await.unwrap();
    assert_eq!(
        roles_and_contents(&history),
        [
            ("user".to_owned(), "What is (121 * 3) + 42?".to_owned()),
            ("assistant".to_owned(), "405".to_owned())
        ]
    );
    // An implicit answer streams too, whole.
    let llm = Arc::new(MockLlm::scripted(["The answer is plainly 42."]));
    let agent = ReActAgent::from_tools(calculator_tools(), llm).unwrap();
    let answer = agent
        .stream_chat("?")
        .await
        .unwrap()
        .get_response()
        .await
        .unwrap();
    assert_eq!(answer.response, "The answer is plainly 42.");
}

#[tokio::test]
async fn tool_choice_applies_to_the_first_step_only() {
    let llm = two_step_llm();
    let agent = ReActAgent::from_tools(calculator_tools(), llm.clone()).unwrap();
    agent
        .chat_with_tool_choice(
            "What is (121 * 3) + 42?",
            None,
            ToolChoice::Named("multiply".into()),
        )
        .await
        .unwrap();
    let requests = llm.requests();
    let header = |i: usize| requests[i].messages[0].content.clone();
    assert!(header(0).contains("> Tool Name: multiply") && !header(0).contains("> Tool Name: add"));
    assert!(header(1).contains("> Tool Name: add") && header(1).contains("> Tool Name: multiply"));
    let err = agent
        .chat_with_tool_choice("x", None, ToolChoice::Named("nope".into()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`nope`"), "{err}");
}

#[tokio::test]
async fn tool_outputs_are_truncated_before_the_model_reads_them() {
    let long: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn(
        "long",
        Some("Returns a long text."),
        |_: serde_json::Map<String, Value>| "x".repeat(500),
    ));
    let llm = Arc::new(MockLlm::scripted([
        "Thought: t\nAction: long\nAction Input: {}",
        "Thought: t\nAnswer: ok",
    ]));
    let agent = ReActAgent::builder(llm.clone())
        .tools(vec![long])
        .worker(|w| w.max_tool_output_len(Some(60)))
        .build()
        .unwrap();
    let answer = agent.chat("Go").await.unwrap();
    assert_eq!(answer.sources[0].content.chars().count(), 60);
    assert!(answer.sources[0].content.contains("truncated"));
    let observation = llm.requests()[1].messages.last().unwrap().content.clone();
    assert_eq!(
        observation,
        format!("Observation: {}", answer.sources[0].content)
    );
}

#[tokio::test]
async fn tool_retriever_picks_tools_per_task() {
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(FunctionTool::from_fn(
            "weather",
            Some("Tells the weather forecast: rain, sun, wind and temperature for a city."),
            |_: serde_json::Map<String, Value>| "sunny",
        )),
        Arc::new(FunctionTool::from_fn(
            "multiply",
            Some("Multiply two integers and return the product of the numbers."),
            |x: TwoInts| x.a * x.b,
        )),
    ];
    let index = ObjectIndex::from_tools(tools, Arc::new(HashEmbedding::new(512)))
        .await
        .unwrap();
    let llm = Arc::new(MockLlm::scripted(["Thought: t\nAnswer: 42"]));
    let agent = ReActAgent::builder(llm.clone())
        .tool_retriever(Arc::new(index.as_retriever(1)))
        .build()
        .unwrap();
    agent
        .chat("Multiply the integers 6 and 7 and give the product")
        .await
        .unwrap();
    let header = &llm.requests()[0].messages[0].content;
    assert!(header.contains("> Tool Name: multiply"), "{header}");
    assert!(!header.contains("> Tool Name: weather"));
    let both = ReActAgentWorker::builder(llm)
        .tools(calculator_tools())
        .tool_retriever(Arc::new(index.as_retriever(1)))
        .build();
    assert!(both.is_err());
}

#[tokio::test]
async fn function_calling_agent_runs_parallel_tool_calls_concurrently() {
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let make = |name: &'static str| -> Arc<dyn Tool> {
        let events = events.clone();
        let barrier = barrier.clone();
        Arc::new(FunctionTool::from_async_fn(
            name,
            None,
            move |x: TwoInts| {
                let events = events.clone();
                let barrier = barrier.clone();
                async move {
                    events.lock().unwrap().push(format!("start {name}"));
                    // Both calls must be running for either to get past here.
                    let waited =
                        tokio::time::timeout(std::time::Duration::from_secs(10), barrier.wait())
                            .await;
                    events.lock().unwrap().push(format!("end {name}"));
                    waited
                        .map(|_| x.a + x.b)
                        .map_err(|_| "the other call never started")
                }
            },
        ))
    };
    let tools = vec![make("add"), make("plus")];
    let llm = Arc::new(
        MockLlm::scripted([
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![
                    ToolCall::new("call_1", "add", json!({"a": 1, "b": 2})),
                    ToolCall::new("call_2", "plus", json!({"a": 3, "b": 4})),
                ],
            ),
            ChatMessage::assistant("3 and 7."),
        ])
        .function_calling(true),
    );
    let agent = FunctionCallingAgent::from_tools(tools, llm.clone()).unwrap();
    let answer = agent.chat("Add both").await.unwrap();
    assert_eq!(answer.response, "3 and 7.");
    let contents: Vec<&str> = answer.sources.iter().map(|s| s.content.as_str()).collect();
    assert_eq!(contents, ["3", "7"]);
    let events = events.lock().unwrap().clone();
    let first_end = events.iter().position(|e| e.starts_with("end")).unwrap();
    assert_eq!(
        events[..first_end].len(),
        2,
        "both started before either finished: {events:?}"
    );
    let requests = llm.requests();
    assert_eq!(requests[0].kind, MockRequestKind::ChatWithTools);
    let second = &requests[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[2].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(second[3].tool_call_id.as_deref(), Some("call_2"));
    assert_eq!(second[3].content, "7");
    let history = agent.chat_history().await.unwrap();
    assert_eq!(history.len(), 5);
    assert_eq!(history[1].tool_calls.len(), 2);

    // Without parallel calls, two calls in one reply are an error.
    let llm = Arc::new(
        MockLlm::scripted([ChatMessage::assistant_with_tool_calls(
            "",
            vec![
                ToolCall::new("c1", "multiply", json!({"a": 1, "b": 2})),
                ToolCall::new("c2", "add", json!({"a": 3, "b": 4})),
            ],
        )])
        .function_calling(true),
    );
    let agent = FunctionCallingAgent::builder(llm)
        .tools(calculator_tools())
        .worker(|w| w.allow_parallel_tool_calls(false))
        .build()
        .unwrap();
    assert!(
        agent
            .chat("x")
            .await
            .unwrap_err()
            .to_string()
            .contains("allow_parallel_tool_calls")
    );
}

#[tokio::test]
async fn function_calling_agent_tool_choice_missing_tools_and_step_limit() {
    let llm = Arc::new(
        MockLlm::scripted([
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "multiply", json!({"a": 121, "b": 3}))],
            ),
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c2", "subtract", json!({"a": 363, "b": 42}))],
            ),
            ChatMessage::assistant("405"),
        ])
        .function_calling(true),
    );
    let agent = FunctionCallingAgent::builder(llm.clone())
        .tools(calculator_tools())
        .system_prompt("You are a calculator.")
        .build()
        .unwrap();
    let answer = agent
        .chat_with_tool_choice(
            "What is (121 * 3) + 42?",
            None,
            ToolChoice::Named("multiply".into()),
        )
        .await
        .unwrap();
    assert_eq!(answer.response, "405");
    assert_eq!(
        answer.sources[1].content,
        "Tool with name subtract not found, please double check."
    );
    assert!(answer.sources[1].is_error);
    let requests = llm.requests();
    assert_eq!(
        requests[0].tool_choice,
        Some(ToolChoice::Named("multiply".into()))
    );
    assert_eq!(requests[1].tool_choice, Some(ToolChoice::Auto));
    assert_eq!(requests[0].messages[0].content, "You are a calculator.");
    // A model without native tool calling cannot drive this agent.
    let err =
        FunctionCallingAgent::from_tools(calculator_tools(), Arc::new(MockLlm::new())).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)));
}

#[tokio::test]
async fn agent_chat_modes_over_an_index() {
    let documents = vec![
        Document::document("Alice follows the White Rabbit down the rabbit hole."),
        Document::document("The Queen of Hearts plays croquet with flamingos."),
    ];
    let index = VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(256)))
        .await
        .unwrap();
    // ReAct: the agent's action, the query engine's own answer, the final answer.
    let react_llm = Arc::new(MockLlm::scripted([
        "Thought: I need the knowledge base.\nAction: query_engine_tool\nAction Input: {\"input\": \"Where does Alice go?\"}",
        "Down the rabbit hole.",
        "Thought: I can answer without using any more tools.\nAnswer: She goes down the rabbit hole.",
    ]));
    let fc_llm = || {
        Arc::new(
            MockLlm::scripted([
                ChatMessage::assistant_with_tool_calls(
                    "",
                    vec![ToolCall::new(
                        "q1",
                        "query_engine_tool",
                        json!({"input": "Where does Alice go?"}),
                    )],
                ),
                ChatMessage::assistant("Down the rabbit hole."),
                ChatMessage::assistant("She goes down the rabbit hole."),
            ])
            .function_calling(true),
        )
    };
    let openai_llm = fc_llm();
    let best_fc_llm = fc_llm();
    let best_react_llm = Arc::new(MockLlm::scripted([
        "Thought: I need the knowledge base.\nAction: query_engine_tool\nAction Input: {\"input\": \"Where does Alice go?\"}",
        "Down the rabbit hole.",
        "Thought: I can answer without using any more tools.\nAnswer: She goes down the rabbit hole.",
    ]));
    for (mode, llm, first_kind) in [
        (ChatMode::React, react_llm, MockRequestKind::Chat),
        (ChatMode::OpenAi, openai_llm, MockRequestKind::ChatWithTools),
        (ChatMode::Best, best_fc_llm, MockRequestKind::ChatWithTools),
        (ChatMode::Best, best_react_llm, MockRequestKind::Chat),
    ] {
        let engine = index.as_chat_engine(mode, llm.clone()).unwrap();
        let answer = engine.chat("Where does Alice go?").await.unwrap();
        assert_eq!(answer.response, "She goes down the rabbit hole.", "{mode}");
        assert_eq!(answer.sources[0].tool_name, "query_engine_tool", "{mode}");
        assert_eq!(answer.sources[0].content, "Down the rabbit hole.", "{mode}");
        assert!(!answer.source_nodes.is_empty(), "{mode}: source nodes");
        assert_eq!(llm.requests()[0].kind, first_kind, "{mode}");
        let history = engine.chat_history().await.unwrap();
        assert_eq!(history[0].content, "Where does Alice go?", "{mode}");
        assert_eq!(history.last().unwrap().content, answer.response, "{mode}");
    }
}

#[tokio::test]
async fn agent_answers_queries_and_resets() {
    let agent: AgentRunner = ReActAgent::from_tools(calculator_tools(), two_step_llm()).unwrap();
    let response = QueryEngine::query(&agent, &"What is (121 * 3) + 42?".into())
        .await
        .unwrap();
    assert_eq!(response.response.as_deref(), Some("405"));
    assert_eq!(agent.chat_history().await.unwrap().len(), 2);
    assert_eq!(agent.list_tasks().await.len(), 1);
    ChatEngine::reset(&agent).await.unwrap();
    assert!(agent.chat_history().await.unwrap().is_empty());
    assert!(agent.list_tasks().await.is_empty());
    let stream_output = StepOutput::Response(Default::default());
    assert_eq!(stream_output.response_text(), "");
}

#[tokio::test]
async fn as_chat_engine_builds_every_available_mode() {
    let documents = vec![
        Document::document("Alice follows the White Rabbit down the rabbit hole."),
        Document::document("The Queen of Hearts plays croquet with flamingos."),
    ];
    let index = VectorStoreIndex::from_documents(&documents, Arc::new(HashEmbedding::new(256)))
        .await
        .unwrap();
    assert_eq!(ChatMode::default(), ChatMode::CondensePlusContext);
    for mode in [
        ChatMode::Simple,
        ChatMode::CondenseQuestion,
        ChatMode::Context,
        ChatMode::CondensePlusContext,
    ] {
        let llm = Arc::new(MockLlm::scripted([
            "Down the rabbit hole.",
            "standalone",
            "With flamingos.",
        ]));
        let engine = index.as_chat_engine(mode, llm.clone()).unwrap();
        let first = engine.chat("Where does Alice go?").await.unwrap();
        assert_eq!(first.response, "Down the rabbit hole.", "{mode}");
        let second = engine.chat("And the Queen?").await.unwrap();
        assert!(
            second.response == "With flamingos." || second.response == "standalone",
            "{mode}"
        );
        if mode != ChatMode::Simple {
            assert!(!first.source_nodes.is_empty(), "{mode}: sources");
        }
        assert_eq!(mode.as_str().parse::<ChatMode>().unwrap(), mode);
    }
    // Agent modes are tested above; only a function-calling
    // agent over a model without native tool calling is refused.
    let err = index
        .as_chat_engine(ChatMode::OpenAi, Arc::new(MockLlm::new()))
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    for mode in [ChatMode::React, ChatMode::Best] {
        if let Err(e) = index.as_chat_engine(mode, Arc::new(MockLlm::new())) {
            panic!("{mode}: {e}");
        }
    }
    assert!(
        "fancy"
            .parse::<ChatMode>()
            .is_err_and(|e| e.to_string().contains("condense_plus_context"))
    );
}
