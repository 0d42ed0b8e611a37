//! Errors as every route answers them: OpenAI's envelope
//! (`{"error": {"message", "type", "param", "code"}}`) with a stable `code`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// What a [`crate::ServedIndex`] reports when it cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The request names something that is not there.
    #[error("{0}")]
    NotFound(String),
    /// The request cannot be done as asked.
    #[error("{0}")]
    InvalidInput(String),
    /// The index cannot do this (e.g. uploads to a read-only index).
    #[error("{0}")]
    Unsupported(String),
    /// Anything else, from the library.
    #[error(transparent)]
    Ragloom(#[from] ragloom::Error),
}

/// An error response: the status and OpenAI's error envelope.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What the client reads: OpenAI's `{"error": {...}}`.
    pub body: ErrorBody,
    /// Seconds a client should wait before retrying (429).
    pub retry_after: Option<u64>,
}

/// `{"error": {...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// The error itself. `code` is stable: clients may branch on it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    pub message: String,
    /// OpenAI's error type: `invalid_request_error`, `authentication_error`,
    /// `not_found_error`, `rate_limit_error` or `server_error`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The request field at fault, when one is.
    pub param: Option<String>,
    /// `bad_request`, `invalid_api_key`, `model_not_found`, `index_not_found`,
    /// `not_found`, `not_uploaded`, `unsupported`, `payload_too_large`,
    /// `too_many_requests`, `timeout` or `internal`.
    pub code: &'static str,
}

impl ApiError {
    /// An error with `status`, OpenAI's error `kind` (`invalid_request_error`,
    /// `server_error`, ...), a machine-readable `code` and the message.
    pub fn new(
        status: StatusCode,
        kind: &'static str,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            body: ErrorBody {
                error: ErrorDetail {
                    message: message.into(),
                    kind,
                    param: None,
                    code,
                },
            },
            retry_after: None,
        }
    }

    /// Names the request field at fault.
    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.body.error.param = Some(param.into());
        self
    }

    /// 400: the request cannot be done as asked.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "bad_request",
            message,
        )
    }

    /// 401: no key, or a wrong one.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid_api_key",
            "a valid API key is needed: send `Authorization: Bearer <key>`",
        )
    }

    /// 404, with its `code` (`index_not_found`, ...).
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found_error", code, message)
    }

    /// 429 with `Retry-After`: every LLM slot is taken and the queue is full.
    pub fn busy(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "too_many_requests",
            "the server is answering as many questions as it can: retry later",
        );
        e.retry_after = Some(retry_after);
        e
    }

    /// 429 with `Retry-After`, for limits other than the LLM's queue.
    pub fn too_many(message: impl Into<String>, retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "too_many_requests",
            message,
        );
        e.retry_after = Some(retry_after);
        e
    }

    /// 504: the request took longer than `secs`.
    pub fn timeout(secs: u64) -> Self {
        Self::new(
            StatusCode::GATEWAY_TIMEOUT,
            "server_error",
            "timeout",
            format!("the request took longer than {secs} s"),
        )
    }

    /// 500: the server failed; `message` says what.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "internal",
            message,
        )
    }

    /// The stable code, for logs and metrics.
    pub fn code(&self) -> &'static str {
        self.body.error.code
    }
}

impl From<ServeError> for ApiError {
    fn from(e: ServeError) -> Self {
        match e {
            ServeError::NotFound(m) => Self::not_found("not_found", m),
            ServeError::InvalidInput(m) => Self::bad_request(m),
            ServeError::Unsupported(m) => Self::new(
                StatusCode::CONFLICT,
                "invalid_request_error",
                "unsupported",
                m,
            ),
            ServeError::Ragloom(e) => e.into(),
        }
    }
}

impl From<ragloom::Error> for ApiError {
    fn from(e: ragloom::Error) -> Self {
        if let Some(problem) = e.input_problem() {
            return Self::bad_request(problem);
        }
        match e {
            ragloom::Error::NotFound(m) => Self::not_found("not_found", m),
            other => {
                tracing::error!(error = %other, "request failed");
                Self::internal(other.to_string())
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

/// The code and OpenAI type an error status stands for, when something
/// other than the API's own handlers answered it.
fn status_code(status: StatusCode) -> (&'static str, &'static str) {
    match status.as_u16() {
        401 => ("authentication_error", "invalid_api_key"),
        404 => ("not_found_error", "not_found"),
        405 => ("invalid_request_error", "method_not_allowed"),
        406 => ("invalid_request_error", "not_acceptable"),
        408 => ("invalid_request_error", "timeout"),
        411 | 413 => ("invalid_request_error", "payload_too_large"),
        414 => ("invalid_request_error", "uri_too_long"),
        415 => ("invalid_request_error", "unsupported_media_type"),
        421 => ("invalid_request_error", "host_not_allowed"),
        429 => ("rate_limit_error", "too_many_requests"),
        500..=599 => ("server_error", "internal"),
        _ => ("invalid_request_error", "bad_request"),
    }
}

/// The most of a plain-text error body kept as the envelope's message.
const PLAIN_ERROR_BYTES: usize = 4096;

/// Puts every error that is not already JSON (extractor rejections, MCP's
/// transport errors, fallbacks) in the envelope, keeping its status, its
/// headers and its text as the message, so clients parse one shape.
pub(crate) async fn envelope(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, PLAIN_ERROR_BYTES).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("the request failed")
            .to_lowercase()
    } else {
        text
    };
    // rmcp answers a body that is not JSON with 415, though its type was right.
    let status = if status == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && message.starts_with("fail to deserialize")
    {
        StatusCode::BAD_REQUEST
    } else {
        status
    };
    parts.status = status;
    let (kind, code) = status_code(status);
    let rewritten = ApiError::new(status, kind, code, message).into_response();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    let (new_parts, body) = rewritten.into_parts();
    parts.headers.extend(new_parts.headers);
    Response::from_parts(parts, body)
}

/// `axum::Json` whose rejections (bad JSON, wrong fields, too large) answer
/// in the error envelope instead of plain text.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Self(v)),
            Err(rejection) => Err(rejection_error(rejection.status(), rejection.body_text())),
        }
    }
}

/// An extractor's rejection as an envelope.
pub(crate) fn rejection_error(status: StatusCode, text: String) -> ApiError {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            status,
            "invalid_request_error",
            "payload_too_large",
            format!("the request body is too large: {text}"),
        ),
        // A body sent without `Content-Type: application/json` keeps its 415.
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::new(status, "invalid_request_error", "bad_request", text)
        }
        _ => ApiError::bad_request(text),
    }
}
