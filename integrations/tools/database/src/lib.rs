//! `DatabaseToolSpec`: lets a model explore and query a SQLite database
//! (`list_tables`, `describe_tables`, `load_data(query)`), read-only unless asked otherwise.
//!
//! LlamaIndex's `DatabaseToolSpec` (package `llama-index-tools-database`)
//! over SQLAlchemy; here over SQLite with `rusqlite` (SQLite compiled in). By
//! default the file is opened read-only AND every statement must be a single
//! `SELECT` (or `WITH ... SELECT`) that SQLite itself reports as read-only,
//! so a model cannot change data even through a crafted query.

#![warn(missing_docs)]

use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::{Document, py_repr};
use ragloom_core::tools::{Tool, ToolMetadata, ToolOutput, ToolSpec};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PROVIDER: &str = "sqlite";

/// Description of `load_data`, as LlamaIndex's docstring gives it.
pub const LOAD_DATA_DESCRIPTION: &str = "load_data(query: str) -> List[Document]\nQuery and load data from the Database, returning a list of Documents.\n\nArgs:\n    query (str): an SQL query to filter tables and rows.\n\nReturns:\n    List[Document]: A list of Document objects.";
/// Description of `describe_tables`.
pub const DESCRIBE_TABLES_DESCRIPTION: &str = "describe_tables(tables: Optional[List[str]] = None) -> str\nDescribes the specified tables in the database.\n\nArgs:\n    tables (List[str]): A list of table names to retrieve details about";
/// Description of `list_tables`.
pub const LIST_TABLES_DESCRIPTION: &str = "list_tables() -> List[str]\nReturns a list of available tables in the database.\nTo retrieve details about the columns of specific tables, use\nthe describe_tables endpoint.";

/// What one call may cost. A model can write a query that never ends (a
/// recursive `WITH`), returns millions of rows or builds a gigabyte blob;
/// these bound each, and the tool stays usable after any of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseLimits {
    /// A statement still running after this is stopped (SQLite's progress
    /// handler), with an error saying so. Default 10 s.
    pub statement_timeout: Duration,
    /// Rows one query may return; more is an error asking for a narrower
    /// query (`LIMIT`, `WHERE`). Default 1,000.
    pub max_rows: usize,
    /// The longest string or blob a statement may make, in bytes (SQLite's
    /// `SQLITE_LIMIT_LENGTH`, on this connection only). Default 1,000,000.
    pub max_value_bytes: i32,
}

impl Default for DatabaseLimits {
    fn default() -> Self {
        Self {
            statement_timeout: Duration::from_secs(10),
            max_rows: 1000,
            max_value_bytes: 1_000_000,
        }
    }
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
    read_only: bool,
    limits: DatabaseLimits,
}

/// Tools over one SQLite database: `load_data`, `describe_tables`, `list_tables`.
///
/// Cloning shares the connection. The methods are also usable directly
/// (`load_data` returns documents as LlamaIndex's `DatabaseReader` does: one
/// per row, text `col: value, col: value`).
#[derive(Clone)]
pub struct DatabaseToolSpec {
    inner: Arc<Inner>,
}

impl fmt::Debug for DatabaseToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseToolSpec")
            .field("path", &self.inner.path)
            .field("read_only", &self.inner.read_only)
            .finish_non_exhaustive()
    }
}

fn sql_error(what: &str, path: &Path, e: rusqlite::Error) -> Error {
    Error::provider(PROVIDER, format!("{what} ({}): {e}", path.display()), e)
}

impl DatabaseToolSpec {
    /// Opens the SQLite file at `path` read-only; only `SELECT` queries run.
    /// A missing file is an error (it is never created).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sql_error("opening the database read-only", &path, e))?;
        Self::from_parts(path, conn, true)
    }

    /// Opens (or creates) `path` read-write and lets `load_data` run any
    /// single statement, writes included. Only for trusted models and data.
    pub fn open_writable(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let conn =
            Connection::open(&path).map_err(|e| sql_error("opening the database", &path, e))?;
        Self::from_parts(path, conn, false)
    }

    fn from_parts(path: PathBuf, conn: Connection, read_only: bool) -> Result<Self> {
        let limits = DatabaseLimits::default();
        apply_limits(&path, &conn, &limits)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                conn: Mutex::new(conn),
                read_only,
                limits,
            }),
        })
    }

    /// The same database with other [`DatabaseLimits`].
    pub fn with_limits(self, limits: DatabaseLimits) -> Result<Self> {
        let inner = Arc::try_unwrap(self.inner).map_err(|_| {
            Error::InvalidInput("set the limits before the tool spec is cloned or shared".into())
        })?;
        let conn = inner.conn.into_inner().map_err(|_| {
            Error::InvalidInput("the database connection was poisoned by a panic".into())
        })?;
        apply_limits(&inner.path, &conn, &limits)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: inner.path,
                conn: Mutex::new(conn),
                read_only: inner.read_only,
                limits,
            }),
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> &DatabaseLimits {
        &self.inner.limits
    }

    /// Whether only read-only `SELECT` statements are accepted.
    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    async fn with_conn<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner, &Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let conn = inner.conn.lock().map_err(|_| {
                Error::InvalidInput("the database connection was poisoned by a panic".into())
            })?;
            f(&inner, &conn)
        })
        .await
        .map_err(|e| Error::provider(PROVIDER, "the database task failed", e))?
    }

    /// Runs `query` and returns one document per row, its text
    /// `column: value, ...` (values as Python's `str` prints them).
    pub async fn load_data(&self, query: &str) -> Result<Vec<Document>> {
        let query = query.to_owned();
        self.with_conn(move |inner, conn| run_query(inner, conn, &query))
            .await
    }

    /// The tables' `CREATE TABLE` statements, separated by blank lines (all
    /// tables when `tables` is `None`); an unknown table is an error naming it.
    pub async fn describe_tables(&self, tables: Option<Vec<String>>) -> Result<String> {
        self.with_conn(move |inner, conn| {
            let all = table_sql(inner, conn)?;
            let wanted = match tables {
                Some(names) => names,
                None => all.iter().map(|(n, _)| n.clone()).collect(),
            };
            let mut parts = Vec::new();
            for name in &wanted {
                match all.iter().find(|(n, _)| n == name) {
                    Some((_, sql)) => parts.push(sql.clone()),
                    None => {
                        let known: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
                        return Err(Error::NotFound(format!(
                            "table `{name}` is not in {}; its tables are: {}",
                            inner.path.display(),
                            known.join(", ")
                        )));
                    }
                }
            }
            Ok(parts.join("\n\n"))
        })
        .await
    }

    /// The names of the database's tables (SQLite's internal tables excluded), sorted.
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        self.with_conn(|inner, conn| {
            Ok(table_sql(inner, conn)?
                .into_iter()
                .map(|(n, _)| n)
                .collect())
        })
        .await
    }
}

fn table_sql(inner: &Inner, conn: &Connection) -> Result<Vec<(String, String)>> {
    let err = |e| sql_error("listing tables", &inner.path, e);
    let mut stmt = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })
        .map_err(err)?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(err)
}

/// Skips leading whitespace and SQL comments.
fn strip_leading_comments(mut sql: &str) -> &str {
    loop {
        sql = sql.trim_start();
        if let Some(rest) = sql.strip_prefix("--") {
            sql = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = sql.strip_prefix("/*") {
            sql = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql;
        }
    }
}

fn apply_limits(path: &Path, conn: &Connection, limits: &DatabaseLimits) -> Result<()> {
    conn.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
        limits.max_value_bytes.max(1),
    )
    .map_err(|e| sql_error("setting the value size limit", path, e))?;
    Ok(())
}

/// Runs `query` with the statement time limit in force, and lifts it after.
fn run_query(inner: &Inner, conn: &Connection, query: &str) -> Result<Vec<Document>> {
    let deadline = Instant::now() + inner.limits.statement_timeout;
    // Checked every 1,000 virtual-machine steps: microseconds apart.
    conn.progress_handler(1000, Some(move || Instant::now() > deadline));
    let out = run_query_unbounded(inner, conn, query);
    conn.progress_handler(0, None::<fn() -> bool>);
    out.map_err(|e| match e {
        Error::Provider { ref message, .. } if message.contains("interrupted") => {
            Error::InvalidInput(format!(
                "the query ran longer than {:?} and was stopped; make it cheaper (LIMIT, WHERE, no unbounded recursion)",
                inner.limits.statement_timeout
            ))
        }
        other => other,
    })
}

fn run_query_unbounded(inner: &Inner, conn: &Connection, query: &str) -> Result<Vec<Document>> {
    if inner.read_only {
        let head = strip_leading_comments(query);
        let keyword: String = head
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect::<String>()
            .to_ascii_uppercase();
        if keyword != "SELECT" && keyword != "WITH" {
            return Err(Error::InvalidInput(format!(
                "only SELECT queries are allowed on {} (it is opened read-only); got a statement starting with `{keyword}`",
                inner.path.display()
            )));
        }
    }
    let err = |e| sql_error("running the query", &inner.path, e);
    let mut stmt = conn.prepare(query).map_err(err)?;
    // SQLite's own verdict catches `WITH ... DELETE` and the like.
    if inner.read_only && !stmt.readonly() {
        return Err(Error::InvalidInput(format!(
            "only read-only queries are allowed on {}",
            inner.path.display()
        )));
    }
    let columns: Vec<String> = stmt
        .column_names()
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    let mut rows = stmt.query([]).map_err(err)?;
    let mut docs = Vec::new();
    while let Some(row) = rows.next().map_err(err)? {
        if docs.len() == inner.limits.max_rows {
            return Err(Error::InvalidInput(format!(
                "the query returned more than {} rows; narrow it (LIMIT, WHERE, an aggregate)",
                inner.limits.max_rows
            )));
        }
        let mut parts = Vec::with_capacity(columns.len());
        for (i, col) in columns.iter().enumerate() {
            let value = row.get_ref(i).map_err(err)?;
            parts.push(format!("{col}: {}", python_str(value)));
        }
        docs.push(Document::document(parts.join(", ")));
    }
    Ok(docs)
}

/// A SQLite value as Python's `str` prints what SQLAlchemy returns for it.
fn python_str(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "None".to_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => py_repr(&json!(f)),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Blob(b) => {
            let mut out = String::from("b'");
            for byte in b {
                match byte {
                    b'\\' => out.push_str("\\\\"),
                    b'\'' => out.push_str("\\'"),
                    0x20..=0x7e => out.push(char::from(*byte)),
                    _ => out.push_str(&format!("\\x{byte:02x}")),
                }
            }
            out.push('\'');
            out
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Function {
    LoadData,
    DescribeTables,
    ListTables,
}

/// One of the spec's tools.
#[derive(Debug)]
struct DatabaseTool {
    spec: DatabaseToolSpec,
    function: Function,
    metadata: ToolMetadata,
}

impl DatabaseTool {
    async fn run(&self, input: &Value) -> Result<ToolOutput> {
        let name = self.metadata.name.clone();
        let arg = |key: &str| -> Option<Value> {
            match input {
                Value::Object(map) => map.get(key).cloned(),
                Value::String(s) => Some(Value::String(s.clone())),
                _ => None,
            }
        };
        match self.function {
            Function::LoadData => {
                let Some(Value::String(query)) = arg("query") else {
                    return Err(Error::InvalidInput(
                        "missing required field `query` (a string holding one SQL SELECT statement)".into(),
                    ));
                };
                let docs = self.spec.load_data(&query).await?;
                let content = docs
                    .iter()
                    .map(|d| d.get_text())
                    .collect::<Vec<_>>()
                    .join("\n");
                let raw = serde_json::to_value(&docs)?;
                Ok(ToolOutput::new(name, content, input.clone(), raw))
            }
            Function::DescribeTables => {
                let tables = match arg("tables") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(serde_json::from_value::<Vec<String>>(v).map_err(|e| {
                        Error::invalid("field `tables` must be a list of table names", e)
                    })?),
                };
                let text = self.spec.describe_tables(tables).await?;
                Ok(ToolOutput::new(
                    name,
                    text.clone(),
                    input.clone(),
                    Value::String(text),
                ))
            }
            Function::ListTables => {
                let tables = self.spec.list_tables().await?;
                let raw = json!(tables);
                Ok(ToolOutput::new(name, py_repr(&raw), input.clone(), raw))
            }
        }
    }
}

#[async_trait]
impl Tool for DatabaseTool {
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    async fn call(&self, input: Value) -> Result<ToolOutput> {
        match self.run(&input).await {
            Ok(out) => Ok(out),
            // Bad SQL, a refused write, an unknown table: the model can fix these.
            Err(e) => Ok(ToolOutput::error(self.metadata.name.clone(), input, e)),
        }
    }
}

impl ToolSpec for DatabaseToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        vec![
            "load_data".into(),
            "describe_tables".into(),
            "list_tables".into(),
        ]
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        let tool = |function, metadata| -> Arc<dyn Tool> {
            Arc::new(DatabaseTool {
                spec: self.clone(),
                function,
                metadata,
            })
        };
        vec![
            tool(
                Function::LoadData,
                ToolMetadata::new("load_data", LOAD_DATA_DESCRIPTION).with_fn_schema(json!({
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "One SQL SELECT statement."}},
                    "required": ["query"],
                })),
            ),
            tool(
                Function::DescribeTables,
                ToolMetadata::new("describe_tables", DESCRIBE_TABLES_DESCRIPTION).with_fn_schema(json!({
                    "type": "object",
                    "properties": {"tables": {"type": ["array", "null"], "items": {"type": "string"}}},
                })),
            ),
            tool(
                Function::ListTables,
                ToolMetadata::new("list_tables", LIST_TABLES_DESCRIPTION)
                    .with_fn_schema(json!({"type": "object", "properties": {}})),
            ),
        ]
    }
}
