//! The OpenAI-compatible API: `GET /v1/models` (one model per index) and
//! `POST /v1/chat/completions`, streamed as server-sent events or not.

use crate::answer::{self, AnswerStream, ChatModeArg, Usage};
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::passage::Passage;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use ragloom::{ChatMessage, MessageRole};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use utoipa::ToSchema;

/// `GET /v1/models`: one model per index.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ModelList {
    /// Always `list`.
    pub object: &'static str,
    pub data: Vec<Model>,
}

/// An index, as a model.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Model {
    /// The index's name.
    pub id: String,
    /// Always `model`.
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'static str,
}

#[utoipa::path(get, path = "/v1/models", tag = "openai",
    responses((status = 200, body = ModelList), (status = 401, body = ErrorBody)))]
pub(crate) async fn models(State(state): State<Arc<AppState>>) -> Json<ModelList> {
    Json(ModelList {
        object: "list",
        data: state
            .indexes
            .iter()
            .map(|i| Model {
                id: i.name().to_string(),
                object: "model",
                created: 0,
                owned_by: "ragloom",
            })
            .collect(),
    })
}

/// A chat completion request (OpenAI's fields; others are accepted and ignored).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct ChatCompletionRequest {
    /// The index to chat with (`GET /v1/models`).
    pub model: String,
    /// The conversation; the last message is the user's question.
    pub messages: Vec<InMessage>,
    #[serde(default)]
    pub stream: bool,
    pub stream_options: Option<StreamOptions>,
    /// ragloom: how the index is used (default `condense_plus_context`).
    pub chat_mode: Option<ChatModeArg>,
    /// ragloom: passages to retrieve.
    pub top_k: Option<usize>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct StreamOptions {
    /// Send a last chunk with the token counts.
    #[serde(default)]
    pub include_usage: bool,
}

/// One message: `content` is a string or a list of text parts.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct InMessage {
    /// `system`, `developer`, `user` or `assistant`.
    pub role: String,
    #[schema(value_type = Object)]
    #[serde(default)]
    pub content: Value,
}

fn to_message(i: usize, m: InMessage) -> Result<ChatMessage, ApiError> {
    let bad = |what: String| ApiError::bad_request(what).param(format!("messages[{i}]"));
    let role = match m.role.as_str() {
        "system" => MessageRole::System,
        "developer" => MessageRole::Developer,
        "user" => MessageRole::User,
        "assistant" => MessageRole::Assistant,
        other => {
            return Err(bad(format!(
                "messages[{i}].role is `{other}`: it must be system, developer, user or assistant"
            )));
        }
    };
    let content = match m.content {
        Value::String(s) => s,
        Value::Null => String::new(),
        Value::Array(parts) => {
            let mut texts = Vec::new();
            for p in parts {
                match (
                    p.get("type").and_then(Value::as_str),
                    p.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(t)) => texts.push(t.to_string()),
                    _ => {
                        return Err(bad(format!(
                            "messages[{i}].content: only text parts are understood"
                        )));
                    }
                }
            }
            texts.join("\n")
        }
        _ => {
            return Err(bad(format!(
                "messages[{i}].content must be a string or a list of text parts"
            )));
        }
    };
    Ok(ChatMessage::new(role, content))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[utoipa::path(post, path = "/v1/chat/completions", tag = "openai", request_body = ChatCompletionRequest,
    responses(
        (status = 200, description = "`chat.completion`, or `text/event-stream` of `chat.completion.chunk` ending in `data: [DONE]`; the ragloom field `sources` lists the passages"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub(crate) async fn chat_completions(
    State(state): State<Arc<AppState>>,
    ApiJson(req): ApiJson<ChatCompletionRequest>,
) -> Result<Response, ApiError> {
    let index = state.index(Some(&req.model)).map_err(|_| {
        ApiError::not_found(
            "model_not_found",
            format!(
                "The model `{}` does not exist: GET /v1/models lists the indexes",
                req.model
            ),
        )
        .param("model")
    })?;
    if req.messages.is_empty() {
        return Err(
            ApiError::bad_request("messages is empty: give at least the user's question")
                .param("messages"),
        );
    }
    let messages = req
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| to_message(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    let top_k = state.top_k(req.top_k)?;
    let timeout = state.config.request_timeout;
    let deadline = tokio::time::Instant::now() + timeout;
    let view = index.view().await?;
    let model = index.name().to_string();
    let mode = req.chat_mode.unwrap_or_default();
    let answer =
        tokio::time::timeout_at(deadline, answer::chat(&state, &view, messages, mode, top_k))
            .await
            .map_err(|_| ApiError::timeout(timeout.as_secs()))??;
    let id = format!("chatcmpl-{}", uuid::Uuid::new_v4().simple());
    if req.stream {
        let include_usage = req.stream_options.is_some_and(|o| o.include_usage);
        let events = stream_events(state.clone(), answer, id, model, include_usage, deadline);
        return Ok(Sse::new(events)
            .keep_alive(KeepAlive::default())
            .into_response());
    }
    let AnswerStream {
        mut deltas,
        sources,
        tokens,
    } = answer;
    let mut text = String::new();
    loop {
        match tokio::time::timeout_at(deadline, deltas.next()).await {
            Err(_) => return Err(ApiError::timeout(timeout.as_secs())),
            Ok(None) => break,
            Ok(Some(d)) => text.push_str(&d?),
        }
    }
    let usage = tokens.usage();
    state
        .metrics
        .tokens(usage.prompt_tokens, usage.completion_tokens);
    Ok(Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": now(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text.trim()},
            "finish_reason": "stop",
        }],
        "usage": usage,
        "sources": sources,
    }))
    .into_response())
}

/// Where a streamed answer is.
enum Phase {
    Start,
    Deltas,
    Finish,
    Usage,
    Done,
    End,
}

struct Streaming {
    state: Arc<AppState>,
    answer: AnswerStream,
    phase: Phase,
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    deadline: tokio::time::Instant,
    started: Instant,
}

impl Streaming {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }

    fn sources(&self) -> &[Passage] {
        &self.answer.sources
    }
}

fn event(v: &Value) -> Event {
    Event::default().data(v.to_string())
}

/// The SSE events of a streamed answer: the role, the deltas, the finish
/// chunk with the sources, the usage chunk when asked, then `[DONE]`. The
/// stream owns the generation: a client that goes away drops it, and the
/// LLM call with it.
fn stream_events(
    state: Arc<AppState>,
    answer: AnswerStream,
    id: String,
    model: String,
    include_usage: bool,
    deadline: tokio::time::Instant,
) -> impl futures::Stream<Item = Result<Event, std::convert::Infallible>> {
    let st = Streaming {
        state,
        answer,
        phase: Phase::Start,
        id,
        created: now(),
        model,
        include_usage,
        deadline,
        started: Instant::now(),
    };
    futures::stream::unfold(st, |mut st| async move {
        loop {
            match st.phase {
                Phase::Start => {
                    st.phase = Phase::Deltas;
                    let e = event(&st.chunk(json!({"role": "assistant", "content": ""}), None));
                    return Some((Ok(e), st));
                }
                Phase::Deltas => {
                    match tokio::time::timeout_at(st.deadline, st.answer.deltas.next()).await {
                        Ok(Some(Ok(d))) if d.is_empty() => continue,
                        Ok(Some(Ok(d))) => {
                            let e = event(&st.chunk(json!({"content": d}), None));
                            return Some((Ok(e), st));
                        }
                        Ok(None) => st.phase = Phase::Finish,
                        outcome => {
                            let err = match outcome {
                                Ok(Some(Err(e))) => ApiError::from(e),
                                _ => ApiError::timeout(st.started.elapsed().as_secs()),
                            };
                            tracing::warn!(code = err.code(), "a streamed answer failed");
                            st.phase = Phase::Done;
                            let e = event(&serde_json::to_value(&err.body).unwrap_or_default());
                            return Some((Ok(e), st));
                        }
                    }
                }
                Phase::Finish => {
                    let usage = st.answer.tokens.usage();
                    st.state
                        .metrics
                        .tokens(usage.prompt_tokens, usage.completion_tokens);
                    let mut c = st.chunk(json!({}), Some("stop"));
                    c["sources"] = json!(st.sources());
                    st.phase = if st.include_usage {
                        Phase::Usage
                    } else {
                        Phase::Done
                    };
                    return Some((Ok(event(&c)), st));
                }
                Phase::Usage => {
                    let usage: Usage = st.answer.tokens.usage();
                    let mut c = st.chunk(json!({}), None);
                    c["choices"] = json!([]);
                    c["usage"] = json!(usage);
                    c["sources"] = json!(st.sources());
                    st.phase = Phase::Done;
                    return Some((Ok(event(&c)), st));
                }
                Phase::Done => {
                    st.phase = Phase::End;
                    return Some((Ok(Event::default().data("[DONE]")), st));
                }
                Phase::End => return None,
            }
        }
    })
}
