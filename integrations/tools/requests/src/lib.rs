//! `RequestsToolSpec`: `get_request` and `post_request` tools that let a model
//! call an HTTP API at a configured base URL, and nowhere else.
//!
//! LlamaIndex's `RequestsToolSpec` (package `llama-index-tools-requests`)
//! takes any URL; here a URL must be relative to the base URL or on one of the
//! allowed origins (scheme, host and port), so a model cannot be steered into
//! calling arbitrary hosts. Every redirect hop is checked the same way, and
//! custom headers (an API key) are dropped on a hop to another origin; they
//! are never shown in `Debug` output either. Names are resolved by the tool
//! and internal addresses (loopback, private, link-local, CGNAT, ...) refused
//! before any connection, unless allowed; bodies are read up to a byte cap.

#![warn(missing_docs)]

mod guard;

pub use guard::{HostResolver, SystemResolver, is_internal};

use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec, truncate_tool_output};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::Url;

const PROVIDER: &str = "requests";

/// Description of `get_request`.
pub const GET_DESCRIPTION: &str = "get_request(url: str, params: Optional[dict] = None)\nUse this to GET content from an API or website.\n\nArgs:\n    url (str): The url (or a path relative to the base url) to make the get request against\n    params (dict): the parameters to provide with the get request";
/// Description of `post_request`.
pub const POST_DESCRIPTION: &str = "post_request(url: str, data: Optional[dict] = None)\nUse this to POST content to an API or website.\n\nArgs:\n    url (str): The url (or a path relative to the base url) to make the post request against\n    data (dict): the key-value pairs to provide with the post request, sent as JSON";

/// Default limit, in characters, on a response body handed to the model.
pub const DEFAULT_MAX_RESPONSE_CHARS: usize = 8_000;
/// Default limit, in bytes, on a response body read from the network.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Default number of redirects followed (each hop checked).
pub const DEFAULT_MAX_REDIRECTS: usize = 5;

/// HTTP tools limited to a base URL and an allow-list of origins.
#[derive(Clone)]
pub struct RequestsToolSpec {
    /// Built on first use from the settings below.
    client: Arc<OnceLock<reqwest::Client>>,
    base_url: Url,
    allowed: Vec<String>,
    headers: Vec<(String, String)>,
    max_response_chars: usize,
    max_response_bytes: usize,
    max_redirects: usize,
    timeout: Duration,
    resolver: Arc<dyn HostResolver>,
    allow_internal: bool,
}

impl fmt::Debug for RequestsToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may hold API keys: only their names are shown.
        let header_names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("RequestsToolSpec")
            .field("base_url", &self.base_url.as_str())
            .field("allowed", &self.allowed)
            .field("headers", &header_names)
            .field("max_response_chars", &self.max_response_chars)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_redirects", &self.max_redirects)
            .field("allow_internal", &self.allow_internal)
            .finish_non_exhaustive()
    }
}

fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

impl RequestsToolSpec {
    /// Requests go to `base_url` (relative URLs are joined to it) and its
    /// origin is allowed; a malformed URL is an error naming it.
    pub fn new(base_url: &str) -> Result<Self> {
        let mut base_url = Url::parse(base_url)
            .map_err(|e| Error::invalid(format!("base url `{base_url}`"), e))?;
        if !base_url.path().ends_with('/') {
            // Without the slash, joining `items` would replace the last segment.
            let path = format!("{}/", base_url.path());
            base_url.set_path(&path);
        }
        Ok(Self {
            allowed: vec![origin_of(&base_url)],
            client: Arc::default(),
            base_url,
            headers: Vec::new(),
            max_response_chars: DEFAULT_MAX_RESPONSE_CHARS,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            timeout: Duration::from_secs(30),
            resolver: Arc::new(SystemResolver),
            allow_internal: false,
        })
    }

    fn http(&self) -> Result<&reqwest::Client> {
        if let Some(c) = self.client.get() {
            return Ok(c);
        }
        let built = reqwest::Client::builder()
            .timeout(self.timeout)
            // Hops are followed (and checked) by `send`; proxies would resolve
            // names out of the resolver's sight.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(guard::GuardedResolver {
                inner: Arc::clone(&self.resolver),
                allow_internal: self.allow_internal,
            }))
            .build()
            .map_err(|e| Error::provider(PROVIDER, "building the HTTP client", e))?;
        Ok(self.client.get_or_init(|| built))
    }

    /// A fresh client is built with the changed settings.
    fn changed(mut self) -> Self {
        self.client = Arc::default();
        self
    }

    /// Also allows absolute URLs on `origin` (e.g. `https://api.example.com`).
    pub fn allow_origin(mut self, origin: &str) -> Result<Self> {
        let url = Url::parse(origin)
            .map_err(|e| Error::invalid(format!("allowed origin `{origin}`"), e))?;
        self.allowed.push(origin_of(&url));
        Ok(self)
    }

    /// Sends `name: value` with every request (e.g. an `Authorization` header).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The whole-request time limit (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.changed()
    }

    /// Lets requests reach internal addresses (loopback, private networks,
    /// link-local, CGNAT...): for an API on the same machine or network.
    /// Off by default.
    pub fn allow_internal_addresses(mut self, allow: bool) -> Self {
        self.allow_internal = allow;
        self.changed()
    }

    /// Resolves host names with `resolver` instead of the system's.
    pub fn resolver(mut self, resolver: Arc<dyn HostResolver>) -> Self {
        self.resolver = resolver;
        self.changed()
    }

    /// How many redirects are followed, each checked against the allowed
    /// origins (default 5; 0 returns the redirect itself as an error).
    pub fn max_redirects(mut self, n: usize) -> Self {
        self.max_redirects = n;
        self
    }

    /// How many bytes of a response body are read (default 1 MiB); the rest
    /// is not downloaded.
    pub fn max_response_bytes(mut self, n: usize) -> Self {
        self.max_response_bytes = n;
        self
    }

    /// How many characters of a response body reach the model (default 8000).
    pub fn max_response_chars(mut self, max: usize) -> Self {
        self.max_response_chars = max;
        self
    }

    /// The URL a model's `url` argument resolves to, if it is allowed.
    pub fn resolve(&self, url: &str) -> Result<Url> {
        let resolved = match Url::parse(url) {
            Ok(absolute) => absolute,
            Err(url::ParseError::RelativeUrlWithoutBase) => self
                .base_url
                .join(url.trim_start_matches('/'))
                .map_err(|e| Error::invalid(format!("url `{url}`"), e))?,
            Err(e) => return Err(Error::invalid(format!("url `{url}`"), e)),
        };
        self.check(url, resolved)
    }

    /// Refuses `resolved` unless its origin is allowed and its host, when an
    /// IP literal, may be reached.
    fn check(&self, url: &str, resolved: Url) -> Result<Url> {
        let origin = origin_of(&resolved);
        if !self.allowed.contains(&origin) {
            return Err(Error::InvalidInput(format!(
                "url `{url}` is not allowed: requests may only go to {} (use a path relative to {})",
                self.allowed.join(", "),
                self.base_url
            )));
        }
        guard::check_literal(&resolved, self.allow_internal)?;
        Ok(resolved)
    }

    /// GETs `url` with query `params`; returns the body (JSON bodies parsed).
    pub async fn get_request(
        &self,
        url: &str,
        params: Option<&Map<String, Value>>,
    ) -> Result<Value> {
        let mut target = self.resolve(url)?;
        if let Some(params) = params {
            let mut pairs = target.query_pairs_mut();
            for (k, v) in params {
                match v {
                    Value::String(s) => pairs.append_pair(k, s),
                    other => pairs.append_pair(k, &other.to_string()),
                };
            }
        }
        self.send(reqwest::Method::GET, target, None).await
    }

    /// POSTs `data` as JSON to `url`; returns the body (JSON bodies parsed).
    pub async fn post_request(&self, url: &str, data: Option<&Value>) -> Result<Value> {
        let target = self.resolve(url)?;
        let body = serde_json::to_vec(data.unwrap_or(&json!({})))?;
        self.send(reqwest::Method::POST, target, Some(body)).await
    }

    /// Any method to `url`, with `query` pairs and an optional JSON `body`,
    /// under the same guards; returns the body (JSON bodies parsed, an empty
    /// body as `""`).
    pub async fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Value> {
        let mut target = self.resolve(url)?;
        if !query.is_empty() {
            let mut pairs = target.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        let body = body.map(serde_json::to_vec).transpose()?;
        self.send(method, target, body).await
    }

    /// A request's outcome as a tool's output: the body as text (JSON
    /// compact), cut to the response character limit, the parsed body as the
    /// raw output; a failure is an error output the model reads.
    pub fn tool_output(&self, tool: &str, input: Value, outcome: Result<Value>) -> ToolOutput {
        match outcome {
            Ok(body) => {
                let content = match &body {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let content = truncate_tool_output(&content, self.max_response_chars);
                ToolOutput::new(tool.to_owned(), content, input, body)
            }
            Err(e) => ToolOutput::error(tool.to_owned(), input, e),
        }
    }

    /// Sends the request, following redirects hop by hop: each target is
    /// checked as the first was, and the configured headers are sent only
    /// to the base URL's origin.
    async fn send(
        &self,
        mut method: reqwest::Method,
        mut target: Url,
        mut body: Option<Vec<u8>>,
    ) -> Result<Value> {
        let client = self.http()?;
        // Headers (keys) go to the base URL's origin only: not to another
        // allowed origin, nor where a redirect leads.
        let home = origin_of(&self.base_url);
        let mut hops = 0;
        loop {
            let mut req = client.request(method.clone(), target.clone());
            if origin_of(&target) == home {
                for (k, v) in &self.headers {
                    req = req.header(k.as_str(), v.as_str());
                }
            }
            if let Some(b) = &body {
                req = req
                    .header("content-type", "application/json")
                    .body(b.clone());
            }
            let resp = req.send().await.map_err(|e| {
                // The cause (a refused address, a refused connection) is
                // what the model and the user need to see.
                let mut cause: &dyn std::error::Error = &e;
                while let Some(next) = cause.source() {
                    cause = next;
                }
                Error::provider(PROVIDER, format!("request to {target} failed: {cause}"), e)
            })?;
            let status = resp.status();
            if status.is_redirection() {
                let location = resp
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let Some(location) = location else {
                    return Err(Error::InvalidInput(format!(
                        "{target} answered {status} without a Location"
                    )));
                };
                if hops >= self.max_redirects {
                    return Err(Error::InvalidInput(format!(
                        "{target} redirects to {location}: more than {} redirects",
                        self.max_redirects
                    )));
                }
                hops += 1;
                let next = target
                    .join(&location)
                    .map_err(|e| Error::invalid(format!("redirect to `{location}`"), e))?;
                target = self.check(&location, next)?;
                // As browsers do: 303, and 301/302 after a POST, continue as a GET.
                if status == reqwest::StatusCode::SEE_OTHER
                    || (method == reqwest::Method::POST && matches!(status.as_u16(), 301 | 302))
                {
                    method = reqwest::Method::GET;
                    body = None;
                }
                continue;
            }
            let text = self.read_capped(resp, &target).await?;
            if !status.is_success() {
                return Err(Error::InvalidInput(format!(
                    "{target} answered {status}: {}",
                    truncate_tool_output(&text, 500)
                )));
            }
            // As LlamaIndex: the parsed JSON when the body is JSON, else the text.
            return Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)));
        }
    }

    /// The body, read chunk by chunk up to the byte cap (the rest is never downloaded).
    async fn read_capped(&self, mut resp: reqwest::Response, target: &Url) -> Result<String> {
        let mut bytes: Vec<u8> = Vec::new();
        let mut cut = false;
        while let Some(chunk) = resp.chunk().await.map_err(|e| {
            Error::provider(PROVIDER, format!("reading the response of {target}"), e)
        })? {
            let room = self.max_response_bytes.saturating_sub(bytes.len());
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                cut = true;
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if cut {
            text.push_str(&format!(
                "\n[response cut at {} bytes]",
                self.max_response_bytes
            ));
        }
        Ok(text)
    }
}

#[derive(Clone, Copy, Debug)]
enum Method {
    Get,
    Post,
}

#[derive(Debug)]
struct RequestTool {
    spec: RequestsToolSpec,
    method: Method,
    metadata: ToolMetadata,
}

impl RequestTool {
    async fn run(&self, input: &Value) -> Result<Value> {
        let args = match input {
            Value::Object(map) => map.clone(),
            Value::String(s) => {
                let mut m = Map::new();
                m.insert("url".into(), Value::String(s.clone()));
                m
            }
            other => {
                return Err(Error::InvalidInput(format!(
                    "expected {{\"url\": \"...\"}}, got {other}"
                )));
            }
        };
        let Some(Value::String(url)) = args.get("url") else {
            return Err(Error::InvalidInput(
                "missing required field `url` (a string)".into(),
            ));
        };
        match self.method {
            Method::Get => {
                let params = match args.get("params") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(p)) => Some(p),
                    Some(other) => {
                        return Err(Error::InvalidInput(format!(
                            "field `params`: expected an object, got {other}"
                        )));
                    }
                };
                self.spec.get_request(url, params).await
            }
            Method::Post => {
                self.spec
                    .post_request(url, args.get("data").filter(|d| !d.is_null()))
                    .await
            }
        }
    }
}

#[async_trait]
impl Tool for RequestTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let outcome = self.run(&input).await;
        Ok(self.spec.tool_output(&self.metadata.name, input, outcome))
    }
}

impl ToolSpec for RequestsToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        vec!["get_request".into(), "post_request".into()]
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        let tool = |method, name: &str, description: &str, extra: &str| -> Arc<dyn Tool> {
            let mut properties = Map::new();
            properties.insert("url".into(), json!({"type": "string"}));
            properties.insert(extra.into(), json!({"type": ["object", "null"]}));
            Arc::new(RequestTool {
                spec: self.clone(),
                method,
                metadata: ToolMetadata::new(name, description).with_fn_schema(json!({
                    "type": "object",
                    "properties": properties,
                    "required": ["url"],
                })),
            })
        };
        vec![
            tool(Method::Get, "get_request", GET_DESCRIPTION, "params"),
            tool(Method::Post, "post_request", POST_DESCRIPTION, "data"),
        ]
    }
}
