//! An agent with two services' tools: it reads the week's events from
//! Google Calendar and posts a summary to a Slack channel.
//!
//! ```sh
//! cargo run -p ragloom-examples --features tools-google,tools-slack --example calendar_to_slack
//! ```
//!
//! Offline (as here) both services are local replay servers answering with
//! their reply shapes and the model is a `MockLlm` playing a good model's
//! calls. For real services: `OAuthCredentials::from_authorized_user_file`
//! for Calendar (scope `CALENDAR_SCOPES`), `SlackClient::from_env()` (a bot
//! token in `SLACK_BOT_TOKEN`, scopes `channels:read`, `chat:write`), and
//! drop `.with_endpoint(..)` / `.with_base_url(..)`.

use ragloom::agent::legacy::FunctionCallingAgent;
use ragloom::chat_engine::ChatEngine;
use ragloom::llms::{ChatMessage, Llm, MockLlm, ToolCall};
use ragloom::replay::{ReplayReply, ReplayServer};
use ragloom::tools::ToolSpec;
use ragloom::tools_google::{GoogleCalendarToolSpec, OAuthCredentials};
use ragloom::tools_slack::{SlackClient, SlackReader, SlackToolSpec};
use serde_json::{Value, json};
use std::sync::Arc;

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let (calendar_api, slack_api, llm) = offline().await;

    let calendar = GoogleCalendarToolSpec::new(OAuthCredentials::bearer("ya29.offline"))
        .with_endpoint(&calendar_api.uri());
    let slack = SlackClient::new(OAuthCredentials::bearer("xoxb-offline"))
        .with_base_url(&format!("{}/api/", slack_api.uri()));
    let slack = SlackToolSpec::new(SlackReader::builder(slack).build().await?);
    let tools = [calendar.to_tool_list(), slack.to_tool_list()].concat();
    let agent = FunctionCallingAgent::from_tools(tools, llm)?;
    let ask = "Post this week's events to #general.";
    println!("> {ask}\n{}", agent.chat(ask).await?.response);

    for request in slack_api.seen().await {
        println!("Slack got {} {}", request.method, request.path);
    }
    Ok(())
}

/// Replay servers for Calendar and Slack, and a model that calls the tools
/// as a good model would.
async fn offline() -> (ReplayServer, ReplayServer, Arc<dyn Llm>) {
    let calendar = ReplayServer::start().await;
    let event = |summary: &str, start: &str, end: &str| -> Value {
        json!({"status": "confirmed", "summary": summary, "start": {"dateTime": start},
            "end": {"dateTime": end}, "organizer": {"email": "team@example.com", "displayName": "Team"}})
    };
    calendar.push([ReplayReply::new(
        200,
        json!({"items": [
            event("Standup", "2026-12-08T09:00:00Z", "2026-12-08T09:15:00Z"),
            event("Planning", "2026-12-09T15:00:00Z", "2026-12-09T16:30:00Z"),
        ]}),
    )]);
    let slack = ReplayServer::start().await;
    slack.push([
        ReplayReply::new(200, json!({"ok": true})),
        ReplayReply::new(
            200,
            json!({"ok": true, "channels": [
            {"id": "C012AB3CD", "name": "general"}, {"id": "C061EG9T2", "name": "random"}],
            "response_metadata": {"next_cursor": ""}}),
        ),
        ReplayReply::new(
            200,
            json!({"ok": true, "channel": "C012AB3CD", "ts": "1765100000.000200"}),
        ),
    ]);
    let call = |n: &str, tool: &str, args: Value| {
        ChatMessage::assistant_with_tool_calls("", vec![ToolCall::new(n, tool, args)])
    };
    let summary = "This week: Standup (Tue 09:00 UTC), Planning (Wed 15:00–16:30 UTC).";
    let llm = MockLlm::scripted([
        call(
            "c1",
            "load_data",
            json!({"number_of_results": 10, "start_date": "2026-12-07"}),
        ),
        call("c2", "fetch_channels", json!({})),
        call(
            "c3",
            "send_message",
            json!({"channel_id": "C012AB3CD", "message": summary}),
        ),
        ChatMessage::assistant(format!("Posted to #general: {summary}")),
    ])
    .function_calling(true);
    (calendar, slack, Arc::new(llm))
}
