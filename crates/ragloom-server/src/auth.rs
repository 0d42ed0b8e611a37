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
use subtle::{ConditionallySelectable, ConstantTimeEq};

/// The digests of the keys that open the API.
#[derive(Debug, Default)]
pub(crate) struct Keys(Vec<[u8; 32]>);

impl Keys {
    pub(crate) fn new(keys: &[String]) -> Self {
        Self(
            keys.iter()
                .map(|k| Sha256::digest(k.as_bytes()).into())
                .collect(),
        )
    }

    pub(crate) fn is_open(&self) -> bool {
        self.0.is_empty()
    }

    /// How many keys there are.
    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }

    /// Which key `token` is. Every key is compared, whichever matches, and
    /// the position is chosen without a branch on the comparison.
    pub(crate) fn which(&self, token: &str) -> Option<usize> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = subtle::Choice::from(0);
        let mut at = 0u64;
        for (i, k) in self.0.iter().enumerate() {
            let eq = k.ct_eq(&digest);
            at = u64::conditional_select(&at, &(i as u64), eq);
            found |= eq;
        }
        bool::from(found).then_some(at as usize)
    }
}

/// The key a request was let in with (its position among the keys), for
/// limits kept per key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyIndex(pub usize);

/// Paths anyone may read: the health check and the page's static files
/// (they hold no data; the page asks for a key when the API wants one).
fn is_open_path(path: &str) -> bool {
    path == "/healthz" || path == "/" || path.starts_with("/assets/")
}

/// Refuses requests without a valid key (401, OpenAI's envelope).
pub(crate) async fn require_key(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
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
    match token.and_then(|t| state.keys.which(t)) {
        Some(i) => {
            req.extensions_mut().insert(KeyIndex(i));
            next.run(req).await
        }
        None => {
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
        assert_eq!(keys.which("alpha"), Some(0));
        assert_eq!(keys.which("beta-longer"), Some(1));
        assert_eq!(keys.which("gamma"), None);
        assert!(keys.which("alph").is_none());
        assert!(keys.which("alphaa").is_none());
        assert!(keys.which("").is_none());
        assert!(!keys.is_open());
        assert!(Keys::new(&[]).is_open());
    }
}
