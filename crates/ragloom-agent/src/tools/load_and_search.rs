//! `LoadAndSearchToolSpec`: turns a tool that returns lots of text into two
//! tools, one that loads its output into an index and `read_<name>` that searches it.

use async_trait::async_trait;
use ragloom_core::embeddings::Embedding;
use ragloom_core::error::Result;
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::llms::Llm;
use ragloom_core::query_engine::AsQueryEngine;
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::{Document, Node, QueryBundle, py_str};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec, response_to_value};
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use tokio::sync::Mutex;

/// LlamaIndex's description of the load tool: `{name}`, then the wrapped tool's description.
pub const LOADER_PROMPT: &str = "\n        Use this tool to load data from the following function. It must then be read from\n        the corresponding read_{} function.\n\n        {}\n    ";

/// LlamaIndex's description of the `read_<name>` tool (its typo `retreieve` kept).
pub const READER_PROMPT: &str = "\n        Once data has been loaded from {} it can then be read using a natural\n        language query from this function.\n\n        You are required to pass the natural language query argument when calling this endpoint\n\n        Args:\n            query (str): The natural language query used to retreieve information from the index\n    ";

/// Wraps a tool whose output is too big to hand to a model: the load tool
/// (same name, arguments and description, prefixed by [`LOADER_PROMPT`])
/// calls it and indexes its output, answering `Content loaded! You can now
/// search the information using read_<name>`; `read_<name>` answers a
/// natural-language `query` over everything loaded so far (LlamaIndex
/// `LoadAndSearchToolSpec`). Both tools share one index.
#[derive(Clone)]
pub struct LoadAndSearchToolSpec {
    shared: Arc<Shared>,
    tools: Vec<Arc<dyn Tool>>,
}

struct Shared {
    tool: Arc<dyn Tool>,
    metadata: ToolMetadata,
    embed_model: Arc<dyn Embedding>,
    llm: Arc<dyn Llm>,
    index: Mutex<Option<VectorStoreIndex>>,
}

impl fmt::Debug for LoadAndSearchToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadAndSearchToolSpec")
            .field("tool", &self.shared.tool)
            .field("metadata", &self.shared.metadata)
            .finish_non_exhaustive()
    }
}

impl LoadAndSearchToolSpec {
    /// Wraps `tool` under its own metadata; loaded content is embedded with
    /// `embed_model` and `read_<name>` answers with `llm`.
    pub fn from_defaults(
        tool: Arc<dyn Tool>,
        embed_model: Arc<dyn Embedding>,
        llm: Arc<dyn Llm>,
    ) -> Self {
        let metadata = tool.metadata().clone();
        Self::new(tool, metadata, embed_model, llm, None)
    }

    /// Wraps `tool` under `metadata` (name, description and schema of the
    /// load tool), adding to `index` if given instead of building one on the first load.
    pub fn new(
        tool: Arc<dyn Tool>,
        metadata: ToolMetadata,
        embed_model: Arc<dyn Embedding>,
        llm: Arc<dyn Llm>,
        index: Option<VectorStoreIndex>,
    ) -> Self {
        let shared = Arc::new(Shared {
            tool,
            metadata,
            embed_model,
            llm,
            index: Mutex::new(index),
        });
        let name = &shared.metadata.name;
        let load_metadata = ToolMetadata {
            name: name.clone(),
            description: LOADER_PROMPT.replacen("{}", name, 1).replacen(
                "{}",
                &shared.metadata.description,
                1,
            ),
            fn_schema: shared.metadata.fn_schema.clone(),
            return_direct: false,
        };
        let read_metadata = ToolMetadata::new(
            format!("read_{name}"),
            READER_PROMPT.replacen("{}", name, 1),
        )
        .with_fn_schema(json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        }));
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(LoadTool {
                shared: Arc::clone(&shared),
                metadata: load_metadata,
            }),
            Arc::new(ReadTool {
                shared: Arc::clone(&shared),
                metadata: read_metadata,
            }),
        ];
        Self { shared, tools }
    }

    /// The metadata of the wrapped tool as this spec uses it.
    pub fn metadata(&self) -> &ToolMetadata {
        &self.shared.metadata
    }
}

impl ToolSpec for LoadAndSearchToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_owned()).collect()
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

/// The wrapped tool's raw output as documents, as LlamaIndex converts it:
/// a list gives one document per item, a string one document, a serialised
/// document itself, anything else its Python `str()`.
pub(crate) fn output_to_documents(raw: &Value) -> Vec<Document> {
    let one = |item: &Value| -> Document {
        match item {
            Value::String(s) => Document::document(s.clone()),
            Value::Object(map) if map.contains_key("id_") && map.contains_key("text") => {
                serde_json::from_value::<Node>(item.clone())
                    .unwrap_or_else(|_| Document::document(py_str(item)))
            }
            other => Document::document(py_str(other)),
        }
    };
    match raw {
        Value::Array(items) => items.iter().map(one).collect(),
        other => vec![one(other)],
    }
}

#[derive(Debug)]
struct LoadTool {
    shared: Arc<Shared>,
    metadata: ToolMetadata,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Tool for LoadTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let loaded = self.shared.tool.call(input.clone()).await?;
        if loaded.is_error {
            // The model sees why loading failed and can retry with other arguments.
            return Ok(ToolOutput {
                tool_name: name,
                ..loaded
            });
        }
        let docs = output_to_documents(&loaded.raw_output);
        let mut index = self.shared.index.lock().await;
        let outcome = match index.as_ref() {
            Some(existing) => {
                let mut result = Ok(());
                for doc in docs {
                    result = existing.insert(doc).await;
                    if result.is_err() {
                        break;
                    }
                }
                result
            }
            None => VectorStoreIndex::from_documents(&docs, Arc::clone(&self.shared.embed_model))
                .await
                .map(|built| {
                    *index = Some(built);
                }),
        };
        Ok(match outcome {
            Ok(()) => {
                let text = format!(
                    "Content loaded! You can now search the information using read_{}",
                    self.shared.metadata.name
                );
                ToolOutput::new(name, text.clone(), input, Value::String(text))
            }
            Err(e) => ToolOutput::error(
                name,
                input,
                format!("indexing the loaded content failed: {e}"),
            ),
        })
    }
}

#[derive(Debug)]
struct ReadTool {
    shared: Arc<Shared>,
    metadata: ToolMetadata,
}

#[async_trait]
impl Tool for ReadTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let query = match &input {
            Value::String(s) => s.clone(),
            Value::Object(map) => match map.get("query") {
                Some(Value::String(s)) => s.clone(),
                _ => {
                    return Ok(ToolOutput::error(
                        name,
                        input,
                        "missing required field `query` (a natural language query string)",
                    ));
                }
            },
            other => {
                return Ok(ToolOutput::error(
                    name,
                    input.clone(),
                    format!("expected {{\"query\": \"...\"}}, got {other}"),
                ));
            }
        };
        // Cloning shares the index's stores, so the lock is not held while querying.
        let index = self.shared.index.lock().await.clone();
        let Some(index) = index else {
            let text = format!(
                "Error: No content has been loaded into the index. You must call {} first",
                self.shared.metadata.name
            );
            return Ok(ToolOutput::new(
                name,
                text.clone(),
                input,
                Value::String(text),
            ));
        };
        let answer = match index.as_query_engine(Arc::clone(&self.shared.llm)) {
            Ok(engine) => engine.query(&QueryBundle::new(query)).await,
            Err(e) => Err(e),
        };
        Ok(match answer {
            Ok(response) => ToolOutput::new(
                name,
                response.to_string(),
                input,
                response_to_value(&response),
            ),
            Err(e) => ToolOutput::error(name, input, e),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ragloom_core::embeddings::HashEmbedding;
    use ragloom_core::llms::MockLlm;
    use ragloom_core::tools::FunctionTool;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    struct Topic {
        topic: String,
    }

    fn spec() -> LoadAndSearchToolSpec {
        let fetch = FunctionTool::from_fn("fetch_page", Some("Fetches a page."), |t: Topic| {
            vec![
                format!("{} is a city on the river Seine.", t.topic),
                "Unrelated text about gardening and tomatoes.".to_owned(),
            ]
        });
        LoadAndSearchToolSpec::from_defaults(
            Arc::new(fetch),
            Arc::new(HashEmbedding::new(64)),
            Arc::new(MockLlm::new()),
        )
    }

    #[tokio::test]
    async fn load_then_read_answers_from_the_index() {
        let spec = spec();
        assert_eq!(spec.spec_functions(), ["fetch_page", "read_fetch_page"]);
        let tools = spec.to_tool_list();
        let (load, read) = (&tools[0], &tools[1]);
        assert!(
            load.metadata()
                .description
                .contains("read_fetch_page function.\n\n        Fetches a page.")
        );
        assert_eq!(load.metadata().fn_schema["required"], json!(["topic"]));

        let before = read.call(json!({"query": "river?"})).await.unwrap();
        assert_eq!(
            before.content,
            "Error: No content has been loaded into the index. You must call fetch_page first"
        );

        let loaded = load.call(json!({"topic": "Paris"})).await.unwrap();
        assert_eq!(
            loaded.content,
            "Content loaded! You can now search the information using read_fetch_page"
        );
        let answer = read
            .call(json!({"query": "Which river is Paris on?"}))
            .await
            .unwrap();
        assert!(!answer.is_error);
        assert!(answer.content.contains("Seine"), "{}", answer.content);
        assert_eq!(answer.tool_name, "read_fetch_page");

        // A second load adds to the same index.
        load.call(json!({"topic": "Lyon"})).await.unwrap();
        let answer = read
            .call(json!({"query": "Lyon city river"}))
            .await
            .unwrap();
        assert!(answer.content.contains("Lyon"), "{}", answer.content);
    }

    #[tokio::test]
    async fn a_failing_load_is_an_error_output() {
        let tools = spec().to_tool_list();
        let out = tools[0].call(json!({"wrong": 1})).await.unwrap();
        assert!(out.is_error);
        assert!(out.content.contains("`topic`"), "{}", out.content);
        assert_eq!(out.tool_name, "fetch_page");
    }

    #[test]
    fn converts_outputs_like_llama_index() {
        assert_eq!(output_to_documents(&json!("one")).len(), 1);
        let docs = output_to_documents(&json!(["a", {"k": 1}, 3]));
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].get_text(), "{'k': 1}");
        assert_eq!(docs[2].get_text(), "3");
    }
}
