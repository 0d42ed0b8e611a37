//! The `Llm` types, `MockLlm`, structured output and tool calling, checked
//! against LlamaIndex 0.14.25's recorded behaviour (tests/data/llms/gen_llms.py).
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::llms::{
    ChatMessage, FunctionCallingLlm, Llm, LlmMetadata, MessageRole, MockLlm, MockRequestKind,
    StructuredPredict, ToolCall, ToolChoice, WhenExhausted, json_schema_instructions,
    messages_to_history_str, parse_json_reply,
};
use ragloom_core::tools::{FunctionTool, Tool, ToolMetadata};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/llms/llms_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The conversations gen_llms.py records, built the Rust way.
fn conversations() -> BTreeMap<&'static str, Vec<ChatMessage>> {
    let mut c = BTreeMap::new();
    c.insert(
        "plain",
        vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("Hi there"),
        ],
    );
    c.insert(
        "kwargs",
        vec![
            ChatMessage::user("Hi")
                .with_additional_kwarg("name", "bob")
                .with_additional_kwarg("n", 1)
                .with_additional_kwarg("f", true)
                .with_additional_kwarg("x", Value::Null)
                .with_additional_kwarg("l", json!([1.5, "a"])),
        ],
    );
    c.insert(
        "tool_round",
        vec![
            ChatMessage::user("add 1 and 2"),
            ChatMessage::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "add", json!({"a": 1, "b": 2}))],
            ),
            ChatMessage::tool_result("c1", "add", "3"),
        ],
    );
    c.insert("empty", vec![]);
    c
}

#[test]
fn roles_and_metadata_serialise_as_llamaindex() {
    let r = reference();
    let roles: Vec<MessageRole> = serde_json::from_value(r["roles"].clone()).unwrap();
    assert_eq!(roles.len(), 8);
    assert_eq!(serde_json::to_value(&roles).unwrap(), r["roles"]);
    assert_eq!(
        serde_json::to_value(LlmMetadata::default()).unwrap(),
        r["default_metadata"]
    );
    assert_eq!(
        serde_json::to_value(MockLlm::new().metadata()).unwrap(),
        r["mock_metadata"]
    );
    assert_eq!(
        serde_json::to_value(MockLlm::with_max_tokens(3).metadata()).unwrap(),
        r["mock3_metadata"]
    );
}

#[test]
fn chat_messages_dump_and_load_as_llamaindex() {
    let r = reference();
    for (name, messages) in conversations() {
        let dumped = serde_json::to_value(&messages).unwrap();
        assert_eq!(dumped, r["dumps"][name], "dump of {name}");
        let loaded: Vec<ChatMessage> = serde_json::from_value(r["dumps"][name].clone()).unwrap();
        assert_eq!(loaded, messages, "load of {name}");
        let shown: Vec<String> = messages.iter().map(ToString::to_string).collect();
        assert_eq!(json!(shown), r["message_str"][name], "str of {name}");
        assert_eq!(
            messages_to_history_str(&messages),
            r["history_str"][name].as_str().unwrap()
        );
    }
    assert_eq!(
        serde_json::to_value(ChatMessage::assistant("")).unwrap(),
        r["dump_empty_content"]
    );
    let legacy: ChatMessage =
        serde_json::from_value(json!({"role": "assistant", "content": "old"})).unwrap();
    assert_eq!(legacy, ChatMessage::assistant("old"));
    let bad = serde_json::from_value::<ChatMessage>(json!({"role": "wizard", "content": "x"}));
    assert!(bad.unwrap_err().to_string().contains("role"));
}

#[tokio::test]
async fn mock_echoes_like_llamaindex_mockllm() {
    let r = reference();
    let llm = MockLlm::new();
    for (prompt, expected) in r["mock_complete"].as_object().unwrap() {
        let got = llm.complete(prompt, false).await.unwrap();
        assert_eq!(&got.text, expected.as_str().unwrap());
    }
    for (name, messages) in conversations() {
        let got = llm.chat(&messages).await.unwrap();
        assert_eq!(got.message.role, MessageRole::Assistant);
        assert_eq!(
            got.message.content,
            r["mock_chat"][name].as_str().unwrap(),
            "{name}"
        );
    }
    let llm3 = MockLlm::with_max_tokens(3);
    assert_eq!(
        llm3.complete("ignored", false).await.unwrap().text,
        r["mock3_complete"].as_str().unwrap()
    );
    let chat3 = llm3.chat(&conversations()["plain"]).await.unwrap();
    assert_eq!(chat3.message.content, r["mock3_chat"].as_str().unwrap());
}

#[tokio::test]
async fn scripted_replies_come_in_order_and_requests_are_recorded() {
    let llm = MockLlm::scripted(["first", "second"]);
    let history = vec![ChatMessage::user("q1")];
    let a = llm.chat(&history).await.unwrap();
    let b = llm.complete("q2", true).await.unwrap();
    assert_eq!(a.message, ChatMessage::assistant("first"));
    assert_eq!(b.text, "second");
    assert_eq!(llm.remaining_replies(), 0);

    let err = llm.chat(&history).await.unwrap_err();
    assert!(
        matches!(&err, Error::Provider { provider, .. } if provider == "mock"),
        "{err}"
    );
    assert!(err.to_string().contains("no scripted reply left"), "{err}");

    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].kind, MockRequestKind::Chat);
    assert_eq!(requests[0].messages, history);
    assert_eq!(requests[1].kind, MockRequestKind::Complete);
    assert_eq!(requests[1].prompt.as_deref(), Some("q2"));
    assert!(requests[1].formatted);
    llm.clear_requests();
    assert!(llm.requests().is_empty());

    let echoing = MockLlm::scripted(["only"]).when_exhausted(WhenExhausted::Echo);
    assert_eq!(echoing.complete("a", false).await.unwrap().text, "only");
    assert_eq!(
        echoing.complete("echo me", false).await.unwrap().text,
        "echo me"
    );

    let failing = MockLlm::new();
    failing.push_error("rate limited");
    let err = failing.complete("x", false).await.unwrap_err();
    assert!(err.to_string().contains("rate limited"));
    assert_eq!(failing.complete("x", false).await.unwrap().text, "x");
}

#[tokio::test]
async fn streaming_deltas_concatenate_to_the_reply() {
    let reply = "The quick  brown fox\njumps.";
    let llm = MockLlm::scripted([reply, reply]);
    let items: Vec<_> = llm
        .stream_chat(&[ChatMessage::user("go")])
        .await
        .unwrap()
        .collect()
        .await;
    let items: Vec<_> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(items.len(), 5, "word-sized deltas");
    let joined: String = items.iter().map(|i| i.delta.clone().unwrap()).collect();
    assert_eq!(joined, reply);
    // Each item carries the message so far.
    assert_eq!(items[1].message.content, "The quick  ");
    assert_eq!(items.last().unwrap().message.content, reply);

    let texts: Vec<_> = llm
        .stream_complete("go", false)
        .await
        .unwrap()
        .collect()
        .await;
    let last = texts.last().unwrap().as_ref().unwrap();
    assert_eq!(last.text, reply);
    assert!(llm.requests().iter().all(|r| r.stream));

    // Echo mode streams the prompt; LlamaIndex's MockLLM yields the same text.
    let r = reference();
    let echo: Vec<_> = MockLlm::new()
        .stream_complete("ab c", false)
        .await
        .unwrap()
        .collect()
        .await;
    let joined: String = echo
        .into_iter()
        .map(|i| i.unwrap().delta.unwrap())
        .collect();
    assert_eq!(joined, r["mock_stream_complete_text"].as_str().unwrap());
    let deltas: Vec<_> = MockLlm::with_max_tokens(3)
        .stream_complete("x", false)
        .await
        .unwrap()
        .map(|i| i.unwrap().delta.unwrap())
        .collect()
        .await;
    assert_eq!(
        deltas,
        ["text ", "text ", "text"],
        "MockLLM(max_tokens=3)'s deltas"
    );
}

#[tokio::test]
async fn the_default_stream_is_one_item_of_the_whole_answer() {
    #[derive(Debug)]
    struct Plain;
    #[async_trait::async_trait]
    impl Llm for Plain {
        fn metadata(&self) -> LlmMetadata {
            LlmMetadata::default()
        }
        async fn chat(
            &self,
            _: &[ChatMessage],
        ) -> ragloom_core::Result<ragloom_core::ChatResponse> {
            Ok(ragloom_core::ChatResponse::new(ChatMessage::assistant(
                "all at once",
            )))
        }
        async fn complete(
            &self,
            p: &str,
            _: bool,
        ) -> ragloom_core::Result<ragloom_core::CompletionResponse> {
            Ok(ragloom_core::CompletionResponse::new(p))
        }
    }
    let items: Vec<_> = Plain.stream_chat(&[]).await.unwrap().collect().await;
    assert_eq!(items.len(), 1);
    assert_eq!(
        items[0].as_ref().unwrap().delta.as_deref(),
        Some("all at once")
    );
    let err = Plain
        .chat_with_tools(&[], &[], &ToolChoice::Auto)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Unsupported(ref m) if m.contains("unknown")),
        "{err}"
    );
    // The default structured_chat prompts with the schema and parses the reply.
    let schema = json!({"type": "object"});
    let err = Plain
        .structured_chat(&[ChatMessage::user("q")], &schema)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::OutputParse(ref m) if m.contains("all at once")),
        "{err}"
    );
}

/// A person, as the model should describe them.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Person {
    /// Full name.
    name: String,
    age: u32,
}

#[tokio::test]
async fn structured_predict_reads_fenced_json_into_a_struct() {
    let llm = MockLlm::scripted([
        "Here you go:\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```\nAnything else?",
    ]);
    let person: Person = llm
        .structured_predict("Who wrote the first program?")
        .await
        .unwrap();
    assert_eq!(
        person,
        Person {
            name: "Ada".into(),
            age: 36
        }
    );
    let request = llm.last_request().unwrap();
    assert_eq!(request.kind, MockRequestKind::Structured);
    assert_eq!(
        request.messages,
        vec![ChatMessage::user("Who wrote the first program?")]
    );
    let schema = request.schema.unwrap();
    assert_eq!(schema["title"], "Person");
    assert_eq!(schema["properties"]["name"]["description"], "Full name.");
    assert_eq!(schema["required"], json!(["name", "age"]));
    assert!(schema.get("$schema").is_none());

    // Through `Arc<dyn Llm>`, as components hold models.
    let shared: Arc<dyn Llm> = Arc::new(MockLlm::scripted(["{\"name\": \"Alan\", \"age\": 41}"]));
    let p: Person = shared
        .structured_predict(vec![ChatMessage::user("q")])
        .await
        .unwrap();
    assert_eq!(p.name, "Alan");
}

#[tokio::test]
async fn unparseable_or_mismatched_replies_are_output_parse_errors() {
    let llm = MockLlm::scripted([
        "I would rather not say.",
        "{\"name\": \"Ada\", \"age\": \"old\"}",
    ]);
    let err = llm.structured_predict::<Person>("q").await.unwrap_err();
    assert!(
        matches!(&err, Error::OutputParse(m) if m.contains("I would rather not say.")),
        "{err}"
    );
    let err = llm.structured_predict::<Person>("q").await.unwrap_err();
    assert!(
        matches!(&err, Error::OutputParse(m) if m.contains("Person") && m.contains("old")),
        "{err}"
    );
}

#[test]
fn json_extraction_and_instructions_match_llamaindex() {
    let r = reference();
    for (text, expected) in r["extract_json_str"].as_object().unwrap() {
        let want: Value = serde_json::from_str(expected.as_str().unwrap()).unwrap();
        assert_eq!(parse_json_reply(text).unwrap(), want);
    }
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    assert_eq!(
        json_schema_instructions(&schema),
        r["format_instructions"].as_str().unwrap()
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add_tool(counter: Arc<AtomicUsize>) -> Arc<dyn Tool> {
    Arc::new(FunctionTool::from_fn(
        "add",
        Some("Adds two integers."),
        move |args: AddArgs| {
            counter.fetch_add(1, Ordering::SeqCst);
            args.a + args.b
        },
    ))
}

/// Arguments of `shout`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ShoutArgs {
    text: String,
}

fn shout_tool() -> Arc<dyn Tool> {
    Arc::new(FunctionTool::from_async_fn(
        "shout",
        Some("Upper-cases text."),
        |args: ShoutArgs| async move { args.text.to_uppercase() },
    ))
}

#[tokio::test]
async fn chat_with_tools_returns_scripted_calls_and_they_are_extracted() {
    let calls = vec![
        ToolCall::new("c1", "add", json!({"a": 1, "b": 2})),
        // A provider that sends the arguments as (truncated) text.
        ToolCall::new("c2", "shout", json!("{\"text\": \"hi")),
    ];
    let llm = MockLlm::scripted([ChatMessage::assistant_with_tool_calls("", calls)])
        .function_calling(true);
    let tools = [add_tool(Arc::default()), shout_tool()];
    let metadata: Vec<ToolMetadata> = tools.iter().map(|t| t.metadata().clone()).collect();
    let response = llm
        .chat_with_tools(&[ChatMessage::user("go")], &metadata, &ToolChoice::Required)
        .await
        .unwrap();
    let got = llm.get_tool_calls_from_response(&response, true).unwrap();
    assert_eq!(
        got,
        vec![
            ToolCall::new("c1", "add", json!({"a": 1, "b": 2})),
            ToolCall::new("c2", "shout", json!({"text": "hi"})),
        ]
    );
    let request = llm.last_request().unwrap();
    assert_eq!(request.kind, MockRequestKind::ChatWithTools);
    assert_eq!(request.tools, metadata);
    assert_eq!(request.tool_choice, Some(ToolChoice::Required));

    let plain = ragloom_core::ChatResponse::new(ChatMessage::assistant("no tools"));
    assert!(
        llm.get_tool_calls_from_response(&plain, false)
            .unwrap()
            .is_empty()
    );
    let err = llm.get_tool_calls_from_response(&plain, true).unwrap_err();
    assert!(matches!(err, Error::OutputParse(_)), "{err}");

    let not_fc = MockLlm::scripted(["x"]);
    let err = not_fc
        .chat_with_tools(&[], &metadata, &ToolChoice::Auto)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

#[tokio::test]
async fn streamed_tool_calls_arrive_with_the_last_item() {
    let call = ToolCall::new("c1", "add", json!({"a": 1, "b": 2}));
    let llm = MockLlm::scripted([ChatMessage::assistant_with_tool_calls(
        "Let me add.",
        vec![call.clone()],
    )])
    .function_calling(true);
    let items: Vec<_> = llm
        .stream_chat_with_tools(&[ChatMessage::user("go")], &[], &ToolChoice::Auto)
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(items.len(), 3);
    assert!(items[0].message.tool_calls.is_empty());
    assert_eq!(items[2].message.tool_calls, vec![call]);
    assert_eq!(items[2].message.content, "Let me add.");
}

#[tokio::test]
async fn predict_and_call_runs_two_tools() {
    let counter = Arc::new(AtomicUsize::new(0));
    let tools = [add_tool(counter.clone()), shout_tool()];
    let reply = ChatMessage::assistant_with_tool_calls(
        "",
        vec![
            ToolCall::new("c1", "add", json!({"a": 2, "b": 40})),
            ToolCall::new("c2", "shout", json!({"text": "done"})),
        ],
    );
    let llm = MockLlm::scripted([reply.clone(), reply]).function_calling(true);
    let history = [ChatMessage::system("You are a calculator.")];
    let outcome = llm
        .predict_and_call(
            &tools,
            Some("add 2 and 40, then shout".into()),
            &history,
            true,
        )
        .await
        .unwrap();
    assert_eq!(outcome.sources.len(), 2);
    assert_eq!(outcome.sources[0].content, "42");
    assert_eq!(outcome.sources[0].raw_output, json!(42));
    assert_eq!(outcome.sources[1].content, "DONE");
    assert_eq!(outcome.response, "42\n\nDONE");
    assert_eq!(counter.load(Ordering::SeqCst), 1);
    let request = llm.last_request().unwrap();
    assert_eq!(request.messages.len(), 2);
    assert_eq!(
        request.messages[1],
        ChatMessage::user("add 2 and 40, then shout")
    );
    assert_eq!(request.tools.len(), 2);

    // Two calls without parallel calls allowed: an error, and no tool runs.
    let err = llm
        .predict_and_call(&tools, None, &history, false)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("allow_parallel_tool_calls"),
        "{err}"
    );
    assert_eq!(counter.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn predict_and_call_reports_unknown_tools_and_works_without_native_calling() {
    let fc = MockLlm::scripted([ChatMessage::assistant_with_tool_calls(
        "",
        vec![ToolCall::new("c1", "divide", json!({}))],
    )])
    .function_calling(true);
    let tools = [add_tool(Arc::default())];
    let outcome = fc
        .predict_and_call(&tools, Some("x".into()), &[], false)
        .await
        .unwrap();
    assert!(outcome.sources[0].is_error);
    assert!(
        outcome.response.contains("`divide` not found"),
        "{}",
        outcome.response
    );

    // A model without native tool calling answers with JSON.
    let text_model: Arc<dyn Llm> = Arc::new(MockLlm::scripted([
        "```json\n{\"tool_name\": \"add\", \"tool_kwargs\": {\"a\": 1, \"b\": 1}}\n```",
    ]));
    let outcome = text_model
        .predict_and_call(&tools, Some("1+1?".into()), &[], false)
        .await
        .unwrap();
    assert_eq!(outcome.response, "2");
    assert_eq!(outcome.tool_calls[0].name, "add");
}

#[tokio::test]
async fn echoing_function_calling_mock_calls_every_tool_like_mockfunctioncallingllm() {
    let llm = MockLlm::new().function_calling(true);
    let tools = [add_tool(Arc::default()).metadata().clone()];
    let r = llm
        .chat_with_tools(&[ChatMessage::user("go")], &tools, &ToolChoice::Auto)
        .await
        .unwrap();
    assert_eq!(r.message.tool_calls.len(), 1);
    assert_eq!(r.message.tool_calls[0].name, "add");
    let after = llm
        .chat_with_tools(
            &[ChatMessage::tool_result("mock-tool-call-0", "add", "3")],
            &tools,
            &ToolChoice::Auto,
        )
        .await
        .unwrap();
    assert_eq!(after.message.content, "Tool calls complete.");
    let none = llm
        .chat_with_tools(&[], &[], &ToolChoice::Auto)
        .await
        .unwrap();
    assert_eq!(none.message.content, "No tools available.");
}
