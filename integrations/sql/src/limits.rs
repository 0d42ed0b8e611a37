//! What one model-written statement may cost, and why a statement was not
//! run or did not finish: errors a model can read and fix.

use ragloom_core::schema::py_repr;
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Bounds on one statement. A model can write a query that never ends (a
/// recursive `WITH`), returns millions of rows or builds a gigabyte string;
/// these bound each, and the database stays usable after any of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlLimits {
    /// A statement still running after this is stopped. Default 10 s.
    pub statement_timeout: Duration,
    /// Rows kept from one result; the rest are dropped and the result says
    /// so. Default 1,000.
    pub max_rows: usize,
    /// Characters of the result's text (the rows' Python `repr`) kept; rows
    /// past it are dropped and the result says so. Default 100,000.
    pub max_result_chars: usize,
    /// The longest value a statement may build or return, in bytes
    /// (SQLite's `SQLITE_LIMIT_LENGTH` on this connection; on PostgreSQL
    /// checked by the server, a longer value never sent). Default 1,000,000.
    pub max_value_bytes: i32,
}

impl Default for SqlLimits {
    fn default() -> Self {
        Self {
            statement_timeout: Duration::from_secs(10),
            max_rows: 1000,
            max_result_chars: 100_000,
            max_value_bytes: 1_000_000,
        }
    }
}

/// Why a statement gave no result. Its text is what the model reads back
/// (the invalid-SQL case word for word as LlamaIndex's).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatementError {
    /// The database refused the statement (a syntax error, an unknown table
    /// or column).
    Invalid {
        /// The statement.
        statement: String,
        /// The database's message.
        message: String,
    },
    /// A guard refused the statement before it ran.
    Refused {
        /// The statement.
        statement: String,
        /// Which guard, and why.
        reason: String,
    },
    /// The statement ran past [`SqlLimits::statement_timeout`] and was stopped.
    TimedOut {
        /// The statement.
        statement: String,
        /// The limit.
        after: Duration,
    },
}

impl StatementError {
    /// The statement that failed.
    pub fn statement(&self) -> &str {
        match self {
            Self::Invalid { statement, .. }
            | Self::Refused { statement, .. }
            | Self::TimedOut { statement, .. } => statement,
        }
    }
}

impl fmt::Display for StatementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = py_repr(&Value::String(self.statement().to_owned()));
        match self {
            Self::Invalid { message, .. } => {
                write!(f, "Statement {quoted} is invalid SQL.\nError: {message}")
            }
            Self::Refused { reason, .. } => write!(f, "Statement {quoted} was not run: {reason}"),
            Self::TimedOut { after, .. } => write!(
                f,
                "Statement {quoted} ran longer than {after:?} and was stopped; make it cheaper \
                 (a LIMIT, a WHERE, no unbounded recursion)"
            ),
        }
    }
}

impl std::error::Error for StatementError {}

impl From<StatementError> for ragloom_core::Error {
    fn from(e: StatementError) -> Self {
        ragloom_core::Error::invalid("the SQL statement gave no result", e)
    }
}

/// The [`StatementError`] inside `error`, if that is what it is.
pub fn statement_error(error: &ragloom_core::Error) -> Option<&StatementError> {
    match error {
        ragloom_core::Error::Invalid { source, .. } => source.downcast_ref::<StatementError>(),
        _ => None,
    }
}
