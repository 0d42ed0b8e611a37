//! `FunctionTool`: a Rust function over a typed argument struct, exposed to
//! models with the struct's JSON schema; bad arguments, errors and panics come back as error outputs.

use super::schema::{check_arguments, normalize_schema};
use super::types::{Tool, ToolMetadata, ToolOutput, truncate_tool_output};
use crate::error::Result;
use crate::schema::py_repr;
use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// What a tool function may return: plain values (strings, numbers, bools,
/// `Value`, `Vec`/`Option` of serialisable values, [`Json`] of anything
/// serialisable) or a `Result` of any serialisable value whose error is
/// shown to the model.
pub trait ToolReturn {
    /// The value as JSON, or the error message.
    fn into_tool_result(self) -> std::result::Result<Value, String>;
}

/// Wraps any serialisable value so a tool function can return it directly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

fn to_json<T: Serialize>(value: T) -> std::result::Result<Value, String> {
    serde_json::to_value(value)
        .map_err(|e| format!("the tool's output could not be serialised: {e}"))
}

impl<T: Serialize, E: fmt::Display> ToolReturn for std::result::Result<T, E> {
    fn into_tool_result(self) -> std::result::Result<Value, String> {
        match self {
            Ok(v) => to_json(v),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl<T: Serialize> ToolReturn for Json<T> {
    fn into_tool_result(self) -> std::result::Result<Value, String> {
        to_json(self.0)
    }
}

impl<T: Serialize> ToolReturn for Vec<T> {
    fn into_tool_result(self) -> std::result::Result<Value, String> {
        to_json(self)
    }
}

impl<T: Serialize> ToolReturn for Option<T> {
    fn into_tool_result(self) -> std::result::Result<Value, String> {
        to_json(self)
    }
}

macro_rules! plain_tool_return {
    ($($t:ty),*) => {$(
        impl ToolReturn for $t {
            fn into_tool_result(self) -> std::result::Result<Value, String> {
                to_json(self)
            }
        }
    )*};
}

plain_tool_return!(
    String,
    &'static str,
    bool,
    (),
    Value,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f32,
    f64
);

/// How a call went wrong, before it becomes an error [`ToolOutput`].
enum Failure {
    BadArguments(String),
    Failed(String),
    Panicked(String),
}

type ErasedFn =
    Arc<dyn Fn(Value) -> BoxFuture<'static, std::result::Result<Value, Failure>> + Send + Sync>;

/// `run` behind the erased signature: the JSON input is read as `A` first,
/// and input that does not fit is [`Failure::BadArguments`].
fn erase<A, Fut>(run: impl Fn(A) -> Fut + Send + Sync + 'static) -> ErasedFn
where
    A: DeserializeOwned + Send + 'static,
    Fut: Future<Output = std::result::Result<Value, Failure>> + Send + 'static,
{
    Arc::new(
        move |input: Value| match serde_json::from_value::<A>(input) {
            Ok(args) => run(args).boxed(),
            Err(e) => futures::future::ready(Err(Failure::BadArguments(e.to_string()))).boxed(),
        },
    )
}

/// A tool made from a Rust function taking one argument struct `A`
/// (LlamaIndex's `FunctionTool.from_defaults`). The argument schema is
/// generated from `A` (field doc comments become descriptions) and normalised
/// for models; the output's content is the returned string, or JSON for other values.
#[derive(Clone)]
pub struct FunctionTool {
    metadata: ToolMetadata,
    max_output_len: Option<usize>,
    func: ErasedFn,
}

impl fmt::Debug for FunctionTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionTool")
            .field("metadata", &self.metadata)
            .field("max_output_len", &self.max_output_len)
            .finish_non_exhaustive()
    }
}

impl FunctionTool {
    /// A tool running the blocking function `f` (on Tokio's blocking pool
    /// when inside a Tokio runtime, so it may do blocking work).
    /// `description: None` makes one from the signature and `A`'s doc
    /// comment, as LlamaIndex makes one from the signature and docstring.
    pub fn from_fn<A, R, F>(name: impl Into<String>, description: Option<&str>, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: ToolReturn + 'static,
        F: Fn(A) -> R + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let func = erase(move |args: A| {
            let f = Arc::clone(&f);
            async move {
                // The blocking pool is another thread: the caller's context goes along.
                let lent = super::call_context::call_context();
                let run = move || {
                    super::call_context::with_call_context_sync(lent, || f(args).into_tool_result())
                };
                let outcome = match tokio::runtime::Handle::try_current() {
                    Ok(handle) => match handle.spawn_blocking(run).await {
                        Ok(outcome) => outcome,
                        Err(e) if e.is_panic() => {
                            return Err(Failure::Panicked(panic_message(e.into_panic())));
                        }
                        Err(e) => {
                            return Err(Failure::Failed(format!("the call was cancelled: {e}")));
                        }
                    },
                    Err(_) => std::panic::catch_unwind(AssertUnwindSafe(run))
                        .map_err(|p| Failure::Panicked(panic_message(p)))?,
                };
                outcome.map_err(Failure::Failed)
            }
        });
        Self::build::<A>(name.into(), description, func)
    }

    /// A tool running the async function `f`.
    pub fn from_async_fn<A, R, F, Fut>(
        name: impl Into<String>,
        description: Option<&str>,
        f: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: ToolReturn + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let f = Arc::new(f);
        let func = erase(move |args: A| {
            let f = Arc::clone(&f);
            // Calling `f` inside the guarded future catches panics in its
            // synchronous part too.
            async move {
                let outcome = AssertUnwindSafe(async move { f(args).await.into_tool_result() })
                    .catch_unwind()
                    .await
                    .map_err(|p| Failure::Panicked(panic_message(p)))?;
                outcome.map_err(Failure::Failed)
            }
        });
        Self::build::<A>(name.into(), description, func)
    }

    fn build<A: JsonSchema>(name: String, description: Option<&str>, func: ErasedFn) -> Self {
        let raw = schemars::schema_for!(A).to_value();
        let fn_schema = normalize_schema(&raw);
        let description = match description {
            Some(d) => d.to_owned(),
            None => default_description(
                &name,
                &fn_schema,
                raw.get("description").and_then(Value::as_str),
            ),
        };
        Self {
            metadata: ToolMetadata {
                name,
                description,
                fn_schema,
                return_direct: false,
            },
            max_output_len: None,
            func,
        }
    }

    /// Sets `return_direct`: an agent returns this tool's output as the answer.
    pub fn return_direct(mut self, return_direct: bool) -> Self {
        self.metadata.return_direct = return_direct;
        self
    }

    /// Cuts outputs to `max_output_len` characters (see [`truncate_tool_output`]).
    pub fn max_output_len(mut self, max_output_len: usize) -> Self {
        self.max_output_len = Some(max_output_len);
        self
    }

    /// Replaces the metadata (LlamaIndex's `tool_metadata=`); arguments are
    /// still deserialised into the function's own type.
    pub fn with_metadata(mut self, metadata: ToolMetadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Models send a bare value for a one-argument tool, a JSON string, or
    /// nothing for a tool without arguments; LlamaIndex accepts these too.
    fn prepare_arguments(&self, input: Value) -> Value {
        let props = self
            .metadata
            .fn_schema
            .get("properties")
            .and_then(Value::as_object);
        let single = props
            .filter(|p| p.len() == 1)
            .and_then(|p| p.keys().next().cloned());
        let wrap = |v: Value| match &single {
            Some(name) => {
                let mut m = Map::new();
                m.insert(name.clone(), v);
                Value::Object(m)
            }
            None => v,
        };
        match input {
            Value::Null => Value::Object(Map::new()),
            Value::Object(_) => input,
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(parsed @ Value::Object(_)) => parsed,
                _ => wrap(Value::String(s)),
            },
            other => wrap(other),
        }
    }

    fn bad_arguments(&self, input: Value, problems: &str) -> ToolOutput {
        ToolOutput::error(
            self.metadata.name.clone(),
            input,
            format!(
                "invalid arguments for tool `{}`: {problems}. The arguments must be a JSON object matching this schema: {}",
                self.metadata.name,
                self.metadata.fn_schema_str()
            ),
        )
    }
}

#[async_trait]
impl Tool for FunctionTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let args = self.prepare_arguments(input);
        let problems = match &args {
            Value::Object(map) => check_arguments(&self.metadata.fn_schema, map),
            other => vec![format!("expected a JSON object, got {other}")],
        };
        if !problems.is_empty() {
            return Ok(self.bad_arguments(args, &problems.join("; ")));
        }
        let output = match (self.func)(args.clone()).await {
            Ok(value) => {
                let content = match &value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                ToolOutput::new(name, content, args, value)
            }
            Err(Failure::BadArguments(why)) => self.bad_arguments(args, &why),
            Err(Failure::Failed(why)) => ToolOutput::error(name, args, why),
            Err(Failure::Panicked(why)) => {
                ToolOutput::error(name.clone(), args, format!("tool `{name}` panicked: {why}"))
            }
        };
        Ok(match self.max_output_len {
            Some(max) => ToolOutput {
                content: truncate_tool_output(&output.content, max),
                ..output
            },
            None => output,
        })
    }
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// `name(arg: type, ...)` in Python's notation, then the argument struct's
/// doc comment on the next line: what LlamaIndex writes from a signature and docstring.
fn default_description(name: &str, schema: &Value, doc: Option<&str>) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let params: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(arg, prop)| {
                    let (label, nullable) = python_type(prop);
                    let label = if nullable {
                        format!("Optional[{label}]")
                    } else {
                        label
                    };
                    if required.contains(&arg.as_str()) {
                        format!("{arg}: {label}")
                    } else {
                        let default = prop
                            .get("default")
                            .map(py_repr)
                            .unwrap_or_else(|| "None".to_owned());
                        format!("{arg}: {label} = {default}")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let mut description = format!("{name}({})", params.join(", "));
    if let Some(doc) = doc.map(str::trim).filter(|d| !d.is_empty()) {
        description.push('\n');
        description.push_str(doc);
    }
    description
}

/// The Python type name for a property schema, and whether it admits null.
fn python_type(prop: &Value) -> (String, bool) {
    let name = |t: &str, prop: &Value| -> String {
        match t {
            "string" => "str".to_owned(),
            "integer" => "int".to_owned(),
            "number" => "float".to_owned(),
            "boolean" => "bool".to_owned(),
            "object" => "dict".to_owned(),
            "array" => match prop.get("items") {
                Some(items) => format!("List[{}]", python_type(items).0),
                None => "list".to_owned(),
            },
            _ => "Any".to_owned(),
        }
    };
    match prop.get("type") {
        Some(Value::String(t)) => (name(t, prop), false),
        Some(Value::Array(ts)) => {
            let kinds: Vec<String> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .map(|t| name(t, prop))
                .collect();
            let nullable = ts.iter().any(|t| t.as_str() == Some("null"));
            let label = match kinds.len() {
                0 => "None".to_owned(),
                1 => kinds.concat(),
                _ => format!("Union[{}]", kinds.join(", ")),
            };
            (label, nullable)
        }
        _ => {
            let variants = prop
                .get("anyOf")
                .or_else(|| prop.get("oneOf"))
                .and_then(Value::as_array);
            match variants {
                Some(vs) => {
                    let nullable = vs
                        .iter()
                        .any(|v| v.get("type").and_then(Value::as_str) == Some("null"));
                    let kinds: Vec<String> = vs
                        .iter()
                        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                        .map(|v| python_type(v).0)
                        .collect();
                    let label = if kinds.len() == 1 {
                        kinds.concat()
                    } else {
                        format!("Union[{}]", kinds.join(", "))
                    };
                    (label, nullable)
                }
                None => ("Any".to_owned(), false),
            }
        }
    }
}
