//! Recorded-wire tests of the Ollama LLM: a wiremock server answers in
//! Ollama's `/api/chat` wire format, and the requests ragloom sends are checked
//! against the shape Ollama documents.
//!
//! Every reply below is written from Ollama's API reference (`docs/api.md` of
//! the ollama repository, section "Generate a chat completion"); the section
//! each one comes from is named beside it. No Ollama server is needed.
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::llms::{
    ChatMessage, FunctionCallingLlm, Llm, MessageRole, StructuredPredict, TokenUsage, ToolCall,
    ToolChoice, output_schema,
};
use ragloom_core::tools::{FunctionTool, Tool, ToolMetadata};
use ragloom_llms_ollama::{KeepAlive, Ollama};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// docs/api.md, "Chat request (No streaming)", response.
const CHAT_REPLY: &str = r#"{
  "model": "llama3.2",
  "created_at": "2023-12-12T14:13:43.416799Z",
  "message": {
    "role": "assistant",
    "content": "Hello! How are you today?"
  },
  "done": true,
  "total_duration": 5191566416,
  "load_duration": 2154458,
  "prompt_eval_count": 26,
  "prompt_eval_duration": 383809000,
  "eval_count": 298,
  "eval_duration": 4799921000
}"#;

/// docs/api.md, "Chat Request (Streaming)", response: a stream of objects
/// (the first one as documented, two more pieces in its shape), then the
/// documented final object, which carries no `message`, only the counts.
const CHAT_STREAM: &str = concat!(
    r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"The","images":null},"done":false}"#,
    "\n",
    r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.485406455-07:00","message":{"role":"assistant","content":" sky is","images":null},"done":false}"#,
    "\n",
    r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.585406455-07:00","message":{"role":"assistant","content":" blue.","images":null},"done":false}"#,
    "\n",
    r#"{"model":"llama3.2","created_at":"2023-08-04T19:22:45.499127Z","done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}"#,
    "\n",
);

/// docs/api.md, "Chat request (with tools)", request `tools`.
fn weather_tool_json() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather for a location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The location to get the weather for, e.g. San Francisco, CA"
                    },
                    "format": {
                        "type": "string",
                        "description": "The format to return the weather in, e.g. 'celsius' or 'fahrenheit'",
                        "enum": ["celsius", "fahrenheit"]
                    }
                },
                "required": ["location", "format"]
            }
        }
    }])
}

/// docs/api.md, "Chat request (with tools)", response.
const TOOL_CALL_REPLY: &str = r#"{
  "model": "llama3.2",
  "created_at": "2024-07-22T20:33:28.123648Z",
  "message": {
    "role": "assistant",
    "content": "",
    "tool_calls": [
      {
        "function": {
          "name": "get_current_weather",
          "arguments": {
            "format": "celsius",
            "location": "Paris, FR"
          }
        }
      }
    ]
  },
  "done_reason": "stop",
  "done": true,
  "total_duration": 885095291,
  "load_duration": 3753500,
  "prompt_eval_count": 122,
  "prompt_eval_duration": 328493000,
  "eval_count": 33,
  "eval_duration": 552222000
}"#;

/// docs/api.md, "Chat request (Structured outputs)", response.
const STRUCTURED_REPLY: &str = r#"{
  "model": "llama3.1",
  "created_at": "2024-12-06T00:46:58.265747Z",
  "message": { "role": "assistant", "content": "{\"age\": 22, \"available\": false}" },
  "done_reason": "stop",
  "done": true,
  "total_duration": 2254970291,
  "load_duration": 574751416,
  "prompt_eval_count": 34,
  "prompt_eval_duration": 1502000000,
  "eval_count": 12,
  "eval_duration": 175000000
}"#;

/// Ollama's reply for a model it does not have: HTTP 404 and an `error` object
/// (docs/api.md, "Errors": errors come back as `{"error": "..."}`).
const NOT_FOUND: &str = r#"{"error": "model 'x' not found"}"#;

async fn server_replying(status: u16, body: &str, content_type: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body.to_owned(), content_type))
        .mount(&server)
        .await;
    server
}

async fn sent_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

fn llm(server: &MockServer, model: &str) -> ragloom_llms_ollama::OllamaBuilder {
    Ollama::builder(model).base_url(server.uri())
}

fn role_and_content(messages: &Value) -> Vec<(String, String)> {
    messages
        .as_array()
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

#[tokio::test]
async fn chat_sends_the_documented_request_and_reads_the_reply() {
    let server = server_replying(200, CHAT_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2")
        .temperature(0.5)
        .seed(101)
        .stop(["\n", "user:"])
        .keep_alive_str("10m")
        .build()
        .unwrap();
    let history = [
        ChatMessage::system("Be brief."),
        ChatMessage::user("why is the sky blue?"),
        ChatMessage::assistant("due to rayleigh scattering."),
        ChatMessage::user("how is that different than mie scattering?"),
    ];
    let reply = llm.chat(&history).await.unwrap();

    assert_eq!(reply.message.role, MessageRole::Assistant);
    assert_eq!(reply.message.content, "Hello! How are you today?");
    assert_eq!(reply.usage, Some(TokenUsage::new(26, 298)));
    assert_eq!(reply.usage.unwrap().total_tokens, 324);
    assert_eq!(reply.raw.as_ref().unwrap()["model"], "llama3.2");

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["stream"], false);
    assert_eq!(
        role_and_content(&body["messages"]),
        vec![
            ("system".into(), "Be brief.".into()),
            ("user".into(), "why is the sky blue?".into()),
            ("assistant".into(), "due to rayleigh scattering.".into()),
            (
                "user".into(),
                "how is that different than mie scattering?".into()
            ),
        ]
    );
    assert_eq!(
        body["options"],
        json!({"num_ctx": 3900, "temperature": 0.5, "seed": 101, "stop": ["\n", "user:"]})
    );
    assert_eq!(body["keep_alive"], "10m");
    assert!(body.get("tools").is_none(), "no tools were given: {body}");
    assert!(body.get("format").is_none(), "no format was asked: {body}");
}

#[tokio::test]
async fn complete_goes_through_chat_as_one_user_message() {
    let server = server_replying(200, CHAT_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let reply = llm.complete("Say hello.", false).await.unwrap();
    assert_eq!(reply.text, "Hello! How are you today?");
    assert_eq!(reply.usage, Some(TokenUsage::new(26, 298)));
    let body = &sent_bodies(&server).await[0];
    assert_eq!(
        role_and_content(&body["messages"]),
        vec![("user".into(), "Say hello.".into())]
    );
}

#[tokio::test]
async fn stream_chat_yields_deltas_then_the_usage() {
    let server = server_replying(200, CHAT_STREAM, "application/x-ndjson").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let items: Vec<_> = llm
        .stream_chat(&[ChatMessage::user("why is the sky blue?")])
        .await
        .unwrap()
        .collect()
        .await;
    let items: Vec<_> = items.into_iter().map(Result::unwrap).collect();
    let deltas: Vec<&str> = items.iter().map(|i| i.delta.as_deref().unwrap()).collect();
    assert_eq!(deltas, ["The", " sky is", " blue.", ""]);
    let texts: Vec<&str> = items.iter().map(|i| i.message.content.as_str()).collect();
    assert_eq!(
        texts,
        ["The", "The sky is", "The sky is blue.", "The sky is blue."]
    );
    assert!(items[..3].iter().all(|i| i.usage.is_none()));
    assert_eq!(items[3].usage, Some(TokenUsage::new(26, 282)));
    assert_eq!(items[3].raw.as_ref().unwrap()["done"], true);

    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "llama3.2");
}

#[tokio::test]
async fn stream_complete_accumulates_text() {
    let server = server_replying(200, CHAT_STREAM, "application/x-ndjson").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let items: Vec<_> = llm
        .stream_complete("why is the sky blue?", false)
        .await
        .unwrap()
        .collect()
        .await;
    let last = items.last().unwrap().as_ref().unwrap();
    assert_eq!(last.text, "The sky is blue.");
    assert_eq!(last.usage, Some(TokenUsage::new(26, 282)));
}

#[tokio::test]
async fn stream_error_line_and_cut_stream_are_errors() {
    // An error after the 200 status arrives as a line of its own.
    let body = concat!(
        r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"The"},"done":false}"#,
        "\n",
        r#"{"error":"an error was encountered while running the model"}"#,
        "\n",
    );
    let server = server_replying(200, body, "application/x-ndjson").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let items: Vec<_> = llm
        .stream_chat(&[ChatMessage::user("hi")])
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap().delta.as_deref(), Some("The"));
    match &items[1] {
        Err(Error::Provider {
            provider, message, ..
        }) => {
            assert_eq!(provider, "ollama");
            assert!(
                message.contains("an error was encountered while running the model"),
                "{message}"
            );
        }
        other => panic!("expected a provider error, got {other:?}"),
    }

    // A stream that stops before `"done": true` does not pass for complete.
    let cut = CHAT_STREAM.lines().take(2).collect::<Vec<_>>().join("\n");
    let server = server_replying(200, &cut, "application/x-ndjson").await;
    let llm = ragloom_llms_ollama::Ollama::builder("llama3.2")
        .base_url(server.uri())
        .build()
        .unwrap();
    let items: Vec<_> = llm
        .stream_chat(&[ChatMessage::user("hi")])
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(items.len(), 3, "two pieces, then the error");
    let err = items[2].as_ref().unwrap_err().to_string();
    assert!(err.contains("ended before"), "{err}");
}

#[tokio::test]
async fn tool_calls_follow_ollamas_format_both_ways() {
    let server = server_replying(200, TOOL_CALL_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let tool_json = weather_tool_json();
    let function = &tool_json[0]["function"];
    let tool = ToolMetadata::new(
        function["name"].as_str().unwrap(),
        function["description"].as_str().unwrap(),
    )
    .with_fn_schema(function["parameters"].clone());

    // A conversation that already holds a call and its result.
    let earlier_call = ToolCall::new(
        "get_current_weather",
        "get_current_weather",
        json!({"location": "Toronto", "format": "celsius"}),
    );
    let history = [
        ChatMessage::user("What is the weather in Toronto?"),
        ChatMessage::assistant_with_tool_calls("", vec![earlier_call]),
        ChatMessage::tool_result(
            "get_current_weather",
            "get_current_weather",
            "11 degrees celsius",
        ),
        ChatMessage::user("What is the weather today in Paris?"),
    ];
    let reply = llm
        .chat_with_tools(&history, &[tool], &ToolChoice::Auto)
        .await
        .unwrap();

    assert_eq!(
        reply.message.tool_calls,
        vec![ToolCall::new(
            "get_current_weather",
            "get_current_weather",
            json!({"format": "celsius", "location": "Paris, FR"})
        )]
    );
    assert_eq!(reply.usage, Some(TokenUsage::new(122, 33)));

    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["tools"], tool_json);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"], "");
    assert_eq!(
        messages[1]["tool_calls"],
        json!([{"function": {"name": "get_current_weather", "arguments": {"location": "Toronto", "format": "celsius"}}}])
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["content"], "11 degrees celsius");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WeatherArgs {
    location: String,
    format: String,
}

#[tokio::test]
async fn predict_and_call_runs_the_tool_ollama_picked() {
    let server = server_replying(200, TOOL_CALL_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let tool: Arc<dyn Tool> = Arc::new(FunctionTool::from_fn(
        "get_current_weather",
        Some("Get the current weather for a location"),
        |a: WeatherArgs| format!("22 degrees {} in {}", a.format, a.location),
    ));
    let outcome = llm
        .predict_and_call(&[tool], Some("Weather in Paris?".into()), &[], false)
        .await
        .unwrap();
    assert_eq!(outcome.response, "22 degrees celsius in Paris, FR");
    assert_eq!(outcome.tool_calls[0].name, "get_current_weather");
}

#[tokio::test]
async fn tool_names_are_sanitised_on_the_wire_and_restored_in_calls() {
    let reply = TOOL_CALL_REPLY.replace("get_current_weather", "current_weather_");
    let server = server_replying(200, &reply, "application/json").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let tool = ToolMetadata::new("current weather?", "Weather now.");
    let reply = llm
        .chat_with_tools(&[ChatMessage::user("Paris?")], &[tool], &ToolChoice::Auto)
        .await
        .unwrap();
    assert_eq!(reply.message.tool_calls[0].name, "current weather?");
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["tools"][0]["function"]["name"], "current_weather_");
}

#[tokio::test]
async fn tool_choice_none_sends_no_tools_and_unknown_names_fail() {
    let server = server_replying(200, CHAT_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2").build().unwrap();
    let tools = [
        ToolMetadata::new("a", "Tool a."),
        ToolMetadata::new("b", "Tool b."),
    ];
    llm.chat_with_tools(&[ChatMessage::user("hi")], &tools, &ToolChoice::None)
        .await
        .unwrap();
    llm.chat_with_tools(
        &[ChatMessage::user("hi")],
        &tools,
        &ToolChoice::Named("b".into()),
    )
    .await
    .unwrap();
    let bodies = sent_bodies(&server).await;
    assert!(bodies[0].get("tools").is_none(), "{}", bodies[0]);
    let names: Vec<&str> = bodies[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b"]);

    let err = llm
        .chat_with_tools(
            &[ChatMessage::user("hi")],
            &tools,
            &ToolChoice::Named("c".into()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert_eq!(
        sent_bodies(&server).await.len(),
        2,
        "nothing sent for a bad choice"
    );
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Person {
    age: i64,
    available: bool,
}

#[tokio::test]
async fn structured_predict_sends_the_schema_as_format() {
    let server = server_replying(200, STRUCTURED_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.1").temperature(0.0).build().unwrap();
    let person: Person = llm
        .structured_predict(
            "Ollama is 22 years old and busy saving the world. Return a JSON object with the age and availability.",
        )
        .await
        .unwrap();
    assert_eq!(
        person,
        Person {
            age: 22,
            available: false
        }
    );
    let body = &sent_bodies(&server).await[0];
    let schema = output_schema::<Person>();
    assert_eq!(body["format"], schema);
    assert_eq!(body["format"]["type"], "object");
    assert_eq!(
        body["format"]["required"],
        json!(["age", "available"]),
        "{}",
        body["format"]
    );
    assert_eq!(body["options"]["temperature"], 0.0);
}

#[tokio::test]
async fn json_mode_and_keep_alive_forever_are_sent() {
    let server = server_replying(200, CHAT_REPLY, "application/json").await;
    let llm = llm(&server, "llama3.2")
        .json_mode(true)
        .keep_alive(KeepAlive::Indefinitely)
        .additional_kwarg("top_k", 20)
        .additional_kwarg("num_ctx", 1024)
        .build()
        .unwrap();
    llm.chat(&[ChatMessage::user("Colours as JSON")])
        .await
        .unwrap();
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["format"], "json");
    assert_eq!(body["keep_alive"], -1);
    assert_eq!(body["options"], json!({"num_ctx": 1024, "top_k": 20}));
    assert_eq!(llm.metadata().context_window, 1024);
}

#[tokio::test]
async fn a_missing_model_is_a_provider_error_naming_ollama() {
    let server = server_replying(404, NOT_FOUND, "application/json").await;
    let llm = llm(&server, "x").build().unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    match &err {
        Error::Provider {
            provider,
            message,
            source,
        } => {
            assert_eq!(provider, "ollama");
            assert!(message.contains("model 'x' not found"), "{message}");
            assert!(message.contains("model `x`"), "{message}");
            assert!(source.is_some());
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
    assert!(err.to_string().starts_with("ollama: "), "{err}");

    let Err(err) = llm.stream_chat(&[ChatMessage::user("hi")]).await else {
        panic!("the stream should not open");
    };
    let text = err.to_string();
    assert!(
        text.contains("404") && text.contains("model 'x' not found"),
        "{text}"
    );
    assert!(matches!(err, Error::Provider { ref provider, .. } if provider == "ollama"));
}

#[tokio::test]
async fn a_silent_server_times_out_with_request_timeout() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(CHAT_REPLY, "application/json")
                .set_delay(Duration::from_secs(10)),
        )
        .mount(&server)
        .await;
    let llm = llm(&server, "llama3.2")
        .request_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    match &err {
        Error::Provider {
            provider,
            message,
            source,
        } => {
            assert_eq!(provider, "ollama");
            assert!(message.contains("request_timeout"), "{message}");
            assert!(message.contains("0.2s"), "{message}");
            assert!(source.is_some());
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
    let Err(err) = llm.stream_chat(&[ChatMessage::user("hi")]).await else {
        panic!("the stream should not open");
    };
    assert!(err.to_string().contains("request_timeout"), "{err}");
}

#[test]
fn metadata_reports_the_context_window_and_capabilities() {
    let base = || Ollama::builder("llama3.2").base_url("127.0.0.1:1");
    let options = |llm: &Ollama| serde_json::to_value(llm.options()).unwrap();

    let default = base().build().unwrap();
    let meta = default.metadata();
    assert_eq!(meta.context_window, 3900);
    assert_eq!(meta.num_output, 256);
    assert!(meta.is_chat_model);
    assert!(meta.is_function_calling_model);
    assert_eq!(meta.model_name, "llama3.2");
    assert_eq!(options(&default), json!({"num_ctx": 3900}));

    let window = base().context_window(8192).build().unwrap();
    assert_eq!(window.metadata().context_window, 8192);
    assert_eq!(options(&window)["num_ctx"], 8192);

    let num_ctx = base().num_ctx(2048).build().unwrap();
    assert_eq!(num_ctx.metadata().context_window, 2048);
    assert_eq!(options(&num_ctx)["num_ctx"], 2048);

    let both = base().context_window(8192).num_ctx(4096).build().unwrap();
    assert_eq!(both.metadata().context_window, 8192);
    assert_eq!(options(&both)["num_ctx"], 4096);

    let no_tools = base().is_function_calling_model(false).build().unwrap();
    assert!(!no_tools.metadata().is_function_calling_model);
}

#[test]
fn bad_settings_fail_at_build_time() {
    let err = Ollama::builder("m")
        .keep_alive_str("soon")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("keep_alive `soon`"), "{err}");
    assert!(Ollama::builder(" ").build().is_err());
    assert!(Ollama::builder("m").context_window(0).build().is_err());
    let err = Ollama::builder("m")
        .additional_kwarg("temperature", "hot")
        .build()
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}

/// docs/api.md, "Chat request (with tools)" streamed, for a thinking model:
/// the reasoning arrives in pieces, then one message carries two calls.
const TOOLS_STREAM: &str = concat!(
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"Weather and "},"done":false}"#,
    "\n",
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"time: two tools."},"done":false}"#,
    "\n",
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},{"function":{"name":"get_time","arguments":{"city":"Paris"}}}]},"done":false}"#,
    "\n",
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":40,"eval_count":30}"#,
    "\n",
);

const ANSWER_STREAM: &str = concat!(
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:03Z","message":{"role":"assistant","content":"Sunny, 10:00."},"done":false}"#,
    "\n",
    r#"{"model":"qwen3","created_at":"2025-01-01T00:00:04Z","message":{"role":"assistant","content":""},"done":true,"prompt_eval_count":60,"eval_count":5}"#,
    "\n",
);

#[tokio::test]
async fn a_function_agent_streams_two_parallel_ollama_calls_and_the_thinking() {
    use ragloom_agent::{AgentStream, FunctionAgent, ToolCallResult};
    let server = MockServer::start().await;
    for body in [TOOLS_STREAM, ANSWER_STREAM] {
        Mock::given(method("POST"))
            .and(path("/api/chat"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(body.to_owned(), "application/x-ndjson"),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    /// A city.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct City {
        city: String,
    }
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(FunctionTool::from_fn(
            "get_weather",
            Some("Weather."),
            |c: City| format!("sunny in {}", c.city),
        )),
        Arc::new(FunctionTool::from_fn(
            "get_time",
            Some("Time."),
            |c: City| format!("10:00 in {}", c.city),
        )),
    ];
    let llm = Arc::new(llm(&server, "qwen3").build().unwrap());
    let agent = FunctionAgent::builder(llm).tools(tools).build().unwrap();
    let mut handler = agent.run("Weather and time in Paris?");
    let mut thinking = String::new();
    let mut streamed_calls = 0;
    let mut results = Vec::new();
    let mut events = handler.stream_events();
    while let Some(ev) = events.next().await {
        if let Some(s) = ev.downcast_ref::<AgentStream>() {
            thinking.push_str(s.thinking_delta.as_deref().unwrap_or_default());
            streamed_calls = streamed_calls.max(s.tool_calls.len());
        }
        if let Some(r) = ev.downcast::<ToolCallResult>() {
            results.push(r.tool_output.content);
        }
    }
    let output = handler.await.unwrap();
    assert_eq!(thinking, "Weather and time: two tools.");
    assert_eq!(streamed_calls, 2);
    results.sort();
    assert_eq!(results, ["10:00 in Paris", "sunny in Paris"]);
    assert_eq!(output.response.content, "Sunny, 10:00.");
    assert_eq!(output.tool_calls.len(), 2);
    // The second request carries both calls and both results back.
    let second = &sent_bodies(&server).await[1];
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[3]["role"], "tool");
}
