//! `SQLDatabase` on the real PostgreSQL `.ci/run` starts (RAGLOOM_TEST_PG_URL):
//! descriptions and results equal to LlamaIndex's on tests/data/sample_pg.sql,
//! and the guards against hostile statements.

use crate::common::data;
use ragloom_core::llms::{Llm, MockLlm};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::QueryBundle;
use ragloom_sql::{NLSQLTableQueryEngine, SQLDatabase, SqlLimits, StatementError, statement_error};
use serde_json::Value;
use sqlx::{Connection, Executor, PgConnection};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// A fresh database holding the sample, dropped when the test ends.
struct SampleDb {
    admin: String,
    name: String,
    url: String,
}

impl SampleDb {
    async fn create() -> Option<Self> {
        let admin = ragloom_core::testing::ci_var("RAGLOOM_TEST_PG_URL")?;
        let n = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let name = format!("ragloom_sql_{}_{n}", std::process::id());
        let mut conn = PgConnection::connect(&admin).await.unwrap();
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .unwrap();
        conn.close().await.unwrap();
        let (base, _) = admin.rsplit_once('/').unwrap();
        let url = format!("{base}/{name}");
        let mut conn = PgConnection::connect(&url).await.unwrap();
        let script = std::fs::read_to_string(data("sample_pg.sql")).unwrap();
        conn.execute(script.as_str()).await.unwrap();
        conn.close().await.unwrap();
        Some(Self { admin, name, url })
    }

    async fn drop(self) {
        let mut conn = PgConnection::connect(&self.admin).await.unwrap();
        conn.execute(format!("DROP DATABASE {} WITH (FORCE)", self.name).as_str())
            .await
            .unwrap();
    }

    /// Rows per table, to prove a refused statement changed nothing.
    async fn snapshot(&self) -> Vec<(String, i64)> {
        let mut conn = PgConnection::connect(&self.url).await.unwrap();
        let mut out = Vec::new();
        for table in [
            "shop.customers",
            "shop.products",
            "shop.orders",
            "shop.order_items",
            "public.audit_log",
        ] {
            let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
                .fetch_one(&mut conn)
                .await
                .unwrap();
            let sum: Option<String> = sqlx::query_scalar(&format!(
                "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {table} t"
            ))
            .fetch_one(&mut conn)
            .await
            .unwrap();
            out.push((format!("{table} {}", sum.unwrap_or_default()), n));
        }
        out
    }
}

fn recorded() -> Value {
    serde_json::from_str(&std::fs::read_to_string(data("text_to_sql_pg.json")).unwrap()).unwrap()
}

async fn refusal(db: &SQLDatabase, sql: &str) -> StatementError {
    let e = db.run_sql(sql).await.expect_err(sql);
    statement_error(&e)
        .unwrap_or_else(|| panic!("{sql}: not a statement error: {e}"))
        .clone()
}

#[tokio::test]
async fn tables_and_results_read_as_llama_index_reads_them() {
    let Some(sample) = SampleDb::create().await else {
        return;
    };
    let rec = recorded();
    for (key, schema, views) in [
        ("schema_shop", Some("shop"), false),
        ("schema_shop_view_support", Some("shop"), true),
        ("schema_default", None, false),
    ] {
        let mut builder = SQLDatabase::postgres(&sample.url).view_support(views);
        if let Some(schema) = schema {
            builder = builder.schema(schema);
        }
        let db = builder.connect().await.unwrap();
        assert_eq!(db.dialect(), rec[key]["dialect"]);
        let expected = rec[key]["table_info"].as_object().unwrap();
        let names: Vec<&str> = expected.keys().map(String::as_str).collect();
        assert_eq!(db.usable_table_names(), names, "{key}");
        for (table, info) in expected {
            assert_eq!(db.table_info(table).await.unwrap(), *info, "{key}: {table}");
        }
    }

    let shop = SQLDatabase::postgres(&sample.url)
        .schema("shop")
        .view_support(true)
        .connect()
        .await
        .unwrap();
    let mut compared = 0;
    for run in rec["run_sql_shop"].as_array().unwrap() {
        let sql = run["sql"].as_str().unwrap();
        let Some(text) = run["text"].as_str() else {
            continue;
        };
        // psycopg2 shows bytea as a memoryview with its address; LlamaIndex's
        // schema prefix rewrites words after FROM inside strings (differences.md).
        if text.contains("<memory at")
            || run["prefixed_sql"]
                .as_str()
                .unwrap()
                .contains("'from shop.")
        {
            continue;
        }
        // LlamaIndex reads any table the connection may; here only the usable ones.
        if sql.contains("public.") {
            let e = refusal(&shop, sql).await;
            assert!(
                e.to_string()
                    .contains("`public.audit_log`, which is not one of the usable tables"),
                "{e}"
            );
            continue;
        }
        let got = shop
            .run_sql(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(got.text, text, "{sql}");
        let keys: Vec<String> = run["col_keys"]
            .as_array()
            .map(|k| k.iter().map(|k| k.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        assert_eq!(got.col_keys, keys, "{sql}");
        compared += 1;
    }
    assert!(compared >= 25, "only {compared} statements compared");

    // CREATE TABLE as SQLAlchemy renders what it reflects (DatabaseToolSpec).
    let ddl: Value =
        serde_json::from_str(&std::fs::read_to_string(data("table_definitions_pg.json")).unwrap())
            .unwrap();
    for (table, text) in ddl["shop_create_table"].as_object().unwrap() {
        assert_eq!(
            shop.table_definition(table).await.unwrap(),
            *text,
            "{table}"
        );
    }
    let public = SQLDatabase::postgres(&sample.url).connect().await.unwrap();
    assert_eq!(
        format!("{}\n", public.table_definition("audit_log").await.unwrap()),
        ddl["describe_tables"]
    );

    // Where LlamaIndex's rewriting breaks a statement, the search path does not.
    let fixed = shop
        .run_sql("SELECT 'from here' AS s, EXTRACT(YEAR FROM joined)::int FROM \"customers\" WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(fixed.text, "[('from here', 2021)]");

    // Errors read as psycopg2 prints them, positions and hints included.
    let default = SQLDatabase::postgres(&sample.url).connect().await.unwrap();
    for run in rec["run_sql_default"].as_array().unwrap() {
        let sql = run["sql"].as_str().unwrap();
        if let Some(error) = run["error"]
            .as_str()
            .filter(|_| run["error_type"] == "builtins.NotImplementedError")
        {
            let e = refusal(&default, sql).await;
            assert_eq!(e.to_string(), error, "{sql}");
        }
    }
    let nope = refusal(&shop, "SELECT nope FROM customers").await;
    assert_eq!(
        nope.to_string(),
        "Statement 'SELECT nope FROM customers' is invalid SQL.\nError: column \"nope\" does not exist\n\
         LINE 1: SELECT nope FROM customers\n               ^\n\
         HINT:  Perhaps you meant to reference the column \"customers.name\".\n"
    );
    // Python raises these past the engine; here the model reads them.
    let zero = refusal(&shop, "SELECT 1 / 0 FROM customers").await;
    assert!(
        matches!(&zero, StatementError::Invalid { message, .. } if message == "division by zero\n"),
        "{zero}"
    );
    assert_eq!(shop.run_sql("SELECT ").await.unwrap().text, "[()]");
    sample.drop().await;
}

#[tokio::test]
async fn hostile_statements_are_refused_and_change_nothing() {
    let Some(sample) = SampleDb::create().await else {
        return;
    };
    // A partitioned table with one partition the model may not read.
    let mut setup = PgConnection::connect(&sample.url).await.unwrap();
    setup
        .execute(
            "CREATE TABLE shop.events (k text, v text) PARTITION BY LIST (k); \
             CREATE TABLE shop.events_pub PARTITION OF shop.events FOR VALUES IN ('pub'); \
             CREATE TABLE shop.events_sec PARTITION OF shop.events FOR VALUES IN ('sec'); \
             INSERT INTO shop.events VALUES ('pub', 'open'), ('sec', 'SECRET')",
        )
        .await
        .unwrap();
    setup.close().await.unwrap();
    let before = sample.snapshot().await;
    let db = SQLDatabase::postgres(&sample.url)
        .schema("shop")
        .ignore_tables(["odd_types", "events_sec"])
        .limits(SqlLimits {
            statement_timeout: Duration::from_millis(500),
            max_rows: 3,
            max_value_bytes: 10_000,
            ..SqlLimits::default()
        })
        .connect()
        .await
        .unwrap();
    for sql in [
        "DROP TABLE customers",
        "UPDATE products SET price = 0",
        "DELETE FROM orders",
        "SELECT 1; DROP TABLE customers",
        "SELECT 1; SELECT 2",
        "TRUNCATE orders",
        "COPY customers TO PROGRAM 'id'",
        "SET statement_timeout = 0",
        "SELECT * INTO stolen FROM customers",
        "WITH gone AS (DELETE FROM orders RETURNING id) SELECT * FROM gone",
        "SELECT * FROM orders FOR UPDATE",
        "SELECT * FROM odd_types",
        "SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM shop.odd_types)",
        "WITH x AS (SELECT * FROM odd_types) SELECT count(*) FROM x",
        "SELECT * FROM audit_log",
        "SELECT * FROM public.audit_log",
        "SELECT usename FROM pg_catalog.pg_user",
        "SELECT rolpassword FROM pg_authid",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT query_to_xml('select * from public.audit_log', true, true, '')",
        "SELECT set_config('statement_timeout', '0', false)",
        "SELECT pg_advisory_lock(42)",
        "SELECT repeat('x', 20000)",
        "",
        "-- only a comment",
        // Query text run by functions, which no plan shows.
        "SELECT word FROM ts_stat('SELECT to_tsvector(''simple'', actor) FROM public.audit_log')",
        "SELECT numnode(ts_rewrite('a'::tsquery, 'SELECT plainto_tsquery(actor), ''b''::tsquery FROM public.audit_log'))",
        // An escape string continued on the next line keeps its escapes.
        "SELECT E''\n'\\'', query_to_xml('select * from public.audit_log', true, false, '') --'",
        // A comment PostgreSQL ends at a carriage return.
        "SELECT 1 --\r, pg_read_file('PG_VERSION')",
        // A partition pruned from the plan by a value that changes by the run.
        "SELECT k, v FROM events WHERE k = CASE WHEN random() < 2 THEN 'sec' END",
        "SELECT v FROM events",
        "SELECT pg_advisory_lock(42)",
    ] {
        let e = refusal(&db, sql).await;
        assert_eq!(e.statement(), sql);
    }
    assert_eq!(sample.snapshot().await, before);
    assert_eq!(
        db.run_sql("SELECT v FROM events_pub").await.unwrap().text,
        "[('open',)]"
    );
    let mut check = PgConnection::connect(&sample.url).await.unwrap();
    let locks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
            .fetch_one(&mut check)
            .await
            .unwrap();
    assert_eq!(locks, 0);

    // A result of a hundred 9 kB columns over a thousand rows: each row is
    // flagged by the server, not sent.
    let wide: Vec<String> = (0..100).map(|i| format!("r AS c{i}")).collect();
    let wide = format!(
        "SELECT {} FROM (SELECT repeat('x', 9000) AS r) s, generate_series(1, 1001)",
        wide.join(", ")
    );
    let started = Instant::now();
    refusal(&db, &wide).await;
    assert!(started.elapsed() < Duration::from_secs(5));

    // `pg_sleep(600)` is cut by the statement timeout, and the pool stays usable.
    let started = Instant::now();
    let e = refusal(&db, "SELECT pg_sleep(600)").await;
    assert!(matches!(e, StatementError::TimedOut { .. }), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let endless = refusal(
        &db,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    )
    .await;
    assert!(
        matches!(endless, StatementError::TimedOut { .. }),
        "{endless}"
    );
    let capped = db
        .run_sql("SELECT generate_series(1, 100) AS n")
        .await
        .unwrap();
    assert_eq!(capped.rows.len(), 3);
    assert!(
        capped.truncated
            && capped
                .text
                .ends_with("(only the first 3 rows are shown: the result was longer)")
    );
    assert_eq!(
        db.run_sql("SELECT count(*) FROM customers")
            .await
            .unwrap()
            .text,
        "[(4,)]"
    );

    // With a role, the database's own grants hold the model too.
    let mut admin = PgConnection::connect(&sample.url).await.unwrap();
    let role = format!("{}_reader", sample.name);
    admin
        .execute(
            format!(
                "CREATE ROLE {role}; GRANT USAGE ON SCHEMA shop TO {role}; \
                 GRANT SELECT ON shop.products TO {role}"
            )
            .as_str(),
        )
        .await
        .unwrap();
    let reader = SQLDatabase::postgres(&sample.url)
        .schema("shop")
        .role(&role)
        .connect()
        .await
        .unwrap();
    assert_eq!(
        reader
            .run_sql("SELECT count(*) FROM products")
            .await
            .unwrap()
            .text,
        "[(5,)]"
    );
    let denied = refusal(&reader, "SELECT count(*) FROM customers").await;
    assert!(denied.to_string().contains("permission denied"), "{denied}");
    admin
        .execute(format!("DROP OWNED BY {role}; DROP ROLE {role}").as_str())
        .await
        .unwrap();

    // Writes only with the opt-in, only rows of usable tables, never schema.
    let writer = SQLDatabase::postgres(&sample.url)
        .schema("shop")
        .include_tables(["products"])
        .allow_writes(true)
        .connect()
        .await
        .unwrap();
    let updated = writer
        .run_sql("UPDATE products SET price = price + 1 WHERE id = 1 RETURNING price")
        .await
        .unwrap();
    assert_eq!(updated.text, "[(Decimal('40.50'),)]");
    for sql in [
        "DROP TABLE products",
        "DELETE FROM orders",
        "CREATE TABLE t (a int)",
        "SELECT 1 INTO t",
    ] {
        refusal(&writer, sql).await;
    }
    let price = db
        .run_sql("SELECT price FROM products WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(price.text, "[(Decimal('40.50'),)]");
    sample.drop().await;
}

#[tokio::test]
async fn a_question_becomes_postgresql_and_an_answer() {
    let Some(sample) = SampleDb::create().await else {
        return;
    };
    let db = SQLDatabase::postgres(&sample.url)
        .schema("shop")
        .include_tables(["customers", "orders"])
        .connect()
        .await
        .unwrap();
    let llm = Arc::new(
        MockLlm::scripted([
            "SELECT c.name, count(o.id) AS n FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY n DESC, c.name LIMIT 1",
            "Ada placed the most orders.",
        ])
        .chat_model(false),
    );
    let engine = NLSQLTableQueryEngine::builder(db, llm.clone() as Arc<dyn Llm>)
        .build()
        .unwrap();
    let response = engine
        .query(&QueryBundle::new("Who placed the most orders?"))
        .await
        .unwrap();
    assert_eq!(response.to_string(), "Ada placed the most orders.");
    let prompts: Vec<String> = llm.requests().iter().map(|r| r.prompt_text()).collect();
    assert!(
        prompts[0].contains("create a syntactically correct postgresql query"),
        "{}",
        prompts[0]
    );
    assert!(prompts[0].contains(
        "Table 'orders' has columns: id (INTEGER), customer_id (INTEGER), status (VARCHAR(7))"
    ));
    assert!(!prompts[0].contains("audit_log"));
    assert!(prompts[1].contains("SQL Response: [('"), "{}", prompts[1]);
    sample.drop().await;
}
