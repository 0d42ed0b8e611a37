//! The MediaWiki API as the `wikipedia` Python package calls it: search,
//! a page's info (redirects followed, disambiguation pages named), and its
//! plain-text extract — over HTTP with a time limit and a size cap.

use ragloom_core::error::{Error, Result};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

const PROVIDER: &str = "wikipedia";

/// How many redirects a page may go through before it is an error.
const MAX_REDIRECTS: usize = 5;

/// A Wikipedia page with its plain text (the `wikipedia` package's `WikipediaPage`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WikipediaPage {
    /// The page id, as text (the package's `pageid`).
    pub pageid: String,
    /// The page's title after redirects.
    pub title: String,
    /// The page's address.
    pub url: String,
    /// The page's plain text (`content`: the API's `explaintext` extract).
    pub content: String,
}

/// Calls one wiki's API. Languages are checked before they become part of
/// an address, so a model cannot send a request anywhere else.
#[derive(Clone)]
pub struct WikipediaClient {
    http: reqwest::Client,
    api_url: String,
    max_response_bytes: usize,
}

impl fmt::Debug for WikipediaClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WikipediaClient")
            .field("api_url", &self.api_url)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for WikipediaClient {
    fn default() -> Self {
        Self::new()
    }
}

impl WikipediaClient {
    /// Wikipedia itself: `https://{lang}.wikipedia.org/w/api.php`, 30 s per
    /// request, replies up to 20 MB.
    pub fn new() -> Self {
        Self::with_api_url("https://{lang}.wikipedia.org/w/api.php")
    }

    /// Another MediaWiki: `api_url` with `{lang}` where the language goes
    /// (or none, for a wiki in one language).
    pub fn with_api_url(api_url: impl Into<String>) -> Self {
        let http = reqwest::Client::builder()
            .user_agent(concat!(
                "ragloom/",
                env!("CARGO_PKG_VERSION"),
                " (wikipedia tool)"
            ))
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        Self {
            http,
            api_url: api_url.into(),
            max_response_bytes: 20 << 20,
        }
    }

    /// The most bytes one reply may have.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    fn endpoint(&self, lang: &str) -> Result<String> {
        let valid = (1..=15).contains(&lang.len())
            && lang.starts_with(|c: char| c.is_ascii_lowercase())
            && lang
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid {
            return Err(Error::InvalidInput(format!(
                "`{lang}` is not a Wikipedia language code (e.g. en, de, zh-yue)"
            )));
        }
        Ok(self.api_url.replace("{lang}", lang))
    }

    /// One `action=query` request with `params`, its JSON reply; an API
    /// error is an error carrying the API's `info`.
    pub async fn query(&self, lang: &str, params: &[(&str, &str)]) -> Result<Value> {
        let url = self.endpoint(lang)?;
        let mut all: Vec<(&str, &str)> = vec![("format", "json"), ("action", "query")];
        all.extend_from_slice(params);
        let failed = |e: reqwest::Error| Error::provider(PROVIDER, format!("requesting {url}"), e);
        let mut response = self
            .http
            .get(&url)
            .query(&all)
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > self.max_response_bytes {
                return Err(Error::provider(
                    PROVIDER,
                    format!(
                        "the reply from {url} is larger than {} bytes",
                        self.max_response_bytes
                    ),
                    std::io::Error::other("reply too large"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(Error::provider(
                PROVIDER,
                format!("{url} answered {status}"),
                std::io::Error::other(
                    String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
                ),
            ));
        }
        let reply: Value = serde_json::from_slice(&body).map_err(|e| {
            Error::provider(
                PROVIDER,
                format!("{url} sent something that is not JSON"),
                e,
            )
        })?;
        if let Some(info) = reply.pointer("/error/info").and_then(Value::as_str) {
            return Err(Error::provider(
                PROVIDER,
                format!("the API said: {info}"),
                std::io::Error::other(info.to_owned()),
            ));
        }
        Ok(reply)
    }

    /// Titles matching `query`, best first (the package's `search`), and the
    /// API's suggestion when asked for one.
    pub async fn search(
        &self,
        lang: &str,
        query: &str,
        results: usize,
        suggestion: bool,
    ) -> Result<(Vec<String>, Option<String>)> {
        let limit = results.to_string();
        let mut params = vec![
            ("list", "search"),
            ("srprop", ""),
            ("srlimit", limit.as_str()),
            ("limit", limit.as_str()),
            ("srsearch", query),
        ];
        if suggestion {
            params.push(("srinfo", "suggestion"));
        }
        let reply = self.query(lang, &params).await?;
        let titles = reply
            .pointer("/query/search")
            .and_then(Value::as_array)
            .map(|hits| {
                hits.iter()
                    .filter_map(|h| h.get("title").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let suggested = reply
            .pointer("/query/searchinfo/suggestion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok((titles, suggested))
    }

    /// The page titled `title` with its text (the package's `page`): with
    /// `auto_suggest`, the title is first replaced by the search's suggestion
    /// or best hit. A missing page is [`Error::NotFound`]; a disambiguation
    /// page is [`Error::InvalidInput`] naming it.
    pub async fn page(&self, lang: &str, title: &str, auto_suggest: bool) -> Result<WikipediaPage> {
        let mut title = title.to_owned();
        if auto_suggest {
            let (hits, suggested) = self.search(lang, &title, 1, true).await?;
            title = match suggested.or_else(|| hits.into_iter().next()) {
                Some(t) => t,
                None => return Err(missing(&title)),
            };
        }
        for _ in 0..=MAX_REDIRECTS {
            let reply = self
                .query(
                    lang,
                    &[
                        ("prop", "info|pageprops"),
                        ("inprop", "url"),
                        ("ppprop", "disambiguation"),
                        ("redirects", ""),
                        ("titles", &title),
                    ],
                )
                .await?;
            let query = reply.get("query").ok_or_else(|| odd_reply(&title))?;
            let (pageid, page) = query
                .get("pages")
                .and_then(Value::as_object)
                .and_then(|p| p.iter().next())
                .ok_or_else(|| odd_reply(&title))?;
            if page.get("missing").is_some() || pageid.starts_with('-') {
                return Err(missing(&title));
            }
            if let Some(to) = query.pointer("/redirects/0/to").and_then(Value::as_str) {
                title = to.to_owned();
                continue;
            }
            if page.get("pageprops").is_some() {
                return Err(Error::InvalidInput(format!(
                    "`{title}` is a disambiguation page on Wikipedia: it lists several pages of that name; search for a more precise title"
                )));
            }
            let title = page
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(&title)
                .to_owned();
            let url = page
                .get("fullurl")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let content = self.content(lang, &title, pageid).await?;
            return Ok(WikipediaPage {
                pageid: pageid.clone(),
                title,
                url,
                content,
            });
        }
        Err(Error::InvalidInput(format!(
            "`{title}` redirects more than {MAX_REDIRECTS} times on Wikipedia"
        )))
    }

    /// The page's plain-text extract (the package's `content`).
    async fn content(&self, lang: &str, title: &str, pageid: &str) -> Result<String> {
        let reply = self
            .query(
                lang,
                &[
                    ("prop", "extracts|revisions"),
                    ("explaintext", ""),
                    ("rvprop", "ids"),
                    ("titles", title),
                ],
            )
            .await?;
        reply
            .pointer(&format!("/query/pages/{pageid}/extract"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| odd_reply(title))
    }
}

fn missing(title: &str) -> Error {
    Error::NotFound(format!("Wikipedia has no page `{title}`"))
}

fn odd_reply(title: &str) -> Error {
    Error::provider(
        PROVIDER,
        format!("the reply about `{title}` does not have the MediaWiki API's shape"),
        std::io::Error::other("unexpected reply"),
    )
}
