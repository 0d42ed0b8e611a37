//! `FunctionTool` and `ToolMetadata`: generated schemas, error outputs for bad
//! arguments, failures and panics, truncation, and the OpenAI tool shape.
#![allow(clippy::unwrap_used)]

use ragloom_core::tools::{FunctionTool, Json, Tool, ToolMetadata};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/llms/llms_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Looks up the weather.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city to look up, e.g. "Paris".
    city: String,
    days: u32,
    unit: Option<String>,
}

fn weather_tool() -> FunctionTool {
    FunctionTool::from_fn("get_weather", None, |args: WeatherArgs| {
        format!(
            "{} for {} days in {}",
            args.city,
            args.days,
            args.unit.unwrap_or_else(|| "celsius".into())
        )
    })
}

#[test]
fn function_tool_schema_is_normalised() {
    let tool = weather_tool();
    assert_eq!(
        tool.metadata().fn_schema,
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city to look up, e.g. \"Paris\"."},
                "days": {"type": "integer", "minimum": 0},
                "unit": {"type": ["string", "null"]}
            },
            "required": ["city", "days"]
        })
    );
    // LlamaIndex writes `name(signature)` then the docstring.
    assert_eq!(
        tool.metadata().description,
        "get_weather(city: str, days: int, unit: Optional[str] = None)\nLooks up the weather."
    );
    assert!(!tool.metadata().return_direct);
}

#[tokio::test]
async fn function_tool_runs_with_good_arguments() {
    let tool = weather_tool();
    let out = tool
        .call(json!({"city": "Oslo", "days": 3, "unit": "kelvin"}))
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.content, "Oslo for 3 days in kelvin");
    assert_eq!(out.tool_name, "get_weather");
    assert_eq!(out.raw_input["city"], "Oslo");
    // A JSON string of arguments, as some models send, works too.
    let out = tool
        .call(json!("{\"city\": \"Rome\", \"days\": 1}"))
        .await
        .unwrap();
    assert_eq!(out.content, "Rome for 1 days in celsius");
}

#[tokio::test]
async fn bad_arguments_are_an_error_output_naming_the_field() {
    let tool = weather_tool();
    let out = tool
        .call(json!({"city": "Oslo", "days": "three"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(
        out.content.starts_with("Encountered error: "),
        "{}",
        out.content
    );
    assert!(out.content.contains("`days`"), "{}", out.content);
    assert!(out.content.contains("expected integer"), "{}", out.content);
    assert!(
        out.content.contains("\"required\": [\"city\", \"days\"]"),
        "schema shown: {}",
        out.content
    );

    let out = tool.call(json!({"days": 2})).await.unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("missing required field `city`"),
        "{}",
        out.content
    );

    let out = tool
        .call(json!({"city": "Oslo", "days": -1}))
        .await
        .unwrap();
    assert!(
        out.is_error && out.content.contains("`days`"),
        "{}",
        out.content
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct DivArgs {
    a: f64,
    b: f64,
}

#[tokio::test]
async fn a_failing_function_is_an_error_output() {
    let tool = FunctionTool::from_fn("divide", Some("Divides."), |args: DivArgs| {
        if args.b == 0.0 {
            Err("division by zero".to_owned())
        } else {
            Ok(args.a / args.b)
        }
    });
    let ok = tool.call(json!({"a": 1, "b": 4})).await.unwrap();
    assert_eq!(ok.content, "0.25");
    let out = tool.call(json!({"a": 1, "b": 0})).await.unwrap();
    assert!(out.is_error);
    assert_eq!(out.content, "Encountered error: division by zero");
    assert_eq!(out.raw_output, json!("division by zero"));
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Nothing {}

#[tokio::test]
async fn a_panicking_function_is_an_error_output() {
    let sync_tool = FunctionTool::from_fn("boom", Some("Panics."), |_: Nothing| -> String {
        panic!("kaboom")
    });
    let out = sync_tool.call(Value::Null).await.unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("panicked: kaboom"), "{}", out.content);

    let async_tool =
        FunctionTool::from_async_fn("aboom", Some("Panics later."), |_: Nothing| async move {
            tokio::task::yield_now().await;
            if true {
                panic!("async kaboom");
            }
            "unreachable"
        });
    let out = async_tool.call(json!({})).await.unwrap();
    assert!(out.is_error);
    assert!(
        out.content.contains("panicked: async kaboom"),
        "{}",
        out.content
    );
}

#[test]
fn a_panicking_function_outside_tokio_is_an_error_output() {
    let tool = FunctionTool::from_fn("boom", Some("Panics."), |_: Nothing| -> String {
        panic!("no runtime")
    });
    let out = futures::executor::block_on(tool.call(json!({}))).unwrap();
    assert!(
        out.is_error && out.content.contains("no runtime"),
        "{}",
        out.content
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct QueryArgs {
    input: String,
}

#[derive(Debug, Serialize)]
struct Hit {
    id: u32,
    text: String,
}

#[tokio::test]
async fn single_argument_tools_accept_a_bare_value_and_outputs_truncate() {
    let tool = FunctionTool::from_fn("search", Some("Searches."), |a: QueryArgs| {
        Json(vec![Hit {
            id: 1,
            text: a.input.repeat(50),
        }])
    })
    .max_output_len(60);
    let out = tool.call(json!("ab")).await.unwrap();
    assert!(!out.is_error, "{}", out.content);
    let len = out.content.chars().count();
    assert!((55..=60).contains(&len), "{len}: {}", out.content);
    assert!(
        out.content.starts_with("[{\"id\":1,\"text\":\"abab"),
        "{}",
        out.content
    );
    assert!(out.content.contains("truncated"), "{}", out.content);
    assert_eq!(out.raw_output[0]["id"], 1, "raw output keeps everything");
}

#[test]
fn to_openai_tool_has_the_function_shape() {
    let r = reference();
    // LlamaIndex's default schema differs from ours only by pydantic's titles.
    let mut expected = r["openai_tool_default_schema"].clone();
    expected["function"]["parameters"]["properties"]["input"]
        .as_object_mut()
        .unwrap()
        .remove("title");
    let meta = ToolMetadata::new("essay tool!", "Answers questions about the essay.");
    assert_eq!(meta.to_openai_tool().unwrap(), expected);

    let weather = weather_tool();
    let tool = weather.metadata().to_openai_tool().unwrap();
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "get_weather");
    assert_eq!(tool["function"]["parameters"], weather.metadata().fn_schema);

    let long = ToolMetadata::new("long", "x".repeat(1025));
    let err = long.to_openai_tool().unwrap_err();
    assert!(err.to_string().contains("`long`"), "{err}");
    assert_eq!(long.to_openai_tool_unchecked()["function"]["name"], "long");
}
