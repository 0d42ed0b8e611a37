//! The request tools against an HTTP server on 127.0.0.1 started by each test.
#![allow(clippy::unwrap_used)]

use ragloom_core::tools::ToolSpec;
use ragloom_tools_requests::HostResolver;
use ragloom_tools_requests::RequestsToolSpec;
use serde_json::json;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
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
        .allow_internal_addresses(true)
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
    let spec = RequestsToolSpec::new(&server.uri())
        .unwrap()
        .allow_internal_addresses(true);
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
        .allow_internal_addresses(true)
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

/// A resolver answering from a table, recording every name it was asked.
#[derive(Debug, Default)]
struct StubResolver {
    table: HashMap<String, Vec<IpAddr>>,
    asked: Mutex<Vec<String>>,
}

impl StubResolver {
    fn new(entries: &[(&str, &[&str])]) -> Arc<Self> {
        Arc::new(Self {
            table: entries
                .iter()
                .map(|(h, ips)| {
                    (
                        h.to_string(),
                        ips.iter().map(|i| i.parse().unwrap()).collect(),
                    )
                })
                .collect(),
            asked: Mutex::default(),
        })
    }
}

impl HostResolver for StubResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
        self.asked.lock().unwrap().push(host.to_string());
        let found = self.table.get(host).cloned().unwrap_or_default();
        Box::pin(async move { Ok(found) })
    }
}

/// Internal addresses are refused before any connection: the names below all
/// lead to a server on 127.0.0.1 that must receive nothing. (No test sends a
/// packet outside 127.0.0.0/8.)
#[tokio::test]
async fn internal_addresses_are_refused_before_any_connection() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("reached"))
        .mount(&server)
        .await;
    let port = server.address().port();
    let resolver = StubResolver::new(&[
        ("rebound.test", &["127.0.0.1"]),
        ("metadata.test", &["169.254.169.254"]),
        ("lan.test", &["10.0.0.7", "::ffff:192.168.1.1"]),
        ("cgnat.test", &["100.64.1.1"]),
    ]);
    for host in ["rebound.test", "metadata.test", "lan.test", "cgnat.test"] {
        let spec = RequestsToolSpec::new(&format!("http://{host}:{port}/"))
            .unwrap()
            .resolver(resolver.clone());
        let out = spec.to_tool_list()[0]
            .call(json!({"url": "secrets"}))
            .await
            .unwrap();
        assert!(out.is_error, "{host}: {}", out.content);
        assert!(
            out.content.contains("internal address"),
            "{host}: {}",
            out.content
        );
    }
    assert_eq!(resolver.asked.lock().unwrap().len(), 4);

    // IP literals never reach the resolver: refused as they are.
    for literal in ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0"] {
        let spec = RequestsToolSpec::new(&format!("http://{literal}:{port}/"))
            .unwrap()
            .resolver(resolver.clone());
        let out = spec.to_tool_list()[0]
            .call(json!({"url": "x"}))
            .await
            .unwrap();
        assert!(
            out.is_error && out.content.contains("internal address"),
            "{literal}: {}",
            out.content
        );
    }
    assert_eq!(resolver.asked.lock().unwrap().len(), 4);
    assert!(server.received_requests().await.unwrap().is_empty());

    // Allowed explicitly, the same name reaches the server.
    let spec = RequestsToolSpec::new(&format!("http://rebound.test:{port}/"))
        .unwrap()
        .resolver(resolver.clone())
        .allow_internal_addresses(true);
    let out = spec.to_tool_list()[0]
        .call(json!({"url": "x"}))
        .await
        .unwrap();
    assert_eq!(out.content, "reached");
}

#[tokio::test]
async fn each_redirect_hop_is_checked_and_keys_stay_on_their_origin() {
    let first = MockServer::start().await;
    let second = MockServer::start().await;
    Mock::given(path("/go"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", format!("{}/landed", second.uri())),
        )
        .mount(&first)
        .await;
    Mock::given(path("/meta"))
        .respond_with(
            ResponseTemplate::new(301)
                .insert_header("location", "http://169.254.169.254/latest/meta-data"),
        )
        .mount(&first)
        .await;
    Mock::given(path("/landed"))
        .respond_with(ResponseTemplate::new(200).set_body_string("landed"))
        .mount(&second)
        .await;
    Mock::given(path("/loop"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", "/loop"))
        .mount(&first)
        .await;
    let spec = RequestsToolSpec::new(&first.uri())
        .unwrap()
        .allow_internal_addresses(true)
        .header("x-api-key", "s3cret");
    let get = |spec: &RequestsToolSpec, url: &str| {
        let tool = spec.to_tool_list().remove(0);
        let url = url.to_string();
        async move { tool.call(json!({ "url": url })).await.unwrap() }
    };

    // A hop to an origin that is not allowed is refused; nothing reaches it.
    let out = get(&spec, "go").await;
    assert!(
        out.is_error && out.content.contains("is not allowed"),
        "{}",
        out.content
    );
    assert!(second.received_requests().await.unwrap().is_empty());
    let out = get(&spec, "meta").await;
    assert!(
        out.is_error && out.content.contains("is not allowed"),
        "{}",
        out.content
    );

    // Allowed, it is followed, without the key.
    let spec = spec.allow_origin(&second.uri()).unwrap();
    let out = get(&spec, "go").await;
    assert_eq!(out.content, "landed");
    let landed = second.received_requests().await.unwrap();
    assert_eq!(landed.len(), 1);
    assert!(!landed[0].headers.contains_key("x-api-key"));
    let sent = first.received_requests().await.unwrap();
    assert!(sent.iter().all(|r| r.headers.contains_key("x-api-key")));

    // Redirect loops end at the limit; with 0 redirects none is followed.
    let out = get(&spec, "loop").await;
    assert!(
        out.is_error && out.content.contains("more than 5 redirects"),
        "{}",
        out.content
    );
    let out = get(&spec.clone().max_redirects(0), "go").await;
    assert!(
        out.is_error && out.content.contains("more than 0 redirects"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn bodies_are_read_up_to_the_byte_cap() {
    let server = MockServer::start().await;
    Mock::given(path("/huge"))
        .respond_with(ResponseTemplate::new(200).set_body_string("y".repeat(5_000_000)))
        .mount(&server)
        .await;
    let spec = RequestsToolSpec::new(&server.uri())
        .unwrap()
        .allow_internal_addresses(true)
        .max_response_bytes(4_096)
        .max_response_chars(100_000);
    let out = spec.to_tool_list()[0]
        .call(json!({"url": "huge"}))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.starts_with(&"y".repeat(4_096)));
    assert!(!out.content.contains(&"y".repeat(4_097)));
    assert!(
        out.content.ends_with("[response cut at 4096 bytes]"),
        "{}",
        &out.content[4_000..]
    );
}

#[tokio::test]
async fn any_method_goes_through_the_same_guards() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path("/api/items/7"))
        .and(query_param("dry", "true"))
        .and(body_json(json!({"name": "tea"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 7, "name": "tea"})))
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/api/items/7"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let spec = RequestsToolSpec::new(&format!("{}/api", server.uri()))
        .unwrap()
        .allow_internal_addresses(true);
    let put = spec
        .request(
            reqwest::Method::PUT,
            "items/7",
            &[("dry".into(), "true".into())],
            Some(&json!({"name": "tea"})),
        )
        .await
        .unwrap();
    assert_eq!(put, json!({"id": 7, "name": "tea"}));
    let deleted = spec
        .request(reqwest::Method::DELETE, "items/7", &[], None)
        .await
        .unwrap();
    assert_eq!(deleted, json!(""));
    let refused = spec
        .request(
            reqwest::Method::DELETE,
            "http://example.com/items/7",
            &[],
            None,
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("is not allowed"), "{refused}");
    let out = spec.tool_output("t", json!({}), Err(refused));
    assert!(out.is_error);
}
