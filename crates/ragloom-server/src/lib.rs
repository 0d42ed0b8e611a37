//! An index as a service: an OpenAI-compatible chat API, an MCP server, a
//! REST API with its OpenAPI document and a web chat page, on axum.
//!
//! [`Server::router`] is an ordinary [`axum::Router`]: serve it with
//! [`Server::serve`] (graceful shutdown included) or mount it in your own.
//! What it serves is any [`ServedIndex`]; [`VectorIndexService`] serves a
//! [`ragloom::indices::VectorStoreIndex`] built in your program.
//!
//! ```no_run
//! # async fn run(index: ragloom::indices::VectorStoreIndex) -> Result<(), Box<dyn std::error::Error>> {
//! use ragloom_server::{Server, ServerConfig, VectorIndexService};
//! let service = VectorIndexService::new("docs", index, None);
//! let server = Server::new(ServerConfig::default(), vec![std::sync::Arc::new(service)])?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve(listener, ragloom_server::shutdown_signal()).await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod answer;
mod auth;
mod config;
mod conn;
mod error;
mod guard;
mod index;
mod jobs;
mod limits;
mod mcp;
mod mcp_sessions;
mod metrics;
mod openai;
mod openapi;
/// Passages (re-exported from the library, where every front-end finds them).
pub use ragloom::query_engine::passage;
mod rest;
mod server;
mod stall;
mod state;
mod upload;
mod web;

pub use config::ServerConfig;
pub use error::{ApiError, ServeError};
pub use index::{
    DocumentInfo, IndexView, RetrieverFactory, ServedIndex, Uploads, VectorIndexService,
};
pub use mcp::McpServer;
pub use passage::Passage;
pub use server::{Server, shutdown_signal};
