//! LlamaIndex's reduction of a spec for the model (`process_api_spec`): the
//! servers, the description, and per endpoint its verb, path, description,
//! parameters, body and `200` response.

use serde_json::{Map, Value, json};

/// The verbs LlamaIndex lists.
const VERBS: [&str; 5] = ["get", "post", "patch", "put", "delete"];

/// One operation of a spec: its path, the path's item, its verb, its object.
pub(crate) struct Found<'a> {
    pub(crate) path: &'a str,
    pub(crate) item: &'a Map<String, Value>,
    pub(crate) verb: &'a str,
    pub(crate) detail: &'a Map<String, Value>,
}

/// The operations `keep` accepts (by `operationId`, `""` when there is
/// none), in the spec's order, for the verbs LlamaIndex lists.
pub(crate) fn each_operation<'a>(spec: &'a Value, keep: &dyn Fn(&str) -> bool) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    let Some(Value::Object(paths)) = spec.get("paths") else {
        return out;
    };
    for (path, item) in paths {
        let Value::Object(item) = item else {
            continue;
        };
        for (verb, detail) in item {
            let Value::Object(detail) = detail else {
                continue;
            };
            let id = detail
                .get("operationId")
                .and_then(Value::as_str)
                .unwrap_or("");
            if VERBS.contains(&verb.as_str()) && keep(id) {
                out.push(Found {
                    path,
                    item,
                    verb,
                    detail,
                });
            }
        }
    }
    out
}

/// The reduced spec, from the dereferenced one, keeping the operations
/// `keep` accepts.
pub(crate) fn reduce(spec: &Value, keep: &dyn Fn(&str) -> bool) -> Value {
    let mut endpoints = Vec::new();
    for Found {
        path, verb, detail, ..
    } in each_operation(spec, keep)
    {
        let mut out = Map::new();
        out.insert("verb".into(), json!(verb.to_uppercase()));
        out.insert("path_template".into(), json!(path));
        let description = [detail.get("description"), detail.get("summary")]
            .into_iter()
            .flatten()
            .find(|v| truthy(v));
        if let Some(d) = description {
            out.insert("description".into(), d.clone());
        }
        for key in ["parameters", "requestBody"] {
            if let Some(v) = detail.get(key).filter(|v| truthy(v)) {
                out.insert(key.into(), v.clone());
            }
        }
        if let Some(ok) = detail.get("responses").and_then(|r| r.get("200")) {
            out.insert("responses".into(), ok.clone());
        }
        endpoints.push(Value::Object(out));
    }
    json!({
        // OpenAPI's default server is "/" (LlamaIndex requires `servers`).
        "servers": spec.get("servers").cloned().unwrap_or_else(|| json!([{"url": "/"}])),
        "description": spec.get("info").and_then(|i| i.get("description")).cloned().unwrap_or(Value::Null),
        "endpoints": endpoints,
    })
}

/// Python's truth of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
