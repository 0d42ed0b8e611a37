//! Recorded-wire tests: a wiremock server answers in OpenAI's exact wire format,
//! so these run everywhere, with no server or key.
//!
//! The replies are written from OpenAI's API reference (the chat completion
//! object, the chat completion chunk object, the completion object and the
//! error object of https://platform.openai.com/docs/api-reference/chat),
//! field for field, including the fields ragloom ignores; the lenient reply is
//! what llama.cpp's server sends (no `usage`, `id` or `created`, an empty
//! `finish_reason`).
#![allow(clippy::unwrap_used)]

use futures::StreamExt;
use ragloom_core::Error;
use ragloom_core::llms::StructuredPredict;
use ragloom_core::llms::{ChatMessage, FunctionCallingLlm, Llm, ToolChoice};
use ragloom_core::tools::ToolMetadata;
use ragloom_llms_openai::{OpenAI, OpenAILike, OpenAILikeBuilder, RetryPolicy};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-0123456789abcdef";

/// Fast retries so the retry tests take milliseconds (except where a
/// `Retry-After` header asks for longer).
fn fast_retries(max_retries: usize) -> RetryPolicy {
    RetryPolicy::new(max_retries)
        .with_initial_backoff(Duration::from_millis(10))
        .with_jitter(false)
}

fn like(server: &MockServer) -> OpenAILikeBuilder {
    OpenAILike::builder("test-model")
        .api_base(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .is_chat_model(true)
        .retry_policy(fast_retries(3))
}

fn openai(server: &MockServer, model: &str) -> OpenAI {
    OpenAI::builder()
        .model(model)
        .api_base(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .retry_policy(fast_retries(3))
        .build()
        .unwrap()
}

/// A chat completion object as OpenAI's reference shows it.
fn chat_completion(content: Value, tool_calls: Option<Value>, finish_reason: &str) -> Value {
    let mut message =
        json!({"role": "assistant", "content": content, "refusal": null, "annotations": []});
    if let Some(calls) = tool_calls {
        message["tool_calls"] = calls;
    }
    json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
        },
        "service_tier": "default",
        "system_fingerprint": "fp_44709d6fcb"
    })
}

/// One `chat.completion.chunk` with `delta` and `finish_reason`.
fn chunk(delta: Value, finish_reason: Value) -> Value {
    json!({
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]
    })
}

/// Server-sent events as OpenAI streams them, ending with `[DONE]`.
fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for c in chunks {
        body.push_str(&format!("data: {}\n\n", serde_json::to_string(c).unwrap()));
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r: &Request| r.body_json::<Value>().unwrap())
        .collect()
}

fn weather_tools() -> Vec<ToolMetadata> {
    vec![
        ToolMetadata::new("get_weather", "Current weather in a city.").with_fn_schema(json!({
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"]
        })),
        ToolMetadata::new("get_time", "Current time in a timezone.").with_fn_schema(json!({
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"]
        })),
    ]
}

#[tokio::test]
async fn chat_sends_openai_body_and_reads_reply_and_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("Hello! How can I assist you today?"),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = like(&server)
        .temperature(0.3)
        .max_tokens(64)
        .seed(42)
        .stop(["\n\n"])
        .additional_kwarg("top_p", 0.9)
        .build()
        .unwrap();
    let reply = llm
        .chat(&[ChatMessage::system("Be brief."), ChatMessage::user("Hello")])
        .await
        .unwrap();
    assert_eq!(reply.message.content, "Hello! How can I assist you today?");
    let usage = reply.usage.unwrap();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (19, 10, 29)
    );
    assert!(reply.raw.is_some());

    let sent = &bodies(&server).await[0];
    assert_eq!(sent["model"], "test-model");
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello"}
        ])
    );
    assert_eq!(sent["temperature"], json!(0.3));
    assert_eq!(sent["max_tokens"], json!(64));
    assert_eq!(sent["seed"], json!(42));
    assert_eq!(sent["stop"], json!(["\n\n"]));
    assert_eq!(sent["top_p"], json!(0.9));
    assert_eq!(sent["stream"], json!(false));
}

#[tokio::test]
async fn tool_calls_are_sent_and_parsed() {
    let server = MockServer::start().await;
    let calls = json!([
        {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
        {"id": "call_def", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}}
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            Value::Null,
            Some(calls),
            "tool_calls",
        )))
        .mount(&server)
        .await;
    let llm = openai(&server, "gpt-4o-mini");
    assert!(llm.metadata().is_function_calling_model);
    let reply = llm
        .chat_with_tools(
            &[ChatMessage::user("Weather and time in Paris?")],
            &weather_tools(),
            &ToolChoice::Auto,
        )
        .await
        .unwrap();
    let calls = llm.get_tool_calls_from_response(&reply, true).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_abc", "get_weather")
    );
    assert_eq!(calls[0].arguments, json!({"location": "Paris"}));
    assert_eq!(
        (calls[1].id.as_str(), calls[1].name.as_str()),
        ("call_def", "get_time")
    );
    assert_eq!(calls[1].arguments, json!({"tz": "CET"}));
    assert_eq!(reply.message.content, "");

    let sent = &bodies(&server).await[0];
    assert_eq!(sent["tool_choice"], "auto");
    assert_eq!(
        sent["tools"][0],
        json!({
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather in a city.",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                    "required": ["location"], "additionalProperties": false},
                "strict": false
            }
        })
    );
    assert_eq!(sent["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn tool_results_go_back_in_openai_shape() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("It is sunny."),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let call =
        ragloom_core::llms::ToolCall::new("call_abc", "get_weather", json!({"location": "Paris"}));
    let history = [
        ChatMessage::user("Weather in Paris?"),
        ChatMessage::assistant_with_tool_calls("", vec![call]),
        ChatMessage::tool_result("call_abc", "get_weather", "sunny, 21C"),
    ];
    let forced = ToolChoice::Named("get_weather".into());
    llm.chat_with_tools(&history, &weather_tools(), &forced)
        .await
        .unwrap();
    let sent = &bodies(&server).await[0];
    assert_eq!(
        sent["messages"][1],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}, "id": "call_abc"}
        ]})
    );
    assert_eq!(
        sent["messages"][2],
        json!({"role": "tool", "content": "sunny, 21C", "tool_call_id": "call_abc"})
    );
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "function", "function": {"name": "get_weather"}})
    );
    // OpenAILike without is_function_calling_model sends the schema as given.
    assert!(sent["tools"][0]["function"].get("strict").is_none());
}

#[tokio::test]
async fn streamed_tool_call_deltas_for_two_parallel_calls_are_assembled() {
    let server = MockServer::start().await;
    let chunks = vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"loc"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "ation\": \"Pa"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "ris\"}"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [
            {"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"tz\": "}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"CET\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(&chunks))
        .mount(&server)
        .await;
    let llm = openai(&server, "gpt-4o-mini");
    let mut stream = llm
        .stream_chat_with_tools(
            &[ChatMessage::user("Weather and time in Paris?")],
            &weather_tools(),
            &ToolChoice::Auto,
        )
        .await
        .unwrap();
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(items.len(), chunks.len());
    let last = items.last().unwrap();
    let calls = llm.get_tool_calls_from_response(last, true).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_a", "get_weather")
    );
    assert_eq!(calls[0].arguments, json!({"location": "Paris"}));
    assert_eq!(
        (calls[1].id.as_str(), calls[1].name.as_str()),
        ("call_b", "get_time")
    );
    assert_eq!(calls[1].arguments, json!({"tz": "CET"}));
    // The parsed arguments are already on the last item's message.
    assert_eq!(last.message.tool_calls[1].arguments, json!({"tz": "CET"}));
    // Mid-stream, the first call's arguments are the completed prefix.
    assert_eq!(
        items[2].message.tool_calls[0].arguments,
        json!({"location": "Pa"})
    );
    assert_eq!(bodies(&server).await[0]["stream"], json!(true));
}

#[tokio::test]
async fn streamed_text_deltas_concatenate_to_the_message() {
    let server = MockServer::start().await;
    let chunks = vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Hello"}), Value::Null),
        chunk(json!({"content": " there"}), Value::Null),
        chunk(json!({"content": "!"}), Value::Null),
        chunk(json!({}), json!("stop")),
    ];
    Mock::given(method("POST"))
        .respond_with(sse(&chunks))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let items: Vec<_> = llm
        .stream_chat(&[ChatMessage::user("Hi")])
        .await
        .unwrap()
        .collect()
        .await;
    let deltas: String = items
        .iter()
        .map(|i| i.as_ref().unwrap().delta.clone().unwrap())
        .collect();
    assert_eq!(deltas, "Hello there!");
    assert_eq!(
        items.last().unwrap().as_ref().unwrap().message.content,
        "Hello there!"
    );

    // stream_complete on a chat model goes through the same endpoint.
    let texts: Vec<String> = llm
        .stream_complete("Hi", false)
        .await
        .unwrap()
        .map(|r| r.unwrap().text)
        .collect()
        .await;
    assert_eq!(texts.last().unwrap(), "Hello there!");
}

#[tokio::test]
async fn lenient_reply_is_accepted_by_openai_like() {
    let server = MockServer::start().await;
    // llama.cpp style: no id, no created, no usage, empty finish_reason, extra fields.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": ""}],
            "object": "chat.completion",
            "timings": {"predicted_n": 1}
        })))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let reply = llm.chat(&[ChatMessage::user("ok?")]).await.unwrap();
    assert_eq!(reply.message.content, "fine");
    assert!(reply.usage.is_none());
}

#[tokio::test]
async fn completion_model_uses_the_completions_endpoint() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "cmpl-uqkvlQyYK7bGYrRHQ0eXlWi7",
            "object": "text_completion",
            "created": 1589478378,
            "model": "gpt-3.5-turbo-instruct",
            "system_fingerprint": "fp_44709d6fcb",
            "choices": [{"text": " Paris.", "index": 0, "logprobs": null, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        })))
        .mount(&server)
        .await;
    let llm = OpenAILike::builder("base-model")
        .api_base(format!("{}/v1", server.uri()))
        .completion_to_prompt(|p| format!("Q: {p}\nA:"))
        .build()
        .unwrap();
    assert!(!llm.metadata().is_chat_model);
    let reply = llm.complete("Capital of France?", false).await.unwrap();
    assert_eq!(reply.text, " Paris.");
    // chat on a completion model renders the messages as one prompt.
    llm.chat(&[ChatMessage::user("Capital of France?")])
        .await
        .unwrap();
    let sent = bodies(&server).await;
    assert_eq!(sent[0]["prompt"], "Q: Capital of France?\nA:");
    assert_eq!(sent[1]["prompt"], "user: Capital of France?\nassistant: ");
    assert!(
        sent[0].get("max_tokens").is_none(),
        "no tokenizer, no inferred max_tokens"
    );

    // With a tokenizer, /completions asks for what the window leaves.
    let tokenizer = ragloom_core::default_tokenizer();
    let llm = OpenAILike::builder("base-model")
        .api_base(format!("{}/v1", server.uri()))
        .context_window(50)
        .tokenizer(tokenizer.clone())
        .build()
        .unwrap();
    llm.complete("Capital of France?", true).await.unwrap();
    let sent = bodies(&server).await;
    let expected = 50 - tokenizer.count("Capital of France?");
    assert_eq!(sent[2]["max_tokens"], json!(expected));
    let err = llm.complete(&"word ".repeat(60), true).await.unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    assert_eq!(
        bodies(&server).await.len(),
        3,
        "a prompt too long is refused before sending"
    );
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// A city and the country it is in.
struct City {
    city: String,
    country: String,
}

#[tokio::test]
async fn structured_output_uses_response_format_json_schema() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("{\"city\": \"Paris\", \"country\": \"France\"}"),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = like(&server)
        .should_use_structured_outputs(true)
        .build()
        .unwrap();
    let city: City = llm.structured_predict("Name a city.").await.unwrap();
    assert_eq!(
        (city.city.as_str(), city.country.as_str()),
        ("Paris", "France")
    );
    let sent = &bodies(&server).await[0];
    let format = &sent["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "City");
    assert_eq!(format["json_schema"]["strict"], json!(true));
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["city", "country"])
    );
    assert_eq!(
        format["json_schema"]["schema"]["additionalProperties"],
        json!(false)
    );
}

#[tokio::test]
async fn structured_output_falls_back_to_a_forced_tool_call() {
    let server = MockServer::start().await;
    let calls = json!([{"id": "call_1", "type": "function",
        "function": {"name": "City", "arguments": "{\"city\": \"Lyon\", \"country\": \"France\"}"}}]);
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            Value::Null,
            Some(calls),
            "tool_calls",
        )))
        .mount(&server)
        .await;
    // gpt-3.5-turbo calls tools but does not take JSON schemas.
    let llm = openai(&server, "gpt-3.5-turbo");
    let city: City = llm.structured_predict("Name a city.").await.unwrap();
    assert_eq!(city.city, "Lyon");
    let sent = &bodies(&server).await[0];
    assert_eq!(sent["tool_choice"], "required");
    assert_eq!(sent["tools"][0]["function"]["name"], "City");
    assert!(sent.get("response_format").is_none());
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(
                    json!({"error": {"message": "Rate limit reached for requests",
                    "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
                ),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("ok"),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let started = Instant::now();
    let reply = llm.chat(&[ChatMessage::user("hi")]).await.unwrap();
    assert_eq!(reply.message.content, "ok");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    // The backoff is 10 ms here, so a wait of at least a second can only
    // come from the Retry-After header (a lower bound: never flaky).
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn exhausted_quota_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).set_body_json(json!({"error": {
            "message": "You exceeded your current quota", "type": "insufficient_quota",
            "param": null, "code": "insufficient_quota"}})))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    assert!(err.to_string().contains("quota"), "{err}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_until_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("recovered"),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let reply = llm.chat(&[ChatMessage::user("hi")]).await.unwrap();
    assert_eq!(reply.message.content, "recovered");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn server_errors_beyond_max_retries_fail_with_the_status() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let llm = like(&server).retry_policy(fast_retries(2)).build().unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("503") && text.contains("overloaded"),
        "{text}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn slow_server_times_out_after_retrying() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(json!("too late"), None, "stop"))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let llm = like(&server)
        .timeout(Duration::from_millis(300))
        .retry_policy(fast_retries(1))
        .build()
        .unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, Error::Provider { ref provider, .. } if provider == "openai"),
        "{err:?}"
    );
    assert!(
        text.contains("timed out") && text.contains("300ms"),
        "{text}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn unauthorized_is_a_provider_error_that_never_shows_the_key() {
    let server = MockServer::start().await;
    // A server that echoes the key back in its message, the worst case.
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})))
        .mount(&server)
        .await;
    let llm = like(&server).build().unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    let Error::Provider {
        provider,
        message,
        source,
    } = &err
    else {
        panic!("expected a provider error, got {err:?}");
    };
    assert_eq!(provider, "openai");
    assert!(
        message.contains("401") && message.contains("Incorrect API key"),
        "{message}"
    );
    assert!(source.is_some(), "the SDK's error is kept as the source");
    for shown in [
        err.to_string(),
        format!("{err:?}"),
        format!("{}", source.as_ref().unwrap()),
    ] {
        assert!(!shown.contains(KEY), "key leaked: {shown}");
    }
    // 401 is not retried.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    assert!(!format!("{llm:?}").contains(KEY));
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // Bind and drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let llm = OpenAILike::builder("m")
        .api_base(format!("http://127.0.0.1:{port}/v1"))
        .is_chat_model(true)
        .retry_policy(fast_retries(2))
        .build()
        .unwrap();
    let err = llm.chat(&[ChatMessage::user("hi")]).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("could not connect") && text.contains(&port.to_string()),
        "{text}"
    );
}

#[tokio::test]
async fn openai_metadata_comes_from_the_model_table() {
    let server = MockServer::start().await;
    let llm = openai(&server, "gpt-4o-mini");
    let md = llm.metadata();
    assert_eq!(md.context_window, 128000);
    assert!(md.is_chat_model && md.is_function_calling_model);
    assert_eq!(md.num_output, -1);
    let o1 = OpenAI::builder()
        .model("o3-mini")
        .api_key(KEY)
        .max_tokens(10)
        .build()
        .unwrap();
    assert_eq!(o1.metadata().system_role, ragloom_core::MessageRole::User);
    let err = OpenAI::builder()
        .model("my-new-model")
        .api_key(KEY)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("Unknown model"), "{err}");
    let newer = OpenAI::builder()
        .model("gpt-9")
        .context_window(500_000)
        .api_key(KEY)
        .build()
        .unwrap();
    assert!(newer.metadata().is_chat_model);
    let err = OpenAI::builder()
        .model("gpt-4o")
        .api_key(KEY)
        .temperature(3.0)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("temperature"), "{err}");
}

#[test]
fn openai_without_any_key_is_refused() {
    let env_key = ["OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if env_key {
        eprintln!("skipped: OPENAI_API_KEY or a base URL is set in this environment");
        return;
    }
    let err = OpenAI::builder().model("gpt-4o").build().unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    // A compatible server needs none.
    assert!(OpenAILike::builder("m").build().is_ok());
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens_and_developer_role() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(
            json!("ok"),
            None,
            "stop",
        )))
        .mount(&server)
        .await;
    let llm = OpenAI::builder()
        .model("o3-mini")
        .api_base(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .max_tokens(50)
        .temperature(0.2)
        .build()
        .unwrap();
    llm.chat(&[ChatMessage::system("rules"), ChatMessage::user("hi")])
        .await
        .unwrap();
    let sent = &bodies(&server).await[0];
    assert_eq!(sent["max_completion_tokens"], json!(50));
    assert!(sent.get("max_tokens").is_none());
    assert_eq!(sent["temperature"], json!(1.0));
    assert_eq!(sent["messages"][0]["role"], "developer");
}
