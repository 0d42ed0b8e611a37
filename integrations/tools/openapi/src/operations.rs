//! One tool per API operation: its parameters and body as a JSON schema a
//! function-calling model fills in, the call sent through `RequestsToolSpec`.

use crate::reduce::{Found, each_operation};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput};
use ragloom_tools_requests::RequestsToolSpec;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A parameter the model fills in.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// Its name in the API.
    pub name: String,
    /// Its argument's name in the tool: the name, or `path_<name>` /
    /// `query_<name>` when a path and a query parameter share the name.
    pub key: String,
    /// `path` or `query`.
    pub location: String,
    /// Whether the call needs it.
    pub required: bool,
    /// Its JSON schema (with its description, when the spec gives one).
    pub schema: Value,
}

/// One operation of the API (a verb on a path).
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// The tool's name: the `operationId` (or verb and path), made a valid
    /// function name, unique in the spec.
    pub name: String,
    /// `GET`, `POST`, `PATCH`, `PUT`, `DELETE`.
    pub method: String,
    /// The path template (`/notes/{note_id}`).
    pub path: String,
    /// The summary and description.
    pub description: String,
    /// Path and query parameters (header and cookie ones are the client's to set).
    pub parameters: Vec<Parameter>,
    /// The JSON body's schema, and whether it is required.
    pub body: Option<(Value, bool)>,
    /// The key the body goes under in the tool's arguments (`body`, unless a
    /// parameter has that name).
    pub body_key: String,
}

impl Operation {
    /// The tool's JSON schema: the parameters, then the body.
    pub fn fn_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in &self.parameters {
            properties.insert(p.key.clone(), schema_for_model(&p.schema));
            if p.required {
                required.push(json!(p.key));
            }
        }
        if let Some((schema, needed)) = &self.body {
            properties.insert(self.body_key.clone(), schema_for_model(schema));
            if *needed {
                required.push(json!(self.body_key));
            }
        }
        json!({"type": "object", "properties": properties, "required": required})
    }
}

/// The names between braces in a path template (`/a/{x}/b/{y}`: x, y).
fn placeholders(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_owned()))
        .filter(|name| !name.is_empty())
        .collect()
}

/// A schema as function-calling APIs take it: a cut cycle (`$ref` left by
/// the dereferencing) becomes "any object".
fn schema_for_model(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.contains_key("$ref") => json!({"type": "object"}),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), schema_for_model(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(schema_for_model).collect()),
        other => other.clone(),
    }
}

/// `[A-Za-z0-9_-]`, at most 64 characters (what function-calling APIs accept).
fn function_name(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(64);
    if name.is_empty() {
        name.push_str("operation");
    }
    name
}

/// The operations of a dereferenced spec that `keep` accepts.
pub(crate) fn operations(spec: &Value, keep: &dyn Fn(&str) -> bool) -> Vec<Operation> {
    let mut out = Vec::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut next_suffix: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    for Found {
        path,
        item,
        verb,
        detail,
    } in each_operation(spec, keep)
    {
        // A template must be a path: `x/y` or `@host/x` would change the URL's host.
        if !path.starts_with('/') {
            continue;
        }
        // Parameters for every operation of the path.
        let shared: Vec<&Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let id = detail
            .get("operationId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let base = if id.is_empty() {
            function_name(&format!("{verb}{}", path.replace(['/', '{', '}'], "_")))
        } else {
            function_name(id)
        };
        // A repeated name gets the next free `_2`, `_3`, ..., within 64 characters.
        let mut name = base.clone();
        while !taken.insert(name.clone()) {
            let n = next_suffix.entry(base.clone()).or_insert(1);
            *n += 1;
            let suffix = format!("_{n}");
            name = format!("{}{suffix}", &base[..base.len().min(64 - suffix.len())]);
        }
        let own: Vec<&Value> = detail
            .get("parameters")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let mut parameters: Vec<Parameter> = Vec::new();
        for p in shared.iter().chain(&own) {
            let (Some(pname), Some(location)) = (
                p.get("name").and_then(Value::as_str),
                p.get("in").and_then(Value::as_str),
            ) else {
                continue;
            };
            if location != "path" && location != "query" {
                continue;
            }
            let mut schema = p
                .get("schema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "string"}));
            if let (Some(d), Value::Object(map)) = (p.get("description"), &mut schema) {
                map.entry("description").or_insert_with(|| d.clone());
            }
            // An operation's parameter replaces the path's of the same name.
            parameters.retain(|q| !(q.name == pname && q.location == location));
            parameters.push(Parameter {
                name: pname.to_owned(),
                key: pname.to_owned(),
                location: location.to_owned(),
                required: location == "path" || p.get("required") == Some(&Value::Bool(true)),
                schema,
            });
        }
        // A placeholder the spec declares no parameter for is still one
        // the call must fill (else `{x}` would be sent as it is).
        for placeholder in placeholders(path) {
            if !parameters
                .iter()
                .any(|p| p.location == "path" && p.name == placeholder)
            {
                parameters.push(Parameter {
                    key: placeholder.clone(),
                    name: placeholder,
                    location: "path".to_owned(),
                    required: true,
                    schema: json!({"type": "string"}),
                });
            }
        }
        // A path and a query parameter of one name get distinct arguments.
        let names: Vec<(String, String)> = parameters
            .iter()
            .map(|p| (p.name.clone(), p.location.clone()))
            .collect();
        for p in &mut parameters {
            if names.iter().any(|(n, l)| *n == p.name && *l != p.location) {
                p.key = format!("{}_{}", p.location, p.name);
            }
        }
        let body = detail.get("requestBody").and_then(|b| {
            // `application/json`, with parameters (`; charset=utf-8`) or as
            // a `+json` type.
            let content = b.get("content")?.as_object()?;
            let media = content.iter().find_map(|(kind, media)| {
                let kind = kind
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase();
                (kind == "application/json" || kind.ends_with("+json")).then_some(media)
            })?;
            let schema = media.get("schema")?.clone();
            Some((schema, b.get("required") == Some(&Value::Bool(true))))
        });
        let body_key = if parameters.iter().any(|p| p.key == "body") {
            "request_body".to_owned()
        } else {
            "body".to_owned()
        };
        let summary = detail.get("summary").and_then(Value::as_str).unwrap_or("");
        let long = detail
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut description = format!("{} {path}", verb.to_uppercase());
        for text in [summary, long] {
            if !text.is_empty() && !description.contains(text) {
                description.push_str(&format!("\n{text}"));
            }
        }
        out.push(Operation {
            name,
            method: verb.to_uppercase(),
            path: path.to_owned(),
            description,
            parameters,
            body,
            body_key,
        });
    }
    out
}

/// Calls one operation through the requests spec's guards.
#[derive(Debug)]
pub(crate) struct OperationTool {
    pub(crate) operation: Operation,
    /// The server's path prefix (`/v1`) or its absolute URL.
    pub(crate) server: String,
    pub(crate) requests: RequestsToolSpec,
    pub(crate) metadata: ToolMetadata,
}

impl OperationTool {
    /// The URL (path parameters filled, each encoded as one segment) and the
    /// query pairs.
    fn target(&self, args: &Map<String, Value>) -> Result<(String, Vec<(String, String)>)> {
        let mut path = self.operation.path.clone();
        let mut query = Vec::new();
        for p in &self.operation.parameters {
            let value = match args.get(&p.key) {
                None | Some(Value::Null) if p.required => {
                    return Err(Error::InvalidInput(format!(
                        "missing required argument `{}`",
                        p.key
                    )));
                }
                None | Some(Value::Null) => continue,
                Some(v) => v,
            };
            if p.location == "path" {
                let text = scalar_text(value, &p.name)?;
                // URLs resolve `.` and `..` segments: they would leave the path.
                if text.is_empty() || text == "." || text == ".." {
                    return Err(Error::InvalidInput(format!(
                        "argument `{}` may not be empty, `.` or `..`",
                        p.key
                    )));
                }
                let encoded: String = url::form_urlencoded::byte_serialize(text.as_bytes())
                    .collect::<String>()
                    .replace('+', "%20");
                path = path.replace(&format!("{{{}}}", p.name), &encoded);
            } else if let Value::Array(items) = value {
                for item in items {
                    query.push((p.name.clone(), scalar_text(item, &p.name)?));
                }
            } else {
                query.push((p.name.clone(), scalar_text(value, &p.name)?));
            }
        }
        let url = if self.server.contains("://") {
            format!("{}{path}", self.server.trim_end_matches('/'))
        } else {
            // `./`: a first segment like `abc:publish` is a path, not a URL scheme.
            format!(
                "./{}",
                format!("{}{path}", self.server.trim_end_matches('/')).trim_start_matches('/')
            )
        };
        Ok((url, query))
    }

    async fn run(&self, input: &Value) -> Result<Value> {
        let empty = Map::new();
        let args = match input {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                return Err(Error::InvalidInput(format!(
                    "expected an object of arguments, got {other}"
                )));
            }
        };
        let (url, query) = self.target(args)?;
        let body = match (&self.operation.body, args.get(&self.operation.body_key)) {
            (Some((_, true)), None | Some(Value::Null)) => {
                return Err(Error::InvalidInput(format!(
                    "missing required argument `{}` (the request body)",
                    self.operation.body_key
                )));
            }
            (Some(_), Some(b)) if !b.is_null() => Some(b),
            _ => None,
        };
        let method = reqwest::Method::from_bytes(self.operation.method.as_bytes())
            .map_err(|e| Error::invalid(format!("method {}", self.operation.method), e))?;
        self.requests.request(method, &url, &query, body).await
    }
}

fn scalar_text(value: &Value, name: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(Error::InvalidInput(format!(
            "argument `{name}` must be a string, number or boolean, got {other}"
        ))),
    }
}

#[async_trait]
impl Tool for OperationTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        // A refused URL, a 4xx, a missing argument: error outputs the model can act on.
        let outcome = self.run(&input).await;
        Ok(self
            .requests
            .tool_output(&self.metadata.name, input, outcome))
    }
}

/// The tool for `operation`.
pub(crate) fn tool(
    operation: Operation,
    server: String,
    requests: RequestsToolSpec,
) -> Arc<dyn Tool> {
    let metadata = ToolMetadata::new(operation.name.clone(), operation.description.clone())
        .with_fn_schema(operation.fn_schema());
    Arc::new(OperationTool {
        operation,
        server,
        requests,
        metadata,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_function_names() {
        assert_eq!(function_name("create note!"), "create_note_");
        assert_eq!(function_name(&"x".repeat(100)).len(), 64);
        let spec = json!({"paths": {"/a/{id}": {
            "parameters": [{"name": "id", "in": "path", "schema": {"type": "integer"}}],
            "get": {"operationId": "same"},
            "delete": {"operationId": "same", "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}}]},
            "head": {"operationId": "skipped"}
        }}});
        let ops = operations(&spec, &|_| true);
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["same", "same_2"]);
        assert_eq!(ops[0].parameters[0].schema["type"], "integer");
        assert_eq!(ops[1].parameters[0].schema["type"], "string");
        assert_eq!(ops[0].fn_schema()["required"], json!(["id"]));
    }

    #[test]
    fn shared_names_undeclared_placeholders_and_json_variants_are_handled() {
        let spec = json!({"paths": {"/items/{id}/v/{version}": {
            "post": {"operationId": "put_item",
                "parameters": [
                    {"name": "id", "in": "path", "schema": {"type": "integer"}},
                    {"name": "id", "in": "query", "schema": {"type": "string"}}],
                "requestBody": {"required": true, "content": {
                    "text/plain": {"schema": {"type": "string"}},
                    "application/json; charset=utf-8": {"schema": {"type": "object"}}}}},
            "put": {"operationId": "put_merge",
                "requestBody": {"content": {"application/merge-patch+json": {"schema": {"type": "array"}}}}}
        }}});
        let ops = operations(&spec, &|_| true);
        let keys: Vec<&str> = ops[0].parameters.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["path_id", "query_id", "version"]);
        let schema = ops[0].fn_schema();
        assert_eq!(schema["required"], json!(["path_id", "version", "body"]));
        assert_eq!(schema["properties"]["body"]["type"], "object");
        assert_eq!(ops[1].body.as_ref().unwrap().0["type"], "array");
        let tool = OperationTool {
            operation: ops[0].clone(),
            server: String::new(),
            requests: RequestsToolSpec::new("http://127.0.0.1:9/").unwrap(),
            metadata: ToolMetadata::new("t", "d"),
        };
        let args = json!({"path_id": 7, "query_id": "q", "version": "v2"});
        let (url, query) = tool.target(args.as_object().unwrap()).unwrap();
        assert_eq!(url, "./items/7/v/v2");
        assert_eq!(query, [("id".to_owned(), "q".to_owned())]);
        let missing = json!({"path_id": 7});
        let err = tool
            .target(missing.as_object().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`version`"), "{err}");
    }
}
