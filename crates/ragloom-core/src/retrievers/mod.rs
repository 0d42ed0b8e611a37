//! Retrievers: a query in, scored nodes out. The vector-index retriever lives
//! with its index; BM25, fusion and routers join it here.

pub mod auto_merging;
pub mod bm25;
pub mod fusion;
pub mod router;
pub mod tokenize;
mod tool;

pub use auto_merging::AutoMergingRetriever;
pub use bm25::{BM25Retriever, BM25RetrieverBuilder};
pub use fusion::{
    FusionMode, FusionResults, QueryFusionRetriever, QueryFusionRetrieverBuilder, fuse_results,
};
pub use router::RouterRetriever;
pub use tokenize::{Bm25Tokenizer, TermBatch, keyword_query};
pub use tool::RetrieverTool;

use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;

/// Finds the nodes relevant to a query.
#[async_trait]
pub trait Retriever: Send + Sync + std::fmt::Debug {
    /// The nodes relevant to `query`, best first.
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>>;
}
