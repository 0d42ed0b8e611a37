//! PostgreSQL under `SQLDatabase`: each statement in its own read-only
//! transaction, with a time limit, only the usable tables in its plan, and
//! its values read as Python's driver reads them.

mod ddl;
mod error;
mod guard;
mod schema;
mod values;

use crate::database::SqlResult;
use crate::limits::{SqlLimits, StatementError};
use crate::value::SqlValue;
use futures::TryStreamExt;
use futures::future::BoxFuture;
use ragloom_core::error::{Error, Result};
use serde_json::Value;
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::{Column, Executor, Row, Statement, ValueRef};
use std::collections::BTreeSet;
use std::time::Duration;

pub(crate) use schema::Relation;

const PROVIDER: &str = "postgres";

/// The connection pool and what a statement may do.
pub(crate) struct Postgres {
    pool: PgPool,
    endpoint: String,
    /// The schema the tables are in; `None`: those visible on the search path.
    schema: Option<String>,
    writable: bool,
    /// The role each statement runs as (`SET LOCAL ROLE`).
    role: Option<String>,
    limits: SqlLimits,
    max_string_length: usize,
    /// Relations a statement's plan may name: the usable tables, and the
    /// tables under usable views.
    allowed: BTreeSet<Relation>,
}

fn db_error(what: &str, e: sqlx::Error) -> Error {
    Error::provider(PROVIDER, what.to_owned(), e)
}

/// PostgreSQL's quoting of a name: `"shop"`, `"a""b"`.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Postgres {
    pub(crate) async fn connect(
        url: &str,
        schema: Option<String>,
        role: Option<String>,
        writable: bool,
        limits: SqlLimits,
        max_string_length: usize,
    ) -> Result<Self> {
        let options = ragloom_common_postgres::connect_options(url)?
            // A model's statements are not worth keeping prepared.
            .statement_cache_capacity(0)
            .application_name("ragloom-sql")
            // Catalogue reads wait no longer than a statement may; a
            // statement's own limit is set in its transaction.
            .options([(
                "statement_timeout",
                limits.statement_timeout.as_millis().max(1).to_string(),
            )]);
        let endpoint = ragloom_common_postgres::endpoint(&options);
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await
            .map_err(|e| db_error(&format!("connecting to {endpoint}"), e))?;
        if let Some(schema) = &schema {
            let found: Option<i32> =
                sqlx::query_scalar("SELECT 1 FROM pg_namespace WHERE nspname = $1")
                    .bind(schema)
                    .fetch_optional(&pool)
                    .await
                    .map_err(|e| db_error("looking up the schema", e))?;
            if found.is_none() {
                return Err(Error::NotFound(format!(
                    "schema `{schema}` does not exist in {endpoint}"
                )));
            }
        }
        Ok(Self {
            pool,
            endpoint,
            schema,
            role,
            writable,
            limits,
            max_string_length,
            allowed: BTreeSet::new(),
        })
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub(crate) fn limits(&self) -> &SqlLimits {
        &self.limits
    }

    pub(crate) fn is_writable(&self) -> bool {
        self.writable
    }

    pub(crate) fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The tables (and views, with `views`) of the schema.
    pub(crate) async fn table_names(&self, views: bool) -> Result<BTreeSet<String>> {
        schema::table_names(&self.pool, self.schema.as_deref(), views).await
    }

    /// Makes `usable` the tables a statement may read.
    pub(crate) async fn allow_tables(&mut self, usable: &[String]) -> Result<()> {
        self.allowed =
            schema::allowed_relations(&self.pool, self.schema.as_deref(), usable).await?;
        Ok(())
    }

    /// The table as SQLAlchemy's `CREATE TABLE` text.
    pub(crate) async fn table_definition(&self, table: &str) -> Result<String> {
        let (oid, nspname, _) = schema::find(&self.pool, self.schema.as_deref(), table).await?;
        let shown = match &self.schema {
            Some(_) => format!("{nspname}.{table}"),
            None => table.to_owned(),
        };
        ddl::create_table(&self.pool, oid, &shown, self.schema.is_some()).await
    }

    pub(crate) async fn table_info(&self, table: &str) -> Result<String> {
        schema::table_info(&self.pool, self.schema.as_deref(), table).await
    }

    /// One statement under the guards: its words checked, then in a
    /// transaction (read-only unless writes are allowed) with the time limit,
    /// prepared (one statement), planned (only allowed relations), run.
    ///
    /// Boxed here, where its lifetimes are known: left to the caller, the
    /// compiler cannot prove sqlx's connection futures `Send` for every lifetime.
    pub(crate) fn run_statement<'a>(
        &'a self,
        statement: &'a str,
    ) -> BoxFuture<'a, Result<std::result::Result<SqlResult, StatementError>>> {
        Box::pin(self.run_statement_inner(statement))
    }

    async fn run_statement_inner(
        &self,
        statement: &str,
    ) -> Result<std::result::Result<SqlResult, StatementError>> {
        let refused = |reason: String| StatementError::Refused {
            statement: statement.to_owned(),
            reason,
        };
        let sql = match guard::check(statement, self.writable) {
            Ok(sql) => sql,
            Err(reason) => return Ok(Err(refused(reason))),
        };
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(|e| db_error(&format!("connecting to {}", self.endpoint), e))?;
        // The server stops the statement at the limit; this is for a server
        // that does not answer at all.
        let backstop = self.limits.statement_timeout + Duration::from_secs(5);
        match tokio::time::timeout(backstop, self.run_in_transaction(&mut conn, statement, sql))
            .await
        {
            Ok(outcome) => outcome,
            Err(_) => {
                // Mid-statement: the connection is in an unknown state.
                let _ = conn.detach();
                Ok(Err(StatementError::TimedOut {
                    statement: statement.to_owned(),
                    after: self.limits.statement_timeout,
                }))
            }
        }
    }

    async fn run_in_transaction(
        &self,
        conn: &mut PgConnection,
        statement: &str,
        sql: &str,
    ) -> Result<std::result::Result<SqlResult, StatementError>> {
        let mut setup = format!(
            "BEGIN{}; SET LOCAL statement_timeout = {}; SET LOCAL lock_timeout = {1}; \
             SET LOCAL DateStyle = 'ISO, MDY'; SET LOCAL IntervalStyle = 'postgres'; \
             SET LOCAL bytea_output = 'hex'; SET LOCAL extra_float_digits = 1; \
             SET LOCAL standard_conforming_strings = on; \
             SET LOCAL enable_partition_pruning = off",
            // Pruning off: a partition the plan check did not see (pruned by a
            // value that changes between EXPLAIN and the run) is never read.
            if self.writable { "" } else { " READ ONLY" },
            self.limits.statement_timeout.as_millis().max(1),
        );
        if let Some(schema) = &self.schema {
            setup.push_str(&format!(
                "; SET LOCAL search_path = {}, public",
                quote_ident(schema)
            ));
        }
        if let Some(role) = &self.role {
            setup.push_str(&format!("; SET LOCAL ROLE {}", quote_ident(role)));
        }
        execute(conn, &setup)
            .await
            .map_err(|e| db_error("starting a transaction", e))?;
        let outcome = self.run_checked(conn, statement, sql).await;
        // Session advisory locks outlive a transaction; none may stay on a
        // pooled connection.
        let end = if self.writable && matches!(outcome, Ok(Ok(_))) {
            "COMMIT; SELECT pg_advisory_unlock_all()"
        } else {
            "ROLLBACK; SELECT pg_advisory_unlock_all()"
        };
        execute(conn, end)
            .await
            .map_err(|e| db_error("ending the transaction", e))?;
        outcome
    }

    async fn run_checked(
        &self,
        conn: &mut PgConnection,
        statement: &str,
        sql: &str,
    ) -> Result<std::result::Result<SqlResult, StatementError>> {
        let failed =
            |e: sqlx::Error| error::statement_error(e, statement, self.limits.statement_timeout);
        let columns = match describe(conn, sql).await {
            Ok(columns) => columns,
            Err(e) => return failed(e).map(Err),
        };
        // The plan names every table the statement reads or writes, views
        // expanded and `WITH` names resolved as PostgreSQL resolves them.
        let plan: Vec<sqlx::postgres::PgRow> =
            match fetch_all(conn, &format!("EXPLAIN (VERBOSE, FORMAT JSON) {sql}")).await {
                Ok(rows) => rows,
                Err(e) => return failed(e).map(Err),
            };
        // Read as text (a `json` column does not decode as `String`); a plan
        // that cannot be read refuses the statement rather than skip the check.
        let plan: Option<Value> = plan
            .first()
            .and_then(|r| r.try_get_raw(0).ok()?.as_str().ok().map(str::to_owned))
            .and_then(|p| serde_json::from_str::<Value>(&p).ok());
        let Some(plan) = plan else {
            return Ok(Err(StatementError::Refused {
                statement: statement.to_owned(),
                reason: "its plan could not be read to check the tables it uses".into(),
            }));
        };
        let mut named = BTreeSet::new();
        schema::plan_relations(&plan, &mut named);
        if let Some(other) = named.iter().find(|r| !self.allowed.contains(*r)) {
            return Ok(Err(StatementError::Refused {
                statement: statement.to_owned(),
                reason: format!("it reads table `{other}`, which is not one of the usable tables"),
            }));
        }
        let rows = if self.writable {
            self.fetch_unwrapped(conn, sql, columns.len()).await
        } else {
            self.fetch_wrapped(conn, sql, columns.len()).await
        };
        match rows {
            Ok(rows) => Ok(Ok(self.result(&columns, rows))),
            Err(Fetch::Db(e)) => failed(e).map(Err),
            Err(Fetch::Oversize) => Ok(Err(StatementError::Refused {
                statement: statement.to_owned(),
                reason: format!(
                    "a value in its result is longer than the limit of {} bytes",
                    self.limits.max_value_bytes
                ),
            })),
        }
    }

    /// A read: the statement as a subquery whose rows the server sizes
    /// (a row over the value limit is never sent, only flagged) and caps.
    async fn fetch_wrapped(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        width: usize,
    ) -> std::result::Result<Rows, Fetch> {
        let max = self.limits.max_value_bytes.max(1);
        let names: Vec<String> = (1..=width).map(|i| format!("c{i}")).collect();
        let size = if names.is_empty() {
            "0".to_owned()
        } else {
            names
                .iter()
                .map(|c| format!("coalesce(octet_length(ragloom_q.{c}::text), 0)"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        let mut select: Vec<String> = names
            .iter()
            .map(|c| format!("CASE WHEN ragloom_n.n > {max} THEN NULL ELSE ragloom_q.{c} END"))
            .collect();
        select.push(format!("ragloom_n.n > {max}"));
        let alias = if names.is_empty() {
            String::new()
        } else {
            format!("({})", names.join(", "))
        };
        let wrapped = format!(
            "SELECT {} FROM (\n{sql}\n) AS ragloom_q{alias} \
             CROSS JOIN LATERAL (SELECT ({size})::bigint AS n) AS ragloom_n LIMIT {}",
            select.join(", "),
            self.limits.max_rows.saturating_add(1)
        );
        let rows = fetch_capped(conn, &wrapped, self.byte_budget(), width + 1).await?;
        if rows
            .values
            .iter()
            .any(|row| row.last().is_none_or(|flag| flag.as_deref() != Some("f")))
        {
            return Err(Fetch::Oversize);
        }
        Ok(Rows {
            values: rows
                .values
                .into_iter()
                .map(|mut row| {
                    row.truncate(width);
                    row
                })
                .collect(),
            cut: rows.cut,
        })
    }

    /// A write (with writes allowed): its returned rows read until the caps.
    async fn fetch_unwrapped(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        width: usize,
    ) -> std::result::Result<Rows, Fetch> {
        Ok(fetch_capped(conn, sql, self.byte_budget(), width).await?)
    }

    /// Bytes of text read before the rows are cut: the result text's limit,
    /// four bytes a character at most.
    fn byte_budget(&self) -> usize {
        self.limits.max_result_chars.saturating_mul(4).max(1)
    }

    /// The rows read as their types, cut to the limits.
    fn result(&self, columns: &[(String, u32)], rows: Rows) -> SqlResult {
        let col_keys: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        let mut kept: Vec<Vec<SqlValue>> = Vec::new();
        let mut chars = 2;
        let mut truncated = rows.cut;
        for row in rows.values {
            let values: Vec<SqlValue> = row
                .into_iter()
                .zip(columns)
                .map(|(text, (_, oid))| match text {
                    None => SqlValue::Null,
                    Some(text) => values::from_text(*oid, &text).truncated(self.max_string_length),
                })
                .collect();
            let row_chars = crate::value::rows_repr(std::slice::from_ref(&values))
                .chars()
                .count();
            if kept.len() == self.limits.max_rows
                || chars + row_chars > self.limits.max_result_chars
            {
                truncated = true;
                break;
            }
            chars += row_chars;
            kept.push(values);
        }
        if self.writable {
            SqlResult::new(col_keys, kept, truncated)
        } else {
            // A read has rows even without columns (`SELECT` gives `[()]`).
            SqlResult::of_rows(col_keys, kept, truncated)
        }
    }
}

/// Why rows could not be read.
enum Fetch {
    Db(sqlx::Error),
    /// A value was over [`SqlLimits::max_value_bytes`].
    Oversize,
}

impl From<sqlx::Error> for Fetch {
    fn from(e: sqlx::Error) -> Self {
        Fetch::Db(e)
    }
}

/// Runs trusted SQL (the transaction's start and end).
fn execute<'c>(conn: &'c mut PgConnection, sql: &'c str) -> BoxFuture<'c, sqlx::Result<()>> {
    // A `&str` without arguments goes as a simple query (sqlx's `raw_sql`
    // trips the compiler's `Send` check in async traits).
    Box::pin(async move { conn.execute(sql).await.map(|_| ()) })
}

/// Every row of `sql`, sent as a simple query: values come back as text.
fn fetch_all<'c>(
    conn: &'c mut PgConnection,
    sql: &'c str,
) -> BoxFuture<'c, sqlx::Result<Vec<sqlx::postgres::PgRow>>> {
    Box::pin(async move { conn.fetch_all(sql).await })
}

/// Rows as PostgreSQL's text, and whether reading stopped early.
struct Rows {
    values: Vec<Vec<Option<String>>>,
    cut: bool,
}

/// The first `width` values of each row of `sql` (a simple query: text
/// values), read one row at a time until `budget` bytes: what is not read
/// is discarded as it arrives, so memory stays bounded whatever the result.
fn fetch_capped<'c>(
    conn: &'c mut PgConnection,
    sql: &'c str,
    budget: usize,
    width: usize,
) -> BoxFuture<'c, sqlx::Result<Rows>> {
    Box::pin(async move {
        let mut stream = conn.fetch(sql);
        let mut values = Vec::new();
        let mut used = 0usize;
        while let Some(row) = stream.try_next().await? {
            let row = text_values(&row, width.min(row.columns().len()))?;
            used += row.iter().flatten().map(String::len).sum::<usize>();
            values.push(row);
            if used > budget {
                return Ok(Rows { values, cut: true });
            }
        }
        Ok(Rows { values, cut: false })
    })
}

/// The statement's result columns and their type OIDs (preparing it also
/// proves it is one statement). Boxed for the reason `run_statement` is.
fn describe<'c>(
    conn: &'c mut PgConnection,
    sql: &'c str,
) -> BoxFuture<'c, std::result::Result<Vec<(String, u32)>, sqlx::Error>> {
    Box::pin(async move {
        let prepared = conn.prepare(sql).await?;
        Ok(prepared
            .columns()
            .iter()
            .map(|c| (c.name().to_owned(), c.type_info().oid().map_or(0, |o| o.0)))
            .collect())
    })
}

/// A row's first `width` values as PostgreSQL's text.
fn text_values(
    row: &sqlx::postgres::PgRow,
    width: usize,
) -> std::result::Result<Vec<Option<String>>, sqlx::Error> {
    (0..width)
        .map(|i| {
            let raw = row.try_get_raw(i)?;
            if raw.is_null() {
                return Ok(None);
            }
            raw.as_str()
                .map(|s| Some(s.to_owned()))
                .map_err(sqlx::Error::Decode)
        })
        .collect()
}
