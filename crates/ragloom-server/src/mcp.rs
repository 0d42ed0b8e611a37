//! The MCP server (rmcp): tools `query`, `retrieve` and `list_documents`, and
//! every document as a resource, over Streamable HTTP at `/mcp` or stdio.

use crate::answer;
use crate::error::ApiError;
use crate::passage;
use crate::rest::page;
use crate::state::AppState;
use ragloom::retrievers::keyword_query;
use ragloom::vector_stores::MetadataFilters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Resources per page of `resources/list`.
const RESOURCE_PAGE: usize = 100;

/// The MCP face of the server's indexes.
#[derive(Clone, Debug)]
pub struct McpServer {
    state: Arc<AppState>,
}

impl McpServer {
    pub(crate) fn new(state: Arc<AppState>) -> Self {
        Self { state }
    }
}

/// Arguments of `query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    /// The question, in plain words.
    question: String,
    /// The index to ask (default: the first one served).
    index: Option<String>,
    /// How many passages to draw on (default 4).
    top_k: Option<usize>,
}

/// Arguments of `retrieve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RetrieveArgs {
    /// What to search for.
    query: String,
    /// How many passages to return (default 4).
    top_k: Option<usize>,
    /// The index to search (default: the first one served).
    index: Option<String>,
    /// Only passages whose metadata match, as LlamaIndex's MetadataFilters:
    /// {"filters": [{"key": "file_name", "value": "a.txt", "operator": "=="}], "condition": "and"}.
    #[schemars(with = "Option<serde_json::Value>")]
    filters: Option<MetadataFilters>,
}

/// Arguments of `list_documents`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// The index (default: the first one served).
    index: Option<String>,
    /// Where the page starts: `next_cursor` of the page before.
    cursor: Option<String>,
    /// Documents per page (default 100).
    limit: Option<usize>,
}

fn schema<T: JsonSchema + 'static>() -> Arc<rmcp::model::JsonObject> {
    rmcp::handler::server::common::schema_for_type::<T>()
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "query",
            "Answer a question from the indexed documents, with the passages (file and line) the answer draws on.",
            schema::<QueryArgs>(),
        ),
        Tool::new(
            "retrieve",
            "Find the passages of the indexed documents that best match a query: file, line, score and text; top_k and metadata filters.",
            schema::<RetrieveArgs>(),
        ),
        Tool::new(
            "list_documents",
            "List the indexed documents (id, file, nodes), a page at a time.",
            schema::<ListArgs>(),
        ),
    ]
}

/// A failed call, as the model sees it: a tool result flagged as an error,
/// so the session goes on.
fn tool_error(message: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(message.into())]).into()
}

fn api_message(e: ApiError) -> String {
    format!("{} ({})", e.body.error.message, e.body.error.code)
}

fn args<T: DeserializeOwned>(req: &CallToolRequestParams) -> Result<T, String> {
    let v = serde_json::Value::Object(req.arguments.clone().unwrap_or_default());
    serde_json::from_value(v).map_err(|e| format!("invalid arguments for `{}`: {e}", req.name))
}

fn success(text: String, structured: serde_json::Value) -> CallToolResponse {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r.into()
}

impl McpServer {
    async fn query(&self, a: QueryArgs) -> Result<CallToolResponse, ApiError> {
        let state = &self.state;
        let index = state.index(a.index.as_deref())?;
        let top_k = state.top_k(a.top_k)?;
        let view = index.view().await?;
        let (answer, _) = tokio::time::timeout(
            state.config.request_timeout,
            answer::query(state, &view, &a.question, top_k, None),
        )
        .await
        .map_err(|_| ApiError::timeout(state.config.request_timeout.as_secs()))??;
        let text = match &answer.answer {
            Some(t) => {
                let cites: Vec<String> = answer
                    .sources
                    .iter()
                    .enumerate()
                    .map(|(i, p)| format!("[{}] {}", i + 1, passage::location(p)))
                    .collect();
                format!("{t}\n\nSources:\n{}", cites.join("\n"))
            }
            None => answer::passages_text(&answer.sources),
        };
        Ok(success(
            text,
            serde_json::to_value(&answer).unwrap_or_default(),
        ))
    }

    async fn retrieve(&self, a: RetrieveArgs) -> Result<CallToolResponse, ApiError> {
        let state = &self.state;
        if a.query.trim().is_empty() {
            return Err(ApiError::bad_request("query is empty"));
        }
        let index = state.index(a.index.as_deref())?;
        let top_k = state.top_k(a.top_k)?;
        let view = index.view().await?;
        let query = keyword_query(&a.query);
        let nodes = answer::retrieve(&view, &query, top_k, a.filters).await?;
        let ps = answer::passages(state, &view, &query, &nodes);
        let text = if ps.is_empty() {
            "No passage matches.".to_string()
        } else {
            answer::labelled(&ps, true)
        };
        Ok(success(text, serde_json::json!({ "nodes": ps })))
    }

    async fn list(&self, a: ListArgs) -> Result<CallToolResponse, ApiError> {
        let index = self.state.index(a.index.as_deref())?;
        let docs = index.view().await?.documents().await?;
        let (docs, next) = page(
            &docs,
            a.cursor.as_deref(),
            a.limit.unwrap_or(100).clamp(1, 1000),
        )?;
        let mut text: Vec<String> = docs
            .iter()
            .map(|d| format!("{} ({} nodes) id={}", d.file, d.nodes, d.id))
            .collect();
        if let Some(n) = &next {
            text.push(format!("more: call again with cursor \"{n}\""));
        }
        Ok(success(
            text.join("\n"),
            serde_json::json!({ "documents": docs, "next_cursor": next }),
        ))
    }

    /// Every document of every index, as (index, document).
    async fn all_documents(&self) -> Result<Vec<(String, crate::index::DocumentInfo)>, ErrorData> {
        let mut all = Vec::new();
        for index in &self.state.indexes {
            let docs = async { index.view().await?.documents().await }
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            all.extend(docs.into_iter().map(|d| (index.name().to_string(), d)));
        }
        Ok(all)
    }
}

/// `ragloom://INDEX/documents/ID`, the parts percent-encoded.
fn resource_uri(index: &str, doc: &str) -> String {
    format!("ragloom://{}/documents/{}", encode(index), encode(doc))
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn parse_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("ragloom://")?;
    let (index, doc) = rest.split_once("/documents/")?;
    Some((decode(index)?, decode(doc)?))
}

/// A document's text from its stored nodes, in order; overlapping chunks
/// are joined at their recorded offsets so the overlap appears once.
pub(crate) fn stitch(mut nodes: Vec<ragloom::Node>) -> String {
    nodes.sort_by_key(|n| n.start_char_idx.unwrap_or(usize::MAX));
    let mut out = String::new();
    let mut end = 0usize; // characters of the document written so far
    for n in &nodes {
        let text = n.get_text();
        match n.start_char_idx {
            Some(start) if start <= end && !out.is_empty() => {
                let skip = end - start;
                let tail: String = text.chars().skip(skip).collect();
                end += tail.chars().count();
                out.push_str(&tail);
            }
            Some(start) => {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(text);
                end = start + text.chars().count();
            }
            None => {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(text);
            }
        }
    }
    out
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let names: Vec<&str> = self.state.indexes.iter().map(|i| i.name()).collect();
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("ragloom", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "Answers questions from indexed documents ({}). Use `retrieve` to find passages with their file and line, `query` for an answer with sources, `list_documents` to see what is indexed; documents are resources too.",
            names.join(", ")
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let outcome = match request.name.as_ref() {
            "query" => match args::<QueryArgs>(&request) {
                Ok(a) => self.query(a).await,
                Err(e) => return Ok(tool_error(e)),
            },
            "retrieve" => match args::<RetrieveArgs>(&request) {
                Ok(a) => self.retrieve(a).await,
                Err(e) => return Ok(tool_error(e)),
            },
            "list_documents" => match args::<ListArgs>(&request) {
                Ok(a) => self.list(a).await,
                Err(e) => return Ok(tool_error(e)),
            },
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool is named `{other}`: query, retrieve, list_documents"),
                    None,
                ));
            }
        };
        Ok(outcome.unwrap_or_else(|e| tool_error(api_message(e))))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all = self.all_documents().await?;
        let cursor = request.and_then(|r| r.cursor);
        let (docs, next) = page(&all, cursor.as_deref(), RESOURCE_PAGE)
            .map_err(|e| ErrorData::invalid_params(e.body.error.message, None))?;
        let resources = docs
            .into_iter()
            .map(|(index, d)| {
                Resource::new(resource_uri(&index, &d.id), d.file.clone())
                    .with_description(format!(
                        "{} of the index {index} ({} nodes)",
                        d.file, d.nodes
                    ))
                    .with_mime_type("text/plain")
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let (index, doc) = parse_uri(&uri).ok_or_else(|| {
            ErrorData::invalid_params(format!("`{uri}` is not a ragloom document URI"), None)
        })?;
        let not_found = || ErrorData::resource_not_found(format!("no document at `{uri}`"), None);
        let index = self.state.index(Some(&index)).map_err(|_| not_found())?;
        let view = index
            .view()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let info = view
            .docstore
            .get_ref_doc_info(&doc)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .ok_or_else(not_found)?;
        let nodes = view
            .docstore
            .get_nodes(&info.node_ids)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = stitch(nodes);
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/plain"),
        ])
        .into())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_any_id() {
        for (i, d) in [
            ("docs", "/home/a b/c.txt_part_0"),
            ("x/y", "100%"),
            ("é", "?#&"),
        ] {
            let uri = resource_uri(i, d);
            assert!(!uri[10..].contains(' '), "{uri}");
            assert_eq!(parse_uri(&uri), Some((i.to_string(), d.to_string())));
        }
        assert_eq!(parse_uri("file:///etc/passwd"), None);
        assert_eq!(parse_uri("ragloom://docs/documents/%zz"), None);
    }

    #[test]
    fn stitching_drops_the_overlap() {
        let doc = "alpha beta gamma delta epsilon";
        let node = |s: usize, e: usize| {
            let text: String = doc.chars().skip(s).take(e - s).collect();
            let mut n = ragloom::Node::text_node(text);
            n.start_char_idx = Some(s);
            n
        };
        assert_eq!(stitch(vec![node(11, 30), node(0, 16)]), doc);
        assert_eq!(
            stitch(vec![node(0, 10), node(17, 30)]),
            "alpha beta\n\ndelta epsilon"
        );
    }

    #[test]
    fn the_tools_have_object_schemas() {
        let t = tools();
        assert_eq!(t.len(), 3);
        for tool in &t {
            assert_eq!(
                tool.input_schema.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
        }
        let retrieve = t.iter().find(|t| t.name == "retrieve").unwrap();
        let props = retrieve.input_schema.get("properties").unwrap();
        assert!(props.get("top_k").is_some() && props.get("filters").is_some());
    }
}
