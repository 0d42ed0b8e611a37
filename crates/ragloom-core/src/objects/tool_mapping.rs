//! Tools as nodes (LlamaIndex's `SimpleToolNodeMapping`): the text a tool is
//! embedded as, and the tool a node names.

use super::{ObjectNodeMapping, metadata_text};
use crate::error::{Error, Result};
use crate::schema::{Node, py_repr};
use crate::tools::Tool;
use async_trait::async_trait;
use std::sync::Arc;

/// The text a tool is embedded as: its name, description and schema
/// (LlamaIndex's `convert_tool_to_node`).
pub fn tool_node_text(tool: &dyn Tool) -> String {
    let m = tool.metadata();
    format!(
        "Tool name: {}\nTool description: {}\nTool schema: {}\n",
        m.name,
        m.description,
        py_repr(&m.fn_schema)
    )
}

/// Tools found again by name (LlamaIndex `SimpleToolNodeMapping`).
#[derive(Clone, Debug)]
pub struct SimpleToolNodeMapping {
    tools: Vec<Arc<dyn Tool>>,
}

impl SimpleToolNodeMapping {
    /// A mapping over `tools`.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { tools }
    }

    /// The tools.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }
}

#[async_trait]
impl ObjectNodeMapping<Arc<dyn Tool>> for SimpleToolNodeMapping {
    async fn to_node(&self, tool: &Arc<dyn Tool>) -> Result<Node> {
        let name = tool.metadata().name.clone();
        let mut node = Node::text_node(tool_node_text(tool.as_ref()));
        node.id_ = name.clone();
        node.metadata.insert("name".into(), name.into());
        node.excluded_embed_metadata_keys = vec!["name".into()];
        node.excluded_llm_metadata_keys = vec!["name".into()];
        Ok(node)
    }

    fn to_object(&self, node: &Node) -> Result<Arc<dyn Tool>> {
        let name = metadata_text(node, "name", "tool")?;
        self.tools
            .iter()
            .find(|t| t.metadata().name == name)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("tool `{name}` is not in this mapping")))
    }
}
