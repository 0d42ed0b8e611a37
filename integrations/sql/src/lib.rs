//! Structured data for ragloom, as LlamaIndex's text-to-SQL: a question in
//! plain language becomes SQL a model writes, run read-only under guards.
//!
//! - [`SQLDatabase`]: a database's usable tables, described as LlamaIndex
//!   describes them, and [`SQLDatabase::run_sql`] under [`SqlLimits`]: one
//!   statement, reading only the usable tables (SQLite's authorizer), a time
//!   limit, capped rows and text.
//! - [`NLSQLRetriever`]: asks the model for SQL with LlamaIndex's prompt,
//!   parses its reply ([`parse_response_to_sql`]), runs it; a statement that
//!   fails comes back as a node saying why, for the model to read.
//! - [`NLSQLTableQueryEngine`]: answers from the rows with LlamaIndex's
//!   synthesis prompt, or returns them (as text or a Markdown table); with a
//!   table retriever (an `ObjectIndex` over [`SQLTableNodeMapping`]) only the
//!   tables a question needs reach the prompt ([`SQLTableRetrieverQueryEngine`]).
//! - [`SQLJoinQueryEngine`]: SQL joined with another engine — the SQL answer
//!   makes the question more specific for it, and the answers are combined;
//!   [`SQLAutoVectorQueryEngine`] with a `VectorIndexAutoRetriever` (SQL + vector).

#![warn(missing_docs)]

mod database;
mod join;
mod join_prompts;
mod limits;
mod parser;
#[cfg(feature = "postgres")]
mod postgres;
mod prompts;
mod query_engine;
mod retriever;
mod sqlite;
mod sqlite_types;
mod table_mapping;
mod value;

#[cfg(feature = "postgres")]
pub use database::PostgresUrl;
pub use database::{SQLDatabase, SQLDatabaseBuilder, SqlResult, SqliteFile};
pub use join::{
    CheckStop, SQLAugmentQueryTransform, SQLAutoVectorQueryEngine, SQLJoinQueryEngine,
    SQLJoinQueryEngineBuilder,
};
pub use join_prompts::{
    DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL, DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
    DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL,
};
pub use limits::{SqlLimits, StatementError, statement_error};
pub use parser::parse_response_to_sql;
pub use prompts::{
    DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2, DEFAULT_TEXT_TO_SQL_TMPL, response_synthesis_prompt,
    text_to_sql_prompt,
};
pub use query_engine::{
    NLSQLTableQueryEngine, NLSQLTableQueryEngineBuilder, SQLTableRetrieverQueryEngine,
};
pub use retriever::{NLSQLRetriever, NLSQLRetrieverBuilder, SQLTableSchema};
pub use sqlite::run_sqlite_script;
pub use table_mapping::SQLTableNodeMapping;
pub use value::{SqlValue, markdown_table, rows_repr};
