//! How often a model's SQL runs: every question of a fixed set asked of the
//! sample shop database through `NLSQLRetriever`, its SQL run under the
//! guards — free text as LlamaIndex asks, then with `retry_on_error`, with
//! `structured_output` (the server held to a JSON schema), and with both.
//!
//! ```sh
//! RAGLOOM_TEST_OPENAI_BASE_URL=http://127.0.0.1:18439/v1 RAGLOOM_TEST_OPENAI_MODEL=smollm2 \
//!     cargo run --release -p ragloom-sql --example executable_share
//! ```
//!
//! The server is any OpenAI-compatible one (`.ci/setup/llm-server.sh`
//! starts llama.cpp with SmolLM2-135M-Instruct). Prints one line per
//! question and the share that gave rows (or none) without an error.

use ragloom_core::llms::Llm;
use ragloom_core::schema::QueryBundle;
use ragloom_llms_openai::OpenAILike;
use ragloom_sql::{NLSQLRetriever, SQLDatabase, run_sqlite_script};
use std::sync::Arc;

const QUESTIONS: [&str; 20] = [
    "Which city has the most people?",
    "How many countries are there?",
    "List the names of all products.",
    "What is the most expensive product?",
    "How many orders are there?",
    "Which customers joined in 2021?",
    "What is the average price of the products?",
    "Which cities are in Japan?",
    "How many customers live in Tokyo?",
    "What did Ada order?",
    "Which products are in the kitchen category?",
    "What is the total quantity ordered of each product?",
    "Which country is Berlin in?",
    "List the customers and the cities they live in.",
    "Which orders have a note?",
    "What is the population of Toronto?",
    "How many cities does Canada have?",
    "Which customer ordered the most items?",
    "What products cost less than 50?",
    "Which continent is Japan on?",
];

#[tokio::main]
async fn main() -> ragloom_core::Result<()> {
    let base = std::env::var("RAGLOOM_TEST_OPENAI_BASE_URL").map_err(|_| {
        ragloom_core::Error::InvalidInput("set RAGLOOM_TEST_OPENAI_BASE_URL".into())
    })?;
    let model = std::env::var("RAGLOOM_TEST_OPENAI_MODEL").unwrap_or_else(|_| "smollm2".into());
    let dir = std::env::temp_dir().join(format!("ragloom-sql-share-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| ragloom_core::Error::io("creating", &dir, e))?;
    let path = dir.join("shop.db");
    let _ = std::fs::remove_file(&path);
    run_sqlite_script(&path, include_str!("../tests/data/sample.sql"))?;
    let database = SQLDatabase::sqlite(&path).build()?;
    // A chat model (structured output needs the chat API); llama.cpp
    // enforces a response_format JSON schema with a grammar.
    let llm: Arc<dyn Llm> = Arc::new(
        OpenAILike::builder(model.clone())
            .api_base(base)
            .context_window(8192)
            .is_chat_model(true)
            .should_use_structured_outputs(true)
            .build()?,
    );
    for (structured, retry) in [(false, false), (false, true), (true, false), (true, true)] {
        let retriever = NLSQLRetriever::builder(database.clone(), Arc::clone(&llm))
            .retry_on_error(retry)
            .structured_output(structured)
            .build()?;
        let mut ran = 0;
        for question in QUESTIONS {
            let (nodes, metadata) = match retriever
                .retrieve_with_metadata(&QueryBundle::new(question))
                .await
            {
                Ok(found) => found,
                // A reply that is not the JSON asked for: no SQL at all.
                Err(e) => {
                    println!("FAIL {question}\n    {e}");
                    continue;
                }
            };
            let ok = metadata.contains_key("col_keys");
            ran += usize::from(ok);
            let sql = metadata["sql_query"].as_str().unwrap_or_default();
            let shown: String = nodes
                .first()
                .map(|n| n.node.text.chars().take(80).collect())
                .unwrap_or_default();
            println!(
                "{} {question}\n    {sql}\n    {shown}",
                if ok { "ran " } else { "FAIL" }
            );
        }
        println!(
            "\n{model}, structured_output={structured}, retry_on_error={retry}: {ran}/{} questions gave SQL that ran ({:.0} %)\n",
            QUESTIONS.len(),
            100.0 * ran as f64 / QUESTIONS.len() as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
