//! `RouterRetriever`: a selector picks, from their tool descriptions, the
//! retriever(s) that fit the query; several selections are merged by node id.

use super::Retriever;
use super::RetrieverTool;
use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::prompts::{PromptDictType, PromptMixin};
use crate::schema::{NodeWithScore, QueryBundle};
use crate::selectors::{Selector, get_selector_from_llm};
use crate::tools::{Tool, ToolMetadata};
use async_trait::async_trait;
use futures::future::try_join_all;
use indexmap::IndexMap;
use std::sync::Arc;

/// Routes each query to the retriever(s) a [`Selector`] picks (LlamaIndex
/// `RouterRetriever`).
///
/// With several selections the retrievers run concurrently and their nodes
/// are merged by node id: a node keeps the place where it first appeared and
/// the score of its last appearance, as Python's dict update does.
#[derive(Clone, Debug)]
pub struct RouterRetriever {
    selector: Arc<dyn Selector>,
    retrievers: Vec<Arc<dyn Retriever>>,
    metadatas: Vec<ToolMetadata>,
}

impl RouterRetriever {
    /// A router choosing with `selector` among `retriever_tools`.
    pub fn new(selector: Arc<dyn Selector>, retriever_tools: Vec<RetrieverTool>) -> Self {
        let metadatas = retriever_tools
            .iter()
            .map(|t| t.metadata().clone())
            .collect();
        let retrievers = retriever_tools
            .into_iter()
            .map(|t| t.retriever().clone())
            .collect();
        Self {
            selector,
            retrievers,
            metadatas,
        }
    }

    /// LlamaIndex `from_defaults`: the selector `get_selector_from_llm`
    /// picks for `llm` (function calling when the model has it), choosing one
    /// retriever or, with `select_multi`, several.
    pub fn from_defaults(
        retriever_tools: Vec<RetrieverTool>,
        llm: Arc<dyn Llm>,
        select_multi: bool,
    ) -> Self {
        Self::new(get_selector_from_llm(llm, select_multi), retriever_tools)
    }

    /// The candidates' metadata, in the order the selector sees them.
    pub fn metadatas(&self) -> &[ToolMetadata] {
        &self.metadatas
    }

    fn retriever(&self, index: usize) -> Result<&Arc<dyn Retriever>> {
        self.retrievers.get(index).ok_or_else(|| {
            Error::InvalidInput(format!(
                "Failed to select retriever: the selector chose {index}, but the router has {} retrievers",
                self.retrievers.len()
            ))
        })
    }
}

#[async_trait]
impl Retriever for RouterRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let result = self.selector.select(&self.metadatas, query).await?;
        if result.selections.is_empty() {
            return Err(Error::OutputParse(
                "Failed to select retriever: the selector chose none".into(),
            ));
        }
        let mut runs = Vec::with_capacity(result.selections.len());
        for s in &result.selections {
            tracing::info!(retriever = s.index, reason = %s.reason, "selecting retriever");
            runs.push(self.retriever(s.index)?.retrieve(query));
        }
        let lists = try_join_all(runs).await?;
        let mut merged: IndexMap<String, NodeWithScore> = IndexMap::new();
        for n in lists.into_iter().flatten() {
            merged.insert(n.node.id_.clone(), n);
        }
        Ok(merged.into_values().collect())
    }
}

impl PromptMixin for RouterRetriever {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::new()
    }

    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        vec![("selector", self.selector.as_ref() as &dyn PromptMixin)]
    }

    fn update_own_prompts(&mut self, _prompts: &PromptDictType) -> Result<()> {
        Ok(())
    }

    fn prompt_module_mut(&mut self, name: &str) -> Option<&mut dyn PromptMixin> {
        match name {
            "selector" => Arc::get_mut(&mut self.selector).map(|s| s as &mut dyn PromptMixin),
            _ => None,
        }
    }
}
