//! Choosing an agent's tools per task: a fixed list, or an [`ObjectRetriever`]
//! of tools (core's `ObjectIndex::from_tools` ranks them by how similar
//! their descriptions are to the task's input).

use super::task::unknown_tool_choice;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::ToolChoice;
use ragloom_core::objects::ObjectRetriever;
use ragloom_core::tools::Tool;
use std::sync::Arc;

/// What picks an agent's tools for each task: an [`ObjectRetriever`] of tools.
pub type ToolRetriever = dyn ObjectRetriever<Arc<dyn Tool>>;

/// Where an agent's tools come from: a fixed list or a retriever per task.
#[derive(Clone, Debug)]
pub(crate) enum ToolSource {
    Fixed(Vec<Arc<dyn Tool>>),
    Retriever(Arc<ToolRetriever>),
}

impl ToolSource {
    /// LlamaIndex refuses both tools and a retriever; so does this.
    pub(crate) fn new(
        tools: Vec<Arc<dyn Tool>>,
        retriever: Option<Arc<ToolRetriever>>,
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
