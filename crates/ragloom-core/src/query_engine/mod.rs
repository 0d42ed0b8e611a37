//! Query engines: the user-facing `query` call. `RetrieverQueryEngine`
//! retrieves, postprocesses and synthesizes; routers and sub-questions build on it.

mod retriever_query_engine;

pub use retriever_query_engine::{RetrieverQueryEngine, RetrieverQueryEngineBuilder};

use crate::error::{Error, Result};
use crate::schema::{QueryBundle, Response, StreamingResponse};
use async_trait::async_trait;

/// Answers queries.
#[async_trait]
pub trait QueryEngine: Send + Sync + std::fmt::Debug {
    /// Answers `query`.
    async fn query(&self, query: &QueryBundle) -> Result<Response>;

    /// Answers `query` as a stream of text deltas.
    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let _ = query;
        Err(Error::Unsupported(
            "this query engine does not stream".into(),
        ))
    }
}
