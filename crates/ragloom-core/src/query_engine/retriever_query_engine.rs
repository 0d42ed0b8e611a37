//! `RetrieverQueryEngine`: retrieve → postprocess → synthesize, each step
//! usable alone, with tracing spans around each.

use super::QueryEngine;
use super::options::{QueryEngineOptions, query_engine_option_setters};
use crate::error::Result;
use crate::indices::VectorIndexRetriever;
use crate::postprocessor::{NodePostprocessor, retrieve_and_postprocess};
use crate::response_synthesizers::Synthesizer;
use crate::retrievers::Retriever;
use crate::schema::{NodeWithScore, QueryBundle, Response, StreamingResponse};
use crate::vector_stores::{MetadataFilters, VectorStoreQueryMode};
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// Retrieves nodes, runs the postprocessors in order, and synthesizes an
/// answer (LlamaIndex `RetrieverQueryEngine`).
#[derive(Clone, Debug)]
pub struct RetrieverQueryEngine {
    retriever: Arc<dyn Retriever>,
    synthesizer: Arc<dyn Synthesizer>,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

impl RetrieverQueryEngine {
    /// An engine over `retriever` and `synthesizer`.
    pub fn new(retriever: Arc<dyn Retriever>, synthesizer: Arc<dyn Synthesizer>) -> Self {
        Self {
            retriever,
            synthesizer,
            node_postprocessors: Vec::new(),
        }
    }

    /// A builder over `retriever` (LlamaIndex `RetrieverQueryEngine.from_args`).
    pub fn builder(retriever: Arc<dyn Retriever>) -> RetrieverQueryEngineBuilder {
        RetrieverQueryEngineBuilder {
            retriever,
            options: QueryEngineOptions::default(),
        }
    }

    /// Retrieves and postprocesses nodes for `query`.
    pub async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        retrieve_and_postprocess(self.retriever.as_ref(), &self.node_postprocessors, query).await
    }

    /// The retriever.
    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }

    /// The synthesizer.
    pub fn synthesizer(&self) -> &Arc<dyn Synthesizer> {
        &self.synthesizer
    }
}

// The synthesizer's prompts, keyed `response_synthesizer:<name>` as in LlamaIndex.
crate::prompts::delegate_prompts!(RetrieverQueryEngine { "response_synthesizer" => synthesizer });

#[async_trait]
impl QueryEngine for RetrieverQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", query = %query.query_str);
        async {
            let nodes = self.retrieve(query).await?;
            self.synthesize(query, nodes).await
        }
        .instrument(span)
        .await
    }

    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let span = tracing::info_span!("query", query = %query.query_str, stream = true);
        async {
            let nodes = self.retrieve(query).await?;
            self.synthesizer
                .stream_synthesize(query, nodes, Vec::new())
                .await
        }
        .instrument(span)
        .await
    }

    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        RetrieverQueryEngine::retrieve(self, query).await
    }

    async fn synthesize(&self, query: &QueryBundle, nodes: Vec<NodeWithScore>) -> Result<Response> {
        self.synthesizer.synthesize(query, nodes, Vec::new()).await
    }
}

/// Options of a [`RetrieverQueryEngine`].
#[derive(Debug)]
pub struct RetrieverQueryEngineBuilder {
    retriever: Arc<dyn Retriever>,
    options: QueryEngineOptions,
}

impl RetrieverQueryEngineBuilder {
    query_engine_option_setters!(synthesizer);

    /// Builds the engine. Without a synthesizer an LLM is required.
    pub fn build(mut self) -> Result<RetrieverQueryEngine> {
        let synthesizer = self
            .options
            .take_synthesizer("a query engine", Default::default())?;
        Ok(RetrieverQueryEngine {
            retriever: self.retriever,
            synthesizer,
            node_postprocessors: self.options.node_postprocessors,
        })
    }
}

/// Options of a query engine over a [`VectorStoreIndex`](crate::indices::VectorStoreIndex) (see
/// [`AsQueryEngine::query_engine_builder`](super::AsQueryEngine::query_engine_builder)).
#[derive(Debug)]
pub struct IndexQueryEngineBuilder {
    retriever: VectorIndexRetriever,
    options: QueryEngineOptions,
}

impl IndexQueryEngineBuilder {
    /// Compact answers from `retriever`'s nodes until an option says otherwise.
    pub(super) fn new(retriever: VectorIndexRetriever) -> Self {
        Self {
            retriever,
            options: QueryEngineOptions::default(),
        }
    }

    /// How many nodes to retrieve (default 2).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.retriever = self.retriever.similarity_top_k(k);
        self
    }

    /// Only nodes whose metadata match `filters`.
    pub fn filters(mut self, filters: MetadataFilters) -> Self {
        self.retriever = self.retriever.filters(filters);
        self
    }

    /// The vector store query mode.
    pub fn vector_store_query_mode(mut self, mode: VectorStoreQueryMode) -> Self {
        self.retriever = self.retriever.vector_store_query_mode(mode);
        self
    }

    /// Any other retriever option, e.g. `.retriever_options(|r| r.doc_ids(ids))`.
    pub fn retriever_options(
        mut self,
        f: impl FnOnce(VectorIndexRetriever) -> VectorIndexRetriever,
    ) -> Self {
        self.retriever = f(self.retriever);
        self
    }

    query_engine_option_setters!(synthesizer);

    /// Builds the engine. Without a synthesizer an LLM is required.
    pub fn build(self) -> Result<RetrieverQueryEngine> {
        RetrieverQueryEngineBuilder {
            retriever: Arc::new(self.retriever),
            options: self.options,
        }
        .build()
    }
}
