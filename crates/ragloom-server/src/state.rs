//! What every route shares: the indexes, the settings, the LLM gate, jobs,
//! metrics and the line-number cache.

use crate::auth::Keys;
use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::guard::BrowserPolicy;
use crate::index::ServedIndex;
use crate::jobs::Jobs;
use crate::limits::{LlmGate, RequestLimit};
use crate::metrics::Metrics;
use crate::passage::LineIndex;
use std::sync::Arc;

/// The server's shared state.
#[derive(Debug)]
pub(crate) struct AppState {
    pub config: ServerConfig,
    pub keys: Keys,
    pub browsers: BrowserPolicy,
    pub requests: RequestLimit,
    pub uploads: crate::upload::UploadLimit,
    pub indexes: Vec<Arc<dyn ServedIndex>>,
    pub gate: LlmGate,
    pub jobs: Arc<Jobs>,
    pub metrics: Metrics,
    pub lines: Arc<LineIndex>,
}

impl AppState {
    pub(crate) fn new(config: ServerConfig, indexes: Vec<Arc<dyn ServedIndex>>) -> Self {
        Self {
            keys: Keys::new(&config.api_keys),
            browsers: BrowserPolicy::new(&config.allowed_hosts, &config.cors_origins),
            requests: RequestLimit::new(
                config.max_concurrent_requests,
                Keys::new(&config.api_keys).count(),
            ),
            uploads: crate::upload::UploadLimit::new(
                config.max_uploads_in_flight,
                config.max_upload_bytes_per_minute,
            ),
            gate: LlmGate::new(config.max_concurrent_llm, config.max_queued_llm),
            jobs: Arc::new(Jobs::default()),
            metrics: Metrics::default(),
            lines: Arc::new(LineIndex::new()),
            indexes,
            config,
        }
    }

    /// The index named `name`, or the first one when no name is given.
    pub(crate) fn index(&self, name: Option<&str>) -> Result<&Arc<dyn ServedIndex>, ApiError> {
        match name.filter(|n| !n.is_empty()) {
            None => self.indexes.first().ok_or_else(|| {
                ApiError::not_found("index_not_found", "the server serves no index")
            }),
            Some(n) => self.indexes.iter().find(|i| i.name() == n).ok_or_else(|| {
                ApiError::not_found(
                    "index_not_found",
                    format!("no index is named `{n}`: GET /v1/models lists them"),
                )
                .param("index")
            }),
        }
    }

    /// `top_k` as asked, or the default, within the server's limit.
    pub(crate) fn top_k(&self, asked: Option<usize>) -> Result<usize, ApiError> {
        match asked {
            None => Ok(self.config.top_k),
            Some(0) => Err(ApiError::bad_request("top_k must be at least 1").param("top_k")),
            Some(k) if k > self.config.max_top_k => Err(ApiError::bad_request(format!(
                "top_k may be at most {}",
                self.config.max_top_k
            ))
            .param("top_k")),
            Some(k) => Ok(k),
        }
    }
}
