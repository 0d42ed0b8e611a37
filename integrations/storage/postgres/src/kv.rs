//! `PostgresKv`: LlamaIndex's `PostgresKVStore` table (`data_<table>`: `key`,
//! `namespace`, `value`) as the backend of the docstore and index store.

use ragloom_common_postgres::{PROVIDER, PgSession};
use ragloom_core::storage::kvstore::{KvBackend, KvCollection, KvTable, KvValue};
use ragloom_core::utils::to_python_json_string;
use ragloom_core::{Error, Result};
use serde_json::Value;
use sqlx::{Connection, PgConnection, Row};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Where a key-value table is and how its values are typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvTableName {
    /// The schema (e.g. `public`).
    pub schema: String,
    /// The table name without LlamaIndex's `data_` prefix.
    pub table: String,
    /// `value` is `jsonb` (else `json`, LlamaIndex's default).
    pub use_jsonb: bool,
}

impl KvTableName {
    fn qualified(&self) -> String {
        format!(
            "{}.{}",
            quote_ident(&self.schema),
            quote_ident(&format!("data_{}", self.table))
        )
    }

    /// `schema.data_table`, for messages.
    pub fn display(&self) -> String {
        format!("{}.data_{}", self.schema, self.table)
    }
}

/// Quotes an identifier for SQL (`"` doubled).
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn pg(what: &str, e: sqlx::Error) -> Error {
    Error::provider(PROVIDER, format!("{what}: {e}"), e)
}

/// The statements SQLAlchemy emits for LlamaIndex's key-value model.
pub(crate) fn create_statements(name: &KvTableName) -> Vec<String> {
    let q = name.qualified();
    let data = format!("data_{}", name.table);
    let value = if name.use_jsonb { "JSONB" } else { "JSON" };
    vec![
        format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(&name.schema)),
        format!(
            "CREATE TABLE IF NOT EXISTS {q} (id SERIAL NOT NULL, key VARCHAR NOT NULL, \
             namespace VARCHAR NOT NULL, value {value}, PRIMARY KEY (id), \
             CONSTRAINT {} UNIQUE (key, namespace))",
            quote_ident(&format!("{data}:unique_key_namespace"))
        ),
        format!(
            "CREATE INDEX IF NOT EXISTS {} ON {q} (key, namespace)",
            quote_ident(&format!("{data}:idx_key_namespace"))
        ),
    ]
}

/// Creates the table (and its schema) if missing, in `conn`'s transaction if any.
pub(crate) async fn create_table(conn: &mut PgConnection, name: &KvTableName) -> Result<()> {
    create_if_missing(
        conn,
        &name.qualified(),
        &name.display(),
        create_statements(name),
    )
    .await
}

/// Runs `statements` unless the table `qualified` exists. An existing table
/// is left alone: even `CREATE INDEX IF NOT EXISTS` takes a lock that waits
/// for an open writer, and readers never wait. `CREATE ... IF NOT EXISTS`
/// races between machines creating the same schema or table at once, so
/// creators take turns, each checking again.
pub(crate) async fn create_if_missing(
    conn: &mut PgConnection,
    qualified: &str,
    display: &str,
    statements: Vec<String>,
) -> Result<()> {
    if table_exists(conn, qualified, display).await? {
        return Ok(());
    }
    let what = format!("creating {display}");
    in_transaction(conn, &what.clone(), move |conn| {
        Box::pin(async move {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(DDL_LOCK)
                .execute(&mut *conn)
                .await
                .map_err(|e| pg(&what, e))?;
            for ddl in statements {
                sqlx::query(&ddl)
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| pg(&what, e))?;
            }
            Ok(())
        })
    })
    .await
}

/// Whether the table `qualified` exists.
pub(crate) async fn table_exists(
    conn: &mut PgConnection,
    qualified: &str,
    display: &str,
) -> Result<bool> {
    sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
        .bind(qualified)
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| pg(&format!("looking up {display}"), e))
}

/// An error unless the table exists.
pub(crate) async fn require_table(conn: &mut PgConnection, name: &KvTableName) -> Result<()> {
    if table_exists(conn, &name.qualified(), &name.display()).await? {
        Ok(())
    } else {
        Err(Error::NotFound(format!(
            "table {} does not exist",
            name.display()
        )))
    }
}

/// The advisory lock key that serializes ragloom's table creation.
pub(crate) const DDL_LOCK: i64 = 0x7261_676c_6f6f_6d01;

/// A key-value table of LlamaIndex's `PostgresKVStore` layout, read and
/// written through a [`PgSession`]: inside its transaction when it has one,
/// else each [`KvBackend::write`] in a transaction of its own. Values are
/// written as Python's `json.dumps` writes them; a collection is read in the
/// order its keys were first written (Python reads it in no set order).
#[derive(Clone)]
pub struct PostgresKv {
    session: PgSession,
    name: Arc<KvTableName>,
    qualified: Arc<str>,
}

impl fmt::Debug for PostgresKv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresKv")
            .field("table", &self.name.display())
            .field("session", &self.session)
            .finish()
    }
}

impl PostgresKv {
    /// The table `name` through `session` (the table must exist: see
    /// [`crate::PostgresStore`], which creates its tables).
    pub fn new(session: PgSession, name: KvTableName) -> Self {
        Self {
            qualified: name.qualified().into(),
            name: Arc::new(name),
            session,
        }
    }

    /// The table `name` on the server at `url` if it exists (nothing is
    /// created: for readers, who may lack the right to create).
    pub async fn open_existing(url: &str, name: KvTableName) -> Result<Option<Self>> {
        let options = ragloom_common_postgres::connect_options(url)?;
        let session = PgSession::connect(&options).await?;
        let (q, d) = (name.qualified(), name.display());
        let exists = session
            .run(move |conn| Box::pin(async move { table_exists(conn, &q, &d).await }))
            .await?;
        Ok(exists.then(|| Self::new(session, name)))
    }

    /// The table `name` on the server at `url`, on a connection of its own
    /// without a transaction (each write is one); created if missing.
    pub async fn connect(url: &str, name: KvTableName) -> Result<Self> {
        let options = ragloom_common_postgres::connect_options(url)?;
        let session = PgSession::connect(&options).await?;
        let t = name.clone();
        session
            .run(move |conn| Box::pin(async move { create_table(conn, &t).await }))
            .await?;
        Ok(Self::new(session, name))
    }

    /// The table.
    pub fn name(&self) -> &KvTableName {
        &self.name
    }

    fn table(&self) -> PgTable<'_> {
        PgTable { kv: self }
    }
}

impl KvBackend for PostgresKv {
    /// One consistent view: outside a transaction, a read-only snapshot
    /// (repeatable read) for the length of `f`.
    fn read<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        // One read or write at a time on the session, so that a sequence's
        // statements share its (sub-)transaction alone.
        let _turn = self.session.turn();
        if self.session.is_transactional() {
            return f(&mut self.table());
        }
        let sub = Sub::begin(&self.session, Some(SNAPSHOT))?;
        let out = f(&mut self.table());
        let ended = sub.end(out.is_ok());
        // `f`'s own error first: it says what went wrong.
        out.and_then(|o| ended.map(|()| o))
    }

    /// All of `f` or nothing: a transaction of its own, or inside the
    /// session's transaction a savepoint, so a failed write leaves the rest
    /// of the transaction usable, as in the embedded store.
    fn write<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        let _turn = self.session.turn();
        let sub = Sub::begin(&self.session, None)?;
        let out = f(&mut self.table());
        let ended = sub.end(out.is_ok());
        out.and_then(|o| ended.map(|()| o))
    }
}

const SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// An open sub-transaction, undone if dropped unended (a panic in `f`).
struct Sub<'a> {
    session: &'a PgSession,
    open: bool,
}

impl<'a> Sub<'a> {
    fn begin(session: &'a PgSession, statement: Option<&'static str>) -> Result<Self> {
        session.begin_sub_blocking(statement)?;
        Ok(Self {
            session,
            open: true,
        })
    }

    fn end(mut self, commit: bool) -> Result<()> {
        self.open = false;
        self.session.end_sub_blocking(commit)
    }
}

impl Drop for Sub<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.session.end_sub_blocking(false);
        }
    }
}

/// The table during one read or write.
struct PgTable<'a> {
    kv: &'a PostgresKv,
}

impl PgTable<'_> {
    fn run<R: Send + 'static>(
        &self,
        what: String,
        f: impl for<'c> FnOnce(&'c mut PgConnection) -> futures::future::BoxFuture<'c, sqlx::Result<R>>
        + Send
        + 'static,
    ) -> Result<R> {
        self.kv.session.run_blocking(move |conn| {
            Box::pin(async move { f(conn).await.map_err(|e| pg(&what, e)) })
        })
    }

    fn decode(&self, collection: &str, key: &str, text: &str) -> Result<KvValue> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(Error::InvalidInput(format!(
                "{}: collection `{collection}` key `{key}` is not a JSON object",
                self.kv.name.display()
            ))),
        }
    }
}

impl KvTable for PgTable<'_> {
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>> {
        let sql = format!(
            "SELECT value::text FROM {} WHERE key = $1 AND namespace = $2",
            self.kv.qualified
        );
        let (k, c) = (key.to_owned(), collection.to_owned());
        let text: Option<Option<String>> =
            self.run(format!("reading {}", self.kv.name.display()), move |conn| {
                Box::pin(async move {
                    sqlx::query_scalar(&sql)
                        .bind(k)
                        .bind(c)
                        .fetch_optional(&mut *conn)
                        .await
                })
            })?;
        match text.flatten() {
            Some(t) => self
                .decode(collection, key, &t)
                .map(|v| Some(Cow::Owned(v))),
            None => Ok(None),
        }
    }

    fn contains(&mut self, key: &str, collection: &str) -> Result<bool> {
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE key = $1 AND namespace = $2)",
            self.kv.qualified
        );
        let (k, c) = (key.to_owned(), collection.to_owned());
        self.run(format!("reading {}", self.kv.name.display()), move |conn| {
            Box::pin(async move {
                sqlx::query_scalar(&sql)
                    .bind(k)
                    .bind(c)
                    .fetch_one(&mut *conn)
                    .await
            })
        })
    }

    fn put(&mut self, key: &str, val: KvValue, collection: &str) -> Result<()> {
        let text = to_python_json_string(&Value::Object(val))?;
        let cast = if self.kv.name.use_jsonb {
            "jsonb"
        } else {
            "json"
        };
        // An update keeps the row (its `id`, and so the key's place in order).
        let sql = format!(
            "INSERT INTO {} (key, namespace, value) VALUES ($1, $2, $3::{cast}) \
             ON CONFLICT (key, namespace) DO UPDATE SET value = excluded.value",
            self.kv.qualified
        );
        let (k, c) = (key.to_owned(), collection.to_owned());
        self.run(format!("writing {}", self.kv.name.display()), move |conn| {
            Box::pin(async move {
                sqlx::query(&sql)
                    .bind(k)
                    .bind(c)
                    .bind(text)
                    .execute(&mut *conn)
                    .await
                    .map(|_| ())
            })
        })
    }

    fn delete(&mut self, key: &str, collection: &str) -> Result<bool> {
        let sql = format!(
            "DELETE FROM {} WHERE key = $1 AND namespace = $2",
            self.kv.qualified
        );
        let (k, c) = (key.to_owned(), collection.to_owned());
        self.run(
            format!("deleting from {}", self.kv.name.display()),
            move |conn| {
                Box::pin(async move {
                    sqlx::query(&sql)
                        .bind(k)
                        .bind(c)
                        .execute(&mut *conn)
                        .await
                        .map(|r| r.rows_affected() > 0)
                })
            },
        )
    }

    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>> {
        let sql = format!(
            "SELECT key, value::text FROM {} WHERE namespace = $1 ORDER BY id",
            self.kv.qualified
        );
        let c = collection.to_owned();
        let rows: Vec<(String, Option<String>)> =
            self.run(format!("reading {}", self.kv.name.display()), move |conn| {
                Box::pin(async move {
                    let rows = sqlx::query(&sql).bind(c).fetch_all(&mut *conn).await?;
                    rows.iter()
                        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                        .collect()
                })
            })?;
        let mut out = KvCollection::new();
        for (key, text) in rows {
            let value = match text {
                Some(t) => self.decode(collection, &key, &t)?,
                None => KvValue::new(),
            };
            out.insert(key, value);
        }
        Ok(Cow::Owned(out))
    }
}

/// Runs `f` inside a transaction of its own on `conn` (a savepoint when
/// `conn` is already in one).
pub(crate) async fn in_transaction<R>(
    conn: &mut PgConnection,
    what: &str,
    f: impl for<'c> FnOnce(&'c mut PgConnection) -> futures::future::BoxFuture<'c, Result<R>>,
) -> Result<R> {
    let mut tx = conn.begin().await.map_err(|e| pg(what, e))?;
    let out = f(&mut tx).await?;
    tx.commit().await.map_err(|e| pg(what, e))?;
    Ok(out)
}
