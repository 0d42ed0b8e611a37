//! An HTTP client that sends a bearer token: renewed before it lapses and
//! once when the service refuses it, with rate limits waited out.

use crate::credentials::OAuthCredentials;
use chrono::Utc;
use oauth2::basic::BasicClient;
use oauth2::{AccessToken, AuthType, RequestTokenError, Scope, TokenResponse};
use ragloom_core::error::{Error, Result};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// A service's reply, read whole (up to the client's size cap).
#[derive(Clone, Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The reply's headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Result<Value> {
        serde_json::from_slice(&self.body).map_err(Error::from)
    }

    /// The first 300 characters of the body, for an error message.
    pub fn excerpt(&self) -> String {
        String::from_utf8_lossy(&self.body)
            .chars()
            .take(300)
            .collect()
    }
}

/// Tells a refused token from other failures: Google answers 401, Slack
/// answers 200 with `"error": "token_expired"`.
pub type UnauthorizedCheck = fn(&Reply) -> bool;

fn status_401(reply: &Reply) -> bool {
    reply.status == StatusCode::UNAUTHORIZED
}

/// Sends requests with the credentials' bearer token. One refresh at a
/// time: calls that ran together and were refused together renew once.
#[derive(Clone)]
pub struct AuthorizedClient {
    provider: &'static str,
    http: reqwest::Client,
    token_http: reqwest::Client,
    credentials: Arc<Mutex<OAuthCredentials>>,
    persist_to: Option<PathBuf>,
    unauthorized: UnauthorizedCheck,
    max_retries: u32,
    max_wait: Duration,
    max_response_bytes: usize,
}

impl fmt::Debug for AuthorizedClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizedClient")
            .field("provider", &self.provider)
            .field("persist_to", &self.persist_to)
            .field("max_retries", &self.max_retries)
            .field("max_wait", &self.max_wait)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

impl AuthorizedClient {
    /// A client for `provider` (named in errors) with these credentials:
    /// 30 s per request, replies up to 20 MiB, three waits on 429/503 of at
    /// most 60 s each.
    pub fn new(provider: &'static str, credentials: OAuthCredentials) -> Self {
        let build = |redirects| {
            reqwest::Client::builder()
                .user_agent(concat!("ragloom/", env!("CARGO_PKG_VERSION")))
                .timeout(Duration::from_secs(30))
                .redirect(redirects)
                .build()
                .unwrap_or_default()
        };
        Self {
            provider,
            // A redirect never carries the token to another host: reqwest
            // drops Authorization when the host changes.
            http: build(reqwest::redirect::Policy::limited(5)),
            // Token endpoints are not followed anywhere (the secret is in the body).
            token_http: build(reqwest::redirect::Policy::none()),
            credentials: Arc::new(Mutex::new(credentials)),
            persist_to: None,
            unauthorized: status_401,
            max_retries: 3,
            max_wait: Duration::from_secs(60),
            max_response_bytes: 20 << 20,
        }
    }

    /// Writes the credentials (Google's authorized-user JSON, readable by
    /// the owner only) to `path` after each refresh, as Google's libraries
    /// rewrite `token.json`.
    pub fn persist_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.persist_to = Some(path.into());
        self
    }

    /// How a refused token shows in a reply (default: status 401).
    pub fn unauthorized_when(mut self, check: UnauthorizedCheck) -> Self {
        self.unauthorized = check;
        self
    }

    /// How many times a 429 or 503 is waited out, and the longest wait
    /// (a longer `Retry-After` is an error at once).
    pub fn retries(mut self, max_retries: u32, max_wait: Duration) -> Self {
        self.max_retries = max_retries;
        self.max_wait = max_wait;
        self
    }

    /// The most bytes one reply may have.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// The credentials as they are now (after any refresh).
    pub async fn credentials(&self) -> OAuthCredentials {
        self.credentials.lock().await.clone()
    }

    /// Sends the request `build` makes, with the token; renews the token
    /// once when the service refuses it; waits out 429 and 503 replies.
    /// `build` runs again for each attempt. Any status comes back as a
    /// [`Reply`]: what an error status means is the caller's to say.
    pub async fn send<F>(&self, build: F) -> Result<Reply>
    where
        F: Fn(&reqwest::Client) -> RequestBuilder,
    {
        let mut renewed = false;
        let mut waits: u32 = 0;
        loop {
            let token = self.token().await?;
            let request = build(&self.http)
                .bearer_auth(token.secret())
                .build()
                .map_err(|e| {
                    let e = e.without_url();
                    Error::provider(self.provider, format!("the request cannot be sent: {e}"), e)
                })?;
            // A 503 may come after the work was done: only a request that
            // can be repeated is sent again. A 429 was refused unread.
            let repeatable = matches!(
                *request.method(),
                Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS
            );
            let reply = self.read(request).await?;
            if (self.unauthorized)(&reply) && !renewed && self.renew_after(&token).await? {
                renewed = true;
                continue;
            }
            let limited = reply.status == StatusCode::TOO_MANY_REQUESTS
                || (reply.status == StatusCode::SERVICE_UNAVAILABLE && repeatable);
            if limited && waits < self.max_retries {
                let backoff = Duration::from_secs(1u64.checked_shl(waits.min(16)).unwrap_or(1));
                let wait = retry_after(&reply.headers).unwrap_or(backoff);
                if wait > self.max_wait {
                    return Err(Error::provider(
                        self.provider,
                        format!(
                            "rate limited: the service asks to wait {} s, longer than the {} s allowed",
                            wait.as_secs(),
                            self.max_wait.as_secs()
                        ),
                        std::io::Error::other(reply.excerpt()),
                    ));
                }
                tracing::warn!(provider = self.provider, status = %reply.status, wait_s = wait.as_secs_f32(), "rate limited; waiting");
                tokio::time::sleep(wait).await;
                waits += 1;
                continue;
            }
            return Ok(reply);
        }
    }

    /// Renews the token now unless another call already did since `stale`
    /// was handed out. `false` when nothing can renew it.
    async fn renew_after(&self, stale: &AccessToken) -> Result<bool> {
        self.renew_detached(Some(stale.secret().clone())).await
    }

    /// The token to send, renewed first when it is missing or lapsing.
    async fn token(&self) -> Result<AccessToken> {
        if let Some(token) = self.credentials.lock().await.usable_token(Utc::now()) {
            return Ok(token.clone());
        }
        self.renew_detached(None).await?;
        let creds = self.credentials.lock().await;
        creds.access_token.clone().ok_or_else(|| {
            Error::provider(
                self.provider,
                "the token endpoint gave no access token",
                std::io::Error::other("no access token"),
            )
        })
    }

    /// Renews in a task of its own that finishes and stores what it got even
    /// when the caller is dropped midway (an agent's tool timeout): a rotated
    /// refresh token, once issued, is never lost. `stale`: the token the
    /// service refused (`None`: the token is missing or lapsing).
    async fn renew_detached(&self, stale: Option<String>) -> Result<bool> {
        let this = self.clone();
        let task = tokio::spawn(async move {
            let mut creds = this.credentials.lock().await;
            let current = creds.access_token.as_ref().map(|t| t.secret().clone());
            match &stale {
                Some(_) if !creds.can_refresh() => return Ok(false),
                // Another call renewed it since: nothing to do.
                Some(refused) if current.as_ref() != Some(refused) => return Ok(true),
                None if creds.usable_token(Utc::now()).is_some() => return Ok(true),
                _ => {}
            }
            this.refresh(&mut creds).await.map(|()| true)
        });
        task.await.map_err(|e| {
            Error::provider(
                self.provider,
                "the token refresh stopped",
                std::io::Error::other(e.to_string()),
            )
        })?
    }

    /// A refresh-token grant (client id and secret in the body, as Google's
    /// and Slack's libraries send them, with the scopes when known); a
    /// rotated refresh token replaces the old one.
    async fn refresh(&self, creds: &mut OAuthCredentials) -> Result<()> {
        let Some(r) = creds.refresh.clone() else {
            return Err(Error::provider(
                self.provider,
                "no access token and no refresh token to get one",
                std::io::Error::other("cannot refresh"),
            ));
        };
        let mut client = BasicClient::new(r.client_id.clone())
            .set_token_uri(r.token_uri.clone())
            .set_auth_type(AuthType::RequestBody);
        if let Some(secret) = r.client_secret.clone() {
            client = client.set_client_secret(secret);
        }
        let http = self.token_http.clone();
        let cap = self.max_response_bytes;
        let send = move |request: oauth2::HttpRequest| {
            let http = http.clone();
            async move { token_request(&http, request, cap).await }
        };
        let response = client
            .exchange_refresh_token(&r.token)
            // Google's libraries name the granted scopes again; none when unknown.
            .add_scopes(creds.scopes.iter().cloned().map(Scope::new))
            .request_async(&send)
            .await
            .map_err(|e| self.refresh_error(e))?;
        creds.access_token = Some(response.access_token().clone());
        // An absurd lifetime reads as "unknown": used until refused.
        creds.expiry = response
            .expires_in()
            .and_then(|d| chrono::Duration::from_std(d).ok())
            .and_then(|d| Utc::now().checked_add_signed(d));
        if let (Some(new), Some(refresh)) = (response.refresh_token(), creds.refresh.as_mut()) {
            refresh.token = new.clone();
        }
        tracing::info!(provider = self.provider, expiry = ?creds.expiry, "access token refreshed");
        // The new token is in hand: a file that cannot be written is
        // reported, not a failed call, and is tried again at the next refresh.
        if let Some(path) = &self.persist_to {
            if let Err(e) = write_private(path, &creds.to_authorized_user_info()) {
                tracing::error!(provider = self.provider, error = %e, "the renewed token could not be saved");
            }
        }
        Ok(())
    }

    fn refresh_error<E: std::error::Error + Send + Sync + 'static>(
        &self,
        e: RequestTokenError<E, oauth2::basic::BasicErrorResponse>,
    ) -> Error {
        let message = match &e {
            RequestTokenError::ServerResponse(r) => format!(
                "the token endpoint refused the refresh token: {}{}",
                r.error(),
                r.error_description()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
            RequestTokenError::Parse(_, body) => {
                // Slack answers 200 with {"ok": false, "error": "..."}.
                let said = serde_json::from_slice::<Value>(body)
                    .ok()
                    .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
                match said {
                    Some(error) => format!("the token endpoint refused the refresh token: {error}"),
                    None => "the token endpoint's reply is not a token response".to_owned(),
                }
            }
            RequestTokenError::Request(e) => {
                format!("the token endpoint could not be reached: {e}")
            }
            RequestTokenError::Other(other) => format!("refreshing the token failed: {other}"),
        };
        // The message only: a reply that failed to parse may hold tokens,
        // and the oauth2 error keeps its body.
        Error::provider(
            self.provider,
            message.clone(),
            std::io::Error::other(message),
        )
    }

    async fn read(&self, request: reqwest::Request) -> Result<Reply> {
        let failed = |e: reqwest::Error| {
            let e = e.without_url();
            Error::provider(self.provider, format!("the request failed: {e}"), e)
        };
        let response = self.http.execute(request).await.map_err(failed)?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = read_capped(response, self.max_response_bytes)
            .await
            .map_err(|e| {
                Error::provider(self.provider, format!("reading the reply failed: {e}"), e)
            })?;
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    Some(
        (at.with_timezone(&Utc) - Utc::now())
            .to_std()
            .unwrap_or_default(),
    )
}

async fn read_capped(mut response: reqwest::Response, cap: usize) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| std::io::Error::other(e.without_url()))?
    {
        if body.len() + chunk.len() > cap {
            return Err(std::io::Error::other(format!(
                "the reply is larger than {cap} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn token_request(
    http: &reqwest::Client,
    request: oauth2::HttpRequest,
    cap: usize,
) -> std::io::Result<oauth2::HttpResponse> {
    let request = reqwest::Request::try_from(request).map_err(std::io::Error::other)?;
    let response = http
        .execute(request)
        .await
        .map_err(|e| std::io::Error::other(e.without_url()))?;
    let mut out = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        out = out.header(name, value);
    }
    let body = read_capped(response, cap).await?;
    out.body(body).map_err(std::io::Error::other)
}

/// Writes `value` to `path` through a new temporary file beside it (owner-only,
/// never an existing file or link) and a rename, so a crash or a second
/// writer leaves one whole file.
fn write_private(path: &std::path::Path, value: &Value) -> Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| Error::io("creating a file in", dir, e))?;
    tmp.write_all(value.to_string().as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io("writing", tmp.path(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("renaming onto", path, e.error))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::ZERO),
            "a past date: no wait"
        );
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }
}
