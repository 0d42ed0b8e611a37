//! What every tool shares: its metadata (name, description, JSON schema of its
//! arguments), its output, the object-safe `Tool` trait, and schema clean-up for models.

use crate::error::{Error, Result};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::fmt;

/// OpenAI rejects tool descriptions longer than this (characters); LlamaIndex checks it too.
pub const MAX_TOOL_DESCRIPTION_LEN: usize = 1024;

/// Describes a tool to a model: LlamaIndex's `ToolMetadata`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolMetadata {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it; models choose tools by this text.
    pub description: String,
    /// JSON schema of the arguments object (`{"type": "object", "properties", "required"}`).
    pub fn_schema: Value,
    /// Whether an agent should hand the tool's output to the user as the final answer.
    #[serde(default)]
    pub return_direct: bool,
}

impl ToolMetadata {
    /// Metadata with LlamaIndex's default argument schema, one string `input`
    /// (its `DefaultToolFnSchema`), as query-engine and retriever tools take.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            fn_schema: default_tool_fn_schema(),
            return_direct: false,
        }
    }

    /// Replaces the argument schema.
    pub fn with_fn_schema(mut self, fn_schema: Value) -> Self {
        self.fn_schema = fn_schema;
        self
    }

    /// Sets `return_direct`.
    pub fn with_return_direct(mut self, return_direct: bool) -> Self {
        self.return_direct = return_direct;
        self
    }

    /// The schema keys a model needs (`type`, `properties`, `required`,
    /// `definitions`, `$defs`), as LlamaIndex's `get_parameters_dict`. A
    /// schema that is not an object gets the default `input` schema.
    pub fn get_parameters_dict(&self) -> Value {
        match &self.fn_schema {
            Value::Object(map) => {
                let mut out = Map::new();
                for key in ["type", "properties", "required", "definitions", "$defs"] {
                    if let Some(v) = map.get(key) {
                        out.insert(key.to_owned(), v.clone());
                    }
                }
                Value::Object(out)
            }
            _ => default_tool_fn_schema(),
        }
    }

    /// The parameters dict as Python's `json.dumps` writes it (LlamaIndex's `fn_schema_str`).
    pub fn fn_schema_str(&self) -> String {
        json_dumps(&self.get_parameters_dict())
    }

    /// The name with characters OpenAI refuses (`[^a-zA-Z0-9_-]`) replaced by `_`.
    pub fn sanitized_name(&self) -> String {
        self.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    /// The OpenAI tool form, `{"type": "function", "function": {name,
    /// description, parameters}}`. A description over
    /// [`MAX_TOOL_DESCRIPTION_LEN`] characters is an error naming the tool, as in LlamaIndex.
    pub fn to_openai_tool(&self) -> Result<Value> {
        let len = self.description.chars().count();
        if len > MAX_TOOL_DESCRIPTION_LEN {
            return Err(Error::InvalidInput(format!(
                "tool `{}`: description is {len} characters, more than the {MAX_TOOL_DESCRIPTION_LEN} \
                 allowed; shorten it or move it to the prompt",
                self.name
            )));
        }
        Ok(self.to_openai_tool_unchecked())
    }

    /// [`Self::to_openai_tool`] without the length check (`skip_length_check=True`).
    pub fn to_openai_tool_unchecked(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.sanitized_name(),
                "description": self.description,
                "parameters": self.get_parameters_dict(),
            }
        })
    }
}

/// LlamaIndex's `DefaultToolFnSchema` (one required string `input`), normalised.
pub fn default_tool_fn_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"input": {"type": "string"}},
        "required": ["input"],
    })
}

/// What a tool call produced: LlamaIndex's `ToolOutput`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The text handed back to the model.
    pub content: String,
    /// The tool that produced it.
    pub tool_name: String,
    /// The arguments it was called with.
    pub raw_input: Value,
    /// Its output before rendering to text (for errors, the message).
    pub raw_output: Value,
    /// Whether the call failed; the content then tells the model why.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful output.
    pub fn new(
        tool_name: impl Into<String>,
        content: impl Into<String>,
        raw_input: Value,
        raw_output: Value,
    ) -> Self {
        Self {
            content: content.into(),
            tool_name: tool_name.into(),
            raw_input,
            raw_output,
            is_error: false,
        }
    }

    /// A failed call: the content is `Encountered error: {message}`, as
    /// LlamaIndex's `call_tool` writes it, and the raw output is the message.
    pub fn error(
        tool_name: impl Into<String>,
        raw_input: Value,
        message: impl fmt::Display,
    ) -> Self {
        let message = message.to_string();
        Self {
            content: format!("Encountered error: {message}"),
            tool_name: tool_name.into(),
            raw_input,
            raw_output: Value::String(message),
            is_error: true,
        }
    }

    /// The output with its content cut to `max_output_len` characters (see [`truncate_tool_output`]).
    pub fn truncated(mut self, max_output_len: usize) -> Self {
        self.content = truncate_tool_output(&self.content, max_output_len);
        self
    }
}

impl fmt::Display for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.content)
    }
}

/// A tool a model can call. Shared as `Arc<dyn Tool>`.
///
/// A call whose arguments are wrong, or whose work fails, should return
/// `Ok` with an error [`ToolOutput`] (`is_error: true`) that tells the model
/// what went wrong, so an agent can retry; `Err` is for failures the model
/// cannot fix.
#[async_trait]
pub trait Tool: Send + Sync + fmt::Debug {
    /// Name, description and argument schema.
    fn metadata(&self) -> &ToolMetadata;

    /// Runs the tool with the arguments the model gave (normally a JSON object).
    async fn call(&self, input: Value) -> Result<ToolOutput>;

    /// The tool's name.
    fn name(&self) -> &str {
        &self.metadata().name
    }
}

/// Cuts `content` to at most `max_output_len` characters (never inside a
/// character), ending with a note of how much was dropped, so a huge tool
/// output cannot crowd a model's context window.
pub fn truncate_tool_output(content: &str, max_output_len: usize) -> String {
    let total = content.chars().count();
    if total <= max_output_len {
        return content.to_owned();
    }
    let note = |dropped: usize| format!("\n...[truncated {dropped} characters]");
    // The note counts towards the limit; when the limit is smaller than the
    // note itself, plain cutting is all that fits.
    let first_guess = max_output_len.saturating_sub(note(total).chars().count());
    if first_guess == 0 {
        return content.chars().take(max_output_len).collect();
    }
    // The dropped count has no more digits than the total; recounting with
    // it lets the kept text use the room a shorter note leaves.
    let keep = max_output_len.saturating_sub(note(total - first_guess).chars().count());
    let mut out: String = content.chars().take(keep).collect();
    out.push_str(&note(total - keep));
    out
}

/// Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
pub fn json_dumps(value: &Value) -> String {
    struct PySeparators;
    impl serde_json::ser::Formatter for PySeparators {
        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            writer: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                writer.write_all(b", ")
            }
        }
        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            writer: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                writer.write_all(b", ")
            }
        }
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            writer: &mut W,
        ) -> std::io::Result<()> {
            writer.write_all(b": ")
        }
    }
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, PySeparators);
    if value.serialize(&mut ser).is_err() {
        // Serialising a `Value` into memory cannot fail; fall back to the compact form.
        return value.to_string();
    }
    String::from_utf8(buf).unwrap_or_else(|_| value.to_string())
}

/// Turns a generated JSON schema (schemars) into the plain shape models
/// expect for tool arguments: `{"type": "object", "properties", "required"}`.
///
/// `$ref`s into `$defs`/`definitions` are inlined (recursive types keep
/// their `$ref` and the definitions they need), `$schema`, every `title` and
/// the root `description` are dropped, `format` is dropped on integers and numbers (`uint32`,
/// `double` mean nothing to a model), and an object schema always has `properties`.
pub fn normalize_schema(schema: &Value) -> Value {
    let Value::Object(root) = schema else {
        return schema.clone();
    };
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = root.get(key) {
            for (name, def) in d {
                defs.insert(format!("#/{key}/{name}"), def.clone());
            }
        }
    }
    let mut still_referenced = HashSet::new();
    let mut stack = Vec::new();
    let mut out = normalize_node(schema, &defs, &mut stack, &mut still_referenced, true);
    if let Value::Object(map) = &mut out {
        map.remove("$defs");
        map.remove("definitions");
        if !still_referenced.is_empty() {
            // Recursive definitions cannot be inlined: keep them, normalised.
            let mut kept = Map::new();
            let mut pending: Vec<String> = still_referenced.iter().cloned().collect();
            let mut seen: HashSet<String> = HashSet::new();
            while let Some(reference) = pending.pop() {
                if !seen.insert(reference.clone()) {
                    continue;
                }
                let Some(def) = defs.get(&reference) else {
                    continue;
                };
                let mut refs = HashSet::new();
                let mut def_stack = vec![reference.clone()];
                let normalised = normalize_node(def, &defs, &mut def_stack, &mut refs, false);
                pending.extend(refs.into_iter().filter(|r| !seen.contains(r)));
                if let Some(name) = reference.strip_prefix("#/$defs/") {
                    kept.insert(name.to_owned(), normalised);
                } else if let Some(name) = reference.strip_prefix("#/definitions/") {
                    // Rewrite under `$defs` so one place holds them all.
                    kept.insert(name.to_owned(), normalised);
                }
            }
            map.insert("$defs".to_owned(), Value::Object(kept));
            rewrite_definition_refs(&mut out);
        }
    }
    out
}

/// Schema keywords whose values are themselves schemas.
const SUBSCHEMA_KEYS: [&str; 6] = [
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
];
/// Schema keywords whose values are lists of schemas.
const SUBSCHEMA_LIST_KEYS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

fn normalize_node(
    node: &Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    still_referenced: &mut HashSet<String>,
    is_root: bool,
) -> Value {
    let Value::Object(map) = node else {
        return node.clone();
    };
    let mut out = Map::new();
    if let Some(Value::String(reference)) = map.get("$ref") {
        if let Some(def) = defs.get(reference) {
            if stack.contains(reference) {
                still_referenced.insert(reference.clone());
                out.insert("$ref".to_owned(), Value::String(reference.clone()));
            } else {
                stack.push(reference.clone());
                if let Value::Object(inlined) =
                    normalize_node(def, defs, stack, still_referenced, false)
                {
                    out.extend(inlined);
                }
                stack.pop();
            }
        } else {
            out.insert("$ref".to_owned(), Value::String(reference.clone()));
        }
    }
    for (key, value) in map {
        match key.as_str() {
            "$ref" | "$schema" | "title" => {}
            // At the root these are the tool's own title and description,
            // which the tool metadata already carries (LlamaIndex's
            // `get_parameters_dict` drops them too).
            "$defs" | "definitions" | "description" if is_root => {}
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                let mut props = Map::new();
                if let Value::Object(p) = value {
                    for (name, sub) in p {
                        props.insert(
                            name.clone(),
                            normalize_node(sub, defs, stack, still_referenced, false),
                        );
                    }
                }
                out.insert(key.clone(), Value::Object(props));
            }
            k if SUBSCHEMA_KEYS.contains(&k) => {
                out.insert(
                    key.clone(),
                    normalize_node(value, defs, stack, still_referenced, false),
                );
            }
            k if SUBSCHEMA_LIST_KEYS.contains(&k) => {
                let items = match value {
                    Value::Array(list) => Value::Array(
                        list.iter()
                            .map(|s| normalize_node(s, defs, stack, still_referenced, false))
                            .collect(),
                    ),
                    other => other.clone(),
                };
                out.insert(key.clone(), items);
            }
            // Keys beside a `$ref` (a field's description) win over the definition's.
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if has_type(&out, "integer") || has_type(&out, "number") {
        out.remove("format");
    }
    if is_object_schema(&out) && !out.contains_key("properties") && is_root {
        out.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    if matches!(out.get("required"), Some(Value::Array(req)) if req.is_empty()) {
        out.remove("required");
    }
    if is_root {
        // `type`, `properties`, `required` first: the order models see in prompts.
        let mut ordered = Map::new();
        for key in ["type", "properties", "required"] {
            if let Some(v) = out.remove(key) {
                ordered.insert(key.to_owned(), v);
            }
        }
        ordered.extend(out);
        return Value::Object(ordered);
    }
    Value::Object(out)
}

fn rewrite_definition_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                if let Some(name) = r.strip_prefix("#/definitions/") {
                    *r = format!("#/$defs/{name}");
                }
            }
            for v in map.values_mut() {
                rewrite_definition_refs(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_definition_refs),
        _ => {}
    }
}

fn has_type(schema: &Map<String, Value>, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(wanted)),
        _ => false,
    }
}

fn is_object_schema(schema: &Map<String, Value>) -> bool {
    has_type(schema, "object")
}

/// The JSON type names of `value`, for messages ("string", "integer", ...).
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks the top-level arguments against an object schema's `required`,
/// `type`, `enum` and `minimum`, so an error can name the offending field;
/// deeper mismatches are left to deserialisation.
pub(crate) fn check_arguments(schema: &Value, args: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !args.contains_key(name) {
                problems.push(format!("missing required field `{name}`"));
            }
        }
    }
    let Some(Value::Object(props)) = schema.get("properties") else {
        return problems;
    };
    for (name, value) in args {
        let Some(Value::Object(prop)) = props.get(name) else {
            continue;
        };
        let allowed: Vec<&str> = match prop.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let actual = json_type_name(value);
        let type_ok = allowed.is_empty()
            || allowed
                .iter()
                .any(|t| *t == actual || (*t == "number" && actual == "integer"));
        if !type_ok {
            problems.push(format!(
                "field `{name}`: expected {}, got {actual} {value}",
                allowed.join(" or ")
            ));
            continue;
        }
        if let Some(Value::Array(options)) = prop.get("enum") {
            if !options.contains(value) {
                problems.push(format!(
                    "field `{name}`: {value} is not one of {}",
                    Value::Array(options.clone())
                ));
                continue;
            }
        }
        let minimum = prop.get("minimum").and_then(Value::as_f64);
        if let (Some(min), Some(v)) = (minimum, value.as_f64()) {
            if v < min {
                problems.push(format!(
                    "field `{name}`: {value} is less than the minimum {min}"
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn normalize_inlines_defs_and_drops_noise() {
        let raw = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "title": {"type": "string", "title": "Title"},
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "unit": {"$ref": "#/$defs/Unit", "description": "The unit."}
            },
            "required": ["title", "n"],
            "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "title": "Unit"}}
        });
        let got = normalize_schema(&raw);
        assert_eq!(
            got,
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "n": {"type": "integer", "minimum": 0},
                    "unit": {"type": "string", "enum": ["c", "f"], "description": "The unit."}
                },
                "required": ["title", "n"]
            })
        );
        let keys: Vec<&String> = got.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "properties", "required"]);
    }

    #[test]
    fn normalize_keeps_recursive_defs() {
        let raw = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}
        });
        let got = normalize_schema(&raw);
        assert_eq!(
            got["properties"]["root"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert!(got["$defs"]["Tree"].is_object());
    }

    #[test]
    fn truncation_counts_characters_and_says_how_much() {
        let text = "é".repeat(200);
        let cut = truncate_tool_output(&text, 100);
        assert_eq!(cut.chars().count(), 100);
        assert!(cut.ends_with("characters]"), "{cut}");
        assert_eq!(truncate_tool_output("short", 100), "short");
        assert_eq!(truncate_tool_output("abcdef", 3), "abc");
    }

    #[test]
    fn json_dumps_uses_python_separators() {
        assert_eq!(
            json_dumps(&json!({"a": [1, 2], "b": "é"})),
            r#"{"a": [1, 2], "b": "é"}"#
        );
    }

    #[test]
    fn check_arguments_names_fields() {
        let schema = json!({"type": "object", "properties": {
            "days": {"type": "integer", "minimum": 0},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", null]}},
            "required": ["days", "city"]});
        let args = json!({"days": -2, "unit": "k"});
        let problems = check_arguments(&schema, args.as_object().unwrap());
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("`city`"));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`days`") && p.contains("minimum"))
        );
        assert!(problems.iter().any(|p| p.contains("`unit`")));
    }
}
