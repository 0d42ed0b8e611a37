//! How the server runs: keys, CORS, limits and timeouts, with the defaults a
//! service on one machine wants.

use std::time::Duration;

/// The server's settings. `Default` is a local server: no keys, no CORS,
/// 4 concurrent LLM calls with 64 waiting, 120 s per request.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Bearer tokens that open the API; empty leaves it open.
    pub api_keys: Vec<String>,
    /// Browser origins allowed by CORS (`*` for any); empty turns CORS off.
    pub cors_origins: Vec<String>,
    /// The largest JSON body, in bytes.
    pub max_body_bytes: usize,
    /// The largest upload (all files of one request), in bytes.
    pub max_upload_bytes: usize,
    /// How long one request may take, generation included.
    pub request_timeout: Duration,
    /// LLM calls that run at once; more wait in a queue.
    pub max_concurrent_llm: usize,
    /// Calls that may wait for one of those; past that a request gets 429.
    pub max_queued_llm: usize,
    /// Passages retrieved per question unless a request says otherwise.
    pub top_k: usize,
    /// The most passages one request may ask for.
    pub max_top_k: usize,
    /// Host names MCP's Streamable HTTP accepts (DNS-rebinding protection);
    /// empty: loopback names only. `*` turns the check off.
    pub allowed_hosts: Vec<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            api_keys: Vec::new(),
            cors_origins: Vec::new(),
            max_body_bytes: 2 * 1024 * 1024,
            max_upload_bytes: 64 * 1024 * 1024,
            request_timeout: Duration::from_secs(120),
            max_concurrent_llm: 4,
            max_queued_llm: 64,
            top_k: 4,
            max_top_k: 100,
            allowed_hosts: Vec::new(),
        }
    }
}
