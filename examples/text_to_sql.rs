//! Text-to-SQL: a question in plain language becomes SQL a model writes,
//! run read-only under guards, and the model answers from the rows —
//! LlamaIndex's `NLSQLTableQueryEngine`.
//!
//! ```sh
//! cargo run -p ragloom-examples --features sql --example text_to_sql
//! RAGLOOM_LLM=ollama RAGLOOM_LLM_MODEL=llama3.2 cargo run -p ragloom-examples --features sql,ollama --example text_to_sql -- "Which customers are in Japan?"
//! ```
//!
//! It builds a small shop database (countries, cities, customers, products,
//! orders) in a temporary folder. With an LLM configured (`RAGLOOM_LLM`, see
//! `ragloom::providers`) that model writes the SQL and the answer; without
//! one, a scripted model stands in so the run shows every step offline.

use ragloom::llms::{Llm, MockLlm};
use ragloom::prelude::*;
use ragloom::providers::ProviderSpec;
use ragloom::sql::{NLSQLTableQueryEngine, SQLDatabase, run_sqlite_script, statement_error};
use std::sync::Arc;

const SHOP: &str = include_str!("../integrations/sql/tests/data/sample.sql");

#[tokio::main]
async fn main() -> Result<()> {
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Which city has the most people?".to_owned());
    let dir = std::env::temp_dir().join(format!("ragloom-text-to-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("creating", &dir, e))?;
    let path = dir.join("shop.db");
    let _ = std::fs::remove_file(&path);
    run_sqlite_script(&path, SHOP)?;

    // Read-only, one statement at a time, only these tables, 10 s, 1,000 rows.
    let database = SQLDatabase::sqlite(&path).build()?;
    println!("Tables: {}\n", database.usable_table_names().join(", "));

    let llm: Arc<dyn Llm> = match ProviderSpec::from_env()?.llm.build()? {
        Some(llm) => llm,
        None => {
            println!(
                "No LLM configured (RAGLOOM_LLM): a scripted model writes the SQL and the answer.\n"
            );
            Arc::new(
                MockLlm::scripted([
                    "SQLQuery: SELECT city.name, city.population FROM city ORDER BY city.population DESC LIMIT 1",
                    "Tokyo has the most people: 13,960,000.",
                ])
                .chat_model(false),
            )
        }
    };
    let engine = NLSQLTableQueryEngine::new(database.clone(), llm)?;
    let response = engine.query(&QueryBundle::new(question.as_str())).await?;
    println!("Question: {question}");
    let sql = response.metadata["sql_query"].as_str().unwrap_or_default();
    println!("SQL: {sql}");
    if let Some(node) = response.source_nodes.first() {
        println!("Rows: {}", node.node.text);
    }
    println!("Answer: {response}\n");

    // A model that writes a change is refused, and reads why.
    if let Err(e) = database.run_sql("DROP TABLE city").await {
        let reason = statement_error(&e).map_or_else(|| e.to_string(), ToString::to_string);
        println!("A model-written DROP TABLE: {reason}");
    }

    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
