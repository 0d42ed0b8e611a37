//! ragloom-common-openai: the connection every OpenAI-compatible call goes
//! through — base URL, API key and headers, a per-request timeout, and
//! retries with exponential backoff that honour `Retry-After`.
//!
//! `ragloom-llms-openai` and `ragloom-embeddings-openai` both depend on this
//! crate (the LLM crate re-exports it as `client`), so both retry, time out
//! and report errors the same way. The retry loop sits below
//! async-openai, as a tower service handed to `Client::with_http_service`:
//! only there are the response's status and `Retry-After` header visible.

#![warn(missing_docs)]

use async_openai::config::OpenAIConfig;
use async_openai::error::{ApiError, ApiErrorResponse, OpenAIError, WrappedError};
use async_openai::middleware::HttpRequestFactory;
use ragloom_core::Error;
use ragloom_core::error::BoxError;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::hash_map::RandomState;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The provider name every error of these crates carries.
pub const PROVIDER: &str = "openai";
/// OpenAI's API base (LlamaIndex's `DEFAULT_OPENAI_API_BASE`).
pub const DEFAULT_OPENAI_API_BASE: &str = "https://api.openai.com/v1";
/// LlamaIndex's default request timeout (`timeout=60.0`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// LlamaIndex's default retry count for LLMs (`max_retries=3`).
pub const DEFAULT_MAX_RETRIES: usize = 3;

/// An API key. Its `Debug` never shows the key, so settings and models holding
/// one can be logged.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for building the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether no key was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("ApiKey(<empty>)")
        } else {
            f.write_str("ApiKey(<redacted>)")
        }
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self::new(key)
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self::new(key)
    }
}

/// When and how long to wait before trying a failed request again.
///
/// Retried: HTTP 408, 429 (except `insufficient_quota`, which waiting does not
/// fix) and 5xx, connection failures and timeouts. The wait before retry `n`
/// (0-based) is `initial_backoff * 2^n`, capped at `max_backoff`, scaled by a
/// random factor in [0.75, 1] when `jitter` is on; a `Retry-After` (or
/// `retry-after-ms`) header from the server replaces it, capped at `max_retry_after`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (LlamaIndex's `max_retries`); 0 disables retrying.
    pub max_retries: usize,
    /// The first backoff (LlamaIndex's retry decorator waits at least 1 s).
    pub initial_backoff: Duration,
    /// The longest backoff (LlamaIndex: 20 s).
    pub max_backoff: Duration,
    /// The longest wait a `Retry-After` header may impose (LlamaIndex: 120 s).
    pub max_retry_after: Duration,
    /// Whether backoffs are randomised, so that many clients do not retry in step.
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_RETRIES)
    }
}

impl RetryPolicy {
    /// LlamaIndex's policy with `max_retries` retries: 1 s doubling to 20 s, jittered.
    pub fn new(max_retries: usize) -> Self {
        Self {
            max_retries,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(120),
            jitter: true,
        }
    }

    /// No retries at all.
    pub fn none() -> Self {
        Self::new(0)
    }

    /// Sets the first backoff (doubling from there).
    pub fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// Sets the longest backoff.
    pub fn with_max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// Turns jitter on or off.
    pub fn with_jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// The backoff before retry `retry` (0-based), before jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(31));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }

    /// The wait before retry `retry`: the server's `Retry-After` when it sent
    /// one (capped), else the jittered backoff.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let backoff = self.backoff(retry);
        if self.jitter {
            backoff.mul_f64(0.75 + 0.25 * unit_random())
        } else {
            backoff
        }
    }

    /// Whether a response with this status is worth retrying.
    pub fn is_retryable_status(status: u16) -> bool {
        status == 408 || status == 429 || (500..600).contains(&status)
    }
}

/// A number in [0, 1) from std's randomly keyed hasher: enough to spread
/// retries apart without a random-number dependency.
fn unit_random() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(0x9e37_79b9_7f4a_7c15);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait a response asks for: `retry-after-ms` (OpenAI's, milliseconds) or
/// `Retry-After` in seconds (fractions allowed). HTTP dates and negative or
/// unreadable values count as absent.
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    read("retry-after").map(Duration::from_secs_f64)
}

/// How to reach an OpenAI-compatible API. Unset fields are read from the
/// environment as LlamaIndex's `resolve_openai_credentials` does.
#[derive(Clone)]
pub struct ClientSettings {
    /// The key; `None` reads `OPENAI_API_KEY`.
    pub api_key: Option<ApiKey>,
    /// The base URL; `None` reads `OPENAI_API_BASE`, then `OPENAI_BASE_URL`,
    /// else [`DEFAULT_OPENAI_API_BASE`].
    pub api_base: Option<String>,
    /// `OpenAI-Organization` header; `None` reads `OPENAI_ORG_ID`.
    pub organization: Option<String>,
    /// `OpenAI-Project` header; `None` reads `OPENAI_PROJECT_ID`.
    pub project: Option<String>,
    /// Extra headers sent with every request (LlamaIndex's `default_headers`).
    pub default_headers: Vec<(String, String)>,
    /// How long to wait for the connection, the reply's headers, and each read of its body.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            api_key: None,
            api_base: None,
            organization: None,
            project: None,
            default_headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
        }
    }
}

impl fmt::Debug for ClientSettings {
    // Header values can be credentials too (Azure's `api-key`): names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self
            .default_headers
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        f.debug_struct("ClientSettings")
            .field("api_key", &self.api_key)
            .field("api_base", &self.api_base)
            .field("organization", &self.organization)
            .field("project", &self.project)
            .field("default_headers", &header_names)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Checks that `value` can travel in an HTTP header without naming it in the
/// error (it may be a secret). async-openai would panic on such a value.
fn header_value(what: &str, value: &str) -> ragloom_core::Result<HeaderValue> {
    HeaderValue::from_str(value).map_err(|_| {
        Error::InvalidInput(format!(
            "{what} contains characters not allowed in an HTTP header (control characters or non-ASCII)"
        ))
    })
}

/// An error and its causes, outermost first: reqwest's own message hides
/// the cause (a reset, a closed connection) in its sources.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// A configured connection to an OpenAI-compatible API: async-openai's
/// client over a transport that times out and retries per [`RetryPolicy`].
/// Cheap to clone.
#[derive(Clone)]
pub struct OpenAIClient {
    sdk: async_openai::Client<OpenAIConfig>,
    api_base: String,
    api_key: ApiKey,
    timeout: Duration,
    retry: RetryPolicy,
}

impl fmt::Debug for OpenAIClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAIClient")
            .field("api_base", &self.api_base)
            .field("api_key", &self.api_key)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

impl OpenAIClient {
    /// Resolves `settings` (environment for unset fields) and builds the
    /// client. Keys or headers that cannot travel in HTTP, an unparseable
    /// base URL and a zero timeout are [`Error::InvalidInput`].
    pub fn new(settings: &ClientSettings) -> ragloom_core::Result<Self> {
        let api_key = settings
            .api_key
            .clone()
            .or_else(|| env_nonempty("OPENAI_API_KEY").map(ApiKey::new))
            .unwrap_or_default();
        let api_base = settings
            .api_base
            .clone()
            .or_else(|| env_nonempty("OPENAI_API_BASE"))
            .or_else(|| env_nonempty("OPENAI_BASE_URL"))
            .unwrap_or_else(|| DEFAULT_OPENAI_API_BASE.to_owned());
        // async-openai appends "/chat/completions" etc. to the base verbatim.
        let api_base = api_base.trim().trim_end_matches('/').to_owned();
        reqwest::Url::parse(&api_base)
            .map_err(|e| Error::invalid(format!("api_base `{api_base}` is not a valid URL"), e))?;
        if settings.timeout.is_zero() {
            return Err(Error::InvalidInput(
                "timeout must be greater than zero".to_owned(),
            ));
        }
        header_value("the API key", &format!("Bearer {}", api_key.expose()))?;
        let organization = settings
            .organization
            .clone()
            .or_else(|| env_nonempty("OPENAI_ORG_ID"))
            .unwrap_or_default();
        let project = settings
            .project
            .clone()
            .or_else(|| env_nonempty("OPENAI_PROJECT_ID"))
            .unwrap_or_default();
        header_value("the organization id", &organization)?;
        header_value("the project id", &project)?;

        let mut config = OpenAIConfig::new()
            .with_api_base(api_base.clone())
            .with_api_key(api_key.expose())
            .with_org_id(organization)
            .with_project_id(project);
        for (name, value) in &settings.default_headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Error::InvalidInput(format!(
                    "default header name `{name}` is not a valid HTTP header name"
                ))
            })?;
            header_value(&format!("default header `{name}`"), value)?;
            config = config
                .with_header(header, value.as_str())
                .map_err(|e| Error::invalid(format!("default header `{name}`"), e))?;
        }

        let http = reqwest::Client::builder()
            .connect_timeout(settings.timeout)
            .read_timeout(settings.timeout)
            .build()
            .map_err(|e| Error::provider(PROVIDER, "could not build the HTTP client", e))?;
        let service = RetryingHttp {
            http,
            timeout: settings.timeout,
            retry: settings.retry.clone(),
        };
        let sdk = async_openai::Client::with_config(config).with_http_service(service);
        Ok(Self {
            sdk,
            api_base,
            api_key,
            timeout: settings.timeout,
            retry: settings.retry.clone(),
        })
    }

    /// async-openai's client, for calls through its `*_byot` methods.
    pub fn sdk(&self) -> &async_openai::Client<OpenAIConfig> {
        &self.sdk
    }

    /// The resolved base URL (no trailing slash).
    pub fn api_base(&self) -> &str {
        &self.api_base
    }

    /// Whether a key was given or found in `OPENAI_API_KEY`.
    pub fn has_api_key(&self) -> bool {
        !self.api_key.is_empty()
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// `text` with the API key scrubbed out.
    pub fn scrub(&self, text: &str) -> String {
        scrub_secret(text, self.api_key.expose())
    }

    /// Maps an async-openai error into [`Error::Provider`] naming "openai",
    /// `what` was being done and the endpoint, keeping the SDK's error as the
    /// source. The API key is scrubbed from messages, in case a server echoes it.
    pub fn map_error(&self, what: &str, err: OpenAIError) -> Error {
        let scrub = |text: &str| scrub_secret(text, self.api_key.expose());
        let (message, source): (String, BoxError) = match err {
            OpenAIError::ApiError(mut response) => {
                response.api_error.message = scrub(&response.api_error.message);
                (
                    format!(
                        "{what} failed with HTTP {} from {}: {}",
                        response.status_code, self.api_base, response.api_error
                    ),
                    Box::new(OpenAIError::ApiError(response)),
                )
            }
            OpenAIError::Reqwest(e) if e.is_timeout() => (
                format!(
                    "{what} timed out: no reply from {} within {:?}",
                    self.api_base, self.timeout
                ),
                Box::new(OpenAIError::Reqwest(e)),
            ),
            OpenAIError::Reqwest(e) if e.is_connect() => (
                format!("{what}: could not connect to {}: {e}", self.api_base),
                Box::new(OpenAIError::Reqwest(e)),
            ),
            OpenAIError::Reqwest(e) => (
                format!(
                    "{what}: the connection to {} failed: {}",
                    self.api_base,
                    error_chain(&e)
                ),
                Box::new(OpenAIError::Reqwest(e)),
            ),
            OpenAIError::Boxed(inner) if inner.is::<RequestTimedOut>() => (
                format!(
                    "{what} timed out: no reply from {} within {:?}",
                    self.api_base, self.timeout
                ),
                inner,
            ),
            OpenAIError::JSONDeserialize(e, body) => {
                let body = scrub(&body);
                (
                    format!(
                        "{what}: could not read the reply from {} ({e}); it was: {}",
                        self.api_base,
                        truncate_chars(&body, 500)
                    ),
                    Box::new(OpenAIError::JSONDeserialize(e, body)),
                )
            }
            OpenAIError::InvalidArgument(message) => {
                return Error::InvalidInput(format!("{what}: {}", scrub(&message)));
            }
            other => (
                format!("{what}: {}", scrub(&other.to_string())),
                Box::new(other),
            ),
        };
        Error::Provider {
            provider: PROVIDER.to_owned(),
            message,
            source: Some(source),
        }
    }
}

/// `text` with every occurrence of `secret` replaced. Keys shorter than 4
/// characters are placeholders ("x", "na"), not secrets, and replacing them
/// would garble the message.
fn scrub_secret(text: &str, secret: &str) -> String {
    if secret.chars().count() < 4 {
        text.to_owned()
    } else {
        text.replace(secret, "<redacted>")
    }
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The request did not get a reply within the client's timeout.
#[derive(Debug)]
pub struct RequestTimedOut {
    /// The timeout that ran out.
    pub after: Duration,
}

impl fmt::Display for RequestTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no reply within {:?}", self.after)
    }
}

impl std::error::Error for RequestTimedOut {}

/// The transport below async-openai: sends each attempt with a timeout and
/// retries per the policy. Replaces async-openai's own retry layer, which has
/// a fixed policy and gives up on a 429 whose body is not OpenAI's JSON.
#[derive(Clone)]
struct RetryingHttp {
    http: reqwest::Client,
    timeout: Duration,
    retry: RetryPolicy,
}

type HttpFuture =
    Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send + 'static>>;

impl tower::Service<HttpRequestFactory> for RetryingHttp {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = HttpFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.send_with_retries(request).await })
    }
}

/// What one attempt ended with, when it is worth another try.
enum Retryable {
    /// A status worth retrying; the body is already read (a 429's body tells
    /// a rate limit from an exhausted quota), so the final error is built here.
    Status(OpenAIError, Option<Duration>),
    /// A connection failure or timeout.
    Transport(OpenAIError),
}

impl RetryingHttp {
    async fn send_with_retries(
        &self,
        factory: HttpRequestFactory,
    ) -> Result<reqwest::Response, OpenAIError> {
        let mut retry: u32 = 0;
        loop {
            let request = factory.build().await?;
            let (method, url) = (request.method().clone(), request.url().clone());
            let failure = match self.attempt(request).await {
                Ok(response) => return Ok(response),
                Err(AttemptError::Final(e)) => return Err(e),
                Err(AttemptError::Retry(failure)) => failure,
            };
            let (error, retry_after, reason) = match failure {
                Retryable::Status(e, after) => {
                    let reason = match &e {
                        OpenAIError::ApiError(r) => r.status_code.to_string(),
                        other => other.to_string(),
                    };
                    (e, after, reason)
                }
                Retryable::Transport(e) => {
                    let reason = e.to_string();
                    (e, None, reason)
                }
            };
            if retry as usize >= self.retry.max_retries {
                return Err(error);
            }
            let delay = self.retry.delay(retry, retry_after);
            tracing::warn!(
                %method, %url, attempt = retry + 1, reason = %reason,
                delay_ms = delay.as_millis() as u64,
                "openai: retrying request"
            );
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }

    async fn attempt(&self, request: reqwest::Request) -> Result<reqwest::Response, AttemptError> {
        let sent = tokio::time::timeout(self.timeout, self.http.execute(request)).await;
        let response = match sent {
            Err(_) => {
                return Err(AttemptError::Retry(Retryable::Transport(
                    OpenAIError::Boxed(Box::new(RequestTimedOut {
                        after: self.timeout,
                    })),
                )));
            }
            // A reset or a closed connection before the reply is retried, as
            // OpenAI's own clients retry every transport failure.
            Ok(Err(e)) if e.is_connect() || e.is_timeout() || e.is_request() => {
                return Err(AttemptError::Retry(Retryable::Transport(
                    OpenAIError::Reqwest(e),
                )));
            }
            Ok(Err(e)) => return Err(AttemptError::Final(OpenAIError::Reqwest(e))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !RetryPolicy::is_retryable_status(status.as_u16()) {
            return Ok(response);
        }
        let retry_after = parse_retry_after(response.headers());
        let body = match response.bytes().await {
            Ok(body) => body,
            Err(e) if e.is_timeout() || e.is_connect() => {
                return Err(AttemptError::Retry(Retryable::Transport(
                    OpenAIError::Reqwest(e),
                )));
            }
            Err(e) => return Err(AttemptError::Final(OpenAIError::Reqwest(e))),
        };
        let api_error = match serde_json::from_slice::<WrappedError>(&body) {
            Ok(wrapped) => wrapped.error,
            // Servers other than OpenAI (and proxies) answer errors in plain text or HTML.
            Err(_) => ApiError {
                message: String::from_utf8_lossy(&body).trim().to_owned(),
                ..ApiError::default()
            },
        };
        let quota_exhausted = [api_error.r#type.as_deref(), api_error.code.as_deref()]
            .contains(&Some("insufficient_quota"));
        let error = OpenAIError::ApiError(ApiErrorResponse {
            status_code: status,
            api_error,
        });
        if quota_exhausted {
            return Err(AttemptError::Final(error));
        }
        Err(AttemptError::Retry(Retryable::Status(error, retry_after)))
    }
}

enum AttemptError {
    Final(OpenAIError),
    Retry(Retryable),
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy::new(5).with_jitter(false);
        assert_eq!(p.backoff(0), Duration::from_secs(1));
        assert_eq!(p.backoff(1), Duration::from_secs(2));
        assert_eq!(p.backoff(4), Duration::from_secs(16));
        assert_eq!(p.backoff(5), Duration::from_secs(20));
        assert_eq!(p.backoff(200), Duration::from_secs(20));
        assert_eq!(p.delay(3, None), Duration::from_secs(8));
    }

    #[test]
    fn jitter_stays_within_a_quarter_below_the_backoff() {
        let p = RetryPolicy::new(5);
        for retry in 0..5 {
            let d = p.delay(retry, None);
            let full = p.backoff(retry);
            assert!(d <= full && d >= full.mul_f64(0.75), "{d:?} vs {full:?}");
        }
    }

    #[test]
    fn retry_after_wins_and_is_capped() {
        let p = RetryPolicy::new(3);
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(900))),
            Duration::from_secs(120)
        );
    }

    #[test]
    fn retry_after_headers_are_read() {
        let mut h = HeaderMap::new();
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("1"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(1)));
        h.insert("retry-after", HeaderValue::from_static("0.5"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(500)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(250)));
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 429, 500, 502, 503, 599] {
            assert!(RetryPolicy::is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 409, 422] {
            assert!(!RetryPolicy::is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn keys_never_show_in_debug() {
        let settings = ClientSettings {
            api_key: Some(ApiKey::new("sk-secret-123456")),
            default_headers: vec![("api-key".into(), "hdr-secret-987".into())],
            ..Default::default()
        };
        let shown = format!("{settings:?}");
        assert!(
            !shown.contains("sk-secret-123456") && !shown.contains("hdr-secret-987"),
            "{shown}"
        );
        let client = OpenAIClient::new(&settings).unwrap();
        let shown = format!("{client:?}");
        assert!(!shown.contains("sk-secret-123456"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn bad_keys_and_bases_are_errors_not_panics() {
        let settings = ClientSettings {
            api_key: Some(ApiKey::new("sk-abc\ndef")),
            api_base: Some("http://127.0.0.1:1/v1".into()),
            ..Default::default()
        };
        let err = OpenAIClient::new(&settings).unwrap_err().to_string();
        assert!(err.contains("API key") && !err.contains("sk-abc"), "{err}");
        let settings = ClientSettings {
            api_key: Some(ApiKey::new("k")),
            api_base: Some("not a url".into()),
            ..Default::default()
        };
        let err = OpenAIClient::new(&settings).unwrap_err().to_string();
        assert!(err.contains("api_base"), "{err}");
    }

    #[test]
    fn trailing_slash_is_dropped_from_the_base() {
        let settings = ClientSettings {
            api_key: Some(ApiKey::new("k")),
            api_base: Some("http://127.0.0.1:8080/v1/".into()),
            ..Default::default()
        };
        assert_eq!(
            OpenAIClient::new(&settings).unwrap().api_base(),
            "http://127.0.0.1:8080/v1"
        );
    }

    #[test]
    fn secrets_are_scrubbed_from_messages() {
        assert_eq!(
            scrub_secret("Incorrect API key provided: sk-abcdef.", "sk-abcdef"),
            "Incorrect API key provided: <redacted>."
        );
        assert_eq!(scrub_secret("x marks", "x"), "x marks");
    }
}
