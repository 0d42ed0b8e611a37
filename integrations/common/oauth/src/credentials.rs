//! OAuth 2.0 credentials: an access token with its expiry and, when the
//! holder may renew it, the refresh token and client that renew it.

use chrono::{DateTime, NaiveDateTime, Utc};
use oauth2::{AccessToken, ClientId, ClientSecret, RefreshToken, TokenUrl};
use ragloom_core::error::{Error, Result};
use serde_json::{Map, Value, json};
use std::fmt;
use std::path::Path;

/// Google's token endpoint, the default of Google's authorized-user files.
pub const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// How long before its expiry a token is renewed, so a request never
/// leaves with a token that lapses on the way.
const EXPIRY_MARGIN_SECONDS: i64 = 60;

/// An access token and what renews it. `Debug` shows neither token nor the
/// client secret, so credentials can be logged with the rest of a struct.
#[derive(Clone)]
pub struct OAuthCredentials {
    pub(crate) access_token: Option<AccessToken>,
    pub(crate) expiry: Option<DateTime<Utc>>,
    pub(crate) refresh: Option<Refresh>,
    pub(crate) scopes: Vec<String>,
}

/// What a refresh-token grant needs.
#[derive(Clone)]
pub(crate) struct Refresh {
    pub(crate) token: RefreshToken,
    pub(crate) client_id: ClientId,
    pub(crate) client_secret: Option<ClientSecret>,
    pub(crate) token_uri: TokenUrl,
}

impl OAuthCredentials {
    /// A token used as it is, never renewed (a Slack bot token, or an access
    /// token another program keeps fresh).
    pub fn bearer(token: impl Into<String>) -> Self {
        Self {
            access_token: Some(AccessToken::new(token.into())),
            expiry: None,
            refresh: None,
            scopes: Vec::new(),
        }
    }

    /// Credentials renewed with `refresh_token` at `token_uri` by the
    /// client `client_id` (and its secret, when it has one). With no access
    /// token yet, the first request renews first.
    pub fn refreshable(
        client_id: impl Into<String>,
        client_secret: Option<String>,
        refresh_token: impl Into<String>,
        token_uri: &str,
    ) -> Result<Self> {
        let token_uri = TokenUrl::new(token_uri.to_owned())
            .map_err(|e| Error::invalid(format!("token endpoint `{token_uri}`"), e))?;
        // The secret and the refresh token travel in the body: never in clear
        // text, except to this machine (a test server, a local proxy).
        let url = token_uri.url();
        let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
        if url.scheme() != "https" && !(url.scheme() == "http" && local) {
            return Err(Error::InvalidInput(format!(
                "token endpoint `{}`: only https (or http to this machine) carries a client secret",
                url.as_str()
            )));
        }
        Ok(Self {
            access_token: None,
            expiry: None,
            refresh: Some(Refresh {
                token: RefreshToken::new(refresh_token.into()),
                client_id: ClientId::new(client_id.into()),
                client_secret: client_secret.map(ClientSecret::new),
                token_uri,
            }),
            scopes: Vec::new(),
        })
    }

    /// The current access token and when it lapses (`None`: unknown, used
    /// until the service refuses it).
    pub fn with_access_token(
        mut self,
        token: impl Into<String>,
        expiry: Option<DateTime<Utc>>,
    ) -> Self {
        self.access_token = Some(AccessToken::new(token.into()));
        self.expiry = expiry;
        self
    }

    /// The scopes the token was granted (kept and written back; a refresh
    /// does not ask for others).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Google's authorized-user JSON (the `token.json` that Google's Python
    /// libraries write: `token`, `refresh_token`, `token_uri`, `client_id`,
    /// `client_secret`, `scopes`, `expiry`), as `from_authorized_user_info`
    /// reads it: the refresh token and the client are required.
    pub fn from_authorized_user_info(info: &Value) -> Result<Self> {
        let field = |k: &str| {
            info.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let missing: Vec<&str> = ["refresh_token", "client_secret", "client_id"]
            .into_iter()
            .filter(|k| field(k).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(Error::InvalidInput(format!(
                "authorized user info is missing {}: it needs a refresh token and the OAuth client's id and secret",
                missing.join(", ")
            )));
        }
        let mut creds = Self::refreshable(
            field("client_id").unwrap_or_default(),
            field("client_secret").map(str::to_owned),
            field("refresh_token").unwrap_or_default(),
            field("token_uri").unwrap_or(GOOGLE_TOKEN_URI),
        )?;
        if let Some(token) = field("token").or_else(|| field("access_token")) {
            let expiry = match field("expiry") {
                Some(text) => Some(parse_expiry(text)?),
                None => None,
            };
            creds = creds.with_access_token(token, expiry);
        }
        creds.scopes = match info.get("scopes") {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        Ok(creds)
    }

    /// [`from_authorized_user_info`](Self::from_authorized_user_info) of a
    /// file (read no further than 1 MiB: it is a few hundred bytes).
    pub fn from_authorized_user_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = read_small(path)?;
        let info: Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(path, format!("not JSON: {e}")))?;
        Self::from_authorized_user_info(&info)
    }

    /// The authorized-user JSON Google's libraries write back after a
    /// refresh (it holds the secrets: store it as a secret).
    pub fn to_authorized_user_info(&self) -> Value {
        let mut out = Map::new();
        if let Some(t) = &self.access_token {
            out.insert("token".into(), json!(t.secret()));
        }
        if let Some(r) = &self.refresh {
            out.insert("refresh_token".into(), json!(r.token.secret()));
            out.insert("token_uri".into(), json!(r.token_uri.as_str()));
            out.insert("client_id".into(), json!(r.client_id.as_str()));
            if let Some(s) = &r.client_secret {
                out.insert("client_secret".into(), json!(s.secret()));
            }
        }
        out.insert("scopes".into(), json!(self.scopes));
        if let Some(e) = self.expiry {
            out.insert(
                "expiry".into(),
                json!(e.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()),
            );
        }
        Value::Object(out)
    }

    /// Whether these credentials can renew their access token.
    pub fn can_refresh(&self) -> bool {
        self.refresh.is_some()
    }

    /// When the access token lapses, if known.
    pub fn expiry(&self) -> Option<DateTime<Utc>> {
        self.expiry
    }

    /// The access token to send now, unless it is missing or about to lapse
    /// and can be renewed.
    pub(crate) fn usable_token(&self, now: DateTime<Utc>) -> Option<&AccessToken> {
        let token = self.access_token.as_ref()?;
        let lapsing = self.expiry.is_some_and(|e| {
            e.checked_sub_signed(chrono::Duration::seconds(EXPIRY_MARGIN_SECONDS))
                .is_none_or(|renew_at| renew_at <= now)
        });
        (!lapsing || !self.can_refresh()).then_some(token)
    }
}

impl fmt::Debug for OAuthCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("OAuthCredentials");
        d.field(
            "access_token",
            &self.access_token.as_ref().map(|_| "[redacted]"),
        )
        .field("expiry", &self.expiry)
        .field("scopes", &self.scopes);
        if let Some(r) = &self.refresh {
            d.field("client_id", &r.client_id.as_str())
                .field("token_uri", &r.token_uri.as_str())
                .field("refresh_token", &"[redacted]");
        }
        d.finish()
    }
}

/// Google writes `2026-12-07T15:04:05.123456Z` (or without the fraction);
/// a zone offset is read too.
fn parse_expiry(text: &str) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let bare = text.trim_end_matches('Z');
    let bare = bare.split('.').next().unwrap_or(bare);
    NaiveDateTime::parse_from_str(bare, "%Y-%m-%dT%H:%M:%S")
        .map(|t| t.and_utc())
        .map_err(|e| Error::invalid(format!("token expiry `{text}`"), e))
}

fn read_small(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    const LIMIT: u64 = 1 << 20;
    let file = std::fs::File::open(path).map_err(|e| Error::io("opening", path, e))?;
    let mut bytes = Vec::new();
    file.take(LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("reading", path, e))?;
    if bytes.len() as u64 > LIMIT {
        return Err(Error::corrupt(path, "larger than 1 MiB: not a token file"));
    }
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn info() -> Value {
        json!({
            "token": "ya29.secret-access",
            "refresh_token": "1//secret-refresh",
            "token_uri": "https://oauth2.googleapis.com/token",
            "client_id": "123.apps.googleusercontent.com",
            "client_secret": "secret-client",
            "scopes": ["https://www.googleapis.com/auth/gmail.compose"],
            "universe_domain": "googleapis.com",
            "account": "",
            "expiry": "2026-12-07T15:04:05.123456Z"
        })
    }

    #[test]
    fn authorized_user_info_round_trips_and_debug_hides_secrets() {
        let creds = OAuthCredentials::from_authorized_user_info(&info()).unwrap();
        assert!(creds.can_refresh());
        assert_eq!(
            creds.expiry().unwrap().to_rfc3339(),
            "2026-12-07T15:04:05.123456+00:00"
        );
        let back = creds.to_authorized_user_info();
        for key in [
            "token",
            "refresh_token",
            "client_id",
            "client_secret",
            "token_uri",
        ] {
            assert_eq!(back[key], info()[key], "{key}");
        }
        assert_eq!(back["expiry"], "2026-12-07T15:04:05.123456Z");
        let debug = format!("{creds:?}");
        for secret in ["ya29.secret-access", "1//secret-refresh", "secret-client"] {
            assert!(!debug.contains(secret), "{debug}");
        }
        assert!(debug.contains("123.apps.googleusercontent.com"));
    }

    #[test]
    fn missing_fields_are_named() {
        let mut partial = info();
        partial.as_object_mut().unwrap().remove("client_secret");
        partial["refresh_token"] = json!("");
        let err = OAuthCredentials::from_authorized_user_info(&partial).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("refresh_token, client_secret"), "{text}");
        assert!(OAuthCredentials::from_authorized_user_info(&json!([1])).is_err());
        let mut bad = info();
        bad["expiry"] = json!("tomorrow");
        assert!(OAuthCredentials::from_authorized_user_info(&bad).is_err());
        bad["expiry"] = json!("2026-12-07T15:04:05");
        assert!(OAuthCredentials::from_authorized_user_info(&bad).is_ok());
        bad["token_uri"] = json!("not a url");
        assert!(OAuthCredentials::from_authorized_user_info(&bad).is_err());
        bad["token_uri"] = json!("http://oauth2.example.com/token");
        assert!(
            OAuthCredentials::from_authorized_user_info(&bad).is_err(),
            "clear text"
        );
        bad["token_uri"] = json!("http://127.0.0.1:9/token");
        assert!(OAuthCredentials::from_authorized_user_info(&bad).is_ok());
    }

    #[test]
    fn a_lapsing_token_is_renewed_only_when_it_can_be() {
        let now = Utc::now();
        let soon = now + chrono::Duration::seconds(30);
        let later = now + chrono::Duration::seconds(3600);
        let creds = OAuthCredentials::refreshable("id", None, "rt", "https://x.test/token")
            .unwrap()
            .with_access_token("at", Some(soon));
        assert!(creds.usable_token(now).is_none());
        let creds = creds.with_access_token("at", Some(later));
        assert!(creds.usable_token(now).is_some());
        let fixed = OAuthCredentials::bearer("xoxb").with_access_token("xoxb", Some(soon));
        assert!(
            fixed.usable_token(now).is_some(),
            "nothing renews it: try it"
        );
    }

    #[test]
    fn token_files_are_bounded_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; (1 << 20) + 10]).unwrap();
        assert!(OAuthCredentials::from_authorized_user_file(&big).is_err());
        let garbage = dir.path().join("g.json");
        std::fs::write(&garbage, b"\xff\xfe not json").unwrap();
        assert!(OAuthCredentials::from_authorized_user_file(&garbage).is_err());
        assert!(OAuthCredentials::from_authorized_user_file(dir.path().join("none")).is_err());
        let good = dir.path().join("token.json");
        std::fs::write(&good, info().to_string()).unwrap();
        assert!(OAuthCredentials::from_authorized_user_file(&good).is_ok());
    }
}
