//! SQL text with its bound arguments, built together so that values only ever
//! travel as parameters (`$1`, `$2`, ...) and never inside the statement text.

use pgvector::Vector;
use sqlx::Postgres;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;

/// One bound argument.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    /// A `text` value.
    Text(String),
    /// A `text[]` value.
    TextArray(Vec<String>),
    /// A `vector` value.
    Vector(Vector),
    /// A `bigint` value, `NULL` when absent (`LIMIT NULL` is no limit).
    Int(Option<i64>),
}

/// A statement being built: its text and the arguments its placeholders name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sql {
    pub(crate) text: String,
    pub(crate) args: Vec<Arg>,
}

impl Sql {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            args: Vec::new(),
        }
    }

    /// Appends statement text (never a value).
    pub(crate) fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Registers an argument and returns its placeholder, to be written into
    /// the text as many times as needed.
    pub(crate) fn bind(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        format!("${}", self.args.len())
    }

    /// The statement, ready to run.
    pub(crate) fn query(&self) -> Query<'_, Postgres, PgArguments> {
        let mut query = sqlx::query(&self.text);
        for arg in &self.args {
            query = match arg {
                Arg::Text(s) => query.bind(s.as_str()),
                Arg::TextArray(items) => query.bind(items.as_slice()),
                Arg::Vector(v) => query.bind(v),
                Arg::Int(i) => query.bind(*i),
            };
        }
        query
    }
}

/// `name` as a quoted SQL identifier. Callers pass names already restricted to
/// `[a-z0-9_]` (see `validate_identifier`); quoting is a second fence.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_count_up_and_can_repeat() {
        let mut sql = Sql::new("SELECT ");
        let a = sql.bind(Arg::Text("x".into()));
        let b = sql.bind(Arg::Int(Some(3)));
        sql.push(&format!("{a}, {b}, {a}"));
        assert_eq!(sql.text, "SELECT $1, $2, $1");
        assert_eq!(sql.args.len(), 2);
        assert_eq!(quote_ident("da\"ta"), "\"da\"\"ta\"");
    }
}
