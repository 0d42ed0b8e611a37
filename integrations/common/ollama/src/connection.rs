//! Reaching an Ollama server: its address (`OLLAMA_HOST`, read with Ollama's
//! own rules), the HTTP client with its timeouts, and Ollama's failures as ragloom errors.

use crate::wire::{KeepAlive, TimeUnit};
use ragloom_core::Error;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

/// The most bytes a whole (non-streamed) reply may take: a batch of 512
/// embeddings of 4,096 dimensions is about 25 MB of JSON; a server that
/// sends more is refused before it exhausts memory.
pub const MAX_REPLY_BYTES: usize = 256 << 20;

/// The most bytes one line of a streamed reply may take before its newline.
pub const MAX_STREAM_LINE_BYTES: usize = 16 << 20;

/// The provider name carried by every error of this crate.
pub const PROVIDER: &str = "ollama";

/// Where Ollama listens when `OLLAMA_HOST` is unset.
pub const DEFAULT_OLLAMA_HOST: &str = "http://127.0.0.1:11434";

/// The environment variable Ollama's CLI and server read their address from.
pub const OLLAMA_HOST_ENV: &str = "OLLAMA_HOST";

const DEFAULT_PORT: u16 = 11434;

/// An Ollama server address, parsed as Ollama's `envconfig.Host` parses
/// `OLLAMA_HOST`: scheme optional (`http` by default), `host`, `host:port`,
/// `:port`, IPv6 with or without brackets, surrounding spaces and quotes
/// ignored, a path kept (for servers behind a proxy). A missing or invalid
/// port falls back to 11434 without a scheme, 80 for `http://`, 443 for `https://`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OllamaHost {
    /// `http` or `https` (whatever preceded `://`).
    pub scheme: String,
    /// Host name or IP address (IPv6 without brackets); empty for `:port`.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The path after the first `/`, without that slash; usually empty.
    pub path: String,
}

impl OllamaHost {
    /// Parses an `OLLAMA_HOST` value. Never fails: like Ollama, anything
    /// unusable falls back to the defaults.
    pub fn parse(value: &str) -> Self {
        let cleaned = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        let mut default_port = DEFAULT_PORT;
        let (scheme, rest) = match cleaned.split_once("://") {
            None if cleaned == "ollama.com" => ("https".to_owned(), "ollama.com:443"),
            None => ("http".to_owned(), cleaned),
            Some((scheme, rest)) => {
                match scheme {
                    "http" => default_port = 80,
                    "https" => default_port = 443,
                    _ => {}
                }
                (scheme.to_owned(), rest)
            }
        };
        let (hostport, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = match split_host_port(hostport) {
            Some((host, port)) => (host.to_owned(), parse_port(port).unwrap_or(default_port)),
            None => {
                let bare = hostport.trim_matches(|c| c == '[' || c == ']');
                let host = match bare.parse::<IpAddr>() {
                    Ok(ip) => canonical_ip(ip),
                    Err(_) if hostport.is_empty() => "127.0.0.1".to_owned(),
                    Err(_) => hostport.to_owned(),
                };
                (host, default_port)
            }
        };
        OllamaHost {
            scheme,
            host,
            port,
            path: path.to_owned(),
        }
    }

    /// The address in `OLLAMA_HOST`, or [`DEFAULT_OLLAMA_HOST`] when it is unset.
    pub fn from_env() -> Self {
        Self::parse(&std::env::var(OLLAMA_HOST_ENV).unwrap_or_default())
    }

    /// The URL requests go to, ending in `/` so API paths append cleanly. An
    /// empty host (`:port`) means this machine, as it does when Ollama's own
    /// client dials it.
    pub fn base_url(&self) -> String {
        let host = if self.host.is_empty() {
            "127.0.0.1"
        } else {
            &self.host
        };
        let mut url = format!("{}://{}", self.scheme, join_host_port(host, self.port));
        url.push('/');
        if !self.path.is_empty() {
            url.push_str(&self.path);
            if !self.path.ends_with('/') {
                url.push('/');
            }
        }
        url
    }
}

impl fmt::Display for OllamaHost {
    /// As Ollama prints its host: `scheme://host:port[/path]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}",
            self.scheme,
            join_host_port(&self.host, self.port)
        )?;
        if !self.path.is_empty() {
            write!(f, "/{}", self.path)?;
        }
        Ok(())
    }
}

/// Go's `net.SplitHostPort`: `None` where Go returns an error.
fn split_host_port(hostport: &str) -> Option<(&str, &str)> {
    let last_colon = hostport.rfind(':')?;
    let (host, skip_open, skip_close) = if hostport.starts_with('[') {
        let close = hostport.find(']')?;
        // The bracketed host must be followed by exactly `:port`.
        if close + 1 != last_colon {
            return None;
        }
        (&hostport[1..close], 1, close + 1)
    } else {
        let host = &hostport[..last_colon];
        if host.contains(':') {
            return None;
        }
        (host, 0, 0)
    };
    if hostport[skip_open..].contains('[') || hostport[skip_close..].contains(']') {
        return None;
    }
    Some((host, &hostport[last_colon + 1..]))
}

/// A port as Ollama accepts it: a decimal number from 0 to 65535.
fn parse_port(port: &str) -> Option<u16> {
    let n: i64 = port.parse().ok()?;
    u16::try_from(n).ok()
}

/// Go's `net.IP.String()`: IPv4-mapped IPv6 addresses print as IPv4.
fn canonical_ip(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// Go's `net.JoinHostPort`: IPv6 hosts get brackets.
fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The HTTP client one model talks through, with the server's base URL.
#[derive(Clone)]
pub struct Connection {
    /// The base URL, ending in `/`.
    pub base_url: String,
    /// The HTTP client (timeouts set).
    pub http: reqwest::Client,
    /// The per-read timeout, for error messages.
    pub timeout: Option<Duration>,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("base_url", &self.base_url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Clients for `host`. `timeout` bounds connecting and each wait for data
    /// (as httpx's timeout in LlamaIndex does), not a whole streamed reply.
    pub fn new(host: &OllamaHost, timeout: Option<Duration>) -> Result<Self, Error> {
        let base_url = host.base_url();
        url::Url::parse(&base_url).map_err(|e| {
            Error::invalid(
                format!("Ollama base URL `{base_url}` (from `{host}`) is not a valid URL"),
                e,
            )
        })?;
        let mut builder = reqwest::Client::builder();
        if let Some(t) = timeout {
            builder = builder.connect_timeout(t).read_timeout(t);
        }
        let http = builder.build().map_err(|e| {
            Error::provider(
                PROVIDER,
                format!("could not create the HTTP client: {e}"),
                e,
            )
        })?;
        Ok(Self {
            base_url,
            http,
            timeout,
        })
    }

    /// An error for a failed HTTP exchange, saying what was being done.
    pub fn http_error(&self, what: &str, err: reqwest::Error) -> Error {
        let message = if err.is_timeout() {
            match self.timeout {
                Some(t) => format!(
                    "{what}: Ollama at {} sent nothing for {:.1}s (request_timeout); raise the timeout for slow models",
                    self.base_url,
                    t.as_secs_f64()
                ),
                None => format!("{what}: timed out waiting for Ollama at {}", self.base_url),
            }
        } else if err.is_connect() {
            format!(
                "{what}: could not connect to Ollama at {} (is `ollama serve` running? set OLLAMA_HOST or base_url): {err}",
                self.base_url
            )
        } else {
            format!(
                "{what}: request to Ollama at {} failed: {err}",
                self.base_url
            )
        };
        Error::provider(PROVIDER, message, err)
    }

    /// A whole reply body, refused past [`MAX_REPLY_BYTES`].
    pub async fn read_reply(
        &self,
        what: &str,
        response: reqwest::Response,
    ) -> Result<Vec<u8>, Error> {
        self.read_reply_within(what, response, MAX_REPLY_BYTES)
            .await
    }

    async fn read_reply_within(
        &self,
        what: &str,
        mut response: reqwest::Response,
        limit: usize,
    ) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.http_error(what, e))?
        {
            if bytes.len() + chunk.len() > limit {
                return Err(Error::Provider {
                    provider: PROVIDER.to_owned(),
                    message: format!(
                        "{what}: Ollama at {} sent a reply over {limit} bytes",
                        self.base_url
                    ),
                    source: None,
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// POSTs `body` as JSON to `path` (relative to the base URL) and reads
    /// the whole reply as JSON: the raw value and `R` decoded from it. A
    /// non-2xx status becomes an error carrying the server's own `error` text.
    pub async fn post_json<B: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        what: &str,
        body: &B,
    ) -> Result<(Value, R), Error> {
        let response = self
            .http
            .post(format!("{}{path}", self.base_url))
            .json(body)
            .send()
            .await
            .map_err(|e| self.http_error(what, e))?;
        let status = response.status();
        let bytes = self.read_reply(what, response).await?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            return Err(Error::provider(
                PROVIDER,
                format!("{what}: HTTP {status}: {}", server_error_text(&text)),
                text,
            ));
        }
        let decode = |e: serde_json::Error| {
            Error::provider(
                PROVIDER,
                format!("{what}: could not decode Ollama's reply: {e}"),
                e,
            )
        };
        let raw: Value = serde_json::from_slice(&bytes).map_err(decode)?;
        let parsed = R::deserialize(&raw).map_err(decode)?;
        Ok((raw, parsed))
    }
}

/// The message of an Ollama error body (`{"error": "..."}`), or the body itself.
pub fn server_error_text(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| {
            let trimmed = body.trim();
            if trimmed.is_empty() {
                "Ollama returned an error with an empty body".to_owned()
            } else {
                trimmed.to_owned()
            }
        })
}

/// A keep-alive value as Ollama accepts it: `"-1"`
/// (stay loaded), `"0"` (unload at once), a whole number of seconds, or a
/// number followed by `s`, `m` or `h` (`"30s"`, `"10m"`, `"2h"`).
pub fn parse_keep_alive(value: &str) -> Result<KeepAlive, Error> {
    let trimmed = value.trim();
    if let Ok(seconds) = trimmed.parse::<i64>() {
        return Ok(match seconds {
            s if s < 0 => KeepAlive::Indefinitely,
            0 => KeepAlive::UnloadOnCompletion,
            s => KeepAlive::Until {
                time: s.unsigned_abs(),
                unit: TimeUnit::Seconds,
            },
        });
    }
    serde_json::from_value(serde_json::Value::String(trimmed.to_owned())).map_err(|e| {
        Error::invalid(format!("keep_alive `{value}` is not a duration Ollama accepts (-1, 0, seconds, or e.g. 30s, 10m, 2h)"), e)
    })
}

/// A [`Duration`] as a keep-alive in whole seconds (rounded up); zero unloads at once.
pub fn keep_alive_from_duration(duration: Duration) -> KeepAlive {
    if duration.is_zero() {
        return KeepAlive::UnloadOnCompletion;
    }
    let seconds = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    KeepAlive::Until {
        time: seconds,
        unit: TimeUnit::Seconds,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reply_past_the_limit_is_refused_and_one_within_it_read() {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_bytes(vec![b'x'; 4096]))
            .mount(&server)
            .await;
        let conn = Connection::new(&OllamaHost::parse(&server.uri()), None).unwrap();
        let get = || async { conn.http.get(server.uri()).send().await.unwrap() };
        let err = conn
            .read_reply_within("reading", get().await, 1024)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("over 1024 bytes"), "{err}");
        let body = conn
            .read_reply_within("reading", get().await, 4096)
            .await
            .unwrap();
        assert_eq!(body.len(), 4096);
    }
}
