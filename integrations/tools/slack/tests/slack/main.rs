//! Slack tools and reader against runs of LlamaIndex's
//! `llama-index-tools-slack` recorded on a local server (the Google crate's
//! tests/data/record_google_slack.py): the replies are replayed, every
//! request must equal the one `slack_sdk` sent, and each names a Web API
//! method and arguments that `slack_sdk/web/client.py` defines.

#![allow(clippy::unwrap_used)]
use chrono::{DateTime, Utc};
use ragloom_common_oauth::{OAuthCredentials, ReplayReply, ReplayServer, SeenRequest};
use ragloom_core::tools::{Tool, ToolSpec};
use ragloom_tools_slack::{SlackClient, SlackReader, SlackToolSpec};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

const TOKEN: &str = "xoxb-1111-2222-test";

fn recorded() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("../data/llama_index_slack.json")).unwrap()
    })
}

fn case(name: &str) -> &'static Value {
    &recorded()["cases"][name]
}

fn replies(name: &str) -> Vec<ReplayReply> {
    case(name)["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(ReplayReply::from_recorded)
        .collect()
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

fn client(server: &ReplayServer, credentials: OAuthCredentials) -> SlackClient {
    SlackClient::new(credentials).with_base_url(&format!("{}/api/", server.uri()))
}

/// A client whose access token `xoxe.xoxb-old` Slack will say expired, and
/// whose rotating refresh token renews it at the server's `oauth.v2.access`.
fn rotating_client(server: &ReplayServer) -> SlackClient {
    let creds = OAuthCredentials::refreshable(
        "1111.2222",
        Some("app-secret".into()),
        "xoxe-1-old-refresh",
        &format!("{}/api/oauth.v2.access", server.uri()),
    )
    .unwrap()
    .with_access_token("xoxe.xoxb-old", None);
    client(server, creds)
}

/// The reader as the recording made it: dates set, `api.test` checked.
async fn dated_spec(server: &ReplayServer) -> SlackToolSpec {
    server.push(replies("slack_construct"));
    let reader = SlackReader::builder(client(server, OAuthCredentials::bearer(TOKEN)))
        .earliest_date(at("2026-12-01T00:00:00Z"))
        .latest_date(at("2026-12-07T12:00:00Z"))
        .build()
        .await
        .unwrap();
    SlackToolSpec::new(reader)
}

fn tool(spec: &SlackToolSpec, name: &str) -> Arc<dyn Tool> {
    spec.to_tool_list()
        .into_iter()
        .find(|t| t.metadata().name == name)
        .unwrap()
}

/// The requests since `from` equal Python's for `name`, and each is a
/// method of `slack_sdk` with arguments it defines.
async fn compare(name: &str, server: &ReplayServer, from: usize) {
    let got = server.seen().await.split_off(from);
    let want: Vec<SeenRequest> = case(name)["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(SeenRequest::from_recorded)
        .collect();
    assert_eq!(got, want, "{name}");
    assert_eq!(server.left(), 0, "{name}: replies left");
    validate(&got);
}

/// Each request is `POST /api/<method>` of a method `slack_sdk` defines,
/// with only arguments its signature names.
fn validate(requests: &[SeenRequest]) {
    let Some(path) = ragloom_core::testing::ci_var("RAGLOOM_TEST_SLACK_SDK_CLIENT") else {
        return;
    };
    static SOURCE: OnceLock<String> = OnceLock::new();
    let source = SOURCE.get_or_init(|| std::fs::read_to_string(&path).unwrap());
    for r in requests {
        assert_eq!(r.method, "POST");
        let method = r.path.strip_prefix("/api/").unwrap();
        let params = sdk_parameters(source, method)
            .unwrap_or_else(|| panic!("slack_sdk defines no method {method}"));
        let keys: Vec<String> = match (&r.form, &r.json) {
            (Some(f), _) => f.iter().map(|(k, _)| k.clone()).collect(),
            (None, Some(Value::Object(m))) => m.keys().cloned().collect(),
            _ => Vec::new(),
        };
        for k in keys {
            assert!(
                params.contains(&k),
                "{method}: slack_sdk has no argument `{k}` ({params:?})"
            );
        }
    }
}

/// The keyword arguments of `def <method with _>(..)` whose body calls
/// `self.api_call("<method>"`.
fn sdk_parameters(source: &str, method: &str) -> Option<Vec<String>> {
    let def = format!("    def {}(", method.replace('.', "_"));
    let start = source.find(&def)?;
    let rest = &source[start + def.len()..];
    let end = rest.find("\n    def ").unwrap_or(rest.len());
    let body = &rest[..end];
    if !body.contains(&format!("self.api_call(\"{method}\""))
        && !body.contains(&format!("\"{method}\","))
    {
        return None;
    }
    let signature = &body[..body.find(") ->")?];
    Some(
        signature
            .lines()
            .filter_map(|l| {
                l.trim()
                    .split_once(':')
                    .map(|(name, _)| name.trim().to_owned())
            })
            .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect(),
    )
}

#[tokio::test]
async fn the_tools_are_named_described_and_typed_as_llama_index_s() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    let want = recorded()["tools"].as_object().unwrap();
    let tools = spec.to_tool_list();
    let names: Vec<&str> = tools.iter().map(|t| t.metadata().name.as_str()).collect();
    assert_eq!(names, want.keys().map(String::as_str).collect::<Vec<_>>());
    for t in &tools {
        let m = t.metadata();
        assert_eq!(m.description, want[&m.name]["description"], "{}", m.name);
        assert_eq!(m.fn_schema, want[&m.name]["fn_schema"], "{}", m.name);
    }
    compare("slack_construct", &server, 0).await;
}

#[tokio::test]
async fn send_message_posts_json_and_answers_none() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    server.push(replies("slack_send_message"));
    let want = &case("slack_send_message")["outputs"][0];
    let out = tool(&spec, "send_message")
        .call(want["input"].clone())
        .await
        .unwrap();
    assert_eq!(out.content, want["content"].as_str().unwrap());
    assert_eq!(out.raw_output["ts"], "1765100000.000200");
    compare("slack_send_message", &server, 1).await;
}

#[tokio::test]
async fn load_data_reads_threads_pages_and_waits_out_a_rate_limit() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    server.push(replies("slack_load_data"));
    let want = &case("slack_load_data")["outputs"][0];
    let out = tool(&spec, "load_data")
        .call(want["input"].clone())
        .await
        .unwrap();
    assert_eq!(out.content, want["content"].as_str().unwrap());
    let docs = out.raw_output.as_array().unwrap();
    assert_eq!(docs[0]["id_"], "C012AB3CD");
    assert_eq!(docs[1]["metadata"]["channel"], "C0PRIVATE");
    compare("slack_load_data", &server, 1).await;
}

#[tokio::test]
async fn fetch_channels_answers_slack_s_channels_as_python_prints_them() {
    let server = ReplayServer::start().await;
    server.push([ReplayReply::new(200, json!({"ok": true}))]);
    let reader = SlackReader::builder(client(&server, OAuthCredentials::bearer(TOKEN)))
        .build()
        .await
        .unwrap();
    let spec = SlackToolSpec::new(reader);
    server.push(replies("slack_fetch_channels"));
    let want = &case("slack_fetch_channels")["outputs"][0];
    let out = tool(&spec, "fetch_channels").call(json!({})).await.unwrap();
    assert_eq!(out.content, want["content"].as_str().unwrap());
    compare("slack_fetch_channels", &server, 1).await;
}

// ---- Beyond LlamaIndex: rotation, refusals, bounds.

#[tokio::test]
async fn a_rotating_token_is_renewed_when_slack_says_it_expired() {
    let server = ReplayServer::start().await;
    let slack = rotating_client(&server);
    server.push([
        ReplayReply::new(200, json!({"ok": false, "error": "token_expired"})),
        ReplayReply::new(200, json!({"ok": true, "access_token": "xoxe.xoxb-new", "token_type": "bot",
            "scope": "chat:write,channels:read", "expires_in": 43200, "refresh_token": "xoxe-1-new-refresh",
            "bot_user_id": "U0KRQLJ9H", "app_id": "A0KRD7HC3", "team": {"name": "Slack Pickers", "id": "T9TK3CUKW"}})),
        ReplayReply::new(200, json!({"ok": true})),
    ]);
    let reader = SlackReader::builder(slack.clone()).build().await.unwrap();
    let seen = server.seen().await;
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some("Bearer xoxe.xoxb-old")
    );
    assert_eq!(seen[1].path, "/api/oauth.v2.access");
    let form = seen[1].form.clone().unwrap();
    assert!(form.contains(&("grant_type".into(), "refresh_token".into())));
    assert!(form.contains(&("refresh_token".into(), "xoxe-1-old-refresh".into())));
    assert_eq!(
        seen[2].authorization.as_deref(),
        Some("Bearer xoxe.xoxb-new")
    );
    validate(&seen);
    // The rotated refresh token replaced the old one; nothing secret in Debug.
    let saved = reader
        .client()
        .credentials()
        .await
        .to_authorized_user_info();
    assert_eq!(saved["refresh_token"], "xoxe-1-new-refresh");
    let debug = format!("{reader:?}");
    for secret in ["xoxe.xoxb-new", "xoxe-1-new-refresh", "app-secret"] {
        assert!(!debug.contains(secret), "{debug}");
    }

    // A refused refresh token is Slack's error, read out.
    server.push([
        ReplayReply::new(200, json!({"ok": false, "error": "token_expired"})),
        ReplayReply::new(200, json!({"ok": false, "error": "invalid_refresh_token"})),
    ]);
    let err = slack
        .api_call("auth.test", &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid_refresh_token"), "{err}");
    assert!(!err.contains("app-secret"));
}

#[tokio::test]
async fn slack_s_refusals_reach_the_model() {
    let server = ReplayServer::start().await;
    server.push([ReplayReply::new(
        200,
        json!({"ok": false, "error": "invalid_auth"}),
    )]);
    let err = SlackReader::builder(client(&server, OAuthCredentials::bearer("xoxb-bad")))
        .build()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Error initializing Slack API: invalid_auth"),
        "{err}"
    );
    let err = SlackReader::builder(client(&server, OAuthCredentials::bearer(TOKEN)))
        .latest_date(at("2026-12-07T12:00:00Z"))
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("earliest_date"));

    let spec = dated_spec(&server).await;
    server.push([ReplayReply::new(
        200,
        json!({"ok": false, "error": "channel_not_found"}),
    )]);
    let out = tool(&spec, "send_message")
        .call(json!({"channel_id": "C404", "message": "hi"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(
        out.content
            .contains("The server responded with: {'ok': False, 'error': 'channel_not_found'}"),
        "{}",
        out.content
    );
    for bad in [
        json!({"channel_id": "C1"}),
        json!({"message": "x"}),
        json!({"channel_id": 5, "message": "x"}),
    ] {
        assert!(
            tool(&spec, "send_message")
                .call(bad)
                .await
                .unwrap()
                .is_error
        );
    }
    assert!(
        tool(&spec, "load_data")
            .call(json!({}))
            .await
            .unwrap()
            .is_error
    );
    // A rate limit that does not lift within the client's waits is an error.
    let limited = ReplayReply::new(429, json!({"ok": false, "error": "ratelimited"}))
        .header("Retry-After", "0");
    server.push(std::iter::repeat_n(limited, 4));
    let out = tool(&spec, "load_data")
        .call(json!({"channel_ids": ["C1"]}))
        .await
        .unwrap();
    assert!(
        out.is_error && out.content.contains("ratelimited"),
        "{}",
        out.content
    );
    assert_eq!(server.left(), 0);
}

#[tokio::test]
async fn endless_pages_stop_at_the_page_limit() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    let page = json!({"ok": true, "messages": [], "has_more": true, "response_metadata": {"next_cursor": "again"}});
    server.push(std::iter::repeat_n(ReplayReply::new(200, page), 1000));
    let docs = spec.load_data(&["C1".to_owned()], true).await.unwrap();
    assert_eq!(docs[0].text, "");
    assert_eq!(server.left(), 0);
    assert_eq!(server.requests().await.len(), 1001);
}

#[tokio::test]
async fn channel_ids_are_found_by_name_and_pattern() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    let channels = |names: &[(&str, &str)], cursor: &str| {
        let list: Vec<Value> = names
            .iter()
            .map(|(id, n)| json!({"id": id, "name": n}))
            .collect();
        ReplayReply::new(
            200,
            json!({"ok": true, "channels": list, "response_metadata": {"next_cursor": cursor}}),
        )
    };
    server.push([
        channels(&[("C1", "dev-backend"), ("C2", "general")], "page2"),
        channels(
            &[("C3", "qa"), ("C4", "dev-frontend"), ("C5", "random")],
            "",
        ),
    ]);
    let ids = spec_reader(&spec)
        .get_channel_ids(&["^dev.*".into(), "qa".into(), "(".into()])
        .await
        .unwrap();
    assert_eq!(ids, ["C1", "C3", "C4"]);
    let seen = server.seen().await;
    assert_eq!(
        seen[1].form.clone().unwrap(),
        [("types".into(), "public_channel,private_channel".into())]
    );
    assert!(
        seen[2]
            .form
            .clone()
            .unwrap()
            .contains(&("cursor".into(), "page2".into()))
    );
    assert!(spec_reader(&spec).get_channel_ids(&[]).await.is_err());
}

fn spec_reader(spec: &SlackToolSpec) -> &SlackReader {
    spec.reader()
}

#[tokio::test]
async fn a_refused_token_while_reading_is_an_error_not_an_empty_channel() {
    let server = ReplayServer::start().await;
    let spec = dated_spec(&server).await;
    server.push([ReplayReply::new(
        200,
        json!({"ok": false, "error": "missing_scope", "needed": "channels:history"}),
    )]);
    let out = tool(&spec, "load_data")
        .call(json!({"channel_ids": ["C1"]}))
        .await
        .unwrap();
    assert!(
        out.is_error && out.content.contains("missing_scope"),
        "{}",
        out.content
    );
    server.push([ReplayReply::new(
        200,
        json!({"ok": false, "error": "channel_not_found"}),
    )]);
    let out = tool(&spec, "load_data")
        .call(json!({"channel_ids": ["C404"], "reverse_chronological": "false"}))
        .await
        .unwrap();
    assert!(
        !out.is_error,
        "a missing channel reads empty, as in LlamaIndex: {}",
        out.content
    );
}

#[tokio::test]
async fn a_call_dropped_mid_refresh_still_keeps_the_rotated_token() {
    let server = ReplayServer::start().await;
    let slack = rotating_client(&server);
    server.push([
        ReplayReply::new(200, json!({"ok": false, "error": "token_expired"})),
        ReplayReply::new(
            200,
            json!({"ok": true, "access_token": "xoxe.xoxb-new", "token_type": "bot",
            "expires_in": 43200, "refresh_token": "xoxe-1-new-refresh"}),
        )
        .delayed(std::time::Duration::from_secs(2)),
    ]);
    // The caller gives up while Slack is issuing the new tokens.
    let call = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        slack.api_call("auth.test", &[]),
    );
    assert!(call.await.is_err(), "the call should have been cut");
    assert_eq!(
        server.requests().await.len(),
        2,
        "cut while the refresh was on its way"
    );
    // The refresh goes on without its caller.
    let mut saved = Value::Null;
    for _ in 0..200 {
        saved = slack.credentials().await.to_authorized_user_info();
        if saved["token"] == "xoxe.xoxb-new" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(saved["refresh_token"], "xoxe-1-new-refresh");
    assert_eq!(saved["token"], "xoxe.xoxb-new");
}
