//! `TransformQueryEngine`: run a query transform (HyDE, ...) on the query, then
//! hand the rewritten query to another query engine.

use super::QueryEngine;
use crate::error::Result;
use crate::indices::query::query_transform::QueryTransform;
use crate::prompts::{PromptDictType, PromptMixin};
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

    async fn synthesize(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<Response> {
        let transformed = self.transform(query).await?;
        self.query_engine
            .synthesize(&transformed, nodes, additional_source_nodes)
            .await
    }
}

/// The transform's prompts (`query_transform:...`). The inner engine is a
/// `dyn QueryEngine`, whose prompts are reached through it directly.
impl PromptMixin for TransformQueryEngine {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::new()
    }

    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        vec![(
            "query_transform",
            self.query_transform.as_ref() as &dyn PromptMixin,
        )]
    }

    fn update_own_prompts(&mut self, _prompts: &PromptDictType) -> Result<()> {
        Ok(())
    }

    fn prompt_module_mut(&mut self, name: &str) -> Option<&mut dyn PromptMixin> {
        match name {
            "query_transform" => {
                Arc::get_mut(&mut self.query_transform).map(|t| t as &mut dyn PromptMixin)
            }
            _ => None,
        }
    }
}
