//! `RetrieverTool`: a retriever that a model can call by name; the output is
//! the retrieved text, the raw output the scored nodes.

use super::Retriever;
use crate::error::Result;
use crate::postprocessor::NodePostprocessor;
use crate::schema::{MetadataMode, QueryBundle};
use crate::tools::{Tool, ToolMetadata, ToolOutput, nodes_to_value, retriever_query_str};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// LlamaIndex's default name of a retriever tool.
pub(super) const DEFAULT_RETRIEVER_TOOL_NAME: &str = "retriever_tool";
/// LlamaIndex's default description of a retriever tool.
pub(super) const DEFAULT_RETRIEVER_TOOL_DESCRIPTION: &str = "Useful for running a natural language query\nagainst a knowledge base and retrieving a set of relevant documents.\n";

/// A retriever with the metadata a model chooses it by (LlamaIndex `RetrieverTool`).
///
/// The query is made from the arguments as LlamaIndex makes it (`{"input":
/// "x"}` becomes `"\ninput is x\n"`); the content is each node's text as an
/// LLM sees it, each followed by a blank line; the raw output holds the nodes.
#[derive(Clone, Debug)]
pub struct RetrieverTool {
    retriever: Arc<dyn Retriever>,
    metadata: ToolMetadata,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

impl RetrieverTool {
    /// A tool over `retriever` described by `metadata`.
    pub fn new(retriever: Arc<dyn Retriever>, metadata: ToolMetadata) -> Self {
        Self {
            retriever,
            metadata,
            node_postprocessors: Vec::new(),
        }
    }

    /// A tool with LlamaIndex's default name and description (`from_defaults`).
    pub fn from_defaults(retriever: Arc<dyn Retriever>) -> Self {
        Self::new(
            retriever,
            ToolMetadata::new(
                DEFAULT_RETRIEVER_TOOL_NAME,
                DEFAULT_RETRIEVER_TOOL_DESCRIPTION,
            ),
        )
    }

    crate::tool_metadata_setters!();

    /// Adds a postprocessor applied to the retrieved nodes, in the order added.
    pub fn node_postprocessor(mut self, p: Arc<dyn NodePostprocessor>) -> Self {
        self.node_postprocessors.push(p);
        self
    }

    /// The retriever.
    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }
}

#[async_trait]
impl Tool for RetrieverTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let query_str = retriever_query_str(&input);
        let query = QueryBundle::new(query_str.clone());
        let mut nodes = self.retriever.retrieve(&query).await?;
        for p in &self.node_postprocessors {
            nodes = p.postprocess_nodes(nodes, Some(&query)).await?;
        }
        let mut content = String::new();
        for n in &nodes {
            content.push_str(&n.node.get_content(MetadataMode::Llm));
            content.push_str("\n\n");
        }
        Ok(ToolOutput::new(
            self.metadata.name.clone(),
            content,
            json!({"input": query_str}),
            nodes_to_value(&nodes),
        ))
    }
}
