//! Retrievers: a query in, scored nodes out. The vector-index retriever lives
//! with its index; BM25, fusion and routers join it here.

use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;

/// Finds the nodes relevant to a query.
#[async_trait]
pub trait Retriever: Send + Sync + std::fmt::Debug {
    /// The nodes relevant to `query`, best first.
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>>;
}
