//! The database tools against a real SQLite file.

use ragloom_core::tools::ToolSpec;
use ragloom_tools_database::DatabaseToolSpec;
use rusqlite::Connection;
use serde_json::json;

fn fixture() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shop.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total REAL);
         INSERT INTO customers VALUES (1, 'Ada', 'London'), (2, 'Grace', NULL);
         INSERT INTO orders VALUES (10, 1, 12.5), (11, 2, 3.0);",
    )
    .unwrap();
    (dir, path)
}

#[tokio::test]
async fn three_tools_list_describe_and_load() {
    let (_dir, path) = fixture();
    let spec = DatabaseToolSpec::open(&path).unwrap();
    assert!(spec.is_read_only());
    let tools = spec.to_tool_list();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["load_data", "describe_tables", "list_tables"]);
    assert_eq!(spec.spec_functions(), names);

    let listed = tools[2].call(json!({})).await.unwrap();
    assert_eq!(listed.content, "['customers', 'orders']");

    let described = tools[1].call(json!({"tables": ["orders"]})).await.unwrap();
    assert!(
        described.content.starts_with("CREATE TABLE orders"),
        "{}",
        described.content
    );
    let unknown = tools[1].call(json!({"tables": ["nope"]})).await.unwrap();
    assert!(unknown.is_error);
    assert!(unknown.content.contains("`nope`") && unknown.content.contains("customers"));

    let loaded = tools[0]
        .call(json!({"query": "SELECT c.name, c.city, o.total FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id"}))
        .await
        .unwrap();
    assert!(!loaded.is_error, "{}", loaded.content);
    assert_eq!(
        loaded.content,
        "name: Ada, city: London, total: 12.5\nname: Grace, city: None, total: 3.0"
    );
    // The raw output is the documents, as LlamaIndex's DatabaseReader returns them.
    assert_eq!(loaded.raw_output.as_array().unwrap().len(), 2);
    assert_eq!(
        loaded.raw_output[0]["text"],
        "name: Ada, city: London, total: 12.5"
    );

    let docs = spec
        .load_data("SELECT name FROM customers WHERE id = 2")
        .await
        .unwrap();
    assert_eq!(docs[0].get_text(), "name: Grace");
}

#[tokio::test]
async fn read_only_rejects_writes_and_keeps_the_data() {
    let (_dir, path) = fixture();
    let spec = DatabaseToolSpec::open(&path).unwrap();
    for sql in [
        "DELETE FROM customers",
        "  -- sneaky\n DROP TABLE orders",
        "WITH x AS (SELECT 1) DELETE FROM customers",
        "SELECT 1; DELETE FROM customers",
        "ATTACH DATABASE 'other.db' AS o",
    ] {
        let out = spec.to_tool_list()[0]
            .call(json!({"query": sql}))
            .await
            .unwrap();
        assert!(out.is_error, "{sql} was accepted: {}", out.content);
    }
    let conn = Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM customers", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 2);
}

#[tokio::test]
async fn bad_sql_and_missing_files_are_clear_errors() {
    let (dir, path) = fixture();
    let spec = DatabaseToolSpec::open(&path).unwrap();
    let out = spec.to_tool_list()[0]
        .call(json!({"query": "SELECT nope FROM customers"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(out.content.contains("nope"), "{}", out.content);
    let out = spec.to_tool_list()[0].call(json!({})).await.unwrap();
    assert!(out.is_error && out.content.contains("`query`"));

    let missing = dir.path().join("missing.db");
    let err = DatabaseToolSpec::open(&missing).unwrap_err().to_string();
    assert!(err.contains("missing.db"), "{err}");
    assert!(
        !missing.exists(),
        "opening read-only must not create the file"
    );
}

#[tokio::test]
async fn writable_allows_writes() {
    let (_dir, path) = fixture();
    let spec = DatabaseToolSpec::open_writable(&path).unwrap();
    let out = spec.to_tool_list()[0]
        .call(json!({"query": "DELETE FROM orders WHERE id = 11"}))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        spec.load_data("SELECT id FROM orders").await.unwrap().len(),
        1
    );
}

fn limited(
    path: &std::path::Path,
    limits: ragloom_tools_database::DatabaseLimits,
) -> DatabaseToolSpec {
    DatabaseToolSpec::open(path)
        .unwrap()
        .with_limits(limits)
        .unwrap()
}

#[tokio::test]
async fn a_query_that_never_ends_is_stopped_and_the_tool_stays_usable() {
    let (_dir, path) = fixture();
    let spec = limited(
        &path,
        ragloom_tools_database::DatabaseLimits {
            statement_timeout: std::time::Duration::from_millis(300),
            ..Default::default()
        },
    );
    let tools = spec.to_tool_list();
    let started = std::time::Instant::now();
    let out = tools[0]
        .call(json!({"query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"}))
        .await
        .unwrap();
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("was stopped"), "{}", out.content);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // The next call runs normally: the limit was lifted, the connection not left locked.
    let ok = tools[0]
        .call(json!({"query": "SELECT name FROM customers WHERE id = 1"}))
        .await
        .unwrap();
    assert_eq!(ok.content, "name: Ada");
}

#[tokio::test]
async fn a_huge_value_and_too_many_rows_are_refused() {
    let (_dir, path) = fixture();
    let spec = limited(
        &path,
        ragloom_tools_database::DatabaseLimits {
            max_rows: 10,
            ..Default::default()
        },
    );
    let err = spec
        .load_data("SELECT randomblob(1000000000)")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("too big"), "{err}");
    let err = spec
        .load_data("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50) SELECT x FROM c")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("more than 10 rows"), "{err}");
    let five = spec
        .load_data("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT x FROM c")
        .await
        .unwrap();
    assert_eq!(five.len(), 5);
    assert_eq!(
        DatabaseToolSpec::open(&path).unwrap().limits().max_rows,
        1000
    );
}
