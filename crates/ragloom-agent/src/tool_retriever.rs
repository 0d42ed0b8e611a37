//! Choosing an agent's tools per task: the [`ObjectRetriever`] trait and
//! [`ObjectIndex`], which ranks tools by how similar their descriptions are to the task's input.

use super::task::unknown_tool_choice;
use async_trait::async_trait;
use ragloom_core::embeddings::{Embedding, SimilarityMode, embed_in_batches, similarity};
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::ToolChoice;
use ragloom_core::schema::py_repr;
use ragloom_core::tools::Tool;
use std::sync::Arc;

/// Finds the tools that fit a query (LlamaIndex `ObjectRetriever[BaseTool]`).
#[async_trait]
pub trait ObjectRetriever: Send + Sync + std::fmt::Debug {
    /// The tools for `query`, best first.
    async fn retrieve(&self, query: &str) -> Result<Vec<Arc<dyn Tool>>>;
}

/// Tools with an embedding of each one's description (LlamaIndex
/// `ObjectIndex` over tools, with `SimpleToolNodeMapping`'s node text).
#[derive(Clone, Debug)]
pub struct ObjectIndex {
    tools: Vec<Arc<dyn Tool>>,
    embeddings: Vec<Vec<f32>>,
    embed_model: Arc<dyn Embedding>,
}

/// The text a tool is embedded as: its name, description and schema.
pub fn tool_node_text(tool: &dyn Tool) -> String {
    let m = tool.metadata();
    format!(
        "Tool name: {}\nTool description: {}\nTool schema: {}\n",
        m.name,
        m.description,
        py_repr(&m.fn_schema)
    )
}

impl ObjectIndex {
    /// Embeds every tool's description with `embed_model`.
    pub async fn from_tools(
        tools: Vec<Arc<dyn Tool>>,
        embed_model: Arc<dyn Embedding>,
    ) -> Result<Self> {
        let texts: Vec<String> = tools.iter().map(|t| tool_node_text(t.as_ref())).collect();
        let embeddings = embed_in_batches(embed_model.as_ref(), &texts, false).await?;
        if embeddings.len() != tools.len() {
            return Err(Error::Other(format!(
                "embedding model `{}` returned {} vectors for {} tools",
                embed_model.model_name(),
                embeddings.len(),
                tools.len()
            )));
        }
        Ok(Self {
            tools,
            embeddings,
            embed_model,
        })
    }

    /// The indexed tools.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// A retriever returning the `similarity_top_k` most similar tools.
    pub fn as_retriever(&self, similarity_top_k: usize) -> ObjectIndexRetriever {
        ObjectIndexRetriever {
            index: self.clone(),
            similarity_top_k,
        }
    }
}

/// Retrieves tools from an [`ObjectIndex`] by cosine similarity.
#[derive(Clone, Debug)]
pub struct ObjectIndexRetriever {
    index: ObjectIndex,
    similarity_top_k: usize,
}

#[async_trait]
impl ObjectRetriever for ObjectIndexRetriever {
    async fn retrieve(&self, query: &str) -> Result<Vec<Arc<dyn Tool>>> {
        let q = self.index.embed_model.embed_query(query).await?;
        let mut scored: Vec<(f32, usize)> = self
            .index
            .embeddings
            .iter()
            .enumerate()
            .map(|(i, e)| (similarity(&q, e, SimilarityMode::Cosine), i))
            .collect();
        // Stable sort: equal scores keep the tools' order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(scored
            .into_iter()
            .take(self.similarity_top_k)
            .map(|(_, i)| self.index.tools[i].clone())
            .collect())
    }
}

/// Where an agent's tools come from: a fixed list or a retriever per task.
#[derive(Clone, Debug)]
pub(crate) enum ToolSource {
    Fixed(Vec<Arc<dyn Tool>>),
    Retriever(Arc<dyn ObjectRetriever>),
}

impl ToolSource {
    /// LlamaIndex refuses both tools and a retriever; so does this.
    pub(crate) fn new(
        tools: Vec<Arc<dyn Tool>>,
        retriever: Option<Arc<dyn ObjectRetriever>>,
    ) -> Result<Self> {
        match retriever {
            Some(_) if !tools.is_empty() => Err(Error::InvalidInput(
                "Cannot specify both tools and tool_retriever".to_owned(),
            )),
            Some(r) => Ok(ToolSource::Retriever(r)),
            None => Ok(ToolSource::Fixed(tools)),
        }
    }

    /// The tools for a task with `input`, narrowed by `tool_choice`:
    /// `None` offers no tool, `Named` only that one (an error if absent).
    pub(crate) async fn get_tools(
        &self,
        input: &str,
        tool_choice: &ToolChoice,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        let tools = match self {
            ToolSource::Fixed(tools) => tools.clone(),
            ToolSource::Retriever(r) => r.retrieve(input).await?,
        };
        match tool_choice {
            ToolChoice::None => Ok(Vec::new()),
            ToolChoice::Named(name) => {
                let picked: Vec<Arc<dyn Tool>> = tools
                    .iter()
                    .filter(|t| &t.metadata().name == name)
                    .cloned()
                    .collect();
                if picked.is_empty() {
                    let names: Vec<String> =
                        tools.iter().map(|t| t.metadata().name.clone()).collect();
                    return Err(unknown_tool_choice(name, &names));
                }
                Ok(picked)
            }
            ToolChoice::Auto | ToolChoice::Required => Ok(tools),
        }
    }
}
