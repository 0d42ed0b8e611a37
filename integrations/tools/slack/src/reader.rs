//! `SlackReader`: a channel's messages with their threads as one document
//! per channel, read page by page as LlamaIndex's reader reads them.

use crate::client::{SlackApiError, SlackClient};
use chrono::{DateTime, Utc};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Document;
use regex::Regex;
use serde_json::Value;

/// The most pages one listing (a channel's history, a thread, the channel
/// list) is followed for: a server that always has more cannot keep a call
/// running for ever.
const MAX_PAGES: usize = 1000;

/// What one `load_data` may spend, whatever the channels hold: requests
/// (threads multiply them) and text. Past either, reading stops with a
/// warning and what was read is returned.
#[derive(Debug)]
struct Budget {
    requests: usize,
    bytes: usize,
}

impl Budget {
    fn new() -> Self {
        Self {
            requests: 20_000,
            bytes: 64 << 20,
        }
    }

    /// Takes one request; false when none is left.
    fn request(&mut self) -> bool {
        if self.requests == 0 || self.bytes == 0 {
            tracing::warn!("Slack load_data stopped at its budget of requests or text");
            return false;
        }
        self.requests -= 1;
        true
    }

    fn text(&mut self, text: &str) {
        self.bytes = self.bytes.saturating_sub(text.len());
    }
}

/// Reads Slack channels (LlamaIndex `SlackReader`): each channel's messages
/// with their replies, from `earliest_date` (all when unset) to
/// `latest_date` (when the reader was made, when unset).
#[derive(Clone, Debug)]
pub struct SlackReader {
    client: SlackClient,
    earliest: Option<f64>,
    latest: f64,
    channel_types: String,
}

/// Builds a [`SlackReader`]; `build` checks the token with `api.test`.
#[derive(Clone, Debug)]
pub struct SlackReaderBuilder {
    client: SlackClient,
    earliest: Option<DateTime<Utc>>,
    latest: Option<DateTime<Utc>>,
    channel_types: Option<String>,
}

impl SlackReaderBuilder {
    /// Messages from this time on.
    pub fn earliest_date(mut self, at: DateTime<Utc>) -> Self {
        self.earliest = Some(at);
        self
    }

    /// Messages up to this time (needs `earliest_date`, as in LlamaIndex).
    pub fn latest_date(mut self, at: DateTime<Utc>) -> Self {
        self.latest = Some(at);
        self
    }

    /// Which conversations `get_channel_ids` lists (default
    /// `public_channel,private_channel`).
    pub fn channel_types(mut self, types: impl Into<String>) -> Self {
        self.channel_types = Some(types.into());
        self
    }

    /// The reader, once Slack accepted the token (`api.test`).
    pub async fn build(self) -> Result<SlackReader> {
        if self.latest.is_some() && self.earliest.is_none() {
            return Err(Error::InvalidInput(
                "Must specify `earliest_date` if `latest_date` is specified.".into(),
            ));
        }
        if let Err(e) = self.client.call("api.test", &[]).await? {
            return Err(Error::provider(
                "slack",
                format!("Error initializing Slack API: {}", e.error),
                std::io::Error::other(e.error),
            ));
        }
        Ok(SlackReader {
            client: self.client,
            earliest: self.earliest.map(timestamp),
            latest: timestamp(self.latest.unwrap_or_else(Utc::now)),
            channel_types: self
                .channel_types
                .unwrap_or_else(|| "public_channel,private_channel".into()),
        })
    }
}

fn timestamp(at: DateTime<Utc>) -> f64 {
    at.timestamp_micros() as f64 / 1e6
}

/// `str(float)` in Python: the shortest text that reads back, `.0` on whole numbers.
fn py_float(x: f64) -> String {
    let s = x.to_string();
    if s.contains(['.', 'e', 'E']) || !x.is_finite() {
        s
    } else {
        format!("{s}.0")
    }
}

impl SlackReader {
    /// A reader over `client`'s workspace.
    pub fn builder(client: SlackClient) -> SlackReaderBuilder {
        SlackReaderBuilder {
            client,
            earliest: None,
            latest: None,
            channel_types: None,
        }
    }

    /// The client the reader calls Slack with.
    pub fn client(&self) -> &SlackClient {
        &self.client
    }

    /// One document per channel: id the channel's id, metadata `channel`,
    /// text its messages (each with its thread) joined by blank lines, the
    /// newest first unless `reverse_chronological` is false. A channel the
    /// bot is not in reads as what was read before Slack said so.
    pub async fn load_data(
        &self,
        channel_ids: &[String],
        reverse_chronological: bool,
    ) -> Result<Vec<Document>> {
        let mut documents = Vec::with_capacity(channel_ids.len());
        let mut budget = Budget::new();
        for channel in channel_ids {
            let text = self
                .read_channel(channel, reverse_chronological, &mut budget)
                .await?;
            documents.push(
                Document::document(text)
                    .with_id(channel.clone())
                    .with_metadata("channel", channel.clone()),
            );
        }
        Ok(documents)
    }

    /// The ids of channels named in `patterns`: exact names, or regular
    /// expressions matched at the start of the name (LlamaIndex
    /// `get_channel_ids`; Rust's `regex` syntax).
    pub async fn get_channel_ids(&self, patterns: &[String]) -> Result<Vec<String>> {
        if patterns.is_empty() {
            return Err(Error::InvalidInput("No channel patterns provided.".into()));
        }
        let regexes: Vec<Regex> = patterns
            .iter()
            .filter_map(|p| Regex::new(&format!("^(?:{p})")).ok())
            .collect();
        let mut ids: Vec<String> = Vec::new();
        for channel in self.list_channels(Some(&self.channel_types)).await? {
            let name = channel
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let id = channel
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let hit =
                patterns.iter().any(|p| p == name) || regexes.iter().any(|r| r.is_match(name));
            if hit && !id.is_empty() && !ids.iter().any(|x| x == id) {
                ids.push(id.to_owned());
            }
        }
        Ok(ids)
    }

    /// Every conversation of `types` (all pages of `conversations.list`).
    pub(crate) async fn list_channels(&self, types: Option<&str>) -> Result<Vec<Value>> {
        let mut channels = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self
                .client
                .api_call(
                    "conversations.list",
                    &[
                        ("types", types.map(str::to_owned)),
                        ("cursor", cursor.clone()),
                    ],
                )
                .await?;
            channels.extend(
                page.get("channels")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
            cursor = next_cursor(&page);
            if cursor.is_none() {
                break;
            }
        }
        Ok(channels)
    }

    async fn read_channel(
        &self,
        channel: &str,
        reverse_chronological: bool,
        budget: &mut Budget,
    ) -> Result<String> {
        let mut texts = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            if !budget.request() {
                break;
            }
            let args = [
                ("channel", Some(channel.to_owned())),
                ("cursor", cursor.clone()),
                ("latest", Some(py_float(self.latest))),
                ("oldest", self.earliest.map(py_float)),
            ];
            let page = match self.client.call("conversations.history", &args).await? {
                Ok(page) => page,
                Err(e) => {
                    self.stop_on("conversations.history", channel, &e)?;
                    break;
                }
            };
            let messages = page.get("messages").and_then(Value::as_array);
            tracing::info!(
                channel,
                count = messages.map_or(0, Vec::len),
                "messages found"
            );
            for message in messages.into_iter().flatten() {
                if let Some(ts) = message.get("ts").and_then(Value::as_str) {
                    texts.push(self.read_thread(channel, ts, budget).await?);
                }
            }
            cursor = more(&page);
            if cursor.is_none() {
                break;
            }
        }
        if !reverse_chronological {
            texts.reverse();
        }
        Ok(texts.join("\n\n"))
    }

    /// A message and its replies (`conversations.replies`), joined by blank lines.
    async fn read_thread(&self, channel: &str, ts: &str, budget: &mut Budget) -> Result<String> {
        let mut texts: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            if !budget.request() {
                break;
            }
            let mut args = vec![
                ("channel", Some(channel.to_owned())),
                ("ts", Some(ts.to_owned())),
                ("cursor", cursor.clone()),
            ];
            // LlamaIndex bounds replies in time only when an earliest date is set.
            if self.earliest.is_some() {
                args.push(("latest", Some(py_float(self.latest))));
                args.push(("oldest", self.earliest.map(py_float)));
            }
            let page = match self.client.call("conversations.replies", &args).await? {
                Ok(page) => page,
                Err(e) => {
                    self.stop_on("conversations.replies", channel, &e)?;
                    break;
                }
            };
            let messages = page.get("messages").and_then(Value::as_array);
            for message in messages.into_iter().flatten() {
                let text = message
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                budget.text(text);
                texts.push(text.to_owned());
            }
            cursor = more(&page);
            if cursor.is_none() {
                break;
            }
        }
        Ok(texts.join("\n\n"))
    }

    /// What LlamaIndex does when a page fails: a channel the bot is not in
    /// (or any other refusal about the channel) ends that listing with a
    /// logged error. A refused token or a missing scope, and a rate limit
    /// still standing after the client's waits, are errors: read as an
    /// empty channel they would mislead the model.
    fn stop_on(&self, method: &str, channel: &str, e: &SlackApiError) -> Result<()> {
        match e.error.as_str() {
            "ratelimited" | "invalid_auth" | "not_authed" | "token_revoked" | "token_expired"
            | "account_inactive" | "missing_scope" | "no_permission" => {
                Err(self.client.api_error(method, e))
            }
            "not_in_channel" => {
                tracing::error!(channel, "Bot not in channel, cannot read messages.");
                Ok(())
            }
            other => {
                tracing::error!(channel, error = other, method, "reading the channel failed");
                Ok(())
            }
        }
    }
}

/// The next page's cursor when the reply says `has_more`.
fn more(page: &Value) -> Option<String> {
    if page.get("has_more") == Some(&Value::Bool(true)) {
        next_cursor(page)
    } else {
        None
    }
}

fn next_cursor(page: &Value) -> Option<String> {
    page.pointer("/response_metadata/next_cursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_python_writes_floats() {
        assert_eq!(py_float(1796644800.0), "1796644800.0");
        assert_eq!(py_float(1796644800.25), "1796644800.25");
        let at = DateTime::parse_from_rfc3339("2026-12-07T12:00:00.000123Z").unwrap();
        assert_eq!(
            py_float(timestamp(at.with_timezone(&Utc))),
            "1796644800.000123"
        );
    }
}
