//! Reading Ollama's streamed `/api/chat` reply: newline-delimited JSON
//! objects, each a piece of the answer, the last one `"done": true` with the eval counts.
//!
//! A line that is not a reply is not dropped: a server's mid-stream
//! `{"error": ...}`, a final line without `message` and the cause of a broken
//! connection all reach the caller.

use crate::convert::{THINKING_KEY, ToolNames, tool_call_from_wire, usage};
use crate::wire::ToolCall as WireToolCall;
use futures::stream::{self, Stream, StreamExt};
use ragloom_common_ollama::{Connection, MAX_STREAM_LINE_BYTES, PROVIDER, server_error_text};
use ragloom_core::llms::{ChatMessage, ChatResponse, ChatResponseStream, ToolCall};
use ragloom_core::{Error, Result};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};

/// The key of one stream item's reasoning text in `additional_kwargs`.
pub const THINKING_DELTA_KEY: &str = "thinking_delta";

/// One line of the stream. Every field is optional: Ollama's final line may
/// carry no `message`, and an error line carries only `error`.
#[derive(Debug, Default, Deserialize)]
struct StreamLine {
    #[serde(default)]
    message: Option<LineMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
struct LineMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

/// What is needed to report errors and name tools while decoding.
#[derive(Debug)]
pub(crate) struct StreamContext {
    /// What the request was doing, for error messages.
    pub(crate) what: String,
    /// The connection, for transport errors.
    pub(crate) conn: Connection,
    /// Tool names to map calls back to.
    pub(crate) tool_names: ToolNames,
}

/// Turns stream lines into cumulative [`ChatResponse`]s.
#[derive(Debug)]
struct Decoder {
    ctx: StreamContext,
    buffer: Vec<u8>,
    text: String,
    thinking: String,
    tool_calls: Vec<ToolCall>,
    /// Ollama may repeat a tool call in later lines; each is kept once.
    seen_calls: HashSet<(String, String)>,
    /// The `done` line arrived, or an error ended the stream.
    finished: bool,
}

impl Decoder {
    fn new(ctx: StreamContext) -> Self {
        Self {
            ctx,
            buffer: Vec::new(),
            text: String::new(),
            thinking: String::new(),
            tool_calls: Vec::new(),
            seen_calls: HashSet::new(),
            finished: false,
        }
    }

    /// Appends bytes and decodes every complete line. Lines are split on raw
    /// bytes, so a character cut between two chunks is joined before decoding.
    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<Result<ChatResponse>>) {
        if self.finished {
            return;
        }
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        while !self.finished {
            let Some(offset) = self.buffer[start..].iter().position(|&b| b == b'\n') else {
                break;
            };
            let end = start + offset;
            let line = self.buffer[start..end].to_vec();
            start = end + 1;
            if let Some(item) = self.line(&line) {
                out.push_back(item);
            }
        }
        self.buffer.drain(..start);
        if !self.finished && self.buffer.len() > MAX_STREAM_LINE_BYTES {
            self.buffer = Vec::new();
            let message = format!(
                "{}: a line of Ollama's stream ran past {MAX_STREAM_LINE_BYTES} bytes without ending",
                self.ctx.what
            );
            out.push_back(Err(Error::Provider {
                provider: PROVIDER.to_owned(),
                message,
                source: None,
            }));
            self.finished = true;
        }
    }

    /// The connection closed: decode what is left, and fail if `done` never came.
    fn finish(&mut self, out: &mut VecDeque<Result<ChatResponse>>) {
        if !self.finished {
            let rest = std::mem::take(&mut self.buffer);
            if let Some(item) = self.line(&rest) {
                out.push_back(item);
            }
        }
        if !self.finished {
            self.finished = true;
            out.push_back(Err(Error::Provider {
                provider: PROVIDER.to_owned(),
                message: format!(
                    "{}: the stream ended before Ollama's final `\"done\": true` line",
                    self.ctx.what
                ),
                source: None,
            }));
        }
    }

    fn fail(
        &mut self,
        message: String,
        source: impl Into<ragloom_core::error::BoxError>,
    ) -> Result<ChatResponse> {
        self.finished = true;
        Err(Error::provider(PROVIDER, message, source))
    }

    /// Decodes one line; `None` for blank lines and pieces with nothing to report.
    fn line(&mut self, bytes: &[u8]) -> Option<Result<ChatResponse>> {
        let text = String::from_utf8_lossy(bytes);
        let line = text.trim();
        if line.is_empty() {
            return None;
        }
        let raw: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                let message = format!(
                    "{}: could not decode a line of Ollama's stream ({e}): {}",
                    self.ctx.what,
                    shorten(line)
                );
                return Some(self.fail(message, e));
            }
        };
        if let Some(error) = raw.get("error") {
            let server = match error.as_str() {
                Some(s) => s.to_owned(),
                None => server_error_text(line),
            };
            let message = format!("{}: {server}", self.ctx.what);
            return Some(self.fail(message, line.to_owned()));
        }
        let parsed: StreamLine = match serde_json::from_value(raw.clone()) {
            Ok(p) => p,
            Err(e) => {
                let message = format!(
                    "{}: unexpected line in Ollama's stream ({e}): {}",
                    self.ctx.what,
                    shorten(line)
                );
                return Some(self.fail(message, e));
            }
        };
        let has_message = parsed.message.is_some();
        let mut delta = String::new();
        let mut thinking_delta = None;
        if let Some(message) = parsed.message {
            delta = message.content.unwrap_or_default();
            self.text.push_str(&delta);
            if let Some(thinking) = message.thinking.filter(|t| !t.is_empty()) {
                self.thinking.push_str(&thinking);
                thinking_delta = Some(thinking);
            }
            for call in message.tool_calls.unwrap_or_default() {
                let key = (
                    call.function.name.clone(),
                    call.function.arguments.to_string(),
                );
                if self.seen_calls.insert(key) {
                    self.tool_calls
                        .push(tool_call_from_wire(&call, &self.ctx.tool_names));
                }
            }
        }
        if !has_message && !parsed.done {
            return None;
        }
        let usage = if parsed.done {
            self.finished = true;
            match (parsed.prompt_eval_count, parsed.eval_count) {
                (Some(p), Some(c)) => {
                    tracing::debug!(
                        provider = PROVIDER,
                        prompt_tokens = p,
                        completion_tokens = c,
                        "ollama stream done"
                    );
                    Some(usage(p, c))
                }
                _ => None,
            }
        } else {
            None
        };
        let mut message = ChatMessage::assistant(self.text.clone());
        message.tool_calls = self.tool_calls.clone();
        if !self.thinking.is_empty() {
            message.additional_kwargs.insert(
                THINKING_KEY.to_owned(),
                Value::String(self.thinking.clone()),
            );
        }
        // The reasoning that came with this piece, where LlamaIndex's Ollama
        // puts it and the workflow agents read it (`AgentStream.thinking_delta`).
        if let Some(thinking) = thinking_delta {
            message
                .additional_kwargs
                .insert(THINKING_DELTA_KEY.to_owned(), Value::String(thinking));
        }
        Some(Ok(ChatResponse {
            message,
            delta: Some(delta),
            raw: Some(raw),
            usage,
        }))
    }
}

/// The first 200 characters of a line, for error messages.
fn shorten(line: &str) -> String {
    let mut out: String = line.chars().take(200).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}

/// Decodes Ollama's NDJSON chat stream into cumulative chat responses: each
/// item's `delta` is the new text, its `message` all text and tool calls so
/// far; the last item carries the usage. Transport failures, error lines and
/// a stream cut before `done` end it with an `Err`.
pub(crate) fn decode_chat_stream<S, B>(bytes: S, ctx: StreamContext) -> ChatResponseStream
where
    S: Stream<Item = reqwest::Result<B>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
{
    let state = (Box::pin(bytes), Decoder::new(ctx), VecDeque::new());
    stream::unfold(state, |(mut bytes, mut decoder, mut queue)| async move {
        loop {
            if let Some(item) = queue.pop_front() {
                return Some((item, (bytes, decoder, queue)));
            }
            if decoder.finished {
                return None;
            }
            match bytes.next().await {
                Some(Ok(chunk)) => decoder.feed(chunk.as_ref(), &mut queue),
                Some(Err(e)) => {
                    decoder.finished = true;
                    let what = decoder.ctx.what.clone();
                    queue.push_back(Err(decoder.ctx.conn.http_error(&what, e)));
                }
                None => decoder.finish(&mut queue),
            }
        }
    })
    .boxed()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ragloom_common_ollama::OllamaHost;

    fn context() -> StreamContext {
        StreamContext {
            what: "chat with model `m`".to_owned(),
            conn: Connection::new(&OllamaHost::parse(""), None).unwrap(),
            tool_names: ToolNames::default(),
        }
    }

    const LINES: &str = concat!(
        "{\"message\":{\"role\":\"assistant\",\"content\":\"Caf\u{e9} \"},\"done\":false}\n",
        "\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\u{1f600}\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"x\":1}}}]},\"done\":false}\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"x\":1}}}]},\"done\":false}\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"prompt_eval_count\":3,\"eval_count\":4}\n",
    );

    fn decode_in_pieces(size: usize) -> Vec<Result<ChatResponse>> {
        let mut decoder = Decoder::new(context());
        let mut out = VecDeque::new();
        for piece in LINES.as_bytes().chunks(size) {
            decoder.feed(piece, &mut out);
        }
        decoder.finish(&mut out);
        out.into_iter().collect()
    }

    #[test]
    fn lines_and_characters_split_across_chunks_decode_the_same() {
        // Every chunk size, down to one byte, cuts lines and multi-byte characters.
        for size in 1..=LINES.len() {
            let items = decode_in_pieces(size);
            assert_eq!(items.len(), 4, "chunk size {size}");
            let last = items.last().unwrap().as_ref().unwrap();
            assert_eq!(
                last.message.content, "Caf\u{e9} \u{1f600}",
                "chunk size {size}"
            );
            // The repeated tool call is kept once.
            assert_eq!(last.message.tool_calls.len(), 1, "chunk size {size}");
            assert_eq!(
                last.message.tool_calls[0].arguments,
                serde_json::json!({"x": 1})
            );
            assert_eq!(last.usage.unwrap().total_tokens, 7);
        }
    }

    #[test]
    fn a_line_that_is_not_json_ends_the_stream_with_its_text() {
        let mut decoder = Decoder::new(context());
        let mut out = VecDeque::new();
        decoder.feed(b"<html>502 Bad Gateway</html>\n{\"done\":true}\n", &mut out);
        assert_eq!(out.len(), 1);
        let err = out.pop_front().unwrap().unwrap_err().to_string();
        assert!(err.contains("502 Bad Gateway"), "{err}");
        decoder.finish(&mut out);
        assert!(out.is_empty(), "nothing after the error");
    }

    #[test]
    fn a_line_that_never_ends_is_refused_at_the_cap() {
        let mut decoder = Decoder::new(context());
        let mut out = VecDeque::new();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..=(MAX_STREAM_LINE_BYTES >> 20) {
            decoder.feed(&chunk, &mut out);
        }
        assert_eq!(out.len(), 1);
        let err = out.pop_front().unwrap().unwrap_err().to_string();
        assert!(err.contains("without ending"), "{err}");
        assert!(decoder.buffer.capacity() < 1 << 20, "the buffer is let go");
        decoder.feed(&chunk, &mut out);
        decoder.finish(&mut out);
        assert!(out.is_empty(), "nothing after the error");
    }

    #[test]
    fn a_final_line_without_newline_still_counts() {
        let mut decoder = Decoder::new(context());
        let mut out = VecDeque::new();
        decoder.feed(
            b"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true}",
            &mut out,
        );
        decoder.finish(&mut out);
        let items: Vec<_> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].message.content, "a");
        assert_eq!(items[1].usage, None);
    }
}
