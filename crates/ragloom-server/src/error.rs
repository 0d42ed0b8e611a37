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
    pub status: StatusCode,
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

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "bad_request",
            message,
        )
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid_api_key",
            "a valid API key is needed: send `Authorization: Bearer <key>`",
        )
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found_error", code, message)
    }

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

    pub fn timeout(secs: u64) -> Self {
        Self::new(
            StatusCode::GATEWAY_TIMEOUT,
            "server_error",
            "timeout",
            format!("the request took longer than {secs} s"),
        )
    }

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
        match e {
            ragloom::Error::InvalidInput(m) => Self::bad_request(m),
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

/// `axum::Json` whose rejections (bad JSON, wrong fields, too large) answer
/// in the error envelope instead of plain text.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

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
pub fn rejection_error(status: StatusCode, text: String) -> ApiError {
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
