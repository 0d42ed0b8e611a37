//! Slack's Web API as `slack_sdk`'s `WebClient` calls it: a POST per
//! method, form-encoded arguments (JSON for `chat.postMessage`), `ok` checked.

use ragloom_common_oauth::{AuthorizedClient, OAuthCredentials, Reply};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::py_repr;
use serde_json::Value;

const PROVIDER: &str = "slack";

/// Slack's Web API.
pub const SLACK_API_URL: &str = "https://slack.com/api/";

/// Where a rotating token is renewed (`oauth.v2.access` with
/// `grant_type=refresh_token`).
pub const SLACK_TOKEN_URI: &str = "https://slack.com/api/oauth.v2.access";

/// Slack answers 200 with `"ok": false` when a token is refused; a
/// rotating token that lapsed says `token_expired`.
fn token_refused(reply: &Reply) -> bool {
    reply.status == reqwest::StatusCode::UNAUTHORIZED
        || reply.json().ok().is_some_and(|v| {
            v.get("ok") == Some(&Value::Bool(false))
                && v.get("error").and_then(Value::as_str) == Some("token_expired")
        })
}

/// A Slack reply that says `"ok": false`: its `error` code, kept so callers
/// can tell `not_in_channel` from `ratelimited`.
#[derive(Clone, Debug)]
pub struct SlackApiError {
    /// Slack's error code (`channel_not_found`, `not_in_channel`, ...).
    pub error: String,
    /// The whole reply.
    pub reply: Value,
}

/// Calls Slack's Web API with a bot token (fixed, or rotating through
/// [`OAuthCredentials::refreshable`] with [`SLACK_TOKEN_URI`]).
#[derive(Clone, Debug)]
pub struct SlackClient {
    client: AuthorizedClient,
    base_url: String,
}

impl SlackClient {
    /// A client with these credentials; a token is renewed when Slack says
    /// `token_expired`, 429s are waited out as `Retry-After` asks.
    pub fn new(credentials: OAuthCredentials) -> Self {
        Self {
            client: AuthorizedClient::new(PROVIDER, credentials).unauthorized_when(token_refused),
            base_url: SLACK_API_URL.to_owned(),
        }
    }

    /// A bot token from `SLACK_BOT_TOKEN`, as LlamaIndex's reader reads it.
    pub fn from_env() -> Result<Self> {
        match std::env::var("SLACK_BOT_TOKEN") {
            Ok(token) if !token.is_empty() => Ok(Self::new(OAuthCredentials::bearer(token))),
            _ => Err(Error::InvalidInput(
                "Must specify `slack_token` or set environment variable `SLACK_BOT_TOKEN`.".into(),
            )),
        }
    }

    /// The API at another address (`WebClient(base_url=..)`): a test server.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        self.base_url = if base_url.ends_with('/') {
            base_url.to_owned()
        } else {
            format!("{base_url}/")
        };
        self
    }

    /// Changes the HTTP client's settings (retries, size cap).
    pub fn map_client(mut self, f: impl FnOnce(AuthorizedClient) -> AuthorizedClient) -> Self {
        self.client = f(self.client);
        self
    }

    /// The credentials as they are now (a rotated token included).
    pub async fn credentials(&self) -> OAuthCredentials {
        self.client.credentials().await
    }

    /// Calls `method` with form arguments (unset ones left out, as
    /// `slack_sdk` leaves out `None`): the reply, or Slack's error.
    pub async fn call(
        &self,
        method: &str,
        args: &[(&str, Option<String>)],
    ) -> Result<std::result::Result<Value, SlackApiError>> {
        let form: Vec<(&str, &str)> = args
            .iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (*k, v)))
            .collect();
        let url = format!("{}{method}", self.base_url);
        let reply = self.client.send(|http| http.post(&url).form(&form)).await?;
        self.read(method, &reply)
    }

    /// Calls `method` with a JSON body (`chat.postMessage`, as `slack_sdk`
    /// sends it).
    pub async fn call_json(
        &self,
        method: &str,
        body: &Value,
    ) -> Result<std::result::Result<Value, SlackApiError>> {
        let url = format!("{}{method}", self.base_url);
        let reply = self.client.send(|http| http.post(&url).json(body)).await?;
        self.read(method, &reply)
    }

    fn read(
        &self,
        method: &str,
        reply: &Reply,
    ) -> Result<std::result::Result<Value, SlackApiError>> {
        let value = reply.json().map_err(|e| {
            Error::provider(
                PROVIDER,
                format!(
                    "Slack answered {} to {method} with something that is not JSON",
                    reply.status
                ),
                e,
            )
        })?;
        if value.get("ok") == Some(&Value::Bool(true)) {
            return Ok(Ok(value));
        }
        let error = value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or(if reply.status.as_u16() == 429 {
                "ratelimited"
            } else {
                "unknown_error"
            })
            .to_owned();
        Ok(Err(SlackApiError {
            error,
            reply: value,
        }))
    }

    /// [`call`](Self::call), Slack's error turned into an error whose text
    /// is `slack_sdk`'s `SlackApiError` message.
    pub async fn api_call(&self, method: &str, args: &[(&str, Option<String>)]) -> Result<Value> {
        self.call(method, args)
            .await?
            .map_err(|e| self.api_error(method, &e))
    }

    pub(crate) fn api_error(&self, method: &str, e: &SlackApiError) -> Error {
        Error::provider(
            PROVIDER,
            format!(
                "The request to the Slack API failed. (url: {}{method})\nThe server responded with: {}",
                self.base_url,
                py_repr(&e.reply).chars().take(500).collect::<String>()
            ),
            std::io::Error::other(e.error.clone()),
        )
    }
}
