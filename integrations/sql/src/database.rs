//! `SQLDatabase`: one database's usable tables, their description as
//! LlamaIndex writes it, and statements run under [`SqlLimits`].

use crate::limits::{SqlLimits, StatementError};
use crate::sqlite::{Sqlite, TableFilter};
use crate::value::{SqlValue, rows_repr};
use ragloom_core::error::{Error, Result};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The rows a statement returned (LlamaIndex's `run_sql` result).
#[derive(Clone, Debug, PartialEq)]
pub struct SqlResult {
    /// Python's `str` of the rows (`[('Tokyo', 13960000)]`), strings cut at
    /// [`SQLDatabaseBuilder::max_string_length`]; with a note when rows were dropped.
    pub text: String,
    /// The column names.
    pub col_keys: Vec<String>,
    /// The rows kept.
    pub rows: Vec<Vec<SqlValue>>,
    /// Whether rows were dropped by [`SqlLimits::max_rows`] or
    /// [`SqlLimits::max_result_chars`].
    pub truncated: bool,
}

impl SqlResult {
    /// A statement's outcome: its rows' text when it has columns, else `""`.
    pub(crate) fn new(col_keys: Vec<String>, rows: Vec<Vec<SqlValue>>, truncated: bool) -> Self {
        let returns_rows = !col_keys.is_empty();
        Self::build(col_keys, rows, truncated, returns_rows)
    }

    /// A query's rows, even with no columns (`[()]`).
    #[cfg(feature = "postgres")]
    pub(crate) fn of_rows(
        col_keys: Vec<String>,
        rows: Vec<Vec<SqlValue>>,
        truncated: bool,
    ) -> Self {
        Self::build(col_keys, rows, truncated, true)
    }

    fn build(
        col_keys: Vec<String>,
        rows: Vec<Vec<SqlValue>>,
        truncated: bool,
        returns_rows: bool,
    ) -> Self {
        let mut text = if returns_rows {
            rows_repr(&rows)
        } else {
            String::new()
        };
        if truncated {
            text.push_str(&format!(
                "\n(only the first {} rows are shown: the result was longer)",
                rows.len()
            ));
        }
        Self {
            text,
            col_keys,
            rows,
            truncated,
        }
    }

    /// The rows as JSON arrays (LlamaIndex's `metadata["result"]`).
    pub fn rows_json(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.rows
                .iter()
                .map(|r| serde_json::Value::Array(r.iter().map(SqlValue::to_json).collect()))
                .collect(),
        )
    }
}

/// A database a model may query (LlamaIndex `SQLDatabase`): a SQLite file
/// or a PostgreSQL database.
///
/// Read-only unless [`SQLDatabaseBuilder::allow_writes`] says otherwise;
/// whatever is asked, a statement may only touch the usable tables (the
/// `include_tables`, or all but the `ignore_tables`), must be one statement,
/// and is bounded by [`SqlLimits`]. Cloning shares the connection.
#[derive(Clone)]
pub struct SQLDatabase {
    backend: Backend,
    usable: Vec<String>,
}

#[derive(Clone)]
enum Backend {
    Sqlite(Arc<Sqlite>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<crate::postgres::Postgres>),
}

impl fmt::Debug for SQLDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("SQLDatabase");
        out.field("dialect", &self.dialect());
        match &self.backend {
            Backend::Sqlite(db) => out.field("path", &db.path()),
            // The endpoint only: the URL may hold a password.
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => out
                .field("endpoint", &db.endpoint())
                .field("schema", &db.schema()),
        };
        out.field("usable_tables", &self.usable)
            .finish_non_exhaustive()
    }
}

/// A SQLite file to open.
#[derive(Clone, Debug)]
pub struct SqliteFile(PathBuf);

/// A PostgreSQL database to connect to.
#[cfg(feature = "postgres")]
#[derive(Clone)]
pub struct PostgresUrl {
    url: String,
    schema: Option<String>,
    role: Option<String>,
}

#[cfg(feature = "postgres")]
impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresUrl")
            .field("schema", &self.schema)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// Options of a [`SQLDatabase`] (LlamaIndex's `SQLDatabase(...)` arguments);
/// `S` is the database: [`SqliteFile`] or [`PostgresUrl`].
#[derive(Clone, Debug)]
pub struct SQLDatabaseBuilder<S = SqliteFile> {
    source: S,
    include_tables: Vec<String>,
    ignore_tables: Vec<String>,
    view_support: bool,
    max_string_length: usize,
    limits: SqlLimits,
    writable: bool,
}

impl<S> SQLDatabaseBuilder<S> {
    fn new(source: S) -> Self {
        Self {
            source,
            include_tables: Vec::new(),
            ignore_tables: Vec::new(),
            view_support: false,
            max_string_length: 300,
            limits: SqlLimits::default(),
            writable: false,
        }
    }
}

impl SQLDatabase {
    /// A builder over the SQLite file at `path`.
    pub fn sqlite(path: impl AsRef<Path>) -> SQLDatabaseBuilder<SqliteFile> {
        SQLDatabaseBuilder::new(SqliteFile(path.as_ref().to_path_buf()))
    }

    /// A builder over the PostgreSQL database at `url`
    /// (`postgres://user:password@host:port/db`; Python's
    /// `postgresql+psycopg2://` form too). Connect with
    /// [`SQLDatabaseBuilder::connect`].
    #[cfg(feature = "postgres")]
    pub fn postgres(url: impl Into<String>) -> SQLDatabaseBuilder<PostgresUrl> {
        SQLDatabaseBuilder::new(PostgresUrl {
            url: url.into(),
            schema: None,
            role: None,
        })
    }

    /// The SQLite database a URL names, with the default options (LlamaIndex
    /// `SQLDatabase.from_uri`): `sqlite:///relative.db`, `sqlite:////abs/path.db`.
    /// A PostgreSQL database connects with [`SQLDatabase::postgres`].
    pub fn from_uri(uri: &str) -> Result<Self> {
        match uri.split_once(":///") {
            Some(("sqlite", path)) if !path.is_empty() => Self::sqlite(path).build(),
            _ if uri.starts_with("postgres") => Err(Error::InvalidInput(
                "a PostgreSQL database connects with SQLDatabase::postgres(url).connect().await"
                    .into(),
            )),
            _ => Err(Error::InvalidInput(
                "not a database URL ragloom-sql opens: use sqlite:///path/to/file.db".into(),
            )),
        }
    }

    /// The SQL dialect, as the text-to-SQL prompt names it (`sqlite`, `postgresql`).
    pub fn dialect(&self) -> &'static str {
        match &self.backend {
            Backend::Sqlite(_) => "sqlite",
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => "postgresql",
        }
    }

    /// The tables a statement may use, sorted (LlamaIndex `get_usable_table_names`).
    pub fn usable_table_names(&self) -> &[String] {
        &self.usable
    }

    /// The limits in force.
    pub fn limits(&self) -> &SqlLimits {
        match &self.backend {
            Backend::Sqlite(db) => db.limits(),
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.limits(),
        }
    }

    /// LlamaIndex's `get_single_table_info`: `Table 'city' has columns: id
    /// (INTEGER), name (VARCHAR(64)), ... and foreign keys: ['country_id'] ->
    /// country.['id'].` with the types as SQLAlchemy reads them (and on
    /// PostgreSQL the comments). A table that is not usable is an error
    /// naming the usable ones.
    pub async fn table_info(&self, table: &str) -> Result<String> {
        self.check_usable(table)?;
        match &self.backend {
            Backend::Sqlite(db) => {
                let table = table.to_owned();
                Arc::clone(db).run(move |db| db.table_info(&table)).await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.table_info(table).await,
        }
    }

    /// The table's `CREATE TABLE` text (LlamaIndex's `DatabaseToolSpec`
    /// `describe_tables`): on SQLite as SQLite stores it, on PostgreSQL as
    /// SQLAlchemy renders the table it reflects (types, defaults, identity,
    /// `NOT NULL`, primary key, foreign keys, unique and check constraints).
    pub async fn table_definition(&self, table: &str) -> Result<String> {
        self.check_usable(table)?;
        match &self.backend {
            Backend::Sqlite(db) => {
                let table = table.to_owned();
                Arc::clone(db)
                    .run(move |db| db.table_definition(&table))
                    .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.table_definition(table).await,
        }
    }

    /// Whether statements may change rows ([`SQLDatabaseBuilder::allow_writes`]).
    pub fn is_writable(&self) -> bool {
        match &self.backend {
            Backend::Sqlite(db) => db.is_writable(),
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.is_writable(),
        }
    }

    /// Runs one statement under the guards and limits (LlamaIndex `run_sql`).
    /// A statement the database or a guard refuses, or that runs too long,
    /// is an [`Error::Invalid`] whose source is a [`StatementError`]
    /// (see [`crate::statement_error`]); a database that cannot be reached
    /// is an [`Error::Provider`].
    pub async fn run_sql(&self, statement: &str) -> Result<SqlResult> {
        let result: std::result::Result<SqlResult, StatementError> = match &self.backend {
            Backend::Sqlite(db) => {
                let statement = statement.to_owned();
                Arc::clone(db)
                    .run(move |db| Ok(db.run_statement(&statement)))
                    .await?
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.run_statement(statement).await?,
        };
        Ok(result?)
    }

    fn check_usable(&self, table: &str) -> Result<()> {
        if self.usable.iter().any(|t| t == table) {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "table `{table}` is not one of the usable tables: {}",
                self.usable.join(", ")
            )))
        }
    }
}

impl<S> SQLDatabaseBuilder<S> {
    /// Only these tables are usable (LlamaIndex `include_tables`); each must exist.
    pub fn include_tables<I, T>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.include_tables = tables.into_iter().map(Into::into).collect();
        self
    }

    /// All tables but these are usable (LlamaIndex `ignore_tables`); each must exist.
    pub fn ignore_tables<I, T>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.ignore_tables = tables.into_iter().map(Into::into).collect();
        self
    }

    /// Views count as tables (LlamaIndex `view_support`, default false).
    pub fn view_support(mut self, on: bool) -> Self {
        self.view_support = on;
        self
    }

    /// Strings in results longer than this many characters are cut at a
    /// word (LlamaIndex `max_string_length`, default 300).
    pub fn max_string_length(mut self, length: usize) -> Self {
        self.max_string_length = length;
        self
    }

    /// Other [`SqlLimits`].
    pub fn limits(mut self, limits: SqlLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Lets a statement change the rows of the usable tables (SQLite: the
    /// file opened read-write; PostgreSQL: a read-write transaction,
    /// committed when the statement succeeds). Still one statement, no
    /// schema change. Only for trusted models.
    pub fn allow_writes(mut self, on: bool) -> Self {
        self.writable = on;
        self
    }

    /// The usable tables out of `all`, or why the options name none.
    fn usable(&self, all: &BTreeSet<String>, database: &str) -> Result<Vec<String>> {
        if !self.include_tables.is_empty() && !self.ignore_tables.is_empty() {
            return Err(Error::InvalidInput(
                "Cannot specify both include_tables and ignore_tables".into(),
            ));
        }
        for (what, named) in [
            ("include_tables", &self.include_tables),
            ("ignore_tables", &self.ignore_tables),
        ] {
            let missing: Vec<&str> = named
                .iter()
                .filter(|t| !all.contains(*t))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(Error::InvalidInput(format!(
                    "{what} {missing:?} not found in database {database}; its tables are: {}",
                    all.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        Ok(if self.include_tables.is_empty() {
            all.iter()
                .filter(|t| !self.ignore_tables.contains(t))
                .cloned()
                .collect()
        } else {
            let set: BTreeSet<&String> = self.include_tables.iter().collect();
            set.into_iter().cloned().collect()
        })
    }
}

impl SQLDatabaseBuilder<SqliteFile> {
    /// Opens the database; a missing file, both `include_tables` and
    /// `ignore_tables`, or a named table that does not exist is an error.
    pub fn build(self) -> Result<SQLDatabase> {
        let path = &self.source.0;
        let backend = Sqlite::open(
            path,
            self.writable,
            self.limits.clone(),
            self.max_string_length,
        )?;
        let all: BTreeSet<String> = backend.table_names(self.view_support)?;
        let usable = self.usable(&all, &path.display().to_string())?;
        let known = backend.table_names(true)?;
        backend.allow_tables(TableFilter::new(usable.iter().cloned(), known))?;
        Ok(SQLDatabase {
            backend: Backend::Sqlite(Arc::new(backend)),
            usable,
        })
    }
}

#[cfg(feature = "postgres")]
impl SQLDatabaseBuilder<PostgresUrl> {
    /// The schema whose tables are described and queried (LlamaIndex
    /// `schema`); statements run with it first on the search path, so the
    /// model writes `customers`, not `shop.customers`. Default: the tables
    /// the server's search path shows (usually `public`).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.source.schema = Some(schema.into());
        self
    }

    /// The role every statement runs as (`SET LOCAL ROLE`, which the
    /// connecting user must be a member of): give it `SELECT` on the usable
    /// tables only, and the database itself holds the model to them, beyond
    /// ragloom's checks. Default: the connecting user.
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.source.role = Some(role.into());
        self
    }

    /// Connects and reads the tables; an unreachable server, a missing
    /// schema, both `include_tables` and `ignore_tables`, or a named table
    /// that does not exist is an error.
    pub async fn connect(self) -> Result<SQLDatabase> {
        let mut backend = crate::postgres::Postgres::connect(
            &self.source.url,
            self.source.schema.clone(),
            self.source.role.clone(),
            self.writable,
            self.limits.clone(),
            self.max_string_length,
        )
        .await?;
        let all = backend.table_names(self.view_support).await?;
        let database = match backend.schema() {
            Some(schema) => format!("{} (schema {schema})", backend.endpoint()),
            None => backend.endpoint().to_owned(),
        };
        let usable = self.usable(&all, &database)?;
        backend.allow_tables(&usable).await?;
        Ok(SQLDatabase {
            backend: Backend::Postgres(Arc::new(backend)),
            usable,
        })
    }
}
