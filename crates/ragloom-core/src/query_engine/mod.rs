//! Query engines: the user-facing `query` call. `RetrieverQueryEngine`
//! retrieves, postprocesses and synthesizes; routers and sub-questions build on it.

pub mod answer;
mod citation_query_engine;
mod index_ext;
mod options;
pub mod passage;
mod recursive_retriever;
mod retriever_query_engine;
mod router_query_engine;
mod sub_question_query_engine;
mod tool;
mod transform_query_engine;

pub use citation_query_engine::{
    CITATION_QA_TEMPLATE, CITATION_REFINE_TEMPLATE, CitationQueryEngine,
    CitationQueryEngineBuilder, DEFAULT_CITATION_CHUNK_OVERLAP, DEFAULT_CITATION_CHUNK_SIZE,
    citation_qa_prompt, citation_refine_prompt,
};
pub use index_ext::AsQueryEngine;
pub use recursive_retriever::RecursiveRetriever;
pub use retriever_query_engine::{
    IndexQueryEngineBuilder, RetrieverQueryEngine, RetrieverQueryEngineBuilder,
};
pub use router_query_engine::{RouterQueryEngine, RouterQueryEngineBuilder};
pub use sub_question_query_engine::{
    SubQuestionAnswerPair, SubQuestionQueryEngine, SubQuestionQueryEngineBuilder,
};
pub use tool::QueryEngineTool;
pub use transform_query_engine::TransformQueryEngine;

use crate::error::{Error, Result};
use crate::schema::{NodeWithScore, QueryBundle, Response, StreamingResponse};
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

    /// The nodes this engine would answer `query` from, for engines that
    /// retrieve (LlamaIndex `BaseQueryEngine.retrieve`). Default: unsupported.
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let _ = query;
        Err(Error::Unsupported(
            "this query engine does not retrieve nodes separately".into(),
        ))
    }

    /// Answers `query` from given nodes, which are the response's sources
    /// (LlamaIndex `BaseQueryEngine.synthesize`; sources beyond the nodes
    /// go through [`Synthesizer::synthesize`](crate::response_synthesizers::Synthesizer::synthesize)).
    /// Default: unsupported.
    async fn synthesize(&self, query: &QueryBundle, nodes: Vec<NodeWithScore>) -> Result<Response> {
        let _ = (query, nodes);
        Err(Error::Unsupported(
            "this query engine does not synthesize from given nodes".into(),
        ))
    }
}
