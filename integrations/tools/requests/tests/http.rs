//! The request tools against an HTTP server on 127.0.0.1 started by each test.
#![allow(clippy::unwrap_used)]

use ragloom_core::tools::ToolSpec;
use ragloom_tools_requests::RequestsToolSpec;
use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn get_and_post_reach_the_base_url() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/items"))
        .and(query_param("q", "tea"))
        .and(header("x-api-key", "s3cret"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"items": ["green tea"]})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/orders"))
        .and(body_json(json!({"item": "green tea", "qty": 2})))
        .respond_with(ResponseTemplate::new(201).set_body_string("order 7 created"))
        .mount(&server)
        .await;

    let spec = RequestsToolSpec::new(&format!("{}/api", server.uri()))
        .unwrap()
        .header("x-api-key", "s3cret");
    assert!(
        !format!("{spec:?}").contains("s3cret"),
        "the key leaked into Debug"
    );
    let tools = spec.to_tool_list();
    assert_eq!(spec.spec_functions(), ["get_request", "post_request"]);

    let got = tools[0]
        .call(json!({"url": "items", "params": {"q": "tea"}}))
        .await
        .unwrap();
    assert!(!got.is_error, "{}", got.content);
    assert_eq!(got.raw_output, json!({"items": ["green tea"]}));
    assert_eq!(got.content, r#"{"items":["green tea"]}"#);

    // An absolute URL on the same origin is fine too.
    let posted = tools[1]
        .call(json!({"url": format!("{}/api/orders", server.uri()), "data": {"item": "green tea", "qty": 2}}))
        .await
        .unwrap();
    assert_eq!(posted.content, "order 7 created");
}

#[tokio::test]
async fn other_hosts_are_refused_without_a_request() {
    let server = MockServer::start().await;
    let spec = RequestsToolSpec::new(&server.uri()).unwrap();
    let out = spec.to_tool_list()[0]
        .call(json!({"url": "http://169.254.169.254/latest/meta-data"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("is not allowed"), "{}", out.content);
    assert!(server.received_requests().await.unwrap().is_empty());

    let other = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&other)
        .await;
    let spec = spec.allow_origin(&other.uri()).unwrap();
    let out = spec.to_tool_list()[0]
        .call(json!({"url": format!("{}/x", other.uri())}))
        .await
        .unwrap();
    assert_eq!(out.content, "ok");
}

#[tokio::test]
async fn http_errors_and_long_bodies_reach_the_model_clearly() {
    let server = MockServer::start().await;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_string("no such thing"))
        .mount(&server)
        .await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(10_000)))
        .mount(&server)
        .await;
    let spec = RequestsToolSpec::new(&server.uri())
        .unwrap()
        .max_response_chars(200);
    let tools = spec.to_tool_list();
    let out = tools[0].call(json!({"url": "/missing"})).await.unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("404") && out.content.contains("no such thing"),
        "{}",
        out.content
    );
    let out = tools[0].call(json!({"url": "big"})).await.unwrap();
    assert_eq!(out.content.chars().count(), 200);
    assert!(out.content.contains("truncated"));
    let out = tools[0].call(json!({"params": {}})).await.unwrap();
    assert!(out.is_error && out.content.contains("`url`"));
}
