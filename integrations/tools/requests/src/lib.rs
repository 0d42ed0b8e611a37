//! `RequestsToolSpec`: `get_request` and `post_request` tools that let a model
//! call an HTTP API at a configured base URL, and nowhere else.
//!
//! LlamaIndex's `RequestsToolSpec` (package `llama-index-tools-requests`)
//! takes any URL; here a URL must be relative to the base URL or on one of the
//! allowed origins (scheme, host and port), so a model cannot be steered into
//! calling arbitrary hosts. Headers (an API key) can be set per spec; they are
//! never shown in `Debug` output.

use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec, truncate_tool_output};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

const PROVIDER: &str = "requests";

/// Description of `get_request`.
pub const GET_DESCRIPTION: &str = "get_request(url: str, params: Optional[dict] = None)\nUse this to GET content from an API or website.\n\nArgs:\n    url (str): The url (or a path relative to the base url) to make the get request against\n    params (dict): the parameters to provide with the get request";
/// Description of `post_request`.
pub const POST_DESCRIPTION: &str = "post_request(url: str, data: Optional[dict] = None)\nUse this to POST content to an API or website.\n\nArgs:\n    url (str): The url (or a path relative to the base url) to make the post request against\n    data (dict): the key-value pairs to provide with the post request, sent as JSON";

/// Default limit, in characters, on a response body handed to the model.
pub const DEFAULT_MAX_RESPONSE_CHARS: usize = 8_000;

/// HTTP tools limited to a base URL and an allow-list of origins.
#[derive(Clone)]
pub struct RequestsToolSpec {
    client: reqwest::Client,
    base_url: Url,
    allowed: Vec<String>,
    headers: Vec<(String, String)>,
    max_response_chars: usize,
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
            .map_err(|e| Error::InvalidInput(format!("base url `{base_url}`: {e}")))?;
        if !base_url.path().ends_with('/') {
            // Without the slash, joining `items` would replace the last segment.
            let path = format!("{}/", base_url.path());
            base_url.set_path(&path);
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Error::provider(PROVIDER, "building the HTTP client", e))?;
        Ok(Self {
            allowed: vec![origin_of(&base_url)],
            client,
            base_url,
            headers: Vec::new(),
            max_response_chars: DEFAULT_MAX_RESPONSE_CHARS,
        })
    }

    /// Also allows absolute URLs on `origin` (e.g. `https://api.example.com`).
    pub fn allow_origin(mut self, origin: &str) -> Result<Self> {
        let url = Url::parse(origin)
            .map_err(|e| Error::InvalidInput(format!("allowed origin `{origin}`: {e}")))?;
        self.allowed.push(origin_of(&url));
        Ok(self)
    }

    /// Sends `name: value` with every request (e.g. an `Authorization` header).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces the HTTP client (timeouts, proxies, TLS).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
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
                .map_err(|e| Error::InvalidInput(format!("url `{url}`: {e}")))?,
            Err(e) => return Err(Error::InvalidInput(format!("url `{url}`: {e}"))),
        };
        let origin = origin_of(&resolved);
        if !self.allowed.contains(&origin) {
            return Err(Error::InvalidInput(format!(
                "url `{url}` is not allowed: requests may only go to {} (use a path relative to {})",
                self.allowed.join(", "),
                self.base_url
            )));
        }
        Ok(resolved)
    }

    /// GETs `url` with query `params`; returns the body (JSON bodies parsed).
    pub async fn get_request(
        &self,
        url: &str,
        params: Option<&Map<String, Value>>,
    ) -> Result<Value> {
        let target = self.resolve(url)?;
        let mut req = self.client.get(target.clone());
        if let Some(params) = params {
            let pairs: Vec<(String, String)> = params
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        },
                    )
                })
                .collect();
            req = req.query(&pairs);
        }
        self.send(req, &target).await
    }

    /// POSTs `data` as JSON to `url`; returns the body (JSON bodies parsed).
    pub async fn post_request(&self, url: &str, data: Option<&Value>) -> Result<Value> {
        let target = self.resolve(url)?;
        let body = serde_json::to_vec(data.unwrap_or(&json!({})))?;
        let req = self
            .client
            .post(target.clone())
            .header("content-type", "application/json")
            .body(body);
        self.send(req, &target).await
    }

    async fn send(&self, mut req: reqwest::RequestBuilder, target: &Url) -> Result<Value> {
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Error::provider(PROVIDER, format!("request to {target} failed"), e))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| {
            Error::provider(PROVIDER, format!("reading the response of {target}"), e)
        })?;
        if !status.is_success() {
            return Err(Error::InvalidInput(format!(
                "{target} answered {status}: {}",
                truncate_tool_output(&text, 500)
            )));
        }
        // As LlamaIndex: the parsed JSON when the body is JSON, else the text.
        Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
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
        let name = self.metadata.name.clone();
        Ok(match self.run(&input).await {
            Ok(body) => {
                let content = match &body {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let content = truncate_tool_output(&content, self.spec.max_response_chars);
                ToolOutput::new(name, content, input, body)
            }
            Err(e) => ToolOutput::error(name, input, e),
        })
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
