//! What a browser may do: every request's `Host` is one the server answers to
//! (no DNS rebinding), and requests that change state come from its own pages.
//!
//! A server on loopback without a key trusts whoever can reach it, and every
//! web page the user opens can reach it: a page may send a multipart `POST`
//! without asking (a CORS "simple" request) and, after rebinding its own name
//! to 127.0.0.1, read the answers. Checking `Host` closes the second; checking
//! `Origin` (or `Sec-Fetch-Site`) on `POST`, `PUT`, `PATCH` and `DELETE`
//! closes the first. Clients that are not browsers send neither header.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;
use std::sync::Arc;

/// The names and origins a server accepts, from its settings.
#[derive(Debug, Default)]
pub(crate) struct BrowserPolicy {
    /// Lowercase host names (no port) beyond loopback names and IP addresses.
    hosts: Vec<String>,
    any_host: bool,
    /// Origins allowed to send state-changing requests (`scheme://host[:port]`).
    origins: Vec<String>,
    any_origin: bool,
}

impl BrowserPolicy {
    pub(crate) fn new(allowed_hosts: &[String], cors_origins: &[String]) -> Self {
        Self {
            any_host: allowed_hosts.iter().any(|h| h.trim() == "*"),
            hosts: allowed_hosts
                .iter()
                .filter(|h| h.trim() != "*")
                .filter_map(|h| host_name(h.trim()))
                .collect(),
            any_origin: cors_origins.iter().any(|o| o.trim() == "*"),
            origins: cors_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a request naming `host` (a `Host` header's value) may be
    /// answered. IP addresses always may: a page can only reach an address
    /// by name through DNS, so a literal address is never a rebound name.
    pub(crate) fn host_allowed(&self, host: &str) -> bool {
        if self.any_host {
            return true;
        }
        let Some(name) = host_name(host) else {
            return false;
        };
        name == "localhost"
            || name
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok()
            || self.hosts.contains(&name)
    }

    /// Why a state-changing request must be refused, if it must: its
    /// `Origin` is neither the server's own (the `Host` it was sent to) nor
    /// an allowed one, or, without `Origin`, the browser says it is cross-site.
    pub(crate) fn refuse_write(&self, headers: &HeaderMap) -> Option<String> {
        let Some(origin) = headers.get(header::ORIGIN) else {
            let site = headers
                .get("sec-fetch-site")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            return site
                .eq_ignore_ascii_case("cross-site")
                .then(|| "a cross-site request may not change anything here".to_string());
        };
        let origin = origin.to_str().unwrap_or("").trim().to_ascii_lowercase();
        if self.any_origin || self.origins.contains(&origin) {
            return None;
        }
        let own = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(|h| h.trim().to_ascii_lowercase());
        if own.is_some_and(|h| same_authority(&origin, &h)) {
            return None;
        }
        Some(format!(
            "a page from {origin} may not change anything here: allow it with --cors-origin"
        ))
    }
}

/// The host part of `host[:port]` or `[v6]:port`, lowercase, without a final dot.
fn host_name(host: &str) -> Option<String> {
    let host = host.trim().to_ascii_lowercase();
    let name = if host.starts_with('[') {
        let end = host.find(']')?;
        let rest = &host[end + 1..];
        if !(rest.is_empty() || rest.starts_with(':')) {
            return None;
        }
        &host[..=end]
    } else {
        match host.rsplit_once(':') {
            // A bare IPv6 address has several colons and no port.
            Some((name, port)) if !name.contains(':') => {
                if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                name
            }
            _ => host.as_str(),
        }
    };
    let name = name.trim_end_matches('.');
    (!name.is_empty()).then(|| name.to_string())
}

/// Whether `origin` (`scheme://authority`) names the same host and port as a
/// `Host` header, default ports included.
fn same_authority(origin: &str, host: &str) -> bool {
    let (scheme, authority) = match origin.split_once("://") {
        Some(p) => p,
        None => return false,
    };
    let default = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return false,
    };
    let strip = |a: &str| -> String { a.strip_suffix(default).unwrap_or(a).to_string() };
    strip(authority) == strip(host)
}

/// Refuses requests to an unknown host (421) and writes from other sites (403).
pub(crate) async fn check(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let policy = &state.browsers;
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let host = hosts
        .next()
        .map(|v| v.to_str().unwrap_or("\u{fffd}").to_string());
    // RFC 9112: one Host, present in HTTP/1.1, and agreeing with an
    // absolute-form target; anything else is a request to refuse, not guess at.
    let authority = req
        .uri()
        .authority()
        .map(|a| a.as_str().to_ascii_lowercase());
    let malformed = if hosts.next().is_some() {
        Some("a request has one Host header")
    } else if host.is_none() && req.version() == axum::http::Version::HTTP_11 {
        Some("an HTTP/1.1 request names its Host")
    } else if let (Some(h), Some(a)) = (&host, &authority)
        && !h.eq_ignore_ascii_case(a)
    {
        Some("the Host header and the request target name different hosts")
    } else {
        None
    };
    if let Some(why) = malformed {
        return ApiError::bad_request(why).param("host").into_response();
    }
    // HTTP/1.0 clients may omit `Host`; browsers always send it.
    if let Some(host) = host.or(authority).filter(|h| !policy.host_allowed(h)) {
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "invalid_request_error",
            "host_not_allowed",
            format!(
                "this server does not answer to the host `{}`: add it with --allowed-host",
                host.escape_debug()
            ),
        )
        .into_response();
    }
    let writes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if writes && let Some(why) = policy.refuse_write(req.headers()) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "invalid_request_error",
            "cross_origin",
            why,
        )
        .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                *k,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("x")),
            );
        }
        h
    }

    #[test]
    fn hosts_are_loopback_names_addresses_and_the_allowed_ones() {
        let p = BrowserPolicy::new(&["Docs.Example.com".into()], &[]);
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.",
            "127.0.0.1:9",
            "[::1]:8080",
            "[::1]",
            "::1",
            "10.1.2.3",
            "docs.example.com:443",
            "docs.example.com",
        ] {
            assert!(p.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "",
            ":80",
            "docs.example.com:x",
            "[::1]x",
            "example.com",
        ] {
            assert!(!p.host_allowed(bad), "{bad}");
        }
        assert!(BrowserPolicy::new(&["*".into()], &[]).host_allowed("evil.example"));
    }

    #[test]
    fn writes_come_from_the_servers_own_pages_or_allowed_origins() {
        let p = BrowserPolicy::new(&[], &["https://app.example".into()]);
        let host = ("host", "127.0.0.1:8080");
        // Command-line clients send neither Origin nor Sec-Fetch-Site.
        assert!(p.refuse_write(&headers(&[host])).is_none());
        assert!(
            p.refuse_write(&headers(&[host, ("origin", "http://127.0.0.1:8080")]))
                .is_none()
        );
        assert!(
            p.refuse_write(&headers(&[host, ("origin", "https://app.example")]))
                .is_none()
        );
        assert!(
            p.refuse_write(&headers(&[host, ("sec-fetch-site", "same-origin")]))
                .is_none()
        );
        for origin in [
            "http://evil.example:8080",
            "http://127.0.0.1:8081",
            "null",
            "https://127.0.0.1:8080.evil.example",
            "",
        ] {
            assert!(
                p.refuse_write(&headers(&[host, ("origin", origin)]))
                    .is_some(),
                "{origin}"
            );
        }
        assert!(
            p.refuse_write(&headers(&[host, ("sec-fetch-site", "cross-site")]))
                .is_some()
        );
        let default_port = headers(&[("host", "docs.example"), ("origin", "http://docs.example")]);
        assert!(p.refuse_write(&default_port).is_none());
        let any = BrowserPolicy::new(&[], &["*".into()]);
        assert!(
            any.refuse_write(&headers(&[host, ("origin", "http://evil.example")]))
                .is_none()
        );
    }
}
