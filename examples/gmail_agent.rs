//! LlamaIndex's data-agent walkthrough: a Gmail agent creates a draft,
//! updates it, shows it and sends it — the user code is `main`'s ten lines.
//!
//! ```sh
//! cargo run -p ragloom-examples --features tools-google --example gmail_agent
//! ```
//!
//! Offline (as here) Gmail is a local replay server answering with Gmail's
//! reply shapes and the model is a `MockLlm` playing a good model's tool
//! calls, so what you see is what the tools send and answer. For a real
//! mailbox, pass `OAuthCredentials::from_authorized_user_file("token.json")`
//! (the file Google's Python quickstart writes; scopes `GMAIL_SCOPES`) and
//! drop `.with_endpoint(..)`; for a real model, any `Llm` with function calling.

use ragloom::agent::legacy::FunctionCallingAgent;
use ragloom::chat_engine::ChatEngine;
use ragloom::llms::{ChatMessage, Llm, MockLlm, ToolCall};
use ragloom::replay::{ReplayReply, ReplayServer};
use ragloom::tools::ToolSpec;
use ragloom::tools_google::{GmailToolSpec, OAuthCredentials};
use serde_json::{Value, json};
use std::sync::Arc;

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let (gmail_api, credentials, llm) = offline().await?;

    let gmail = GmailToolSpec::new(credentials).with_endpoint(&gmail_api.uri());
    let agent = FunctionCallingAgent::from_tools(gmail.to_tool_list(), llm)?;
    for ask in [
        "Can you create a new email to helpdesk@example.com and support@example.com about a service outage",
        "Update the draft so that it's the same but from 'Adam'",
        "Display the draft",
        "Send the draft email",
    ] {
        println!("> {ask}\n{}\n", agent.chat(ask).await?.response);
    }

    println!(
        "Gmail received {} requests",
        gmail_api.requests().await.len()
    );
    Ok(())
}

/// A replay server with Gmail's replies, a token for it, and a model that
/// calls the tools as a good model would.
async fn offline() -> ragloom::Result<(ReplayServer, OAuthCredentials, Arc<dyn Llm>)> {
    let server = ReplayServer::start().await;
    let id = "r-5571190284436371421";
    let to = "helpdesk@example.com, support@example.com";
    let first = "Hello,\n\nWe are seeing a service outage since 9:00. Please look into it.\n";
    let second = format!("{first}\nAdam\n");
    let draft = json!({"id": id, "message": {"id": "19a0f1c2d3e4f5a6", "threadId": "19a0f1c2d3e4f5a6", "labelIds": ["DRAFT"]}});
    let full = |text: &str| -> Value {
        json!({"id": id, "message": {"id": "19a0f1c2d3e4f5a7", "threadId": "19a0f1c2d3e4f5a6",
            "labelIds": ["DRAFT"], "snippet": text.lines().next().unwrap_or_default(),
            "payload": {"mimeType": "text/plain", "headers": [
                {"name": "To", "value": to}, {"name": "Subject", "value": "Service outage"}],
                "body": {"size": text.len()}}}})
    };
    server.push([
        ReplayReply::new(200, draft.clone()),
        ReplayReply::new(200, full(first)),
        ReplayReply::new(200, draft.clone()),
        ReplayReply::new(200, full(&second)),
        ReplayReply::new(
            200,
            json!({"id": "19a0f1c2d3e4f5a8", "threadId": "19a0f1c2d3e4f5a6", "labelIds": ["SENT"]}),
        ),
    ]);
    let call = |n: &str, tool: &str, args: Value| {
        ChatMessage::assistant_with_tool_calls("", vec![ToolCall::new(n, tool, args)])
    };
    let llm = MockLlm::scripted([
        call(
            "c1",
            "create_draft",
            json!({"to": ["helpdesk@example.com", "support@example.com"],
            "subject": "Service outage", "message": first}),
        ),
        ChatMessage::assistant(format!(
            "I created draft {id} to the helpdesk and support about the outage."
        )),
        call(
            "c2",
            "update_draft",
            json!({"draft_id": id, "message": second}),
        ),
        ChatMessage::assistant("The draft now ends with 'Adam'."),
        call("c3", "get_draft", json!({"draft_id": id})),
        ChatMessage::assistant(format!("To: {to}\nSubject: Service outage\n\n{second}")),
        call("c4", "send_draft", json!({"draft_id": id})),
        ChatMessage::assistant("The email has been sent."),
    ])
    .function_calling(true);
    let credentials = OAuthCredentials::bearer("ya29.offline-example");
    Ok((server, credentials, Arc::new(llm)))
}
