//! `index.as_query_engine(llm)` and `index.query_engine_builder()`: query
//! engines over an index, as a trait here because indexes sit a layer below engines.

use super::RetrieverQueryEngine;
use super::retriever_query_engine::{IndexQueryEngineBuilder, RetrieverQueryEngineBuilder};
use crate::error::Result;
use crate::indices::{SummaryIndex, VectorStoreIndex};
use crate::llms::Llm;
use std::sync::Arc;

/// Query engines over an index (LlamaIndex `index.as_query_engine(...)`).
/// In the prelude, so `index.as_query_engine(llm)` reads as in Python.
pub trait AsQueryEngine {
    /// What [`query_engine_builder`](Self::query_engine_builder) returns.
    type Builder;

    /// The options of LlamaIndex's `index.as_query_engine(...)`: retriever
    /// settings and engine settings (`llm`, `response_mode`,
    /// `node_postprocessors`, a synthesizer). Streaming is
    /// [`QueryEngine::stream_query`](super::QueryEngine::stream_query) on the built engine.
    ///
    /// ```no_run
    /// # async fn run(index: ragloom_core::indices::VectorStoreIndex, llm: std::sync::Arc<dyn ragloom_core::Llm>) -> ragloom_core::Result<()> {
    /// use ragloom_core::query_engine::{AsQueryEngine, QueryEngine};
    /// use ragloom_core::response_synthesizers::ResponseMode;
    /// let engine = index
    ///     .query_engine_builder()
    ///     .similarity_top_k(5)
    ///     .llm(llm)
    ///     .response_mode(ResponseMode::Refine)
    ///     .build()?;
    /// let answer = engine.query(&"What is it about?".into()).await?;
    /// # Ok(()) }
    /// ```
    fn query_engine_builder(&self) -> Self::Builder;

    /// A query engine answering with `llm` in `ResponseMode::Compact` over
    /// the index's default retriever (a vector index's top 2 nodes, a summary
    /// index's every node); [`query_engine_builder`](Self::query_engine_builder) has the other options.
    fn as_query_engine(&self, llm: Arc<dyn Llm>) -> Result<RetrieverQueryEngine>;
}

impl AsQueryEngine for VectorStoreIndex {
    type Builder = IndexQueryEngineBuilder;

    fn query_engine_builder(&self) -> IndexQueryEngineBuilder {
        IndexQueryEngineBuilder::new(self.as_retriever())
    }

    fn as_query_engine(&self, llm: Arc<dyn Llm>) -> Result<RetrieverQueryEngine> {
        RetrieverQueryEngine::builder(Arc::new(self.as_retriever()))
            .llm(llm)
            .build()
    }
}

impl AsQueryEngine for SummaryIndex {
    type Builder = RetrieverQueryEngineBuilder;

    fn query_engine_builder(&self) -> RetrieverQueryEngineBuilder {
        RetrieverQueryEngine::builder(Arc::new(self.as_retriever()))
    }

    fn as_query_engine(&self, llm: Arc<dyn Llm>) -> Result<RetrieverQueryEngine> {
        self.query_engine_builder().llm(llm).build()
    }
}
