//! The router and its layers (auth, metrics, CORS, limits), serving with
//! graceful shutdown, and MCP over stdio.

use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::index::ServedIndex;
use crate::mcp::McpServer;
use crate::mcp_sessions::CappedSessions;
use crate::state::AppState;
use crate::{auth, guard, limits, metrics, openai, openapi, rest, web};
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// A server over one or more indexes.
#[derive(Clone, Debug)]
pub struct Server {
    state: Arc<AppState>,
    /// Ends MCP's long-lived streams at shutdown, so it is not held open.
    mcp_shutdown: CancellationToken,
}

impl Server {
    /// A server of `indexes` (the first is the default); their names must be unique.
    pub fn new(
        config: ServerConfig,
        indexes: Vec<Arc<dyn ServedIndex>>,
    ) -> Result<Self, ragloom::Error> {
        if indexes.is_empty() {
            return Err(ragloom::Error::InvalidInput(
                "a server needs at least one index".into(),
            ));
        }
        let mut names: Vec<&str> = indexes.iter().map(|i| i.name()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(ragloom::Error::InvalidInput(format!(
                "two indexes are named `{}`: names must be unique",
                w[0]
            )));
        }
        Ok(Self {
            state: Arc::new(AppState::new(config, indexes)),
            mcp_shutdown: CancellationToken::new(),
        })
    }

    /// Every route, with auth, metrics, CORS and body limits: mount it
    /// anywhere (`Router::nest`) or serve it with [`Server::serve`].
    pub fn router(&self) -> Router {
        let state = self.state.clone();
        let config = &state.config;
        let mcp = self.mcp_service();
        let upload_limit = config.max_upload_bytes;
        let api = Router::new()
            .route("/v1/models", get(openai::models))
            .route("/v1/chat/completions", post(openai::chat_completions))
            .route("/v1/query", post(rest::query))
            .route("/v1/retrieve", post(rest::retrieve))
            .route(
                "/v1/documents",
                get(rest::list_documents)
                    .post(rest::upload)
                    .layer(DefaultBodyLimit::max(upload_limit)),
            )
            .route(
                "/v1/documents/{*id}",
                axum::routing::delete(rest::delete_document),
            )
            .route("/v1/jobs/{id}", get(rest::job))
            .route("/v1/status", get(rest::status))
            .route("/v1/nodes/{id}", get(rest::node))
            .route("/openapi.json", get(openapi_json))
            .route("/metrics", get(metrics_text))
            .route("/healthz", get(|| async { "ok" }))
            .route("/", get(web::index))
            .route("/assets/app.js", get(web::app_js))
            .route("/assets/app.css", get(web::app_css))
            .nest_service("/mcp", mcp)
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(DefaultBodyLimit::max(config.max_body_bytes))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                limits::admit,
            ))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_key,
            ))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                guard::check,
            ))
            .layer(axum::middleware::from_fn(limits::uri_length))
            .layer(axum::middleware::from_fn(crate::error::envelope))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                metrics::track,
            ));
        let api = match cors(&config.cors_origins) {
            Some(c) => api.layer(c),
            None => api,
        };
        api.with_state(state)
    }

    fn mcp_service(&self) -> StreamableHttpService<McpServer, CappedSessions> {
        let state = self.state.clone();
        // Hosts are checked for every route by `guard::check`, in the API's envelope.
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(self.mcp_shutdown.child_token())
            .with_max_request_body_bytes(state.config.max_body_bytes)
            .disable_allowed_hosts();
        let sessions =
            CappedSessions::new(state.config.max_mcp_sessions, state.config.mcp_session_idle);
        StreamableHttpService::new(
            move || Ok(McpServer::new(state.clone())),
            Arc::new(sessions),
            config,
        )
    }

    /// Serves until `shutdown` resolves, then stops taking connections and
    /// finishes the answers in flight. Connections are bounded as the
    /// settings say (count, header-read time, idle time); a router mounted
    /// elsewhere keeps its request limits but not these.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.recover_jobs();
        let mcp = self.mcp_shutdown.clone();
        crate::conn::serve(listener, self.router(), &self.state.config, async move {
            shutdown.await;
            tracing::info!("shutting down: finishing the answers in flight");
            mcp.cancel();
        })
        .await
    }

    /// Runs again the upload jobs a stopped server accepted but had not
    /// finished, under their ids, and removes half-received uploads.
    /// [`Server::serve`] calls it; call it once when you mount
    /// [`Server::router`] yourself. Returns how many jobs run again.
    pub fn recover_jobs(&self) -> usize {
        let mut rerun = 0;
        for index in &self.state.indexes {
            let Some(uploads) = index.uploads() else {
                continue;
            };
            crate::upload::remove_leftovers(uploads.dir());
            let journal = rest::journal_dir(uploads.as_ref());
            rerun += self.state.jobs.recover(
                index.name(),
                &journal,
                |_| {
                    let uploads = uploads.clone();
                    async move { uploads.ingest().await.map_err(|e| e.to_string()) }
                },
                rest::ingest_done(&self.state),
            );
        }
        rerun
    }

    /// Serves MCP over stdin and stdout until the client closes them. Only
    /// MCP frames go to stdout; logs must go to stderr.
    pub async fn serve_mcp_stdio(&self) -> Result<(), ragloom::Error> {
        let running = McpServer::new(self.state.clone())
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ragloom::Error::failed("MCP over stdio did not start", e))?;
        running
            .waiting()
            .await
            .map_err(|e| ragloom::Error::failed("MCP over stdio stopped", e))?;
        Ok(())
    }
}

fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::HeaderName::from_static("mcp-session-id"),
                header::HeaderName::from_static("mcp-protocol-version"),
            ]),
    )
}

async fn openapi_json() -> Response {
    axum::Json(openapi::document()).into_response()
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    let body = state
        .metrics
        .render(state.gate.running(), state.gate.waiting());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

async fn not_found() -> ApiError {
    ApiError::not_found("not_found", "no such route: see /openapi.json")
}

async fn method_not_allowed(method: Method) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
        format!("this route does not take {method}: see /openapi.json"),
    )
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
