//! `#[tool]` and `#[tool_spec]` against what LlamaIndex 0.14.25 makes of the
//! same functions (recorded by `ragloom-core/tests/data/tools/gen_function_tool.py`).
// `#[tool_spec]` makes tools of an impl's `pub` methods, on types private to this test.
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)]

use ragloom_core::tools::{Tool, ToolMetadata, ToolSpec};
use ragloom_macros::{tool, tool_spec};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn recorded() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ragloom-core/tests/data/tools/function_tool.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Python's parameters dict without the `title`s pydantic adds (ragloom drops them).
fn without_titles(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "title")
                .map(|(k, v)| (k.clone(), without_titles(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn assert_matches_python(tool: &dyn Tool, expected: &Value) {
    let meta = tool.metadata();
    assert_eq!(meta.name, expected["name"]);
    assert_eq!(meta.description, expected["description"]);
    assert_eq!(
        meta.get_parameters_dict(),
        without_titles(&expected["parameters"])
    );
}

// The two examples of LlamaIndex's docs, as written there.

/// Adds the two numbers together and returns the result.
#[tool]
fn add_numbers(x: i64, y: i64) -> i64 {
    x + y
}

/// Multiply two integers and returns the result integer
#[tool]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

#[tokio::test]
async fn doc_examples_match_llama_index() {
    let data = recorded();
    let add = add_numbers_tool();
    assert_matches_python(&add, &data["function_tool"]["add_numbers"]);
    assert_matches_python(&multiply_tool(), &data["function_tool"]["multiply"]);
    let out = add.call(json!({"x": 2, "y": 40})).await.unwrap();
    assert_eq!(out.content, "42");
    assert_eq!(add_numbers(1, 2), 3, "the function itself is kept");
}

/// Looks up the weather.
#[tool(name = "weather", return_direct)]
async fn get_weather(
    /// The city to look up.
    city: &str,
    /// Number of days ahead, today if absent.
    days: Option<u32>,
    /// Cities that must not be used.
    exclude: &[String],
) -> Result<String, String> {
    if exclude.iter().any(|c| c == city) {
        return Err(format!("{city} is excluded"));
    }
    Ok(format!("{city} in {} days: sunny", days.unwrap_or(0)))
}

#[tokio::test]
async fn parameter_docs_options_references_and_async() {
    let tool = get_weather_tool();
    let meta = tool.metadata();
    assert_eq!(meta.name, "weather");
    assert!(meta.return_direct);
    assert_eq!(
        meta.description,
        "weather(city: str, days: Optional[int] = None, exclude: List[str]) -> str\nLooks up the weather."
    );
    assert_eq!(
        meta.fn_schema,
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city to look up."},
                "days": {"type": ["integer", "null"], "minimum": 0, "description": "Number of days ahead, today if absent."},
                "exclude": {"type": "array", "items": {"type": "string"}, "description": "Cities that must not be used."}
            },
            "required": ["city", "exclude"]
        })
    );
    let out = tool
        .call(json!({"city": "Oslo", "exclude": []}))
        .await
        .unwrap();
    assert_eq!(out.content, "Oslo in 0 days: sunny");
    let out = tool
        .call(json!({"city": "Oslo", "days": 2, "exclude": ["Oslo"]}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(out.content, "Encountered error: Oslo is excluded");
}

#[tool]
fn explode(n: i32) -> i32 {
    if n > 0 {
        panic!("boom {n}");
    }
    n
}

#[tokio::test]
async fn panics_and_bad_arguments_become_error_outputs() {
    let tool = explode_tool();
    let out = tool.call(json!({"n": 3})).await.unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("boom 3"), "{}", out.content);
    let out = tool.call(json!({"n": "three"})).await.unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("field `n`") && out.content.contains("integer"),
        "{}",
        out.content
    );
    // A bare value is taken as the only argument, as LlamaIndex does.
    assert_eq!(tool.call(json!(-1)).await.unwrap().content, "-1");
}

/// Math over a shared counter of calls.
#[derive(Clone, Default)]
struct MathToolSpec {
    calls: Arc<AtomicUsize>,
}

#[tool_spec]
impl MathToolSpec {
    /// Adds the two numbers together and returns the result.
    pub fn add_numbers(&self, x: i64, y: i64) -> i64 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        x + y
    }

    /// Multiply two integers and returns the result integer
    pub async fn multiply(&self, a: i64, b: i64) -> i64 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        a * b
    }

    /// Subtracts b from a.
    pub fn subtract(a: f64, b: f64) -> f64 {
        a - b
    }

    /// Not public: not a tool.
    fn helper(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Public but skipped.
    #[tool(skip)]
    pub fn count(&self) -> usize {
        self.helper()
    }
}

#[tokio::test]
async fn tool_spec_makes_one_tool_per_public_method() {
    let data = recorded();
    let spec = MathToolSpec::default();
    assert_eq!(
        spec.spec_functions(),
        ["add_numbers", "multiply", "subtract"]
    );
    let tools = spec.to_tool_list();
    assert_eq!(tools.len(), 3);
    for (tool, expected) in tools.iter().zip(data["tool_spec"].as_array().unwrap()) {
        assert_matches_python(tool.as_ref(), expected);
    }
    assert_eq!(
        tools[0]
            .call(json!({"x": 1, "y": 2}))
            .await
            .unwrap()
            .content,
        "3"
    );
    assert_eq!(
        tools[1]
            .call(json!({"a": 6, "b": 7}))
            .await
            .unwrap()
            .content,
        "42"
    );
    assert_eq!(
        tools[2]
            .call(json!({"a": 1.5, "b": 2}))
            .await
            .unwrap()
            .content,
        "-0.5"
    );
    // The tools share the spec's state.
    assert_eq!(spec.count(), 2);

    let mut mapping = HashMap::new();
    mapping.insert(
        "multiply".to_owned(),
        ToolMetadata::new("times", "Multiplies a by b.")
            .with_fn_schema(tools[1].metadata().fn_schema.clone()),
    );
    let picked = spec
        .to_tool_list_with(Some(&["multiply"]), &mapping)
        .unwrap();
    assert_eq!(picked.len(), 1);
    assert_eq!(picked[0].metadata().description, "Multiplies a by b.");
    assert_eq!(
        picked[0]
            .call(json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .content,
        "6"
    );
}

#[derive(Clone)]
struct Greeter {
    greeting: String,
}

#[tool_spec(functions = ["greet"])]
impl Greeter {
    /// Greets someone.
    #[tool(name = "say_hello", description = "Says hello to `name`.")]
    pub fn greet(
        &self,
        /// Who to greet.
        name: String,
    ) -> String {
        format!("{}, {name}!", self.greeting)
    }

    pub fn not_listed(&self) -> String {
        String::new()
    }
}

#[tokio::test]
async fn listed_functions_and_per_method_options() {
    let greeter = Greeter {
        greeting: "Hello".into(),
    };
    assert!(greeter.not_listed().is_empty());
    let spec: Arc<dyn ToolSpec> = Arc::new(greeter);
    assert_eq!(spec.spec_functions(), ["say_hello"]);
    let tools = spec.to_tool_list();
    assert_eq!(tools[0].metadata().description, "Says hello to `name`.");
    assert_eq!(
        tools[0].metadata().fn_schema["properties"]["name"]["description"],
        "Who to greet."
    );
    assert_eq!(
        tools[0].call(json!("Ada")).await.unwrap().content,
        "Hello, Ada!"
    );
}
