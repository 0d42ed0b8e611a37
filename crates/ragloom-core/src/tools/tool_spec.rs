//! `ToolSpec`: a group of related tools offered together (LlamaIndex's
//! `BaseToolSpec`), e.g. a database's `list_tables`, `describe_tables` and `load_data`.

use super::types::{Tool, ToolMetadata, ToolOutput};
use crate::error::{Error, Result};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A set of tools built from one object's functions (LlamaIndex `BaseToolSpec`).
///
/// `#[tool_spec]` (crate `ragloom-macros`, re-exported as `ragloom::tool_spec`)
/// implements it for an `impl` block; hand-written specs implement the two
/// required methods. Object-safe, so specs travel as `Arc<dyn ToolSpec>`.
pub trait ToolSpec: Send + Sync {
    /// The names of the functions offered as tools, in order (LlamaIndex `spec_functions`).
    fn spec_functions(&self) -> Vec<String>;

    /// One tool per spec function, in the order of [`Self::spec_functions`].
    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>>;

    /// The tools named in `spec_functions` (all when `None`), with the
    /// metadata of those named in `func_to_metadata_mapping` replaced
    /// (LlamaIndex's `to_tool_list(spec_functions, func_to_metadata_mapping)`).
    /// An unknown function name is an [`Error::InvalidInput`] naming it.
    fn to_tool_list_with(
        &self,
        spec_functions: Option<&[&str]>,
        func_to_metadata_mapping: &HashMap<String, ToolMetadata>,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        let all = self.to_tool_list();
        let wanted: Vec<String> = match spec_functions {
            Some(names) => names.iter().map(|n| (*n).to_owned()).collect(),
            None => all.iter().map(|t| t.name().to_owned()).collect(),
        };
        for name in func_to_metadata_mapping.keys() {
            if !all.iter().any(|t| t.name() == name) {
                return Err(unknown_function(name, &all));
            }
        }
        wanted
            .iter()
            .map(|name| {
                let tool = all
                    .iter()
                    .find(|t| t.name() == name)
                    .ok_or_else(|| unknown_function(name, &all))?;
                Ok(match func_to_metadata_mapping.get(name) {
                    Some(metadata) => {
                        Arc::new(WithMetadata::new(Arc::clone(tool), metadata.clone()))
                            as Arc<dyn Tool>
                    }
                    None => Arc::clone(tool),
                })
            })
            .collect()
    }
}

fn unknown_function(name: &str, all: &[Arc<dyn Tool>]) -> Error {
    let known: Vec<&str> = all.iter().map(|t| t.name()).collect();
    Error::InvalidInput(format!(
        "tool spec has no function `{name}`; its functions are: {}",
        known.join(", ")
    ))
}

/// A tool shown to models under other metadata (name, description, schema);
/// calls still go to the wrapped tool, and outputs carry the new name.
#[derive(Debug, Clone)]
pub struct WithMetadata {
    inner: Arc<dyn Tool>,
    metadata: ToolMetadata,
}

impl WithMetadata {
    /// Wraps `inner` under `metadata`.
    pub fn new(inner: Arc<dyn Tool>, metadata: ToolMetadata) -> Self {
        Self { inner, metadata }
    }
}

#[async_trait]
impl Tool for WithMetadata {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let mut output = self.inner.call(input).await?;
        output.tool_name = self.metadata.name.clone();
        Ok(output)
    }
}

/// A tool whose outputs are cut to `max_output_len` characters before they
/// reach the model (see [`truncate_tool_output`](super::truncate_tool_output)),
/// for any tool; [`FunctionTool::max_output_len`](super::FunctionTool::max_output_len) does the same for one.
#[derive(Debug, Clone)]
pub struct MaxOutputLen {
    inner: Arc<dyn Tool>,
    max_output_len: usize,
}

impl MaxOutputLen {
    /// Wraps `inner`, cutting its outputs to `max_output_len` characters.
    pub fn new(inner: Arc<dyn Tool>, max_output_len: usize) -> Self {
        Self {
            inner,
            max_output_len,
        }
    }
}

#[async_trait]
impl Tool for MaxOutputLen {
    fn metadata(&self) -> &ToolMetadata {
        self.inner.metadata()
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        Ok(self.inner.call(input).await?.truncated(self.max_output_len))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::FunctionTool;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    struct Pair {
        a: i64,
        b: i64,
    }

    struct Math;

    impl ToolSpec for Math {
        fn spec_functions(&self) -> Vec<String> {
            vec!["add".into(), "multiply".into()]
        }
        fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
            vec![
                Arc::new(FunctionTool::from_fn("add", None, |p: Pair| p.a + p.b)),
                Arc::new(FunctionTool::from_fn("multiply", None, |p: Pair| p.a * p.b)),
            ]
        }
    }

    #[tokio::test]
    async fn selects_and_overrides_metadata() {
        let mut mapping = HashMap::new();
        mapping.insert(
            "multiply".to_owned(),
            ToolMetadata::new("times", "Multiplies.").with_fn_schema(json!({"type": "object"})),
        );
        let tools = Math
            .to_tool_list_with(Some(&["multiply"]), &mapping)
            .unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name(), "times");
        assert_eq!(tools[0].metadata().description, "Multiplies.");
        let out = tools[0].call(json!({"a": 6, "b": 7})).await.unwrap();
        assert_eq!(
            (out.content.as_str(), out.tool_name.as_str()),
            ("42", "times")
        );

        let err = Math.to_tool_list_with(Some(&["divide"]), &HashMap::new());
        assert!(matches!(err, Err(Error::InvalidInput(m)) if m.contains("`divide`")));
    }

    #[tokio::test]
    async fn max_output_len_wraps_any_tool() {
        let long = Arc::new(FunctionTool::from_fn("long", None, |_: Pair| {
            "x".repeat(500)
        }));
        let tool = MaxOutputLen::new(long, 100);
        let out = tool.call(json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(out.content.chars().count(), 100);
        assert!(out.content.contains("truncated"));
    }
}
