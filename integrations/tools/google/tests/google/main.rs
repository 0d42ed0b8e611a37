//! Gmail and Google Calendar tools against runs of LlamaIndex's
//! `llama-index-tools-google` recorded on a local server
//! (tests/data/record_google_slack.py): the same replies are replayed here,
//! and every request must equal the one Python sent (verb, path, query,
//! token, body; the documented differences named) and validate against
//! Google's discovery documents as `google-api-python-client` ships them.

#![allow(clippy::unwrap_used)]
mod discovery;

use base64::Engine;
use ragloom_common_oauth::{OAuthCredentials, ReplayReply, ReplayServer, SeenRequest};
use ragloom_core::tools::{Tool, ToolOutput, ToolSpec};
use ragloom_tools_google::{GmailToolSpec, GoogleCalendarToolSpec, NO_DRAFT_ID};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

const SECRETS: [&str; 4] = [
    "client-secret-xyz",
    "1//refresh-token",
    "ya29.expired-access",
    "ya29.fresh-access",
];

fn recorded() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("../data/llama_index_google.json")).unwrap()
    })
}

fn case(name: &str) -> &'static Value {
    &recorded()["cases"][name]
}

fn credentials(server: &ReplayServer) -> OAuthCredentials {
    OAuthCredentials::refreshable(
        "client-123.apps.googleusercontent.com",
        Some("client-secret-xyz".into()),
        "1//refresh-token",
        &format!("{}/token", server.uri()),
    )
    .unwrap()
    .with_access_token("ya29.expired-access", None)
    .with_scopes(["https://www.googleapis.com/auth/gmail.compose"])
}

fn replies(case: &Value) -> Vec<ReplayReply> {
    case["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(ReplayReply::from_recorded)
        .collect()
}

async fn server_for(name: &str) -> ReplayServer {
    let server = ReplayServer::start().await;
    server.push(replies(case(name)));
    server
}

fn tool(spec: &impl ToolSpec, name: &str) -> Arc<dyn Tool> {
    spec.to_tool_list()
        .into_iter()
        .find(|t| t.metadata().name == name)
        .unwrap()
}

/// The documented difference: ragloom keeps the offset the model gave and
/// writes RFC 3339 (as the discovery document asks); LlamaIndex converts to
/// the machine's zone and writes `+0000`. The instants must agree.
fn same_instants(mut a: Value, mut b: Value) -> (Value, Value) {
    for side in ["start", "end"] {
        let (Some(x), Some(y)) = (
            a.pointer(&format!("/{side}/dateTime"))
                .and_then(Value::as_str),
            b.pointer(&format!("/{side}/dateTime"))
                .and_then(Value::as_str),
        ) else {
            continue;
        };
        let x = chrono::DateTime::parse_from_rfc3339(x).unwrap();
        let y = chrono::DateTime::parse_from_str(y, "%Y-%m-%dT%H:%M:%S%.f%z").unwrap();
        assert_eq!(x, y, "{side} instants differ");
        a[side]["dateTime"] = json!("same instant");
        b[side]["dateTime"] = json!("same instant");
    }
    (a, b)
}

/// Every request equal to Python's, and each API request valid by the discovery documents.
async fn compare_requests(name: &str, server: &ReplayServer) {
    let got = server.seen().await;
    let want: Vec<SeenRequest> = case(name)["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(SeenRequest::from_recorded)
        .collect();
    assert_eq!(got.len(), want.len(), "{name}: {got:#?}");
    for (i, (mut g, mut w)) in got.into_iter().zip(want).enumerate() {
        if let (Some(a), Some(b)) = (g.json.take(), w.json.take()) {
            let (a, b) = same_instants(a, b);
            if let (Some(x), Some(y)) = (a.pointer("/message/raw"), b.pointer("/message/raw")) {
                let mail = |v: &Value| {
                    String::from_utf8(
                        base64::engine::general_purpose::URL_SAFE
                            .decode(v.as_str().unwrap())
                            .unwrap(),
                    )
                    .unwrap()
                };
                assert_eq!(mail(x), mail(y), "{name} request {i}: the mail differs");
            }
            assert_eq!(a, b, "{name} request {i}: the body differs");
        }
        assert_eq!(g, w, "{name} request {i}");
    }
    assert_eq!(server.left(), 0, "{name}: replies left unused");
    validate(server).await;
}

/// Checks every request to an API (not the token endpoint) against the
/// discovery document of its API.
async fn validate(server: &ReplayServer) {
    let Some(dir) = ragloom_core::testing::ci_var("RAGLOOM_TEST_GOOGLE_DISCOVERY_DIR") else {
        return;
    };
    let load = |file: &str| -> Value {
        serde_json::from_slice(&std::fs::read(PathBuf::from(&dir).join(file)).unwrap()).unwrap()
    };
    static DOCS: OnceLock<(Value, Value)> = OnceLock::new();
    let (gmail, calendar) = DOCS.get_or_init(|| (load("gmail.v1.json"), load("calendar.v3.json")));
    for seen in server.seen().await {
        if seen.path == "/token" {
            continue;
        }
        let path = seen.path.trim_start_matches('/');
        let doc = if path.starts_with("gmail/") {
            gmail
        } else {
            calendar
        };
        let sent = discovery::Sent {
            method: &seen.method,
            path,
            query: &seen.query,
            body: seen.json.as_ref(),
        };
        if let Err(e) = discovery::check(doc, &sent) {
            panic!("{} {}: {e}", seen.method, seen.path);
        }
    }
}

fn assert_output(output: &ToolOutput, want: &Value) {
    if want.get("exception").is_some() {
        assert!(
            output.is_error,
            "Python raised {want}; we answered {}",
            output.content
        );
        return;
    }
    assert_eq!(
        output.content,
        want["content"].as_str().unwrap(),
        "{}",
        want["tool"]
    );
    assert!(!output.is_error);
    for secret in SECRETS {
        assert!(!output.content.contains(secret));
    }
}

fn gmail(server: &ReplayServer) -> GmailToolSpec {
    GmailToolSpec::new(credentials(server)).with_endpoint(&server.uri())
}

fn calendar(server: &ReplayServer) -> GoogleCalendarToolSpec {
    GoogleCalendarToolSpec::new(credentials(server)).with_endpoint(&server.uri())
}

/// Runs each recorded tool call of `name` and compares outputs and requests.
async fn replay_calls(name: &str, spec: &impl ToolSpec, server: &ReplayServer) {
    for want in case(name)["outputs"].as_array().unwrap() {
        let input = want.get("input").cloned().unwrap_or_else(|| json!({}));
        let tool_name = want["tool"].as_str().unwrap_or("create_event");
        let output = tool(spec, tool_name).call(input).await.unwrap();
        assert_output(&output, want);
    }
    compare_requests(name, server).await;
}

#[tokio::test]
async fn the_tools_are_named_described_and_typed_as_llama_index_s() {
    let server = ReplayServer::start().await;
    for (group, tools) in [
        ("gmail", gmail(&server).to_tool_list()),
        ("calendar", calendar(&server).to_tool_list()),
    ] {
        let want = recorded()["tools"][group].as_object().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.metadata().name.as_str()).collect();
        assert_eq!(names, want.keys().map(String::as_str).collect::<Vec<_>>());
        for t in &tools {
            let m = t.metadata();
            assert_eq!(
                m.description, want[&m.name]["description"],
                "{group}/{}",
                m.name
            );
            assert_eq!(
                m.fn_schema, want[&m.name]["fn_schema"],
                "{group}/{}",
                m.name
            );
        }
    }
}

#[tokio::test]
async fn the_gmail_walkthrough_creates_updates_shows_and_sends_a_draft_after_a_refresh() {
    let server = server_for("gmail_walkthrough").await;
    replay_calls("gmail_walkthrough", &gmail(&server), &server).await;
}

#[tokio::test]
async fn update_draft_keeps_the_recipients_and_subject_it_is_given() {
    let server = server_for("gmail_update_keeps_headers_given").await;
    replay_calls("gmail_update_keeps_headers_given", &gmail(&server), &server).await;
}

#[tokio::test]
async fn update_draft_without_an_id_says_so_without_a_request() {
    let server = server_for("gmail_update_without_id").await;
    let out = tool(&gmail(&server), "update_draft")
        .call(json!({"message": "x"}))
        .await
        .unwrap();
    assert_eq!(out.content, NO_DRAFT_ID);
    replay_calls("gmail_update_without_id", &gmail(&server), &server).await;
}

#[tokio::test]
async fn search_messages_reads_each_message_raw_as_llama_index_does() {
    let server = server_for("gmail_search").await;
    let docs = gmail(&server)
        .search_messages("from:alice OR from:bob", Some(2))
        .await
        .unwrap();
    let want = case("gmail_search")["outputs"][0].as_array().unwrap();
    assert_eq!(docs.len(), want.len());
    for (d, w) in docs.iter().zip(want) {
        assert_eq!(d.text, w["text"].as_str().unwrap());
        assert_eq!(
            Value::Object(d.metadata.clone().into_iter().collect()),
            w["metadata"]
        );
    }
    compare_requests("gmail_search", &server).await;
}

#[tokio::test]
async fn load_data_on_an_empty_mailbox_is_empty() {
    let server = server_for("gmail_load_data_empty").await;
    assert!(gmail(&server).load_data().await.unwrap().is_empty());
    compare_requests("gmail_load_data_empty", &server).await;
}

#[tokio::test]
async fn calendar_events_read_as_llama_index_s_after_a_refresh() {
    let server = server_for("calendar_load_data").await;
    replay_calls("calendar_load_data", &calendar(&server), &server).await;
}

#[tokio::test]
async fn create_event_sends_llama_index_s_event_in_rfc_3339() {
    let server = server_for("calendar_create_event").await;
    replay_calls("calendar_create_event", &calendar(&server), &server).await;
}

#[tokio::test]
async fn a_time_without_its_offset_is_refused_before_any_request() {
    let server = server_for("calendar_create_event_no_offset").await;
    let want = &case("calendar_create_event_no_offset")["outputs"][0];
    assert!(
        want["text"]
            .as_str()
            .unwrap()
            .contains("does not match format")
    );
    let out = tool(&calendar(&server), "create_event")
        .call(json!({"title": "Planning", "start_datetime": "2026-12-09T10:00:00", "end_datetime": "2026-12-09T11:00:00"}))
        .await
        .unwrap();
    assert!(
        out.is_error && out.content.contains("zone offset"),
        "{}",
        out.content
    );
    assert!(server.requests().await.is_empty());
}

#[tokio::test]
async fn get_date_is_today() {
    let server = ReplayServer::start().await;
    let out = tool(&calendar(&server), "get_date")
        .call(json!({}))
        .await
        .unwrap();
    assert_eq!(out.content, chrono::Local::now().date_naive().to_string());
}

// ---- Beyond LlamaIndex: pagination, rate limits, refusals, hostile input.

#[tokio::test]
async fn a_search_follows_pages_until_it_has_what_was_asked() {
    let server = ReplayServer::start().await;
    let raw = base64::engine::general_purpose::URL_SAFE.encode("Subject: a\r\n\r\nhello\r\n");
    server.push([
        ReplayReply::new(
            200,
            json!({"messages": [{"id": "a1", "threadId": "a1"}], "nextPageToken": "p2"}),
        ),
        ReplayReply::new(
            200,
            json!({"messages": [{"id": "b2", "threadId": "b2"}], "nextPageToken": "p3"}),
        ),
        ReplayReply::new(
            200,
            json!({"id": "a1", "threadId": "a1", "snippet": "hello", "raw": raw}),
        ),
        ReplayReply::new(
            200,
            json!({"id": "b2", "threadId": "b2", "snippet": "hello", "raw": raw}),
        ),
    ]);
    let docs = gmail(&server).search_messages("", Some(2)).await.unwrap();
    assert_eq!(docs.len(), 2);
    let requests = server.seen().await;
    let q = |i: usize| requests[i].query.clone();
    assert_eq!(
        q(0),
        vec![
            ("maxResults".into(), "2".into()),
            ("alt".into(), "json".into())
        ]
    );
    assert_eq!(
        q(1),
        vec![
            ("maxResults".into(), "1".into()),
            ("pageToken".into(), "p2".into()),
            ("alt".into(), "json".into())
        ]
    );
    validate(&server).await;
}

#[tokio::test]
async fn calendar_pages_are_followed_and_capped() {
    let server = ReplayServer::start().await;
    let event = |id: &str| json!({"id": id, "status": "confirmed", "summary": id, "start": {"date": "2026-12-08"}, "end": {"date": "2026-12-09"}});
    server.push([
        ReplayReply::new(
            200,
            json!({"items": [event("e1"), event("e2")], "nextPageToken": "n2"}),
        ),
        ReplayReply::new(
            200,
            json!({"items": [event("e3"), event("e4")], "nextPageToken": "n3"}),
        ),
    ]);
    let docs = calendar(&server)
        .load_data(Some(3), Some("2026-12-07"))
        .await
        .unwrap();
    assert_eq!(docs.len(), 3);
    assert!(docs[2].text.contains("Summary: e3"));
    let requests = server.seen().await;
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1]
            .query
            .contains(&("pageToken".into(), "n2".into()))
    );
    assert!(
        requests[1]
            .query
            .contains(&("maxResults".into(), "1".into()))
    );
    validate(&server).await;
}

#[tokio::test]
async fn a_429_is_waited_out_and_a_long_retry_after_is_an_error() {
    let server = ReplayServer::start().await;
    let draft = json!({"id": "r-1", "message": {"id": "m1"}});
    server.push([
        ReplayReply::new(
            429,
            json!({"error": {"code": 429, "message": "Too many requests"}}),
        )
        .header("Retry-After", "1"),
        ReplayReply::new(200, draft.clone()),
    ]);
    let spec = gmail(&server);
    assert_eq!(spec.get_draft("r-1").await.unwrap(), draft);
    assert_eq!(server.requests().await.len(), 2);

    server.push([
        ReplayReply::new(429, json!({"error": {"code": 429, "message": "Quota"}}))
            .header("Retry-After", "3600"),
    ]);
    let out = tool(&spec, "get_draft")
        .call(json!({"draft_id": "r-1"}))
        .await
        .unwrap();
    assert!(
        out.is_error && out.content.contains("rate limited"),
        "{}",
        out.content
    );
    assert_eq!(
        server.requests().await.len(),
        3,
        "no second try after a refusal to wait"
    );
}

#[tokio::test]
async fn a_refused_refresh_token_is_an_error_the_model_reads_without_secrets() {
    let server = ReplayServer::start().await;
    server.push([
        ReplayReply::new(401, json!({"error": {"code": 401, "message": "Invalid Credentials"}})),
        ReplayReply::new(400, json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."})),
    ]);
    let out = tool(&gmail(&server), "get_draft")
        .call(json!({"draft_id": "r-1"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("invalid_grant") && out.content.contains("expired or revoked"),
        "{}",
        out.content
    );
    for secret in SECRETS {
        assert!(!out.content.contains(secret), "{}", out.content);
    }
    let debug = format!("{:?}", gmail(&server));
    for secret in SECRETS {
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[tokio::test]
async fn a_refreshed_token_is_written_back_for_the_owner_only() {
    let server = server_for("calendar_load_data").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token.json");
    let spec = calendar(&server).map_client(|c| c.persist_to(&path));
    spec.load_data(Some(3), Some("2026-12-07")).await.unwrap();
    let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(saved["token"], "ya29.fresh-access");
    assert_eq!(saved["refresh_token"], "1//refresh-token");
    assert!(saved["expiry"].as_str().unwrap().ends_with('Z'));
    let again = OAuthCredentials::from_authorized_user_file(&path).unwrap();
    assert!(again.can_refresh());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

#[tokio::test]
async fn hostile_ids_and_arguments_never_reach_the_api() {
    let server = ReplayServer::start().await;
    let spec = gmail(&server);
    for input in [
        json!({"draft_id": "../../messages/x"}),
        json!({"draft_id": "r-1?alt=media"}),
        json!({"draft_id": "r-1/send"}),
        json!({"draft_id": ""}),
        json!({"draft_id": 12}),
        json!({}),
    ] {
        for name in ["get_draft", "send_draft"] {
            let out = tool(&spec, name).call(input.clone()).await.unwrap();
            assert!(out.is_error, "{name} {input}: {}", out.content);
        }
    }
    for input in [
        json!({"to": ["a@example.com"], "subject": "Hi\r\nBcc: all@example.com", "message": "x"}),
        json!({"to": ["a@example.com\nBcc: all@example.com"], "subject": "Hi", "message": "x"}),
        json!({"to": "a@example.com", "subject": "Hi"}),
        json!({"to": [1, 2], "message": "x"}),
    ] {
        let out = tool(&spec, "create_draft")
            .call(input.clone())
            .await
            .unwrap();
        assert!(out.is_error, "{input}: {}", out.content);
    }
    let out = tool(&spec, "search_messages")
        .call(json!({"query": "x", "max_results": -3}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(server.requests().await.is_empty());
}

#[tokio::test]
async fn broken_replies_are_errors_not_panics() {
    let server = ReplayServer::start().await;
    let spec = gmail(&server).map_client(|c| c.max_response_bytes(10_000));
    server.push([
        ReplayReply::new(
            404,
            json!({"error": {"code": 404, "message": "Requested entity was not found."}}),
        ),
        ReplayReply::new(200, json!({"padding": "x".repeat(20_000)})),
        ReplayReply::new(500, json!("not the error shape")),
        ReplayReply::new(200, json!({"messages": [{"id": "a1"}]})),
        ReplayReply::new(200, json!({"id": "a1", "raw": "%%% not base64 %%%"})),
        ReplayReply::new(200, json!({"messages": [{"id": "../x"}]})),
    ]);
    let err = spec.get_draft("r-1").await.unwrap_err().to_string();
    assert!(
        err.contains("404") && err.contains("Requested entity was not found."),
        "{err}"
    );
    let err = spec.get_draft("r-1").await.unwrap_err().to_string();
    assert!(err.contains("larger than 10000 bytes"), "{err}");
    assert!(
        spec.get_draft("r-1")
            .await
            .unwrap_err()
            .to_string()
            .contains("500")
    );
    assert!(
        spec.search_messages("x", Some(1))
            .await
            .unwrap_err()
            .to_string()
            .contains("base64url")
    );
    assert!(
        spec.search_messages("x", Some(1)).await.is_err(),
        "an id from the server is checked too"
    );
}

#[tokio::test]
async fn an_agent_runs_the_gmail_walkthrough_through_the_tools() {
    use ragloom_agent::FunctionAgent;
    use ragloom_core::llms::{ChatMessage, MockLlm, ToolCall};
    // The walkthrough's replies, without the 401: the token is fresh.
    let server = ReplayServer::start().await;
    server.push(replies(case("gmail_walkthrough")).into_iter().skip(2));
    let id = "r-5571190284436371421";
    let call = |n: &str, tool: &str, args: Value| {
        ChatMessage::assistant_with_tool_calls("", vec![ToolCall::new(n, tool, args)])
    };
    let llm = Arc::new(
        MockLlm::scripted([
            call("c1", "create_draft", json!({"to": ["adam@example.com"], "subject": "Meeting", "message": "Hi Adam, the meeting is at 2pm."})),
            call("c2", "update_draft", json!({"draft_id": id, "message": "Hi Adam, the meeting moved to 3pm."})),
            call("c3", "get_draft", json!({"draft_id": id})),
            call("c4", "send_draft", json!({"draft_id": id})),
            ChatMessage::assistant("Sent: the meeting moved to 3pm."),
        ])
        .function_calling(true),
    );
    let agent = FunctionAgent::builder(llm.clone())
        .tools(gmail(&server).to_tool_list())
        .build()
        .unwrap();
    let out = agent
        .run("Draft a mail to Adam about the 2pm meeting, move it to 3pm, show it, send it.")
        .await
        .unwrap();
    assert_eq!(out.response.content, "Sent: the meeting moved to 3pm.");
    // Python's answers reached the model, call by call.
    let outputs = case("gmail_walkthrough")["outputs"].as_array().unwrap();
    let last = llm.requests().last().unwrap().messages.clone();
    for (n, want) in ["c1", "c2", "c3", "c4"].iter().zip(outputs) {
        let got = last
            .iter()
            .find(|m| m.tool_call_id.as_deref() == Some(n))
            .unwrap();
        assert_eq!(got.content, want["content"].as_str().unwrap(), "{n}");
    }
    assert_eq!(server.left(), 0);
    assert_eq!(server.requests().await.len(), 5);
    validate(&server).await;
}

#[tokio::test]
async fn a_503_is_waited_out_only_for_a_request_that_can_be_repeated() {
    let server = ReplayServer::start().await;
    let spec = gmail(&server);
    let unavailable = || {
        ReplayReply::new(
            503,
            json!({"error": {"code": 503, "message": "Backend Error"}}),
        )
        .header("Retry-After", "0")
    };
    // A GET is sent again; a POST (the draft may have been sent) is not.
    server.push([
        unavailable(),
        ReplayReply::new(200, json!({"id": "r-1"})),
        unavailable(),
    ]);
    assert_eq!(spec.get_draft("r-1").await.unwrap()["id"], "r-1");
    let err = spec.send_draft("r-1").await.unwrap_err().to_string();
    assert!(err.contains("503"), "{err}");
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn a_listing_whose_pages_add_nothing_ends() {
    let server = ReplayServer::start().await;
    let page = ReplayReply::new(
        200,
        json!({"messages": [{"threadId": "no id"}], "nextPageToken": "again"}),
    );
    server.push(std::iter::repeat_n(page, 5));
    assert!(
        gmail(&server)
            .search_messages("x", Some(50))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(server.requests().await.len(), 1);
}

#[tokio::test]
async fn odd_token_replies_neither_panic_nor_leak() {
    let server = ReplayServer::start().await;
    let unauthorized = || {
        ReplayReply::new(
            401,
            json!({"error": {"code": 401, "message": "Invalid Credentials"}}),
        )
    };
    // An absurd lifetime: the token is kept, its expiry unknown.
    server.push([
        unauthorized(),
        ReplayReply::new(200, json!({"access_token": "ya29.fresh-access", "expires_in": 10_000_000_000_000u64, "token_type": "Bearer"})),
        ReplayReply::new(200, json!({"id": "r-1"})),
    ]);
    let dir = tempfile::tempdir().unwrap();
    // A token file that cannot be written does not fail the call.
    let spec =
        gmail(&server).map_client(|c| c.persist_to(dir.path().join("missing/dir/token.json")));
    assert_eq!(spec.get_draft("r-1").await.unwrap()["id"], "r-1");
    // A token reply of the wrong shape: its tokens stay out of the error, Debug included.
    server.push([
        unauthorized(),
        ReplayReply::new(200, json!({"access_token": "ya29.LEAKED", "refresh_token": "1//LEAKED", "expires_in": "soon", "token_type": 7})),
    ]);
    let err = gmail(&server).get_draft("r-1").await.unwrap_err();
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains("LEAKED"), "{shown}");
    }
}

#[tokio::test]
async fn an_empty_recipient_list_is_not_none() {
    let server = ReplayServer::start().await;
    let draft = json!({"id": "r-1", "message": {"id": "m1"}});
    server.push([
        ReplayReply::new(200, draft.clone()),
        ReplayReply::new(200, draft),
    ]);
    let spec = gmail(&server);
    spec.create_draft(None, Some("Hi".into()), Some("x".into()))
        .await
        .unwrap();
    spec.create_draft(Some(vec![]), Some("Hi".into()), Some("x".into()))
        .await
        .unwrap();
    let mail = |i: usize, seen: &[SeenRequest]| {
        let raw = seen[i].json.as_ref().unwrap()["message"]["raw"]
            .as_str()
            .unwrap()
            .to_owned();
        String::from_utf8(
            base64::engine::general_purpose::URL_SAFE
                .decode(raw)
                .unwrap(),
        )
        .unwrap()
    };
    let seen = server.seen().await;
    assert!(
        mail(0, &seen).contains("\nTo: None\n"),
        "LlamaIndex's default, as Python writes it"
    );
    assert!(mail(1, &seen).contains("\nTo:\n"), "Python's []");
}
