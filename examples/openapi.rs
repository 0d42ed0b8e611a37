//! OpenAPIToolSpec: an API's OpenAPI document as agent tools — LlamaIndex's
//! `load_openapi_spec`, and one typed tool per operation — called here as a
//! model would call them.
//!
//! ```sh
//! # any service that serves its own document, e.g. the tests' FastAPI app:
//! #   (cd integrations/tools/openapi/tests/data && uvicorn notes_app:app --port 8000)
//! cargo run -p ragloom-examples --features tools-openapi --example openapi -- http://127.0.0.1:8000/
//! ```
//!
//! Every call goes through a RequestsToolSpec: only the base URL's origin is
//! reached (internal addresses are allowed here because the example talks
//! to a local service).

use ragloom::tools_openapi::{OpenAPIToolSpec, RequestsToolSpec};
use serde_json::json;

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let base = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8000/".into());
    let requests = RequestsToolSpec::new(&base)?.allow_internal_addresses(true);
    let spec = OpenAPIToolSpec::from_url("openapi.json", &requests).await?;

    let reduced = &spec.load_openapi_spec()[0].text;
    println!(
        "load_openapi_spec: {} characters of reduced spec",
        reduced.len()
    );
    println!("\noperation tools:");
    let tools = spec.operation_tools(requests.clone());
    for tool in &tools {
        let md = tool.metadata();
        let args: Vec<&String> = md.fn_schema["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        println!(
            "  {}({args:?}): {}",
            md.name,
            md.description.replace('\n', " — ")
        );
    }
    // Call the first GET operation that needs no argument, as a model would.
    if let Some(tool) = tools.iter().find(|t| {
        t.metadata().description.starts_with("GET ")
            && t.metadata().fn_schema["required"]
                .as_array()
                .is_some_and(Vec::is_empty)
    }) {
        let out = tool.call(json!({})).await?;
        println!("\n{}() -> {}", tool.name(), out.content);
    }
    Ok(())
}
