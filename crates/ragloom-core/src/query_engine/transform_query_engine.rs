//! `TransformQueryEngine`: run a query transform (HyDE, ...) on the query, then
//! hand the rewritten query to another query engine.

use super::QueryEngine;
use crate::error::Result;
use crate::indices::query::query_transform::QueryTransform;
use crate::schema::{NodeWithScore, QueryBundle, Response, StreamingResponse};
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::sync::Arc;
use tracing::Instrument;

/// Applies a [`QueryTransform`] before every call of an inner query engine
/// (LlamaIndex `TransformQueryEngine`), including `retrieve` and `synthesize`.
#[derive(Clone, Debug)]
pub struct TransformQueryEngine {
    query_engine: Arc<dyn QueryEngine>,
    query_transform: Arc<dyn QueryTransform>,
    transform_metadata: Map<String, Value>,
}

impl TransformQueryEngine {
    /// `query_engine` behind `query_transform`.
    pub fn new(
        query_engine: Arc<dyn QueryEngine>,
        query_transform: Arc<dyn QueryTransform>,
    ) -> Self {
        Self {
            query_engine,
            query_transform,
            transform_metadata: Map::new(),
        }
    }

    /// Metadata handed to the transform on every run (`transform_metadata`).
    pub fn with_transform_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.transform_metadata = metadata;
        self
    }

    /// The query as the inner engine receives it.
    pub async fn transform(&self, query: &QueryBundle) -> Result<QueryBundle> {
        self.query_transform
            .run_with_metadata(query, &self.transform_metadata)
            .await
    }
}

#[async_trait]
impl QueryEngine for TransformQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", engine = "transform", query = %query.query_str);
        async {
            let transformed = self.transform(query).await?;
            self.query_engine.query(&transformed).await
        }
        .instrument(span)
        .await
    }

    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let transformed = self.transform(query).await?;
        self.query_engine.stream_query(&transformed).await
    }

    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let transformed = self.transform(query).await?;
        self.query_engine.retrieve(&transformed).await
    }

    async fn synthesize(&self, query: &QueryBundle, nodes: Vec<NodeWithScore>) -> Result<Response> {
        let transformed = self.transform(query).await?;
        self.query_engine.synthesize(&transformed, nodes).await
    }
}

// The transform's prompts (`query_transform:...`). The inner engine is a
// `dyn QueryEngine`, whose prompts are reached through it directly.
crate::prompts::delegate_prompts!(TransformQueryEngine { "query_transform" => query_transform });
