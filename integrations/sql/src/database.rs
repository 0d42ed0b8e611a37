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
    pub(crate) fn new(col_keys: Vec<String>, rows: Vec<Vec<SqlValue>>, truncated: bool) -> Self {
        let mut text = if col_keys.is_empty() {
            String::new()
        } else {
            rows_repr(&rows)
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

/// A database a model may query (LlamaIndex `SQLDatabase`), SQLite for now.
///
/// Opened read-only unless [`SQLDatabaseBuilder::allow_writes`] says
/// otherwise; whatever is asked, a statement may only touch the usable
/// tables (the `include_tables`, or all but the `ignore_tables`), must be
/// one statement, and is bounded by [`SqlLimits`]. Cloning shares the connection.
#[derive(Clone)]
pub struct SQLDatabase {
    backend: Arc<Sqlite>,
    usable: Vec<String>,
}

impl fmt::Debug for SQLDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SQLDatabase")
            .field("dialect", &self.dialect())
            .field("path", &self.backend.path())
            .field("usable_tables", &self.usable)
            .finish_non_exhaustive()
    }
}

/// Options of a [`SQLDatabase`] (LlamaIndex's `SQLDatabase(...)` arguments).
#[derive(Clone, Debug)]
pub struct SQLDatabaseBuilder {
    path: PathBuf,
    include_tables: Vec<String>,
    ignore_tables: Vec<String>,
    view_support: bool,
    max_string_length: usize,
    limits: SqlLimits,
    writable: bool,
}

impl SQLDatabase {
    /// A builder over the SQLite file at `path`.
    pub fn sqlite(path: impl AsRef<Path>) -> SQLDatabaseBuilder {
        SQLDatabaseBuilder {
            path: path.as_ref().to_path_buf(),
            include_tables: Vec::new(),
            ignore_tables: Vec::new(),
            view_support: false,
            max_string_length: 300,
            limits: SqlLimits::default(),
            writable: false,
        }
    }

    /// The database a URL names, with the default options (LlamaIndex
    /// `SQLDatabase.from_uri`): `sqlite:///relative.db`, `sqlite:////abs/path.db`.
    pub fn from_uri(uri: &str) -> Result<Self> {
        match uri.split_once(":///") {
            Some(("sqlite", path)) if !path.is_empty() => Self::sqlite(path).build(),
            _ => Err(Error::InvalidInput(format!(
                "`{uri}` is not a database URL ragloom-sql opens: use sqlite:///path/to/file.db"
            ))),
        }
    }

    /// The SQL dialect, as the text-to-SQL prompt names it (`sqlite`).
    pub fn dialect(&self) -> &'static str {
        "sqlite"
    }

    /// The tables a statement may use, sorted (LlamaIndex `get_usable_table_names`).
    pub fn usable_table_names(&self) -> &[String] {
        &self.usable
    }

    /// The limits in force.
    pub fn limits(&self) -> &SqlLimits {
        self.backend.limits()
    }

    /// LlamaIndex's `get_single_table_info`: `Table 'city' has columns: id
    /// (INTEGER), name (VARCHAR(64)), ... and foreign keys: ['country_id'] ->
    /// country.['id'].` with the types as SQLAlchemy reads them. A table
    /// that is not usable is an error naming the usable ones.
    pub async fn table_info(&self, table: &str) -> Result<String> {
        self.check_usable(table)?;
        let backend = Arc::clone(&self.backend);
        let table = table.to_owned();
        backend.run(move |db| db.table_info(&table)).await
    }

    /// Runs one statement under the guards and limits (LlamaIndex `run_sql`).
    /// A statement the database or a guard refuses, or that runs too long,
    /// is an [`Error::Invalid`] whose source is a [`StatementError`]
    /// (see [`crate::statement_error`]).
    pub async fn run_sql(&self, statement: &str) -> Result<SqlResult> {
        let backend = Arc::clone(&self.backend);
        let statement = statement.to_owned();
        let result: std::result::Result<SqlResult, StatementError> = backend
            .run(move |db| Ok(db.run_statement(&statement)))
            .await?;
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

impl SQLDatabaseBuilder {
    /// Only these tables are usable (LlamaIndex `include_tables`); each must exist.
    pub fn include_tables<I, S>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.include_tables = tables.into_iter().map(Into::into).collect();
        self
    }

    /// All tables but these are usable (LlamaIndex `ignore_tables`); each must exist.
    pub fn ignore_tables<I, S>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
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

    /// Opens the file read-write and lets a statement change the usable
    /// tables (still one statement, no `ATTACH`). Only for trusted models.
    pub fn allow_writes(mut self, on: bool) -> Self {
        self.writable = on;
        self
    }

    /// Opens the database; a missing file, both `include_tables` and
    /// `ignore_tables`, or a named table that does not exist is an error.
    pub fn build(self) -> Result<SQLDatabase> {
        if !self.include_tables.is_empty() && !self.ignore_tables.is_empty() {
            return Err(Error::InvalidInput(
                "Cannot specify both include_tables and ignore_tables".into(),
            ));
        }
        let backend = Sqlite::open(
            &self.path,
            self.writable,
            self.limits,
            self.max_string_length,
        )?;
        let all: BTreeSet<String> = backend.table_names(self.view_support)?;
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
                    "{what} {missing:?} not found in database {}; its tables are: {}",
                    self.path.display(),
                    all.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        let usable: Vec<String> = if self.include_tables.is_empty() {
            all.iter()
                .filter(|t| !self.ignore_tables.contains(t))
                .cloned()
                .collect()
        } else {
            let set: BTreeSet<String> = self.include_tables.into_iter().collect();
            set.into_iter().collect()
        };
        let known = backend.table_names(true)?;
        backend.allow_tables(TableFilter::new(usable.iter().cloned(), known))?;
        Ok(SQLDatabase {
            backend: Arc::new(backend),
            usable,
        })
    }
}
