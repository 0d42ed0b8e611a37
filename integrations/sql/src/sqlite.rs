//! SQLite under `SQLDatabase`: the connection, the authorizer that keeps a
//! statement to the usable tables and to reading, and the schema as SQLAlchemy reflects it.

use crate::database::SqlResult;
use crate::limits::{SqlLimits, StatementError};
use crate::sqlite_types::sqlalchemy_type;
use crate::value::SqlValue;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::py_repr;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

const PROVIDER: &str = "sqlite";

/// The tables a statement may touch, compared as SQLite compares names
/// (ASCII case folded).
#[derive(Clone, Debug, Default)]
pub(crate) struct TableFilter {
    allowed: BTreeSet<String>,
    /// Every table and view of the database: a name read that is none of
    /// these is a `WITH` query's, which SQLite reports as a read too.
    known: BTreeSet<String>,
}

impl TableFilter {
    pub(crate) fn new(
        allowed: impl IntoIterator<Item = String>,
        known: impl IntoIterator<Item = String>,
    ) -> Self {
        let fold = |names: &mut dyn Iterator<Item = String>| {
            names
                .map(|t| t.to_ascii_lowercase())
                .collect::<BTreeSet<_>>()
        };
        Self {
            allowed: fold(&mut allowed.into_iter()),
            known: fold(&mut known.into_iter()),
        }
    }

    fn allows(&self, table: &str) -> bool {
        self.allowed.contains(&table.to_ascii_lowercase())
    }

    /// Whether `table` is one of the database's own (SQLite's included).
    fn is_stored(&self, table: &str) -> bool {
        let table = table.to_ascii_lowercase();
        self.known.contains(&table) || table.starts_with("sqlite_")
    }
}

pub(crate) struct Sqlite {
    path: PathBuf,
    conn: Mutex<Connection>,
    writable: bool,
    limits: SqlLimits,
    max_string_length: usize,
    allowed: Mutex<Arc<TableFilter>>,
}

fn sql_error(what: &str, path: &Path, e: rusqlite::Error) -> Error {
    Error::provider(PROVIDER, format!("{what} ({})", path.display()), e)
}

fn poisoned<T>(_: PoisonError<T>) -> Error {
    Error::InvalidInput("the database connection was poisoned by a panic".into())
}

impl Sqlite {
    pub(crate) fn open(
        path: &Path,
        writable: bool,
        limits: SqlLimits,
        max_string_length: usize,
    ) -> Result<Self> {
        // Never created: a mistyped path is an error, not an empty database.
        let flags = if writable {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| sql_error("opening the database", path, e))?;
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            limits.max_value_bytes.max(1),
        )
        .map_err(|e| sql_error("setting the value size limit", path, e))?;
        // Reading the schema now proves the file is a database.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(|e| sql_error("reading the database", path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
            writable,
            limits,
            max_string_length,
            allowed: Mutex::new(Arc::default()),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn limits(&self) -> &SqlLimits {
        &self.limits
    }

    pub(crate) fn is_writable(&self) -> bool {
        self.writable
    }

    pub(crate) fn allow_tables(&self, filter: TableFilter) -> Result<()> {
        *self.allowed.lock().map_err(poisoned)? = Arc::new(filter);
        Ok(())
    }

    /// The tables (and views, with `views`), SQLite's own left out.
    pub(crate) fn table_names(&self, views: bool) -> Result<BTreeSet<String>> {
        let conn = self.conn.lock().map_err(poisoned)?;
        let kinds = if views {
            "('table', 'view')"
        } else {
            "('table')"
        };
        let sql = format!(
            "SELECT name FROM sqlite_master WHERE type IN {kinds} \
             AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
        );
        let err = |e| sql_error("listing tables", &self.path, e);
        let mut stmt = conn.prepare(&sql).map_err(err)?;
        let names = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(err)?
            .collect::<std::result::Result<BTreeSet<_>, _>>()
            .map_err(err)?;
        Ok(names)
    }

    /// Runs `f` with the connection on the blocking pool.
    pub(crate) async fn run<T: Send + 'static>(
        self: Arc<Self>,
        f: impl FnOnce(&Session<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        tokio::task::spawn_blocking(move || {
            let conn = self.conn.lock().map_err(poisoned)?;
            f(&Session {
                db: &self,
                conn: &conn,
            })
        })
        .await
        .map_err(|e| Error::failed("the database task failed", e))?
    }
}

/// One foreign key, its columns in order.
struct ForeignKey {
    id: i64,
    referred: String,
    from: Vec<String>,
    to: Vec<Option<String>>,
}

/// The connection, held.
pub(crate) struct Session<'a> {
    db: &'a Sqlite,
    conn: &'a Connection,
}

impl Session<'_> {
    pub(crate) fn table_info(&self, table: &str) -> Result<String> {
        let err = |e| sql_error(&format!("describing table `{table}`"), &self.db.path, e);
        let mut stmt = self
            .conn
            .prepare("SELECT name, type, hidden FROM pragma_table_xinfo(?1)")
            .map_err(err)?;
        let columns = stmt
            .query_map([table], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    row.get::<_, i64>(2)?,
                ))
            })
            .map_err(err)?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err)?;
        let columns: Vec<String> = columns
            .into_iter()
            // 1: a virtual table's hidden column; 2 and 3: generated ones, shown.
            .filter(|(_, _, hidden)| *hidden != 1)
            .map(|(name, decl, hidden)| format!("{name} ({})", sqlalchemy_type(&decl, hidden >= 2)))
            .collect();
        let foreign_keys = self.foreign_keys(table)?;
        let foreign_keys = if foreign_keys.is_empty() {
            String::new()
        } else {
            format!(" and foreign keys: {}", foreign_keys.join(", "))
        };
        Ok(format!(
            "Table '{table}' has columns: {}, {foreign_keys}.",
            columns.join(", ")
        ))
    }

    /// The table's `CREATE TABLE` statement as SQLite stores it.
    pub(crate) fn table_definition(&self, table: &str) -> Result<String> {
        let err = |e| {
            sql_error(
                &format!("reading the definition of `{table}`"),
                &self.db.path,
                e,
            )
        };
        self.conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1",
                [table],
                |row| row.get::<_, Option<String>>(0),
            )
            .map(Option::unwrap_or_default)
            .map_err(err)
    }

    /// `['a', 'b'] -> other.['x', 'y']` for each foreign key, in the order
    /// SQLite lists them (SQLAlchemy's).
    fn foreign_keys(&self, table: &str) -> Result<Vec<String>> {
        let err = |e| sql_error(&format!("reading the keys of `{table}`"), &self.db.path, e);
        let mut stmt = self
            .conn
            .prepare("SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1)")
            .map_err(err)?;
        let rows = stmt
            .query_map([table], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(err)?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err)?;
        let mut keys: Vec<ForeignKey> = Vec::new();
        for (id, referred, from, to) in rows {
            match keys.iter_mut().find(|k| k.id == id) {
                Some(k) => {
                    k.from.push(from);
                    k.to.push(to);
                }
                None => keys.push(ForeignKey {
                    id,
                    referred,
                    from: vec![from],
                    to: vec![to],
                }),
            }
        }
        keys.into_iter()
            .map(|key| {
                // `REFERENCES t` without columns means t's primary key.
                let to: Vec<String> = if key.to.iter().all(Option::is_some) {
                    key.to.into_iter().flatten().collect()
                } else {
                    self.primary_key(&key.referred)?
                };
                Ok(format!(
                    "{} -> {}.{}",
                    str_list_repr(&key.from),
                    key.referred,
                    str_list_repr(&to)
                ))
            })
            .collect()
    }

    fn primary_key(&self, table: &str) -> Result<Vec<String>> {
        let err = |e| {
            sql_error(
                &format!("reading the primary key of `{table}`"),
                &self.db.path,
                e,
            )
        };
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")
            .map_err(err)?;
        stmt.query_map([table], |row| row.get::<_, String>(0))
            .map_err(err)?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err)
    }

    /// One statement, with the authorizer and the time limit in force.
    pub(crate) fn run_statement(
        &self,
        statement: &str,
    ) -> std::result::Result<SqlResult, StatementError> {
        let allowed = self
            .db
            .allowed
            .lock()
            .map(|a| Arc::clone(&a))
            .unwrap_or_default();
        let denied: Arc<Mutex<Option<String>>> = Arc::default();
        self.conn.authorizer(Some(authorizer(
            allowed,
            self.db.writable,
            Arc::clone(&denied),
        )));
        let deadline = Instant::now() + self.db.limits.statement_timeout;
        // Checked every 1,000 virtual-machine steps: microseconds apart.
        self.conn
            .progress_handler(1000, Some(move || Instant::now() > deadline));
        let out = self.execute(statement, &denied);
        self.conn.progress_handler(0, None::<fn() -> bool>);
        self.conn
            .authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
        out
    }

    fn execute(
        &self,
        statement: &str,
        denied: &Mutex<Option<String>>,
    ) -> std::result::Result<SqlResult, StatementError> {
        let refused = |reason: String| StatementError::Refused {
            statement: statement.to_owned(),
            reason,
        };
        let failed = |e: rusqlite::Error| {
            if let Some(reason) = denied.lock().ok().and_then(|mut d| d.take()) {
                return refused(reason);
            }
            match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::OperationInterrupted =>
                {
                    StatementError::TimedOut {
                        statement: statement.to_owned(),
                        after: self.db.limits.statement_timeout,
                    }
                }
                // SQLite's own message, as Python's driver gives it (not
                // rusqlite's, which appends the statement and an offset).
                rusqlite::Error::SqliteFailure(_, Some(message))
                | rusqlite::Error::SqlInputError { msg: message, .. } => StatementError::Invalid {
                    statement: statement.to_owned(),
                    message,
                },
                other => StatementError::Invalid {
                    statement: statement.to_owned(),
                    message: other.to_string(),
                },
            }
        };
        if is_blank_sql(statement) {
            return Err(refused("it holds no SQL statement".into()));
        }
        let mut stmt = match self.conn.prepare(statement) {
            Ok(s) => s,
            Err(rusqlite::Error::MultipleStatement) => {
                return Err(refused(
                    "it holds more than one statement; send one statement".into(),
                ));
            }
            Err(e) => return Err(failed(e)),
        };
        if !self.db.writable && !stmt.readonly() {
            return Err(refused(
                "only statements that read may run: the database is open read-only".into(),
            ));
        }
        let col_keys: Vec<String> = stmt
            .column_names()
            .iter()
            .map(|c| (*c).to_owned())
            .collect();
        if col_keys.is_empty() {
            stmt.raw_execute().map_err(failed)?;
            return Ok(SqlResult::new(Vec::new(), Vec::new(), false));
        }
        let limits = &self.db.limits;
        let mut rows = stmt.raw_query();
        let mut kept: Vec<Vec<SqlValue>> = Vec::new();
        // The length of `[` + the tuples joined by `, ` + `]`, as the rows arrive.
        let mut chars = 2;
        let mut truncated = false;
        while let Some(row) = rows.next().map_err(failed)? {
            let mut values = Vec::with_capacity(col_keys.len());
            for i in 0..col_keys.len() {
                let value = row.get_ref(i).map_err(failed)?;
                values.push(sql_value(value).truncated(self.db.max_string_length));
            }
            let row_chars = crate::value::rows_repr(std::slice::from_ref(&values))
                .chars()
                .count();
            if kept.len() == limits.max_rows || chars + row_chars > limits.max_result_chars {
                truncated = true;
                break;
            }
            chars += row_chars;
            kept.push(values);
        }
        Ok(SqlResult::new(col_keys, kept, truncated))
    }
}

/// Whether `sql` is only white space, `;` and comments.
fn is_blank_sql(mut sql: &str) -> bool {
    loop {
        sql = sql.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(rest) = sql.strip_prefix("--") {
            sql = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = sql.strip_prefix("/*") {
            sql = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql.is_empty();
        }
    }
}

/// Allows reading the usable tables and calling functions; with writes on,
/// also changing the usable tables. Everything else — another table,
/// `ATTACH`, a `PRAGMA`, a schema change — is denied, and why is kept for the error.
fn authorizer(
    allowed: Arc<TableFilter>,
    writable: bool,
    denied: Arc<Mutex<Option<String>>>,
) -> impl FnMut(AuthContext<'_>) -> Authorization + Send + 'static {
    move |ctx: AuthContext<'_>| {
        let verdict: std::result::Result<(), String> = match ctx.action {
            AuthAction::Select | AuthAction::Recursive => Ok(()),
            AuthAction::Function { function_name } => {
                if function_name.eq_ignore_ascii_case("load_extension") {
                    Err("it calls load_extension".into())
                } else {
                    Ok(())
                }
            }
            AuthAction::Read { table_name, .. } => {
                let via_view = ctx.accessor.is_some_and(|v| allowed.allows(v));
                if allowed.allows(table_name) || via_view || !allowed.is_stored(table_name) {
                    Ok(())
                } else {
                    Err(format!(
                        "it reads table `{table_name}`, which is not one of the usable tables"
                    ))
                }
            }
            AuthAction::Insert { table_name }
            | AuthAction::Update { table_name, .. }
            | AuthAction::Delete { table_name }
                if table_name.to_ascii_lowercase().starts_with("sqlite_") =>
            {
                Err(SCHEMA_CHANGE.to_owned())
            }
            AuthAction::Insert { table_name }
            | AuthAction::Update { table_name, .. }
            | AuthAction::Delete { table_name }
                if writable =>
            {
                if allowed.allows(table_name) {
                    Ok(())
                } else {
                    Err(format!(
                        "it changes table `{table_name}`, which is not one of the usable tables"
                    ))
                }
            }
            AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } if writable => Ok(()),
            other => Err(format!(
                "{} is not allowed here (only reading the usable tables{})",
                action_name(&other),
                if writable {
                    " and changing their rows"
                } else {
                    ""
                }
            )),
        };
        match verdict {
            Ok(()) => Authorization::Allow,
            Err(reason) => {
                if let Ok(mut d) = denied.lock() {
                    // The first reason, unless a more telling one follows
                    // SQLite's own write to its schema table.
                    if d.as_deref().is_none_or(|r| r == SCHEMA_CHANGE) {
                        *d = Some(reason);
                    }
                }
                Authorization::Deny
            }
        }
    }
}

/// Why a write to SQLite's schema table is refused.
const SCHEMA_CHANGE: &str = "it changes the database's schema, which is not allowed here";

fn action_name(action: &AuthAction<'_>) -> String {
    let debug = format!("{action:?}");
    let name = debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or("this statement");
    // `DropTable` → `DROP TABLE`, as the model wrote it.
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn sql_value(value: ValueRef<'_>) -> SqlValue {
    match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
    }
}

/// Python's `repr` of a list of strings: `['a', 'b']`.
fn str_list_repr(items: &[String]) -> String {
    py_repr(&Value::Array(
        items.iter().map(|s| Value::String(s.clone())).collect(),
    ))
}

/// Creates (or opens) the SQLite file at `path` and runs `script`, every
/// statement of it, in one transaction: for building a database from
/// trusted SQL (a schema, sample rows), never for a model's SQL.
pub fn run_sqlite_script(path: impl AsRef<Path>, script: &str) -> Result<()> {
    let path = path.as_ref();
    let mut conn =
        Connection::open(path).map_err(|e| sql_error("opening the database", path, e))?;
    let tx = conn
        .transaction()
        .map_err(|e| sql_error("starting a transaction", path, e))?;
    tx.execute_batch(script)
        .map_err(|e| sql_error("running the script", path, e))?;
    tx.commit()
        .map_err(|e| sql_error("committing the script", path, e))
}
