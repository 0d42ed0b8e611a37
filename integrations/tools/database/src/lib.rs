//! `DatabaseToolSpec`: lets a model explore and query a SQL database
//! (`list_tables`, `describe_tables`, `load_data(query)`), read-only unless asked otherwise.
//!
//! LlamaIndex's `DatabaseToolSpec` (package `llama-index-tools-database`)
//! over its `SQLDatabase`; here over `ragloom_sql::SQLDatabase`, SQLite or
//! PostgreSQL, so every query runs under the same guards as text-to-SQL:
//! one statement, only the usable tables, read-only, a time limit and caps.

#![warn(missing_docs)]

use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::{Document, py_repr};
use ragloom_core::tools::{
    SpecFunctions, Tool, ToolArgs, ToolMetadata, ToolSpec, documents_output, spec_function_tools,
    unknown_function,
};
use ragloom_sql::{SQLDatabase, SqlLimits, SqlResult, run_sqlite_script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Description of `load_data`, as LlamaIndex's docstring gives it.
pub const LOAD_DATA_DESCRIPTION: &str = "load_data(query: str) -> List[Document]\nQuery and load data from the Database, returning a list of Documents.\n\nArgs:\n    query (str): an SQL query to filter tables and rows.\n\nReturns:\n    List[Document]: A list of Document objects.";
/// Description of `describe_tables`.
pub const DESCRIBE_TABLES_DESCRIPTION: &str = "describe_tables(tables: Optional[List[str]] = None) -> str\nDescribes the specified tables in the database.\n\nArgs:\n    tables (List[str]): A list of table names to retrieve details about";
/// Description of `list_tables`.
pub const LIST_TABLES_DESCRIPTION: &str = "list_tables() -> List[str]\nReturns a list of available tables in the database.\nTo retrieve details about the columns of specific tables, use\nthe describe_tables endpoint.";

/// What one call may cost: [`SqlLimits`], whose `max_rows` here is a limit
/// (more rows is an error asking for a narrower query), not a cut.
pub type DatabaseLimits = SqlLimits;

/// Tools over one database: `load_data`, `describe_tables`, `list_tables`.
///
/// Cloning shares the connection. The methods are also usable directly
/// (`load_data` returns one document per row, text `col: value, col: value`).
#[derive(Clone, Debug)]
pub struct DatabaseToolSpec {
    database: SQLDatabase,
    /// The SQLite file it was opened from, to reopen with other limits.
    path: Option<PathBuf>,
}

impl DatabaseToolSpec {
    /// The tools over `database` (LlamaIndex `DatabaseToolSpec(sql_database=...)`):
    /// its usable tables, limits and read-only setting.
    pub fn new(database: SQLDatabase) -> Self {
        Self {
            database,
            path: None,
        }
    }

    /// Opens the SQLite file at `path` read-only. A missing file is an
    /// error (it is never created).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path.as_ref(), false, SqlLimits::default())
    }

    /// Opens (or creates) `path` read-write: `load_data` may change the rows
    /// of its tables (one statement, no schema change). Only for trusted
    /// models and data; build the tables with [`run_sqlite_script`].
    pub fn open_writable(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        if !path.exists() {
            run_sqlite_script(path, "")?;
        }
        Self::open_with(path, true, SqlLimits::default())
    }

    fn open_with(path: &Path, writable: bool, limits: SqlLimits) -> Result<Self> {
        let database = SQLDatabase::sqlite(path)
            .allow_writes(writable)
            .limits(limits)
            .build()?;
        Ok(Self {
            database,
            path: Some(path.to_path_buf()),
        })
    }

    /// The same SQLite file with other [`DatabaseLimits`] (for a
    /// [`SQLDatabase`] of your own, set them on its builder).
    pub fn with_limits(self, limits: DatabaseLimits) -> Result<Self> {
        let Some(path) = &self.path else {
            return Err(Error::InvalidInput(
                "set the limits on the SQLDatabase builder (SQLDatabaseBuilder::limits)".into(),
            ));
        };
        Self::open_with(path, self.database.is_writable(), limits)
    }

    /// The limits in force.
    pub fn limits(&self) -> &DatabaseLimits {
        self.database.limits()
    }

    /// Whether statements may only read.
    pub fn is_read_only(&self) -> bool {
        !self.database.is_writable()
    }

    /// The database underneath.
    pub fn database(&self) -> &SQLDatabase {
        &self.database
    }

    /// Runs `query` and returns one document per row, its text
    /// `column: value, ...` (values as Python's `str` prints them). More
    /// rows than the limit, or a result too long, is an error asking for a
    /// narrower query.
    pub async fn load_data(&self, query: &str) -> Result<Vec<Document>> {
        let result = self.database.run_sql(query).await?;
        if result.truncated {
            let max_rows = self.limits().max_rows;
            return Err(Error::InvalidInput(if result.rows.len() >= max_rows {
                format!(
                    "the query returned more than {max_rows} rows; narrow it (LIMIT, WHERE, an aggregate)"
                )
            } else {
                format!(
                    "the query's result is longer than {} characters; narrow it (fewer columns or rows)",
                    self.limits().max_result_chars
                )
            }));
        }
        Ok(documents(&result))
    }

    /// The tables' `CREATE TABLE` text, separated by blank lines (all usable
    /// tables when `tables` is `None`); an unknown table is an error naming
    /// the usable ones.
    pub async fn describe_tables(&self, tables: Option<Vec<String>>) -> Result<String> {
        let wanted = tables.unwrap_or_else(|| self.database.usable_table_names().to_vec());
        let mut parts = Vec::with_capacity(wanted.len());
        for name in &wanted {
            parts.push(self.database.table_definition(name).await?);
        }
        Ok(parts.join("\n\n"))
    }

    /// The usable tables' names, sorted.
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        Ok(self.database.usable_table_names().to_vec())
    }
}

/// One document per row: `column: value, ...`.
fn documents(result: &SqlResult) -> Vec<Document> {
    result
        .rows
        .iter()
        .map(|row| {
            let parts: Vec<String> = result
                .col_keys
                .iter()
                .zip(row)
                .map(|(col, value)| format!("{col}: {}", value.py_str()))
                .collect();
            Document::document(parts.join(", "))
        })
        .collect()
}

#[async_trait]
impl SpecFunctions for DatabaseToolSpec {
    async fn call_function(&self, name: &str, args: &ToolArgs<'_>) -> Result<(String, Value)> {
        // Bad SQL, a refused write, an unknown table: errors the model can fix.
        match name {
            "load_data" => {
                let query = args.text("query", "a string holding one SQL SELECT statement")?;
                documents_output(&self.load_data(&query).await?)
            }
            "describe_tables" => {
                let text = self.describe_tables(args.opt_strings("tables")?).await?;
                Ok((text.clone(), Value::String(text)))
            }
            "list_tables" => {
                let raw = json!(self.list_tables().await?);
                Ok((py_repr(&raw), raw))
            }
            other => Err(unknown_function(other)),
        }
    }
}

impl ToolSpec for DatabaseToolSpec {
    fn spec_functions(&self) -> Vec<String> {
        FUNCTIONS.iter().map(|n| (*n).to_owned()).collect()
    }

    fn to_tool_list(&self) -> Vec<Arc<dyn Tool>> {
        spec_function_tools(self, &FUNCTIONS, |name| {
            match name {
            "load_data" => ToolMetadata::new(name, LOAD_DATA_DESCRIPTION).with_fn_schema(json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "One SQL SELECT statement."}},
                "required": ["query"],
            })),
            "describe_tables" => ToolMetadata::new(name, DESCRIBE_TABLES_DESCRIPTION).with_fn_schema(json!({
                "type": "object",
                "properties": {"tables": {"type": ["array", "null"], "items": {"type": "string"}}},
            })),
            _ => ToolMetadata::new(name, LIST_TABLES_DESCRIPTION)
                .with_fn_schema(json!({"type": "object", "properties": {}})),
        }
        })
    }
}

const FUNCTIONS: [&str; 3] = ["load_data", "describe_tables", "list_tables"];
