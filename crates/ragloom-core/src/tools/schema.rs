//! JSON schemas of tool arguments: schemars output cleaned into the plain
//! shape models expect, and a first check of a call's arguments against it.

use serde_json::{Map, Value};
use std::collections::HashSet;

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
    use serde_json::json;

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
