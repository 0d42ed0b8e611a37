//! An HTTP/1.1 server on 127.0.0.1 that misbehaves on cue: provider crates
//! test their retries, timeouts and error messages against it.
//!
//! Each connection serves one request (`Connection: close`) with the next
//! [`Fault`] of the script; the last one repeats once the script runs out.

use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The answer computed from a request, for faults that must answer correctly.
pub type Responder = Arc<dyn Fn(&Recorded) -> Fault + Send + Sync>;

/// What the server does with one request.
#[derive(Clone)]
pub enum Fault {
    /// A whole reply with this status, headers and body.
    Reply {
        /// The HTTP status.
        status: u16,
        /// Extra headers (`Content-Length` and `Connection` are added).
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// Reads the request and never answers, holding the connection open.
    Silence,
    /// Reads the request and resets the connection (TCP RST), answering nothing.
    Reset,
    /// A 200 reply with these headers whose body is `chunks`, cut by a reset
    /// after the last one (no `Content-Length`: the client reads until the end).
    ResetAfter {
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body parts, sent one by one.
        chunks: Vec<Vec<u8>>,
    },
    /// Like [`Fault::ResetAfter`], but the connection closes cleanly.
    CloseAfter {
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body parts, sent one by one.
        chunks: Vec<Vec<u8>>,
    },
    /// Whatever the function answers for the request.
    Respond(Responder),
}

impl std::fmt::Debug for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Reply { status, .. } => write!(f, "Reply({status})"),
            Fault::Silence => f.write_str("Silence"),
            Fault::Reset => f.write_str("Reset"),
            Fault::ResetAfter { chunks, .. } => write!(f, "ResetAfter({} chunks)", chunks.len()),
            Fault::CloseAfter { chunks, .. } => write!(f, "CloseAfter({} chunks)", chunks.len()),
            Fault::Respond(_) => f.write_str("Respond"),
        }
    }
}

impl Fault {
    /// A reply with a JSON body.
    pub fn json(status: u16, body: &Value) -> Self {
        Fault::Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    /// A reply whose body is `body` as given (malformed JSON, say), typed as JSON.
    pub fn raw_json(status: u16, body: &str) -> Self {
        Fault::Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    /// A status with a small JSON error body, and `Retry-After` when given.
    pub fn status(status: u16, retry_after: Option<&str>) -> Self {
        let mut fault = Fault::json(
            status,
            &serde_json::json!({"error": {"message": format!("injected {status}"), "type": "injected"}}),
        );
        if let (Fault::Reply { headers, .. }, Some(wait)) = (&mut fault, retry_after) {
            headers.push(("Retry-After".into(), wait.into()));
        }
        fault
    }

    /// Server-sent events: one `data:` line per event, then `data: [DONE]`
    /// if `done`, ending cleanly (a stream cut before `[DONE]` when not).
    pub fn sse(events: &[Value], done: bool) -> Self {
        let mut chunks: Vec<Vec<u8>> = events
            .iter()
            .map(|e| format!("data: {e}\n\n").into_bytes())
            .collect();
        if done {
            chunks.push(b"data: [DONE]\n\n".to_vec());
        }
        Fault::CloseAfter {
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            chunks,
        }
    }

    /// Newline-delimited JSON (Ollama's streams), ending cleanly.
    pub fn ndjson(lines: &[Value]) -> Self {
        Fault::CloseAfter {
            headers: vec![("Content-Type".into(), "application/x-ndjson".into())],
            chunks: lines
                .iter()
                .map(|l| format!("{l}\n").into_bytes())
                .collect(),
        }
    }

    /// The answer of `f` for each request.
    pub fn respond(f: impl Fn(&Recorded) -> Fault + Send + Sync + 'static) -> Self {
        Fault::Respond(Arc::new(f))
    }
}

/// One request the server read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// `GET`, `POST`...
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default, Debug)]
struct Shared {
    script: VecDeque<Fault>,
    last: Option<Fault>,
    requests: Vec<Recorded>,
    connections: usize,
}

/// The server; dropping it stops accepting and closes held connections.
#[derive(Debug)]
pub struct FaultServer {
    url: String,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultServer {
    /// Starts serving `script` on a free port of 127.0.0.1 (inside a tokio runtime).
    pub async fn start(script: Vec<Fault>) -> std::io::Result<FaultServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Mutex::new(Shared {
            script: script.into(),
            ..Shared::default()
        }));
        let accept = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            let mut held = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                lock(&accept).connections += 1;
                held.spawn(serve(stream, Arc::clone(&accept)));
            }
        });
        Ok(FaultServer { url, shared, task })
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests read so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared).requests.clone()
    }

    /// The connections accepted so far.
    pub fn connections(&self) -> usize {
        lock(&self.shared).connections
    }

    /// Replaces what is left of the script.
    pub fn script(&self, script: Vec<Fault>) {
        let mut shared = lock(&self.shared);
        shared.script = script.into();
        shared.last = None;
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every
        // connection task, silent ones included.
        self.task.abort();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

fn next_fault(shared: &Mutex<Shared>) -> Fault {
    let mut s = lock(shared);
    match s.script.pop_front() {
        Some(f) => {
            s.last = Some(f.clone());
            f
        }
        None => s.last.clone().unwrap_or(Fault::Reset),
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Mutex<Shared>>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    lock(&shared).requests.push(request.clone());
    let mut fault = next_fault(&shared);
    if let Fault::Respond(f) = &fault {
        fault = f(&request);
    }
    // A failed write means the client went away: nothing to report.
    let _ = answer(&mut stream, fault).await;
}

async fn answer(stream: &mut TcpStream, fault: Fault) -> std::io::Result<()> {
    match fault {
        Fault::Reply {
            status,
            headers,
            body,
        } => {
            let mut head = head(status, &headers);
            head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            stream.shutdown().await
        }
        Fault::Silence => {
            // Held until the server is dropped.
            std::future::pending::<()>().await;
            Ok(())
        }
        Fault::Reset => stream.set_zero_linger(),
        Fault::ResetAfter { headers, chunks } => {
            send_chunks(stream, &headers, &chunks).await?;
            // Let the chunks reach the client before the reset discards
            // whatever the kernel still holds.
            tokio::time::sleep(Duration::from_millis(50)).await;
            stream.set_zero_linger()
        }
        Fault::CloseAfter { headers, chunks } => {
            send_chunks(stream, &headers, &chunks).await?;
            stream.shutdown().await
        }
        Fault::Respond(_) => stream.set_zero_linger(),
    }
}

async fn send_chunks(
    stream: &mut TcpStream,
    headers: &[(String, String)],
    chunks: &[Vec<u8>],
) -> std::io::Result<()> {
    let mut head = head(200, headers);
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    for chunk in chunks {
        stream.write_all(chunk).await?;
        stream.flush().await?;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

fn head(status: u16, headers: &[(String, String)]) -> String {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nConnection: close\r\n",
        reason(status)
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Reads one request: the head up to a blank line, then `Content-Length` bytes.
async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some(Recorded { method, path, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_cover_the_injected_statuses() {
        assert_eq!(reason(429), "Too Many Requests");
        assert_eq!(reason(299), "Status");
    }
}
