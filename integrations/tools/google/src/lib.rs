//! Gmail and Google Calendar for ragloom, as LlamaIndex's
//! `llama-index-tools-google`: [`GmailToolSpec`] (`load_data`,
//! `search_messages`, `create_draft`, `update_draft`, `get_draft`,
//! `send_draft`) and [`GoogleCalendarToolSpec`] (`load_data`, `create_event`,
//! `get_date`), with LlamaIndex's names, descriptions and argument schemas.
//!
//! Requests are the ones `google-api-python-client` sends (the same paths,
//! parameters and bodies, checked against Google's discovery documents in
//! the tests), with OAuth 2.0 credentials from `ragloom-common-oauth`: the
//! access token is renewed with the refresh token before it lapses and when
//! Google answers 401, 429s are waited out, ids a model gives are checked
//! before they reach a path, and replies are capped in size and time.

#![warn(missing_docs)]

mod api;
mod calendar;
mod gmail;
mod mime;

pub use calendar::{
    CALENDAR_ENDPOINT, CALENDAR_SCOPES, EVENT_CREATED, GoogleCalendarToolSpec, NewEvent,
};
pub use gmail::{GMAIL_ENDPOINT, GMAIL_SCOPES, GmailToolSpec, NO_DRAFT_ID};
pub use mime::build_message;
pub use ragloom_common_oauth::{AuthorizedClient, OAuthCredentials};
#[cfg(feature = "replay")]
pub use ragloom_common_oauth::{ReplayReply, ReplayServer, SeenRequest};

use ragloom_core::tools::{ToolMetadata, recorded_metadata};
use serde_json::Value;
use std::sync::OnceLock;

/// LlamaIndex's descriptions and argument schemas of both specs' tools,
/// as `to_tool_list` gives them (recorded from llama-index-tools-google 0.8.0).
const TOOLS_JSON: &str = include_str!("tools.json");

/// The metadata of `group`'s (`gmail`, `calendar`) tool `name`.
fn metadata(group: &str, name: &str) -> ToolMetadata {
    static TOOLS: OnceLock<Value> = OnceLock::new();
    let tools = TOOLS.get_or_init(|| serde_json::from_str(TOOLS_JSON).unwrap_or(Value::Null));
    recorded_metadata(&tools[group], name)
}
