//! Slack for ragloom, as LlamaIndex's `llama-index-tools-slack` and
//! `llama-index-readers-slack`: [`SlackToolSpec`] (`load_data`,
//! `send_message`, `fetch_channels`) for agents and [`SlackReader`] for
//! indexes, over [`SlackClient`], the Web API as `slack_sdk` calls it.
//!
//! A bot token is sent as a bearer token; a rotating token (Slack's token
//! rotation: [`OAuthCredentials::refreshable`] with [`SLACK_TOKEN_URI`]) is
//! renewed before it lapses and when Slack says `token_expired`. Rate limits
//! (429 with `Retry-After`) are waited out within bounds, pagination is
//! followed to a page limit, replies are capped in size and time.

#![warn(missing_docs)]

mod client;
mod reader;
mod tool;

pub use client::{SLACK_API_URL, SLACK_TOKEN_URI, SlackApiError, SlackClient};
pub use ragloom_common_oauth::{AuthorizedClient, OAuthCredentials};
#[cfg(feature = "replay")]
pub use ragloom_common_oauth::{ReplayReply, ReplayServer, SeenRequest};
pub use reader::{SlackReader, SlackReaderBuilder};
pub use tool::SlackToolSpec;
