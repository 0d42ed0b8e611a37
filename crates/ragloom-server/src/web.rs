//! The web chat page: three files compiled into the binary, served with a
//! strict content-security policy (no CDN, no inline script).

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// Everything the page loads comes from this server.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

pub(crate) async fn index() -> Response {
    let mut r = asset(INDEX_HTML, "text/html; charset=utf-8");
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

pub(crate) async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

pub(crate) async fn app_css() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for (name, text) in [
            ("index.html", INDEX_HTML),
            ("app.js", APP_JS),
            ("app.css", APP_CSS),
        ] {
            for bad in ["http://", "https://", "//cdn", "@import", "fonts.g"] {
                assert!(!text.contains(bad), "{name} contains {bad}");
            }
        }
        assert!(INDEX_HTML.contains("/assets/app.js") && INDEX_HTML.contains("/assets/app.css"));
        assert!(!INDEX_HTML.contains("onclick") && !INDEX_HTML.contains("<script>"));
    }
}
