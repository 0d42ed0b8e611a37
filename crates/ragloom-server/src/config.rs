//! How the server runs: keys, browsers, limits and timeouts, with the defaults
//! a service on one machine wants (docs/server.md gives each one's reason).

use std::time::Duration;

/// The server's settings. `Default` is a local server: no keys, no CORS,
/// loopback host names only, 4 concurrent LLM calls with 64 waiting, 120 s
/// per request, and every connection, request, session and upload bounded.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Bearer tokens that open the API; empty leaves it open.
    pub api_keys: Vec<String>,
    /// Browser origins allowed by CORS and to send state-changing requests
    /// (`*` for any); empty: only the server's own pages.
    pub cors_origins: Vec<String>,
    /// Host names clients may reach the server by (DNS-rebinding protection),
    /// beyond loopback names and IP addresses; `*` turns the check off.
    pub allowed_hosts: Vec<String>,
    /// The largest JSON body, in bytes.
    pub max_body_bytes: usize,
    /// The largest upload (all files of one request), in bytes.
    pub max_upload_bytes: usize,
    /// How long one request may take, its body's reading and generation included.
    pub request_timeout: Duration,
    /// How long a client may take to send a request's headers; also how long
    /// an idle kept-alive connection stays open.
    pub header_read_timeout: Duration,
    /// How long an answer may wait for its client to read it (a write that
    /// makes no progress); past that the connection closes.
    pub send_timeout: Duration,
    /// Connections open at once; more wait to be accepted.
    pub max_connections: usize,
    /// Requests answered at once, per API key when keys are set (else for
    /// everyone); past that a request gets 429.
    pub max_concurrent_requests: usize,
    /// LLM calls that run at once; more wait in a queue.
    pub max_concurrent_llm: usize,
    /// Calls that may wait for one of those; past that a request gets 429.
    pub max_queued_llm: usize,
    /// MCP sessions kept at once; a new one past that ends the one idle longest.
    pub max_mcp_sessions: usize,
    /// An MCP session unused this long is ended.
    pub mcp_session_idle: Duration,
    /// Uploads being received at once; past that 429.
    pub max_uploads_in_flight: usize,
    /// Upload bytes taken per minute, all clients together; past that 429
    /// with the seconds until there is room again.
    pub max_upload_bytes_per_minute: u64,
    /// Passages retrieved per question unless a request says otherwise.
    pub top_k: usize,
    /// The most passages one request may ask for.
    pub max_top_k: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            api_keys: Vec::new(),
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 2 * 1024 * 1024,
            max_upload_bytes: 64 * 1024 * 1024,
            request_timeout: Duration::from_secs(120),
            header_read_timeout: Duration::from_secs(10),
            send_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_concurrent_requests: 128,
            max_concurrent_llm: 4,
            max_queued_llm: 64,
            max_mcp_sessions: 256,
            mcp_session_idle: Duration::from_secs(300),
            max_uploads_in_flight: 4,
            max_upload_bytes_per_minute: 1024 * 1024 * 1024,
            top_k: 4,
            max_top_k: 100,
        }
    }
}
