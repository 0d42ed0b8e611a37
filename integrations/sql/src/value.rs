//! Values a query returns, and how LlamaIndex shows them: the Python `repr`
//! of the rows (`[('Tokyo', 13960000)]`), long strings cut at a word, a
//! Markdown table.

use ragloom_core::schema::py_repr;
use serde_json::{Value, json};

/// One value of a result row.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    /// SQL `NULL` (Python's `None`).
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes (Python's `bytes`).
    Blob(Vec<u8>),
    /// A boolean (Python's `True`, `False`).
    Bool(bool),
    /// An exact decimal as the database prints it (Python's `Decimal('12.50')`).
    Decimal(String),
    /// A JSON document (a Python `dict` or `list`).
    Json(Value),
    /// An array (a Python `list`).
    List(Vec<SqlValue>),
    /// A value of another type (a date, a time, an interval, a UUID): how
    /// Python's driver shows it.
    Other {
        /// Python's `repr` (`datetime.date(2024, 1, 2)`).
        repr: String,
        /// Python's `str` (`2024-01-02`).
        str: String,
    },
}

impl SqlValue {
    /// Python's `repr` of the value as the database driver returns it.
    pub fn py_repr(&self) -> String {
        match self {
            SqlValue::Null => "None".to_owned(),
            SqlValue::Integer(i) => i.to_string(),
            SqlValue::Real(f) if f.is_nan() => "nan".to_owned(),
            SqlValue::Real(f) if f.is_infinite() => {
                if *f > 0.0 { "inf" } else { "-inf" }.to_owned()
            }
            SqlValue::Real(f) => py_repr(&json!(f)),
            SqlValue::Text(s) => py_repr(&Value::String(s.clone())),
            SqlValue::Blob(b) => bytes_repr(b),
            SqlValue::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            SqlValue::Decimal(d) => format!("Decimal('{d}')"),
            SqlValue::Json(v) => py_repr(v),
            SqlValue::List(items) => {
                let items: Vec<String> = items.iter().map(SqlValue::py_repr).collect();
                format!("[{}]", items.join(", "))
            }
            SqlValue::Other { repr, .. } => repr.clone(),
        }
    }

    /// Python's `str` of the value (what a Markdown table cell shows).
    pub fn py_str(&self) -> String {
        match self {
            SqlValue::Text(s) | SqlValue::Decimal(s) | SqlValue::Other { str: s, .. } => s.clone(),
            other => other.py_repr(),
        }
    }

    /// The value as JSON (bytes as their Python `repr`, a non-finite number,
    /// a decimal, a date or a UUID as text).
    pub fn to_json(&self) -> Value {
        match self {
            SqlValue::Null => Value::Null,
            SqlValue::Integer(i) => json!(i),
            SqlValue::Real(f) if f.is_finite() => json!(f),
            SqlValue::Real(_) | SqlValue::Blob(_) => Value::String(self.py_repr()),
            SqlValue::Text(s) | SqlValue::Decimal(s) | SqlValue::Other { str: s, .. } => {
                Value::String(s.clone())
            }
            SqlValue::Bool(b) => Value::Bool(*b),
            SqlValue::Json(v) => v.clone(),
            SqlValue::List(items) => Value::Array(items.iter().map(SqlValue::to_json).collect()),
        }
    }

    /// LlamaIndex's `truncate_word`: a string longer than `length` characters
    /// is cut to `length - 3`, back to the last space, and `...` added.
    pub(crate) fn truncated(self, length: usize) -> Self {
        match self {
            SqlValue::Text(s) if length > 0 && s.chars().count() > length => {
                let keep: String = s.chars().take(length.saturating_sub(3)).collect();
                let cut = keep
                    .rsplit_once(' ')
                    .map_or(keep.as_str(), |(head, _)| head);
                SqlValue::Text(format!("{cut}..."))
            }
            other => other,
        }
    }
}

/// Python's `repr(bytes)`: single quotes unless the bytes hold a `'` and no `"`.
fn bytes_repr(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = format!("b{quote}");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if char::from(b) == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote);
    out
}

/// Python's `str(rows)` for a list of tuples: `[('a', 1), ('b',)]`.
pub fn rows_repr(rows: &[Vec<SqlValue>]) -> String {
    let tuples: Vec<String> = rows
        .iter()
        .map(|row| {
            let items: Vec<String> = row.iter().map(SqlValue::py_repr).collect();
            match items.len() {
                1 => format!("({},)", items[0]),
                _ => format!("({})", items.join(", ")),
            }
        })
        .collect();
    format!("[{}]", tuples.join(", "))
}

/// LlamaIndex's `_format_result_markdown` for one result: a header row,
/// `|---|` separators, one row per result row.
pub fn markdown_table(col_keys: &[String], rows: &[Vec<SqlValue>]) -> String {
    let mut out = format!("| {} |\n", col_keys.join(" | "));
    out.push_str(&format!("|{}|\n", vec!["---"; col_keys.len()].join("|")));
    for row in rows {
        let cells: Vec<String> = row.iter().map(SqlValue::py_str).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reprs_follow_python() {
        assert_eq!(
            SqlValue::Blob(b"\x00\xff'".to_vec()).py_repr(),
            "b\"\\x00\\xff'\""
        );
        assert_eq!(SqlValue::Blob(b"a'\"".to_vec()).py_repr(), "b'a\\'\"'");
        assert_eq!(SqlValue::Real(1e20).py_repr(), "1e+20");
        assert_eq!(SqlValue::Real(f64::NAN).py_repr(), "nan");
        assert_eq!(
            rows_repr(&[vec![SqlValue::Text("Kenji".into())], vec![]]),
            "[('Kenji',), ()]"
        );
    }

    #[test]
    fn long_text_is_cut_at_a_word() {
        let long = SqlValue::Text("alpha beta gamma delta".into());
        assert_eq!(long.truncated(12), SqlValue::Text("alpha...".into()));
        let short = SqlValue::Text("alpha".into());
        assert_eq!(short.clone().truncated(12), short);
        let word = SqlValue::Text("abcdefghijklmnop".into());
        assert_eq!(word.truncated(8), SqlValue::Text("abcde...".into()));
    }
}
