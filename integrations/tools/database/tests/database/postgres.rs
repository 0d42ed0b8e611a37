//! The database tools on the PostgreSQL server `.ci/run` starts
//! (RAGLOOM_TEST_PG_URL): a schema's tables listed, described as
//! SQLAlchemy renders them, queried under ragloom-sql's guards.

use ragloom_core::tools::ToolSpec;
use ragloom_sql::SQLDatabase;
use ragloom_tools_database::DatabaseToolSpec;
use serde_json::{Value, json};
use sqlx::{Connection, Executor, PgConnection};
use std::path::Path;

fn sql_data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sql/tests/data")
        .join(name)
}

#[tokio::test]
async fn a_postgresql_schema_as_three_tools() {
    let Some(admin) = ragloom_core::testing::ci_var("RAGLOOM_TEST_PG_URL") else {
        return;
    };
    let name = format!("ragloom_dbtool_{}", std::process::id());
    let mut conn = PgConnection::connect(&admin).await.unwrap();
    conn.execute(format!("DROP DATABASE IF EXISTS {name}").as_str())
        .await
        .unwrap();
    conn.execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .unwrap();
    let url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
    let mut db_conn = PgConnection::connect(&url).await.unwrap();
    db_conn
        .execute(
            std::fs::read_to_string(sql_data("sample_pg.sql"))
                .unwrap()
                .as_str(),
        )
        .await
        .unwrap();
    db_conn.close().await.unwrap();

    let database = SQLDatabase::postgres(&url)
        .schema("shop")
        .include_tables(["customers", "orders"])
        .connect()
        .await
        .unwrap();
    let spec = DatabaseToolSpec::new(database);
    assert!(spec.is_read_only());
    let tools = spec.to_tool_list();
    let listed = tools[2].call(json!({})).await.unwrap();
    assert_eq!(listed.content, "['customers', 'orders']");

    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(sql_data("table_definitions_pg.json")).unwrap(),
    )
    .unwrap();
    let described = tools[1]
        .call(json!({"tables": ["customers"]}))
        .await
        .unwrap();
    assert_eq!(
        described.content,
        recorded["shop_create_table"]["customers"]
    );
    let hidden = tools[1]
        .call(json!({"tables": ["odd_types"]}))
        .await
        .unwrap();
    assert!(
        hidden.is_error && hidden.content.contains("customers, orders"),
        "{}",
        hidden.content
    );

    let loaded = tools[0]
        .call(json!({"query": "SELECT c.name, o.placed FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id LIMIT 2"}))
        .await
        .unwrap();
    assert_eq!(
        loaded.content,
        "name: Ada, placed: 2023-01-05\nname: Kenji, placed: 2023-02-11"
    );
    for query in [
        "DELETE FROM orders",
        "SELECT * FROM odd_types",
        "SELECT pg_read_file('PG_VERSION')",
    ] {
        let out = tools[0].call(json!({"query": query})).await.unwrap();
        assert!(out.is_error, "{query}: {}", out.content);
    }
    let count = tools[0]
        .call(json!({"query": "SELECT count(*) AS n FROM orders"}))
        .await
        .unwrap();
    assert_eq!(count.content, "n: 4");

    drop(spec);
    conn.execute(format!("DROP DATABASE {name} WITH (FORCE)").as_str())
        .await
        .unwrap();
}
