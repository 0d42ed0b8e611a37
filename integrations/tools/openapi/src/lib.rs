//! `OpenAPIToolSpec`: an API described by an OpenAPI document, as agent tools —
//! LlamaIndex's `load_openapi_spec`, and one typed tool per operation.
//!
//! LlamaIndex's `OpenAPIToolSpec` (package `llama-index-tools-openapi`)
//! gives the model a reduced spec to read, to be paired with
//! `RequestsToolSpec`'s `get_request`/`post_request`. That is here
//! ([`OpenAPIToolSpec::to_tool_list`]), and beyond it
//! [`OpenAPIToolSpec::operation_tools`]: one tool per operation whose JSON
//! schema is the operation's parameters and body, so a function-calling
//! model calls the API directly. Every call goes through a
//! [`RequestsToolSpec`] and its guards (allowed origins at each redirect,
//! headers kept on the first origin, internal addresses refused, size caps).
//!
//! Specs are OpenAPI 3.0 or 3.1, JSON or YAML, from a value, a file (with
//! `$ref`s to other files) or a URL (fetched through the guards); every
//! `$ref` is replaced by its target, cycles cut, the expansion bounded.

#![warn(missing_docs)]

mod load;
mod operations;
mod reduce;
mod yaml;

use async_trait::async_trait;
use load::{Dereferencer, Location};
pub use operations::{Operation, Parameter};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::Document;
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec};
use ragloom_core::utils::to_python_json_string;
pub use ragloom_tools_requests::RequestsToolSpec;
use serde_json::{Value, json};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Description of `load_openapi_spec`, as LlamaIndex's docstring gives it.
pub const LOAD_OPENAPI_SPEC_DESCRIPTION: &str = "load_openapi_spec() -> List[llama_index.core.schema.Document]\n\n        You are an AI agent specifically designed to retrieve information by making web requests to\n        an API based on an OpenAPI specification.\n\n        Here's a step-by-step guide to assist you in answering questions:\n\n        1. Determine the server base URL required for making the request\n\n        2. Identify the relevant endpoint (a HTTP verb plus path template) necessary to address the\n        question\n\n        3. Generate the required parameters and/or request body for making the request to the\n        endpoint\n\n        4. Perform the necessary requests to obtain the answer\n\n        Returns:\n            Document: A List of Document objects that describes the available API.";

/// Which operations to keep, by `operationId` (`""` when there is none).
pub type OperationFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// An API as agent tools (LlamaIndex `OpenAPIToolSpec`).
#[derive(Clone)]
pub struct OpenAPIToolSpec {
    /// The spec with every `$ref` replaced.
    spec: Arc<Value>,
    /// Where the spec was read from (a relative server is read against it).
    location: Location,
    /// The operations kept, read once.
    operations: Arc<Vec<Operation>>,
    /// LlamaIndex's reduced spec, as `json.dumps` writes it.
    reduced: String,
}

impl fmt::Debug for OpenAPIToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAPIToolSpec")
            .field("title", &self.spec.get("info").and_then(|i| i.get("title")))
            .field("operations", &self.operations.len())
            .finish_non_exhaustive()
    }
}

impl OpenAPIToolSpec {
    /// A spec given as a value (only `#/...` references).
    pub fn from_value(spec: Value) -> Result<Self> {
        let docs = std::collections::BTreeMap::from([(Location::Inline, spec)]);
        Self::from_documents(Location::Inline, &docs)
    }

    /// A spec given as JSON or YAML text (only `#/...` references).
    pub fn from_text(text: &str) -> Result<Self> {
        Self::from_value(yaml::parse(text, "the OpenAPI spec")?)
    }

    /// A spec file, JSON or YAML; its `$ref`s to other files are read
    /// relative to the file that holds them and must stay in the spec's
    /// folder (no absolute paths, no links out).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        Self::read(path.as_ref(), None)
    }

    /// As [`Self::from_file`], the referenced files allowed anywhere in
    /// `folder` (a layout whose references climb above the spec's folder,
    /// `../common/schemas/Error.yaml`).
    pub fn from_file_in(path: impl AsRef<Path>, folder: impl AsRef<Path>) -> Result<Self> {
        Self::read(path.as_ref(), Some(folder.as_ref()))
    }

    fn read(path: &Path, folder: Option<&Path>) -> Result<Self> {
        let (location, value) = load::read_file(path, folder)?;
        let docs = block_on_ready(load::gather(location.clone(), value, None))?;
        Self::from_documents(location, &docs)
    }

    /// A spec at `url`, fetched (with the documents its `$ref`s name)
    /// through `requests`' guards: its origin must be allowed.
    pub async fn from_url(url: &str, requests: &RequestsToolSpec) -> Result<Self> {
        let resolved = requests.resolve(url)?;
        let value = load::fetch(resolved.as_str(), requests).await?;
        let mut location_url = resolved;
        location_url.set_fragment(None);
        let location = Location::Url(location_url.to_string());
        let docs = load::gather(location.clone(), value, Some(requests)).await?;
        Self::from_documents(location, &docs)
    }

    fn from_documents(
        location: Location,
        docs: &std::collections::BTreeMap<Location, Value>,
    ) -> Result<Self> {
        let root = docs
            .get(&location)
            .ok_or_else(|| Error::Other("the spec document was not kept".into()))?;
        let spec = Dereferencer::new(docs).deref(root, &location)?;
        Self::checked(location, spec, None)
    }

    fn checked(location: Location, spec: Value, filter: Option<OperationFilter>) -> Result<Self> {
        if spec.get("swagger").is_some() {
            return Err(Error::InvalidInput(
                "this is a Swagger 2.0 document; convert it to OpenAPI 3 (3.0 and 3.1 are read)"
                    .into(),
            ));
        }
        match spec.get("openapi").and_then(Value::as_str) {
            Some(v) if v.starts_with("3.") => {}
            Some(v) => {
                return Err(Error::InvalidInput(format!(
                    "OpenAPI {v} is not read; 3.0 and 3.1 are"
                )));
            }
            None => {
                return Err(Error::InvalidInput(
                    "not an OpenAPI document: it has no `openapi` version".into(),
                ));
            }
        }
        if !spec.get("paths").is_none_or(Value::is_object) {
            return Err(Error::InvalidInput(
                "the spec's `paths` is not an object".into(),
            ));
        }
        let keep = |id: &str| filter.as_ref().is_none_or(|f| f(id));
        let reduced = to_python_json_string(&reduce::reduce(&spec, &keep))?;
        let operations = Arc::new(operations::operations(&spec, &keep));
        Ok(Self {
            spec: Arc::new(spec),
            location,
            operations,
            reduced,
        })
    }

    /// Keeps only the operations `filter` accepts, by `operationId`
    /// (LlamaIndex `operation_id_filter`).
    pub fn operation_id_filter(
        self,
        filter: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> Result<Self> {
        let spec = Arc::unwrap_or_clone(self.spec);
        Self::checked(self.location, spec, Some(Arc::new(filter)))
    }

    /// The spec with every `$ref` replaced (a cycle's back-reference stays a `$ref`).
    pub fn spec(&self) -> &Value {
        &self.spec
    }

    /// LlamaIndex's reduced spec as one document (`load_openapi_spec`).
    pub fn load_openapi_spec(&self) -> Vec<Document> {
        vec![Document::document(self.reduced.clone())]
    }

    /// The operations kept.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// The first server's URL: absolute, or a path that `requests`' base URL
    /// (or the URL the spec came from) completes. OpenAPI's default is `/`.
    pub fn server_url(&self) -> String {
        let server = self.spec.get("servers").and_then(|s| s.get(0));
        let mut first = server
            .and_then(|s| s.get("url"))
            .and_then(Value::as_str)
            .unwrap_or("/")
            .to_owned();
        // `https://{region}.example.com`: each variable's default.
        if let Some(Value::Object(vars)) = server.and_then(|s| s.get("variables")) {
            for (name, var) in vars {
                if let Some(default) = var.get("default").and_then(Value::as_str) {
                    first = first.replace(&format!("{{{name}}}"), default);
                }
            }
        }
        let first = first.as_str();
        match (&self.location, url::Url::parse(first)) {
            (_, Ok(absolute)) => absolute.to_string(),
            (Location::Url(spec_url), Err(_)) => url::Url::parse(spec_url)
                .and_then(|u| u.join(first))
                .map_or_else(|_| first.to_owned(), |u| u.to_string()),
            _ => first.to_owned(),
        }
    }

    /// One tool per operation, each calling the API through `requests`
    /// (whose base URL a relative server path is read against).
    pub fn operation_tools(&self, requests: RequestsToolSpec) -> Vec<Arc<dyn Tool>> {
        let server = self.server_url();
        self.operations
            .iter()
            .map(|op| operations::tool(op.clone(), server.clone(), requests.clone()))
            .collect()
    }
}

/// Runs a future that completes without waiting (gathering files never
/// awaits: only fetching URLs does), so `from_file` stays synchronous.
fn block_on_ready<T>(fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => Err(Error::Other(
            "reading the spec's files waited on the network".into(),
        )),
    }
}

/// The `load_openapi_spec` tool.
#[derive(Debug)]
struct LoadSpecTool {
    spec: OpenAPIToolSpec,
    metadata: ToolMetadata,
}

#[async_trait]
impl Tool for LoadSpecTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let docs = self.spec.load_openapi_spec();
        let raw = serde_json::to_value(&docs)?;
        Ok(ToolOutput::new(
            self.metadata.name.clone(),
            self.spec.reduced.clone(),
            input,
            raw,
        ))
    }
}

impl ToolSpec for OpenAPIToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        vec!["load_openapi_spec".into()]
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(LoadSpecTool {
            spec: self.clone(),
            metadata: ToolMetadata::new("load_openapi_spec", LOAD_OPENAPI_SPEC_DESCRIPTION)
                .with_fn_schema(json!({"properties": {}, "type": "object"})),
        })]
    }
}
