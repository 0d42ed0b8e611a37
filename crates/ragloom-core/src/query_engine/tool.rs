//! `QueryEngineTool`: a query engine that models (routers and agents) can
//! call by name, taking LlamaIndex's one-string `input` argument.

use super::QueryEngine;
use crate::error::Result;
use crate::schema::{QueryBundle, py_repr, py_str};
use crate::tools::{Tool, ToolMetadata, ToolOutput, response_to_value};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// LlamaIndex's default name of a query engine tool.
pub(super) const DEFAULT_NAME: &str = "query_engine_tool";
/// LlamaIndex's default description of a query engine tool.
pub(super) const DEFAULT_DESCRIPTION: &str = "Useful for running a natural language query\nagainst a knowledge base and get back a natural language response.\n";

/// A query engine with the metadata a model chooses it by (LlamaIndex `QueryEngineTool`).
///
/// Called with `{"input": "..."}` (the default schema) or a bare string, it
/// queries the engine and returns the answer as the output's content; the
/// raw output holds the answer and its source nodes (see [`source_nodes_of`](crate::tools::source_nodes_of)).
/// Other arguments, with `resolve_input_errors` (the default), become the query
/// as Python's `str(kwargs)` would render them; without it they are an error
/// output telling the model to pass `input`.
#[derive(Clone, Debug)]
pub struct QueryEngineTool {
    query_engine: Arc<dyn QueryEngine>,
    metadata: ToolMetadata,
    resolve_input_errors: bool,
}

impl QueryEngineTool {
    /// A tool over `query_engine` described by `metadata`.
    pub fn new(query_engine: Arc<dyn QueryEngine>, metadata: ToolMetadata) -> Self {
        Self {
            query_engine,
            metadata,
            resolve_input_errors: true,
        }
    }

    /// A tool with LlamaIndex's default name and description (`from_defaults`);
    /// set them with [`Self::with_name`] and [`Self::with_description`].
    pub fn from_defaults(query_engine: Arc<dyn QueryEngine>) -> Self {
        Self::new(
            query_engine,
            ToolMetadata::new(DEFAULT_NAME, DEFAULT_DESCRIPTION),
        )
    }

    crate::tool_metadata_setters!(return_direct);

    /// Whether arguments without `input` are turned into a query (default true).
    pub fn resolve_input_errors(mut self, resolve: bool) -> Self {
        self.resolve_input_errors = resolve;
        self
    }

    /// The query engine.
    pub fn query_engine(&self) -> &Arc<dyn QueryEngine> {
        &self.query_engine
    }

    /// The query string for `input`, as LlamaIndex's `_get_query_str` finds
    /// it: a string (or a list's first item) is the positional argument, an
    /// object holds keyword arguments.
    fn query_str(&self, input: &Value) -> std::result::Result<String, String> {
        let no_input =
            || "Cannot call query engine without specifying `input` parameter.".to_owned();
        match input {
            Value::Array(items) if !items.is_empty() => Ok(py_str(&items[0])),
            Value::Object(map) => match map.get("input") {
                Some(value) => Ok(py_str(value)),
                None if self.resolve_input_errors => Ok(py_repr(input)),
                None => Err(no_input()),
            },
            // No arguments at all: Python's `str(kwargs)` of an empty dict.
            Value::Null | Value::Array(_) if self.resolve_input_errors => Ok("{}".to_owned()),
            Value::Null | Value::Array(_) => Err(no_input()),
            other => Ok(py_str(other)),
        }
    }
}

#[async_trait]
impl Tool for QueryEngineTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let query_str = match self.query_str(&input) {
            Ok(q) => q,
            Err(message) => {
                return Ok(ToolOutput::error(
                    self.metadata.name.clone(),
                    input,
                    message,
                ));
            }
        };
        let response = self
            .query_engine
            .query(&QueryBundle::new(query_str.clone()))
            .await?;
        Ok(ToolOutput::new(
            self.metadata.name.clone(),
            response.to_string(),
            json!({"input": query_str}),
            response_to_value(&response),
        ))
    }
}
