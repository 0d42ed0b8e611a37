//! Model-written SQL is hostile input: writes, several statements, other
//! tables, ATTACH, endless recursion, huge values and results are refused
//! or bounded, the database is left as it was, and the model reads why.

use crate::common::build_db;
use ragloom_core::llms::{Llm, MockLlm};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::QueryBundle;
use ragloom_sql::{NLSQLTableQueryEngine, SQLDatabase, SqlLimits, StatementError, statement_error};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

async fn refusal(db: &SQLDatabase, sql: &str) -> StatementError {
    let err = db.run_sql(sql).await.expect_err(sql);
    statement_error(&err)
        .unwrap_or_else(|| panic!("{sql}: not a statement error: {err}"))
        .clone()
}

/// Every table's rows, to prove nothing changed.
fn snapshot(path: &Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    ["country", "city", "customer", "product", "orders"]
        .iter()
        .map(|t| {
            let n: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap();
            ((*t).to_owned(), n)
        })
        .collect()
}

#[tokio::test]
async fn writes_several_statements_and_other_tables_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_db(dir.path(), "sample.sql");
    let before = snapshot(&path);
    let db = SQLDatabase::sqlite(&path)
        .ignore_tables(["orders"])
        .build()
        .unwrap();
    for (sql, says) in [
        ("DROP TABLE city", "schema"),
        ("UPDATE product SET price = 0", "UPDATE"),
        ("DELETE FROM country", "DELETE"),
        ("INSERT INTO country VALUES (9, 'X', 'Y')", "INSERT"),
        ("CREATE TABLE t (x)", "schema"),
        ("SELECT 1; SELECT 2", "more than one statement"),
        ("SELECT name FROM city; DROP TABLE city", "schema"),
        ("ATTACH DATABASE 'other.db' AS other", "ATTACH"),
        ("PRAGMA writable_schema = 1", "PRAGMA"),
        ("SELECT name FROM sqlite_master", "sqlite_master"),
        ("SELECT * FROM orders", "`orders`"),
        (
            "SELECT c.name FROM customer c JOIN orders o ON o.customer_id = c.id",
            "`orders`",
        ),
        ("SELECT (SELECT count(*) FROM orders)", "`orders`"),
        (
            "WITH o AS (SELECT * FROM orders) SELECT * FROM o",
            "`orders`",
        ),
        ("SELECT load_extension('/tmp/x')", "load_extension"),
        ("   -- only a comment\n;", "no SQL statement"),
    ] {
        match refusal(&db, sql).await {
            StatementError::Refused { statement, reason } => {
                assert_eq!(statement, sql);
                assert!(reason.contains(says), "{sql}: {reason}");
            }
            other => panic!("{sql}: {other}"),
        }
    }
    assert_eq!(snapshot(&path), before);
    assert!(!dir.path().join("other.db").exists());
    // Still usable after every refusal.
    assert_eq!(
        db.run_sql("SELECT count(*) FROM city").await.unwrap().text,
        "[(5,)]"
    );
}

#[tokio::test]
async fn endless_huge_and_long_statements_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_db(dir.path(), "sample.sql");
    let db = SQLDatabase::sqlite(&path)
        .limits(SqlLimits {
            statement_timeout: Duration::from_millis(200),
            max_rows: 3,
            max_result_chars: 60,
            max_value_bytes: 10_000,
        })
        .build()
        .unwrap();
    let endless =
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r";
    let stopped = refusal(&db, endless).await;
    assert!(
        matches!(stopped, StatementError::TimedOut { .. }),
        "{stopped:?}"
    );
    let huge = refusal(&db, "SELECT zeroblob(100000)").await;
    assert!(
        matches!(&huge, StatementError::Invalid { message, .. } if message.contains("too big")),
        "{huge}"
    );
    let many = db
        .run_sql("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT 100) SELECT i FROM r")
        .await
        .unwrap();
    assert_eq!(many.rows.len(), 3);
    assert!(many.truncated);
    assert!(
        many.text
            .starts_with("[(1,), (2,), (3,)]\n(only the first 3 rows"),
        "{}",
        many.text
    );
    let wide = db
        .run_sql("SELECT name, country_id, population FROM city ORDER BY id")
        .await
        .unwrap();
    assert!(wide.truncated && wide.rows.len() < 3, "{wide:?}");
    assert!(wide.text.chars().count() < 60 + 80);
    // The connection is fine after a stopped statement.
    assert_eq!(db.run_sql("SELECT 1").await.unwrap().text, "[(1,)]");
}

#[tokio::test]
async fn writes_need_an_explicit_opt_in_and_stay_in_the_usable_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_db(dir.path(), "sample.sql");
    let db = SQLDatabase::sqlite(&path)
        .include_tables(["product"])
        .allow_writes(true)
        .build()
        .unwrap();
    let done = db
        .run_sql("UPDATE product SET price = 1 WHERE id = 1")
        .await
        .unwrap();
    assert_eq!((done.text.as_str(), done.col_keys.len()), ("", 0));
    assert!(matches!(
        refusal(&db, "DELETE FROM orders").await,
        StatementError::Refused { .. }
    ));
    assert!(matches!(
        refusal(&db, "ATTACH DATABASE 'x.db' AS x").await,
        StatementError::Refused { .. }
    ));
    assert_eq!(
        db.run_sql("SELECT price FROM product WHERE id = 1")
            .await
            .unwrap()
            .text,
        "[(1.0,)]"
    );
}

#[tokio::test]
async fn bad_files_and_options_are_errors_that_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let err = SQLDatabase::sqlite(&missing)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.db"), "{err}");
    assert!(!missing.exists(), "opening must not create the file");
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x42u8; 4096]).unwrap();
    let err = SQLDatabase::sqlite(&garbage)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("garbage.db"), "{err}");
    let path = build_db(dir.path(), "sample.sql");
    let both = SQLDatabase::sqlite(&path)
        .include_tables(["city"])
        .ignore_tables(["orders"])
        .build()
        .unwrap_err();
    assert!(both.to_string().contains("both"), "{both}");
    let unknown = SQLDatabase::sqlite(&path)
        .include_tables(["cities"])
        .build()
        .unwrap_err();
    assert!(unknown.to_string().contains("cities"), "{unknown}");
    let db = SQLDatabase::sqlite(&path)
        .include_tables(["city"])
        .build()
        .unwrap();
    assert!(db.table_info("orders").await.is_err());
    assert!(SQLDatabase::from_uri("postgresql://localhost/db").is_err());
    let from_uri = SQLDatabase::from_uri(&format!("sqlite:///{}", path.display())).unwrap();
    assert_eq!(from_uri.usable_table_names().len(), 5);
}

#[tokio::test]
async fn a_hostile_reply_becomes_an_observation_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_db(dir.path(), "sample.sql");
    let before = snapshot(&path);
    let db = SQLDatabase::sqlite(&path).build().unwrap();
    let llm = Arc::new(
        MockLlm::scripted(["SQLQuery: DROP TABLE city", "I cannot do that."]).chat_model(false),
    );
    let engine = NLSQLTableQueryEngine::new(db, llm.clone() as Arc<dyn Llm>).unwrap();
    let response = engine
        .query(&QueryBundle::new("Remove the cities"))
        .await
        .unwrap();
    assert_eq!(response.to_string(), "I cannot do that.");
    let synthesis = llm.requests()[1].prompt_text();
    assert!(
        synthesis.contains("SQL Response: Error: Statement 'DROP TABLE city' was not run: it changes the database's schema"),
        "{synthesis}"
    );
    assert!(!response.metadata.contains_key("result"));
    assert_eq!(snapshot(&path), before);
}

#[tokio::test]
async fn a_failed_statement_goes_back_to_the_model_once_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let llm = Arc::new(
        MockLlm::scripted([
            "SELECT habitants FROM city WHERE name = 'Tokyo'",
            "SQLQuery: SELECT population FROM city WHERE name = 'Tokyo'",
            "About 14 million.",
        ])
        .chat_model(false),
    );
    let engine = NLSQLTableQueryEngine::builder(db.clone(), llm.clone() as Arc<dyn Llm>)
        .retriever(|r| r.retry_on_error(true))
        .build()
        .unwrap();
    let response = engine
        .query(&QueryBundle::new("How many live in Tokyo?"))
        .await
        .unwrap();
    assert_eq!(response.to_string(), "About 14 million.");
    assert_eq!(
        response.metadata["sql_query"],
        "SELECT population FROM city WHERE name = 'Tokyo'"
    );
    assert_eq!(
        response.metadata["failed_sql_query"],
        "SELECT habitants FROM city WHERE name = 'Tokyo'"
    );
    let requests = llm.requests();
    let retry = requests[1].prompt_text();
    assert!(retry.starts_with(&requests[0].prompt_text()), "{retry}");
    assert!(
        retry.contains("SELECT habitants FROM city WHERE name = 'Tokyo'\nSQLResult: Error: Statement \"SELECT habitants FROM city WHERE name = 'Tokyo'\" is invalid SQL.\nError: no such column: habitants\n\nThat statement failed."),
        "{retry}"
    );
    assert!(
        requests[2]
            .prompt_text()
            .contains("SQL Response: [(13960000,)]")
    );

    // Once only: a second failure is the answer's observation; by default, no retry at all.
    let twice = Arc::new(
        MockLlm::scripted(["SELECT a FROM nowhere", "SELECT b FROM nowhere", "No."])
            .chat_model(false),
    );
    let engine = NLSQLTableQueryEngine::builder(db.clone(), twice.clone() as Arc<dyn Llm>)
        .retriever(|r| r.retry_on_error(true))
        .build()
        .unwrap();
    engine.query(&QueryBundle::new("q")).await.unwrap();
    assert_eq!(twice.requests().len(), 3);
    assert!(
        twice.requests()[2]
            .prompt_text()
            .contains("no such table: nowhere")
    );
    let once = Arc::new(MockLlm::scripted(["SELECT a FROM nowhere", "No."]).chat_model(false));
    NLSQLTableQueryEngine::new(db, once.clone() as Arc<dyn Llm>)
        .unwrap()
        .query(&QueryBundle::new("q"))
        .await
        .unwrap();
    assert_eq!(once.requests().len(), 2);
}

#[tokio::test]
async fn structured_output_holds_the_model_to_one_select() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let llm = Arc::new(MockLlm::scripted([
        r#"{"sql_query": "SELECT name FROM city WHERE id = 3"}"#,
        "Tokyo.",
    ]));
    let engine = NLSQLTableQueryEngine::builder(db, llm.clone() as Arc<dyn Llm>)
        .retriever(|r| r.structured_output(true))
        .build()
        .unwrap();
    let response = engine
        .query(&QueryBundle::new("Which city has id 3?"))
        .await
        .unwrap();
    assert_eq!(response.to_string(), "Tokyo.");
    assert_eq!(
        response.metadata["sql_query"],
        "SELECT name FROM city WHERE id = 3"
    );
    let asked = &llm.requests()[0];
    let schema = asked.schema.as_ref().expect("a structured request");
    assert_eq!(
        schema["properties"]["sql_query"]["pattern"],
        "^(SELECT|WITH) "
    );
    assert!(
        asked
            .prompt_text()
            .contains("Question: Which city has id 3?\nSQLQuery: ")
    );
}
