//! A local HTTP server that answers a script of replies in order and keeps
//! the requests it got: tests and offline examples of API tools.

use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::any};

/// One scripted reply: status, headers and a JSON body.
#[derive(Clone, Debug)]
pub struct ReplayReply {
    /// The HTTP status.
    pub status: u16,
    /// Extra headers (`Retry-After`, ...).
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
    /// How long the server waits before answering.
    pub delay: Option<std::time::Duration>,
}

impl ReplayReply {
    /// A reply with this status and body.
    pub fn new(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
            delay: None,
        }
    }

    /// The reply, sent after `delay`.
    pub fn delayed(mut self, delay: std::time::Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// The reply with a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

type Script = Arc<Mutex<VecDeque<ReplayReply>>>;

struct Next(Script);

impl Respond for Next {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let next = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        match next {
            Some(reply) => {
                let mut t = ResponseTemplate::new(reply.status).set_body_json(reply.body);
                for (name, value) in reply.headers {
                    t = t.insert_header(name.as_str(), value.as_str());
                }
                if let Some(delay) = reply.delay {
                    t = t.set_delay(delay);
                }
                t
            }
            // Past the script: a status no client retries, so a test sees it.
            None => ResponseTemplate::new(599)
                .set_body_json(serde_json::json!({"error": "the replay script is exhausted"})),
        }
    }
}

/// Answers every request with the next scripted reply, on 127.0.0.1.
pub struct ReplayServer {
    server: MockServer,
    script: Script,
}

impl std::fmt::Debug for ReplayServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayServer")
            .field("uri", &self.server.uri())
            .field("left", &self.left())
            .finish()
    }
}

impl ReplayServer {
    /// A server with an empty script.
    pub async fn start() -> Self {
        let server = MockServer::start().await;
        let script: Script = Arc::default();
        Mock::given(any())
            .respond_with(Next(script.clone()))
            .mount(&server)
            .await;
        Self { server, script }
    }

    /// `http://127.0.0.1:port` (no trailing slash).
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = ReplayReply>) {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(replies);
    }

    /// How many scripted replies are still unused.
    pub fn left(&self) -> usize {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Every request received so far, in order.
    pub async fn requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap_or_default()
    }

    /// Forgets the requests received so far (the script is kept).
    pub async fn reset_requests(&self) {
        self.server.reset().await;
        Mock::given(any())
            .respond_with(Next(self.script.clone()))
            .mount(&self.server)
            .await;
    }
}

impl ReplayReply {
    /// A reply as a recorder wrote it: `{"status", "headers", "body"}`.
    pub fn from_recorded(reply: &Value) -> Self {
        let mut out = Self::new(
            reply["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(200),
            reply["body"].clone(),
        );
        for (name, value) in reply["headers"].as_object().into_iter().flatten() {
            out = out.header(name, value.as_str().unwrap_or_default());
        }
        out
    }
}

/// A request as tests compare it: verb, path, query in order, the
/// `Authorization` header, and a JSON or form body (form fields sorted:
/// their order means nothing).
#[derive(Clone, Debug, PartialEq)]
pub struct SeenRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path.
    pub path: String,
    /// The query, in order.
    pub query: Vec<(String, String)>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// A JSON body.
    pub json: Option<Value>,
    /// A form body, sorted.
    pub form: Option<Vec<(String, String)>>,
}

fn pairs(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (text(&p[0]), text(&p[1]))
        })
        .collect()
}

impl SeenRequest {
    /// A request the server received.
    pub fn from_request(r: &Request) -> Self {
        let content_type = r
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let (mut json, mut form) = (None, None);
        if !r.body.is_empty() {
            if content_type.starts_with("application/json") {
                json = serde_json::from_slice(&r.body).ok();
            } else if content_type.starts_with("application/x-www-form-urlencoded") {
                let mut f: Vec<(String, String)> = url::form_urlencoded::parse(&r.body)
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                f.sort();
                form = Some(f);
            }
        }
        Self {
            method: r.method.to_string(),
            path: r.url.path().to_owned(),
            query: r
                .url
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            authorization: r
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            json,
            form,
        }
    }

    /// A request as a recorder wrote it: `method`, `path`, `query` (pairs),
    /// `authorization`, and `json` or `form` (pairs).
    pub fn from_recorded(r: &Value) -> Self {
        let mut form = r.get("form").map(pairs);
        if let Some(f) = form.as_mut() {
            f.sort();
        }
        let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
        Self {
            method: text("method"),
            path: text("path"),
            query: pairs(&r["query"]),
            authorization: r["authorization"].as_str().map(str::to_owned),
            json: r.get("json").cloned(),
            form,
        }
    }
}

impl ReplayServer {
    /// Every request received so far, as tests compare them.
    pub async fn seen(&self) -> Vec<SeenRequest> {
        self.requests()
            .await
            .iter()
            .map(SeenRequest::from_request)
            .collect()
    }
}
