//! WikipediaToolSpec: Wikipedia as two agent tools (`load_data`,
//! `search_data`), here called directly as a model would call them.
//!
//! ```sh
//! cargo run -p ragloom-examples --features tools-wikipedia --example wikipedia -- "Rust (programming language)"
//! cargo run -p ragloom-examples --features tools-wikipedia --example wikipedia -- --search "memory safe systems language"
//! ```
//!
//! It needs the network (en.wikipedia.org). A title that is not a page
//! comes back as LlamaIndex's "Unable to load page. Try searching instead."

use ragloom::tools::ToolSpec;
use ragloom::tools_wikipedia::WikipediaToolSpec;
use serde_json::json;

#[tokio::main]
async fn main() -> ragloom::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (tool_name, input) = match args.as_slice() {
        [flag, query, ..] if flag == "--search" => ("search_data", json!({"query": query})),
        [page, ..] => ("load_data", json!({"page": page})),
        [] => ("load_data", json!({"page": "Rust (programming language)"})),
    };
    let tools = WikipediaToolSpec::new().to_tool_list();
    for tool in &tools {
        let first_line = tool
            .metadata()
            .description
            .lines()
            .next()
            .unwrap_or_default();
        println!("tool: {first_line}");
    }
    let Some(tool) = tools.iter().find(|t| t.name() == tool_name) else {
        return Ok(());
    };
    let out = tool.call(input.clone()).await?;
    let text: String = out.content.chars().take(800).collect();
    println!(
        "\n{tool_name}({input}){}:\n{text}{}",
        if out.is_error { " [error]" } else { "" },
        if out.content.chars().count() > 800 {
            "\n[...]"
        } else {
            ""
        }
    );
    Ok(())
}
