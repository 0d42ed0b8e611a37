//! What ragloom's Google and Slack tool crates share: OAuth 2.0 credentials
//! renewed with refresh tokens, and a client that sends them.
//!
//! [`OAuthCredentials`] holds an access token, its expiry and what renews it
//! (Google's authorized-user `token.json` reads and writes as Google's
//! libraries do); `Debug` never shows a token or a secret. [`AuthorizedClient`]
//! sends requests with the token, renews it before it lapses and once when
//! the service refuses it (the refresh-token grant through the `oauth2`
//! crate), waits out `429`/`503` replies as `Retry-After` asks, within
//! bounds, and caps reply sizes.

#![warn(missing_docs)]

mod client;
mod credentials;
#[cfg(feature = "replay")]
mod replay;

pub use client::{AuthorizedClient, Reply, UnauthorizedCheck};
pub use credentials::{GOOGLE_TOKEN_URI, OAuthCredentials};
#[cfg(feature = "replay")]
pub use replay::{ReplayReply, ReplayServer, SeenRequest};
