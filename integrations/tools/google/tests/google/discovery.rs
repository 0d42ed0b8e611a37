//! Checks a request against Google's discovery document of the API (as
//! `google-api-python-client` ships it): the method by HTTP verb and path
//! template, each query parameter declared and of its type, required ones
//! present, and the JSON body read through the request schema.

use base64::Engine;
use serde_json::{Map, Value};

/// What a request was: verb, path below the API's endpoint, query, body.
pub(crate) struct Sent<'a> {
    pub(crate) method: &'a str,
    pub(crate) path: &'a str,
    pub(crate) query: &'a [(String, String)],
    pub(crate) body: Option<&'a Value>,
}

/// The discovery method `sent` calls (its `id`), or why it matches none.
pub(crate) fn check(doc: &Value, sent: &Sent<'_>) -> Result<String, String> {
    let mut methods = Vec::new();
    collect_methods(doc.get("resources").unwrap_or(&Value::Null), &mut methods);
    let method = methods
        .iter()
        .find(|m| {
            m["httpMethod"].as_str() == Some(sent.method)
                && template_matches(m["path"].as_str().unwrap_or_default(), sent.path)
        })
        .ok_or_else(|| format!("no method of the API is {} {}", sent.method, sent.path))?;
    let id = method["id"].as_str().unwrap_or_default().to_owned();
    let declared = method["parameters"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let global = doc["parameters"].as_object().cloned().unwrap_or_default();
    for (name, value) in sent.query {
        let spec = declared
            .get(name)
            .filter(|p| p["location"] == "query")
            .or_else(|| global.get(name))
            .ok_or_else(|| format!("{id}: query parameter `{name}` is not declared"))?;
        check_scalar(spec, value).map_err(|e| format!("{id}: `{name}`: {e}"))?;
    }
    for (name, spec) in &declared {
        if spec["required"] == true
            && spec["location"] == "query"
            && !sent.query.iter().any(|(k, _)| k == name)
        {
            return Err(format!("{id}: required `{name}` missing"));
        }
    }
    match (method.get("request"), sent.body) {
        (Some(schema), Some(body)) => {
            let schemas = doc["schemas"].as_object().cloned().unwrap_or_default();
            check_value(schema, body, &schemas, "body").map_err(|e| format!("{id}: {e}"))?;
        }
        (None, Some(_)) => return Err(format!("{id} takes no body")),
        _ => {}
    }
    Ok(id)
}

fn collect_methods<'a>(resources: &'a Value, out: &mut Vec<&'a Value>) {
    for resource in resources.as_object().into_iter().flat_map(Map::values) {
        out.extend(
            resource["methods"]
                .as_object()
                .into_iter()
                .flat_map(Map::values),
        );
        collect_methods(&resource["resources"], out);
    }
}

fn template_matches(template: &str, path: &str) -> bool {
    let t: Vec<&str> = template.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    if let Some(last) = t.last().filter(|s| s.starts_with("{+")) {
        let _ = last;
        return p.len() >= t.len() && t[..t.len() - 1].iter().zip(&p).all(|(a, b)| segment(a, b));
    }
    t.len() == p.len() && t.iter().zip(&p).all(|(a, b)| segment(a, b))
}

fn segment(template: &str, actual: &str) -> bool {
    if template.starts_with('{') && template.ends_with('}') {
        !actual.is_empty()
    } else {
        template == actual
    }
}

fn check_scalar(spec: &Value, text: &str) -> Result<(), String> {
    if let Some(options) = spec["enum"].as_array() {
        if !options.iter().any(|o| o == text) {
            return Err(format!("`{text}` is not one of {options:?}"));
        }
    }
    match spec["type"].as_str() {
        Some("integer") => {
            let n: i64 = text
                .parse()
                .map_err(|_| format!("`{text}` is not an integer"))?;
            let bound = |k: &str| spec[k].as_str().and_then(|b| b.parse::<i64>().ok());
            if bound("minimum").is_some_and(|m| n < m) || bound("maximum").is_some_and(|m| n > m) {
                return Err(format!("{n} is out of range"));
            }
        }
        Some("boolean") if text != "true" && text != "false" => {
            return Err(format!("`{text}` is not a boolean"));
        }
        Some("string") => check_format(spec, text)?,
        _ => {}
    }
    Ok(())
}

fn check_format(spec: &Value, text: &str) -> Result<(), String> {
    match spec["format"].as_str() {
        Some("date-time") => chrono::DateTime::parse_from_rfc3339(text)
            .map(|_| ())
            .map_err(|e| format!("`{text}` is not RFC 3339: {e}")),
        Some("date") => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map(|_| ())
            .map_err(|e| format!("`{text}` is not a date: {e}")),
        Some("byte") => base64::engine::general_purpose::URL_SAFE
            .decode(text)
            .map(|_| ())
            .map_err(|e| format!("not base64url: {e}")),
        Some("int64" | "uint64") => text
            .parse::<i128>()
            .map(|_| ())
            .map_err(|_| format!("`{text}` is not an int64")),
        _ => Ok(()),
    }
}

fn check_value(
    schema: &Value,
    value: &Value,
    schemas: &Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    if let Some(name) = schema["$ref"].as_str() {
        let target = schemas
            .get(name)
            .ok_or_else(|| format!("{at}: unknown schema {name}"))?;
        return check_value(target, value, schemas, at);
    }
    // Google's JSON reads null as "not set".
    if value.is_null() {
        return Ok(());
    }
    match (schema["type"].as_str(), value) {
        (Some("object"), Value::Object(fields)) => {
            for (key, v) in fields {
                let field_schema = schema["properties"]
                    .get(key)
                    .or_else(|| schema.get("additionalProperties"))
                    .ok_or_else(|| format!("{at}.{key} is not a field of the schema"))?;
                check_value(field_schema, v, schemas, &format!("{at}.{key}"))?;
            }
            Ok(())
        }
        (Some("array"), Value::Array(items)) => items.iter().enumerate().try_for_each(|(i, v)| {
            check_value(&schema["items"], v, schemas, &format!("{at}[{i}]"))
        }),
        (Some("string"), Value::String(s)) => {
            check_format(schema, s).map_err(|e| format!("{at}: {e}"))
        }
        (Some("integer"), Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(()),
        (Some("number"), Value::Number(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("any"), _) => Ok(()),
        (expected, got) => Err(format!("{at}: expected {expected:?}, got {got}")),
    }
}

#[test]
fn the_checker_refuses_what_the_api_does_not_declare() {
    let doc = serde_json::json!({
        "parameters": {"alt": {"type": "string", "enum": ["json"], "location": "query"}},
        "schemas": {"Draft": {"type": "object", "properties": {"id": {"type": "string"},
            "message": {"$ref": "Message"}}},
            "Message": {"type": "object", "properties": {"raw": {"type": "string", "format": "byte"}}}},
        "resources": {"users": {"resources": {"drafts": {"methods": {
            "create": {"id": "drafts.create", "httpMethod": "POST", "path": "u/{userId}/drafts",
                "parameters": {"userId": {"location": "path", "required": true, "type": "string"}},
                "request": {"$ref": "Draft"}},
            "list": {"id": "drafts.list", "httpMethod": "GET", "path": "u/{userId}/drafts",
                "parameters": {"maxResults": {"location": "query", "type": "integer", "minimum": "1"}}}}}}}}
    });
    let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    let body = serde_json::json!({"message": {"raw": "SGk="}});
    let ok = Sent {
        method: "POST",
        path: "u/me/drafts",
        query: &q(&[("alt", "json")]),
        body: Some(&body),
    };
    assert_eq!(check(&doc, &ok).unwrap(), "drafts.create");
    let bad_body = serde_json::json!({"message": {"raw": "SGk=", "to": "x"}});
    let sent = Sent {
        body: Some(&bad_body),
        ..ok
    };
    assert!(check(&doc, &sent).unwrap_err().contains("body.message.to"));
    let bad_raw = serde_json::json!({"message": {"raw": "*&^"}});
    assert!(
        check(
            &doc,
            &Sent {
                body: Some(&bad_raw),
                ..ok
            }
        )
        .is_err()
    );
    let list = |query: &[(String, String)]| {
        check(
            &doc,
            &Sent {
                method: "GET",
                path: "u/me/drafts",
                query,
                body: None,
            },
        )
    };
    assert!(list(&q(&[("maxResults", "5")])).is_ok());
    assert!(list(&q(&[("maxResults", "0")])).is_err());
    assert!(list(&q(&[("maxResults", "five")])).is_err());
    assert!(list(&q(&[("pageSize", "5")])).is_err());
    assert!(list(&q(&[("alt", "xml")])).is_err());
    assert!(
        check(
            &doc,
            &Sent {
                method: "PUT",
                path: "u/me/drafts",
                query: &[],
                body: None
            }
        )
        .is_err()
    );
    assert!(
        check(
            &doc,
            &Sent {
                method: "GET",
                path: "u/me/drafts/x",
                query: &[],
                body: None
            }
        )
        .is_err()
    );
}
