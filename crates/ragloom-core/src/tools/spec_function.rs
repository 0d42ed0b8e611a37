//! Tool specs whose functions are methods of one client: [`SpecFunctions`]
//! answers a call by function, [`SpecFunctionTool`] is one such function as a [`Tool`].
//!
//! [`ToolArgs`] reads a model's arguments with errors that name the field,
//! and takes `null` as "not given", as Python's `Optional` defaults do.

use super::{Tool, ToolMetadata, ToolOutput};
use crate::error::{Error, Result};
use crate::schema::Document;
use async_trait::async_trait;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// A tool spec that answers its functions' calls by name: the content the
/// model reads and the raw output, or an error the model reads instead.
#[async_trait]
pub trait SpecFunctions: Clone + Send + Sync + 'static {
    /// Runs the function `name` with the model's `args`.
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)>;
}

/// One function of a [`SpecFunctions`] as a tool: the function named by
/// its metadata.
#[derive(Debug)]
pub struct SpecFunctionTool<S: SpecFunctions + fmt::Debug> {
    spec: S,
    metadata: ToolMetadata,
}

impl<S: SpecFunctions + fmt::Debug> SpecFunctionTool<S> {
    /// The function `metadata.name` of `spec`.
    pub fn new(spec: S, metadata: ToolMetadata) -> Self {
        Self { spec, metadata }
    }
}

#[async_trait]
impl<S: SpecFunctions + fmt::Debug> Tool for SpecFunctionTool<S> {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let args = ToolArgs::new(&input);
        match self.spec.call_function(&name, &args).await {
            Ok((content, raw)) => Ok(ToolOutput::new(name, content, input, raw)),
            // A bad argument, a refused token, the service down: the model reads why.
            Err(e) => Ok(ToolOutput::error(name, input, e)),
        }
    }
}

/// One tool per name in `functions`, each described by `metadata(name)`:
/// a `ToolSpec::to_tool_list` in one line.
pub fn spec_function_tools<S: SpecFunctions + fmt::Debug>(
    spec: &S,
    functions: &[&str],
    metadata: impl Fn(&str) -> ToolMetadata,
) -> Vec<Arc<dyn Tool>> {
    functions
        .iter()
        .map(|name| -> Arc<dyn Tool> {
            Arc::new(SpecFunctionTool::new(spec.clone(), metadata(name)))
        })
        .collect()
}

/// The error for a name a spec does not have (a tool made by hand with
/// other metadata).
pub fn unknown_function(name: &str) -> Error {
    Error::NotFound(format!("this tool spec has no function `{name}`"))
}

/// The metadata of tool `name` in `{name: {"description", "fn_schema"}}`,
/// the shape in which LlamaIndex's tool metadata is recorded.
pub fn recorded_metadata(tools: &Value, name: &str) -> ToolMetadata {
    let tool = &tools[name];
    let description = tool["description"].as_str().unwrap_or(name);
    ToolMetadata::new(name, description).with_fn_schema(tool["fn_schema"].clone())
}

/// A model's arguments (a JSON object), read field by field.
#[derive(Clone, Copy, Debug)]
pub struct ToolArgs<'a> {
    input: &'a Value,
}

impl<'a> ToolArgs<'a> {
    /// The arguments in `input` (anything but an object has no fields).
    pub fn new(input: &'a Value) -> Self {
        Self { input }
    }

    /// Whether the field is there at all (`null` included).
    pub fn has(&self, key: &str) -> bool {
        self.input.get(key).is_some()
    }

    /// The field, `None` when absent or `null`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.input.get(key).filter(|v| !v.is_null())
    }

    /// A string field that must be there.
    pub fn required_str(&self, key: &str) -> Result<String> {
        self.opt_str(key)?.ok_or_else(|| {
            Error::InvalidInput(format!("missing required field `{key}` (a string)"))
        })
    }

    /// A string field that must be there, or the whole input when the model
    /// sent the value alone (a bare string); `what` says what it holds.
    pub fn text(&self, key: &str, what: &str) -> Result<String> {
        if let Value::String(s) = self.input {
            return Ok(s.clone());
        }
        self.opt_str(key)?
            .ok_or_else(|| Error::InvalidInput(format!("missing required field `{key}` ({what})")))
    }

    /// An optional string field.
    pub fn opt_str(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(wrong(key, "a string", other)),
        }
    }

    /// An optional list of strings; one string is taken as a list of one.
    pub fn opt_strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(wrong(key, "a list of strings", other)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(other) => Err(wrong(key, "a list of strings", other)),
        }
    }

    /// An optional non-negative integer (a whole float or a numeric string,
    /// as pydantic accepts them, is read too).
    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        n.map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
            .ok_or_else(|| wrong(key, "a non-negative whole number", v))
    }

    /// An optional boolean (`"true"`/`"false"` read too, as pydantic reads them).
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(other) => Err(wrong(key, "true or false", other)),
        }
    }
}

fn wrong(key: &str, expected: &str, got: &Value) -> Error {
    let mut shown = got.to_string();
    if shown.len() > 80 {
        let cut = (0..=80)
            .rev()
            .find(|&i| shown.is_char_boundary(i))
            .unwrap_or(0);
        shown.truncate(cut);
        shown.push('…');
    }
    Error::InvalidInput(format!("field `{key}` must be {expected}, not {shown}"))
}

/// What a tool answering documents gives the model, as LlamaIndex's
/// `FunctionTool` does: the texts joined by `\n`; the documents as raw output.
pub fn documents_output(documents: &[Document]) -> Result<(String, Value)> {
    let content = documents
        .iter()
        .map(|d| d.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Ok((content, serde_json::to_value(documents)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_read_with_named_errors() {
        let input = json!({"s": "x", "n": 3, "f": 2.0, "t": "7", "neg": -1, "l": ["a", "b"],
            "one": "a", "bad": [1], "null": null, "b": true});
        let a = ToolArgs::new(&input);
        assert_eq!(a.required_str("s").unwrap(), "x");
        assert!(
            a.required_str("null")
                .unwrap_err()
                .to_string()
                .contains("`null`")
        );
        assert!(
            a.required_str("n")
                .unwrap_err()
                .to_string()
                .contains("must be a string")
        );
        assert_eq!(a.opt_usize("n").unwrap(), Some(3));
        assert_eq!(a.opt_usize("f").unwrap(), Some(2));
        assert_eq!(a.opt_usize("t").unwrap(), Some(7));
        assert!(a.opt_usize("neg").is_err());
        assert_eq!(a.opt_usize("missing").unwrap(), None);
        assert_eq!(
            a.opt_strings("l").unwrap(),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(a.opt_strings("one").unwrap(), Some(vec!["a".into()]));
        assert!(a.opt_strings("bad").is_err());
        assert_eq!(a.opt_bool("b").unwrap(), Some(true));
        assert!(a.opt_bool("s").is_err());
        let strings = json!({"t": "True", "f": "false"});
        assert_eq!(ToolArgs::new(&strings).opt_bool("t").unwrap(), Some(true));
        assert_eq!(ToolArgs::new(&strings).opt_bool("f").unwrap(), Some(false));
        let long = json!({"k": "é".repeat(100)});
        let err = ToolArgs::new(&long).opt_usize("k").unwrap_err().to_string();
        assert!(err.ends_with("…"), "{err}");
        assert_eq!(ToolArgs::new(&json!("text")).opt_str("k").unwrap(), None);
        assert_eq!(
            ToolArgs::new(&json!("alone")).text("k", "x").unwrap(),
            "alone"
        );
        assert_eq!(
            ToolArgs::new(&json!({"k": "v"})).text("k", "x").unwrap(),
            "v"
        );
        let err = ToolArgs::new(&json!({}))
            .text("k", "the query")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing required field `k` (the query)"),
            "{err}"
        );
    }
}
