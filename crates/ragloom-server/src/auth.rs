//! Bearer-token auth: keys are compared as SHA-256 digests in constant time,
//! so neither a key's bytes nor its length leak through timing.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The digests of the keys that open the API.
#[derive(Debug, Default)]
pub struct Keys(Vec<[u8; 32]>);

impl Keys {
    pub fn new(keys: &[String]) -> Self {
        Self(
            keys.iter()
                .map(|k| Sha256::digest(k.as_bytes()).into())
                .collect(),
        )
    }

    pub fn is_open(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `token` is one of the keys. Every key is compared, whichever matches.
    pub fn accepts(&self, token: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut ok = subtle::Choice::from(0);
        for k in &self.0 {
            ok |= k.ct_eq(&digest);
        }
        ok.into()
    }
}

/// Paths anyone may read: the health check and the page's static files
/// (they hold no data; the page asks for a key when the API wants one).
fn is_open_path(path: &str) -> bool {
    path == "/healthz" || path == "/" || path.starts_with("/assets/")
}

/// Refuses requests without a valid key (401, OpenAI's envelope).
pub async fn require_key(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if state.keys.is_open() || is_open_path(req.uri().path()) {
        return next.run(req).await;
    }
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    match token {
        Some(t) if state.keys.accepts(t) => next.run(req).await,
        _ => {
            let mut r = ApiError::unauthorized().into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_keys_open() {
        let keys = Keys::new(&["alpha".into(), "beta-longer".into()]);
        assert!(keys.accepts("alpha"));
        assert!(keys.accepts("beta-longer"));
        assert!(!keys.accepts("alph"));
        assert!(!keys.accepts("alphaa"));
        assert!(!keys.accepts(""));
        assert!(!keys.is_open());
        assert!(Keys::new(&[]).is_open());
    }
}
