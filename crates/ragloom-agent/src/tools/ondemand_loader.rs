//! `OnDemandLoaderTool`: load documents with a reader, index them on the fly
//! and answer a query over them, all in one tool call (LlamaIndex's `OnDemandLoaderTool`).

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use ragloom_core::embeddings::Embedding;
use ragloom_core::error::{Error, Result};
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::llms::Llm;
use ragloom_core::query_engine::AsQueryEngine;
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::readers::Reader;
use ragloom_core::schema::{Document, QueryBundle};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, normalize_schema, response_to_value};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// A reader that takes arguments when it loads (LlamaIndex readers'
/// `load_data(**kwargs)`): what [`OnDemandLoaderTool`] needs to expose the
/// load arguments to a model. [`Reader`] itself takes none; wrap one in
/// [`ReaderLoader`], or build a loader from a typed closure with [`FnLoader`].
#[async_trait]
pub trait LoadArgsReader: Send + Sync + fmt::Debug {
    /// JSON schema of the arguments object (`{"type": "object", "properties", "required"}`).
    fn load_args_schema(&self) -> Value;

    /// Loads documents for `args` (a JSON object matching the schema).
    async fn load_data_with(&self, args: Map<String, Value>) -> Result<Vec<Document>>;

    /// The reader's name, for default tool descriptions.
    fn reader_name(&self) -> String;
}

/// Any [`Reader`] as a [`LoadArgsReader`] taking no arguments.
#[derive(Debug, Clone)]
pub struct ReaderLoader {
    reader: Arc<dyn Reader>,
    name: String,
}

impl ReaderLoader {
    /// Wraps `reader`; its type's name is the reader name.
    pub fn new<R: Reader + 'static>(reader: R) -> Self {
        Self {
            name: short_type_name::<R>(),
            reader: Arc::new(reader),
        }
    }

    /// Wraps a shared reader under `name`.
    pub fn from_arc(reader: Arc<dyn Reader>, name: impl Into<String>) -> Self {
        Self {
            reader,
            name: name.into(),
        }
    }
}

#[async_trait]
impl LoadArgsReader for ReaderLoader {
    fn load_args_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    async fn load_data_with(&self, _args: Map<String, Value>) -> Result<Vec<Document>> {
        self.reader.load_data().await
    }

    fn reader_name(&self) -> String {
        self.name.clone()
    }
}

type LoadFn =
    Arc<dyn Fn(Map<String, Value>) -> BoxFuture<'static, Result<Vec<Document>>> + Send + Sync>;

/// A loader from an async closure over a typed argument struct `A`, whose
/// JSON schema (field doc comments included) is what the model sees.
#[derive(Clone)]
pub struct FnLoader {
    name: String,
    schema: Value,
    load: LoadFn,
}

impl fmt::Debug for FnLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnLoader")
            .field("name", &self.name)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl FnLoader {
    /// A loader named `name` running `load`; arguments that do not
    /// deserialise into `A` are an [`Error::InvalidInput`] saying why.
    pub fn new<A, F, Fut>(name: impl Into<String>, load: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Document>>> + Send + 'static,
    {
        let name = name.into();
        let load = Arc::new(load);
        let loader_name = name.clone();
        let load: LoadFn = Arc::new(move |args: Map<String, Value>| {
            let load = Arc::clone(&load);
            let loader_name = loader_name.clone();
            async move {
                let args: A = serde_json::from_value(Value::Object(args)).map_err(|e| {
                    Error::invalid(format!("invalid load arguments for `{loader_name}`"), e)
                })?;
                load(args).await
            }
            .boxed()
        });
        Self {
            name,
            schema: normalize_schema(&schemars::schema_for!(A).to_value()),
            load,
        }
    }
}

#[async_trait]
impl LoadArgsReader for FnLoader {
    fn load_args_schema(&self) -> Value {
        self.schema.clone()
    }

    async fn load_data_with(&self, args: Map<String, Value>) -> Result<Vec<Document>> {
        (self.load)(args).await
    }

    fn reader_name(&self) -> String {
        self.name.clone()
    }
}

/// A tool as a loader (LlamaIndex's `OnDemandLoaderTool.from_tool`): the
/// tool's arguments are the load arguments, and its raw output becomes
/// documents as [`LoadAndSearchToolSpec`](super::LoadAndSearchToolSpec) converts it.
/// An error output of the tool is an [`Error::Tool`].
#[derive(Debug, Clone)]
pub struct ToolLoader {
    tool: Arc<dyn Tool>,
}

impl ToolLoader {
    /// Loads by calling `tool`.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        Self { tool }
    }
}

#[async_trait]
impl LoadArgsReader for ToolLoader {
    fn load_args_schema(&self) -> Value {
        self.tool.metadata().fn_schema.clone()
    }

    async fn load_data_with(&self, args: Map<String, Value>) -> Result<Vec<Document>> {
        let output = self.tool.call(Value::Object(args)).await?;
        if output.is_error {
            return Err(Error::Tool {
                tool: self.tool.name().to_owned(),
                message: output.content,
            });
        }
        Ok(super::load_and_search::output_to_documents(
            &output.raw_output,
        ))
    }

    fn reader_name(&self) -> String {
        // Python names the tool's class (`FunctionTool`); its name tells a model more.
        self.tool.name().to_owned()
    }
}

/// The last path segment of a type's name (`WikipediaReader`, not `my_crate::WikipediaReader`).
pub(crate) fn short_type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_owned()
}

/// Default name of an [`OnDemandLoaderTool`] (Python leaves it unset).
pub const DEFAULT_ONDEMAND_NAME: &str = "load_data";

/// Loads documents with a reader on each call, indexes them in a fresh
/// in-memory [`VectorStoreIndex`] and answers `query_str` over them with a
/// query engine (LlamaIndex `OnDemandLoaderTool`).
///
/// Its arguments are the loader's arguments plus `query_str` (the key is
/// configurable); the output's content is the answer, its raw input
/// `{"query": query_str}`, its raw output the response with its sources.
#[derive(Clone)]
pub struct OnDemandLoaderTool {
    loader: Arc<dyn LoadArgsReader>,
    embed_model: Arc<dyn Embedding>,
    llm: Arc<dyn Llm>,
    metadata: ToolMetadata,
    custom_schema: bool,
    use_query_str_in_loader: bool,
    query_str_kwargs_key: String,
}

impl fmt::Debug for OnDemandLoaderTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnDemandLoaderTool")
            .field("loader", &self.loader)
            .field("metadata", &self.metadata)
            .field("use_query_str_in_loader", &self.use_query_str_in_loader)
            .field("query_str_kwargs_key", &self.query_str_kwargs_key)
            .finish_non_exhaustive()
    }
}

impl OnDemandLoaderTool {
    /// A tool over `reader` (no load arguments) with LlamaIndex's defaults:
    /// description `Tool to load data from {ReaderType}`, key `query_str`.
    pub fn from_defaults<R: Reader + 'static>(
        reader: R,
        embed_model: Arc<dyn Embedding>,
        llm: Arc<dyn Llm>,
    ) -> Self {
        Self::from_loader(Arc::new(ReaderLoader::new(reader)), embed_model, llm)
    }

    /// A tool loading with `tool` (LlamaIndex `from_tool`): its arguments plus
    /// `query_str`; description `Tool to load data from {tool name}`; `return_direct`
    /// as the wrapped tool's.
    pub fn from_tool(
        tool: Arc<dyn Tool>,
        embed_model: Arc<dyn Embedding>,
        llm: Arc<dyn Llm>,
    ) -> Self {
        let return_direct = tool.metadata().return_direct;
        let mut out = Self::from_loader(Arc::new(ToolLoader::new(tool)), embed_model, llm);
        out.metadata.return_direct = return_direct;
        out
    }

    /// A tool over a loader that takes arguments.
    pub fn from_loader(
        loader: Arc<dyn LoadArgsReader>,
        embed_model: Arc<dyn Embedding>,
        llm: Arc<dyn Llm>,
    ) -> Self {
        let description = format!("Tool to load data from {}", loader.reader_name());
        let mut tool = Self {
            loader,
            embed_model,
            llm,
            metadata: ToolMetadata::new(DEFAULT_ONDEMAND_NAME, description),
            custom_schema: false,
            use_query_str_in_loader: false,
            query_str_kwargs_key: "query_str".to_owned(),
        };
        tool.rebuild_schema();
        tool
    }

    /// The loader's schema with the query key added as a required string.
    fn rebuild_schema(&mut self) {
        if self.custom_schema {
            return;
        }
        let mut schema = self.loader.load_args_schema();
        if let Value::Object(map) = &mut schema {
            map.entry("type").or_insert_with(|| json!("object"));
            let props = map.entry("properties").or_insert_with(|| json!({}));
            if let Value::Object(props) = props {
                props.insert(self.query_str_kwargs_key.clone(), json!({"type": "string"}));
            }
            let required = map.entry("required").or_insert_with(|| json!([]));
            if let Value::Array(required) = required {
                let key = Value::String(self.query_str_kwargs_key.clone());
                if !required.contains(&key) {
                    required.push(key);
                }
            }
        }
        self.metadata.fn_schema = schema;
    }

    ragloom_core::tool_metadata_setters!();

    /// Replaces the argument schema (LlamaIndex's `fn_schema=`).
    pub fn with_fn_schema(mut self, fn_schema: Value) -> Self {
        self.metadata.fn_schema = fn_schema;
        self.custom_schema = true;
        self
    }

    /// Also passes the query to the loader (default false: it is removed first).
    pub fn use_query_str_in_loader(mut self, yes: bool) -> Self {
        self.use_query_str_in_loader = yes;
        self
    }

    /// The argument holding the query (default `query_str`).
    pub fn query_str_kwargs_key(mut self, key: impl Into<String>) -> Self {
        self.query_str_kwargs_key = key.into();
        self.rebuild_schema();
        self
    }

    async fn run(&self, input: &Value) -> std::result::Result<ToolOutput, String> {
        let mut args = match input {
            Value::Object(map) => map.clone(),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        let key = &self.query_str_kwargs_key;
        let query_str = match args.get(key) {
            None | Some(Value::Null) => {
                return Err(format!(
                    "Missing query_str in kwargs with parameter name: {key}"
                ));
            }
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("`{key}` must be a string, got {other}")),
        };
        if !self.use_query_str_in_loader {
            args.remove(key);
        }
        let docs = self
            .loader
            .load_data_with(args)
            .await
            .map_err(|e| e.to_string())?;
        let index = VectorStoreIndex::from_documents(&docs, Arc::clone(&self.embed_model))
            .await
            .map_err(|e| e.to_string())?;
        let engine = index
            .as_query_engine(Arc::clone(&self.llm))
            .map_err(|e| e.to_string())?;
        let response = engine
            .query(&QueryBundle::new(query_str.clone()))
            .await
            .map_err(|e| e.to_string())?;
        Ok(ToolOutput::new(
            self.metadata.name.clone(),
            response.to_string(),
            json!({ "query": query_str }),
            response_to_value(&response),
        ))
    }
}

#[async_trait]
impl Tool for OnDemandLoaderTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        match self.run(&input).await {
            Ok(output) => Ok(output),
            Err(why) => Ok(ToolOutput::error(self.metadata.name.clone(), input, why)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ragloom_core::embeddings::HashEmbedding;
    use ragloom_core::llms::MockLlm;
    use serde::Deserialize;

    /// Arguments of the wiki loader.
    #[derive(Deserialize, JsonSchema)]
    struct Pages {
        /// Titles of the pages to load.
        pages: Vec<String>,
    }

    fn wiki() -> Arc<dyn LoadArgsReader> {
        Arc::new(FnLoader::new("WikiReader", |args: Pages| async move {
            Ok(args
                .pages
                .iter()
                .map(|p| {
                    Document::document(format!("The page {p} is about {p}s and nothing else."))
                })
                .collect())
        }))
    }

    #[tokio::test]
    async fn loads_indexes_and_answers() {
        let tool = OnDemandLoaderTool::from_loader(
            wiki(),
            Arc::new(HashEmbedding::new(64)),
            Arc::new(MockLlm::new()),
        )
        .with_name("wiki");
        assert_eq!(
            tool.metadata().description,
            "Tool to load data from WikiReader"
        );
        let schema = &tool.metadata().fn_schema;
        assert_eq!(schema["required"], json!(["pages", "query_str"]));
        assert_eq!(schema["properties"]["query_str"], json!({"type": "string"}));
        assert_eq!(
            schema["properties"]["pages"]["description"],
            "Titles of the pages to load."
        );

        let out = tool
            .call(json!({"pages": ["Berlin", "Paris"], "query_str": "What is Paris about?"}))
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.content);
        // MockLlm echoes its prompt, which holds the retrieved context.
        assert!(out.content.contains("Paris"), "{}", out.content);
        assert_eq!(out.raw_input, json!({"query": "What is Paris about?"}));
        assert_eq!(out.tool_name, "wiki");
    }

    #[tokio::test]
    async fn missing_query_and_bad_args_are_error_outputs() {
        let tool = OnDemandLoaderTool::from_loader(
            wiki(),
            Arc::new(HashEmbedding::new(64)),
            Arc::new(MockLlm::new()),
        );
        let out = tool.call(json!({"pages": ["x"]})).await.unwrap();
        assert!(out.is_error);
        assert!(
            out.content
                .contains("Missing query_str in kwargs with parameter name: query_str")
        );
        let out = tool
            .call(json!({"pages": 3, "query_str": "q"}))
            .await
            .unwrap();
        assert!(out.is_error);
        assert!(
            out.content
                .contains("invalid load arguments for `WikiReader`"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn from_tool_loads_with_the_tool() {
        use ragloom_core::tools::FunctionTool;
        let fetch = FunctionTool::from_fn("fetch", None, |p: Pages| {
            p.pages
                .iter()
                .map(|p| format!("{p} has a famous cathedral."))
                .collect::<Vec<_>>()
        });
        let tool = OnDemandLoaderTool::from_tool(
            Arc::new(fetch),
            Arc::new(HashEmbedding::new(64)),
            Arc::new(MockLlm::new()),
        );
        assert_eq!(tool.metadata().description, "Tool to load data from fetch");
        assert_eq!(
            tool.metadata().fn_schema["required"],
            json!(["pages", "query_str"])
        );
        let out = tool
            .call(json!({"pages": ["Chartres"], "query_str": "What is famous?"}))
            .await
            .unwrap();
        assert!(
            out.content.contains("Chartres has a famous cathedral."),
            "{}",
            out.content
        );
        let out = tool
            .call(json!({"pages": 1, "query_str": "q"}))
            .await
            .unwrap();
        assert!(
            out.is_error && out.content.contains("`pages`"),
            "{}",
            out.content
        );
    }

    #[derive(Debug)]
    struct Fixed;

    #[async_trait]
    impl Reader for Fixed {
        async fn load_data(&self) -> Result<Vec<Document>> {
            Ok(vec![Document::document("Rust was first released in 2015.")])
        }
    }

    #[tokio::test]
    async fn plain_reader_takes_only_the_query() {
        let tool = OnDemandLoaderTool::from_defaults(
            Fixed,
            Arc::new(HashEmbedding::new(64)),
            Arc::new(MockLlm::new()),
        )
        .query_str_kwargs_key("question");
        assert_eq!(tool.metadata().description, "Tool to load data from Fixed");
        assert_eq!(
            tool.metadata().fn_schema,
            json!({"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]})
        );
        let out = tool
            .call(json!({"question": "When was Rust released?"}))
            .await
            .unwrap();
        assert!(out.content.contains("2015"), "{}", out.content);
    }
}
