//! A SQLite column's declared type as SQLAlchemy reflects and prints it
//! (`varchar(64)` → `VARCHAR(64)`, `DOUBLE PRECISION` → `REAL`, no type →
//! `NULL`), so table descriptions read as LlamaIndex's do.

use regex::Regex;
use std::sync::LazyLock;

/// How a reflected type prints its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Args {
    /// `X(length)`, a second argument as `COLLATE "..."` (SQLAlchemy's `String`).
    Length,
    /// `X(precision)` or `X(precision, scale)` (`Numeric`).
    Precision,
    /// Never shown.
    None,
}

/// SQLite's `ischema_names` in SQLAlchemy, then the affinity rules.
fn sqlalchemy_class(name: &str) -> (&'static str, Args) {
    match name {
        "BIGINT" => ("BIGINT", Args::None),
        "BLOB" => ("BLOB", Args::None),
        "BOOL" | "BOOLEAN" => ("BOOLEAN", Args::None),
        "CHAR" => ("CHAR", Args::Length),
        "DATE" | "DATE_CHAR" => ("DATE", Args::None),
        "DATETIME" | "DATETIME_CHAR" => ("DATETIME", Args::None),
        "DOUBLE" => ("DOUBLE", Args::None),
        "DECIMAL" => ("DECIMAL", Args::Precision),
        "FLOAT" => ("FLOAT", Args::None),
        "INT" | "INTEGER" => ("INTEGER", Args::None),
        "JSON" => ("JSON", Args::None),
        "NUMERIC" => ("NUMERIC", Args::Precision),
        "REAL" => ("REAL", Args::None),
        "SMALLINT" => ("SMALLINT", Args::None),
        "TEXT" => ("TEXT", Args::Length),
        "TIME" | "TIME_CHAR" => ("TIME", Args::None),
        "TIMESTAMP" => ("TIMESTAMP", Args::None),
        "VARCHAR" => ("VARCHAR", Args::Length),
        "NVARCHAR" => ("NVARCHAR", Args::Length),
        "NCHAR" => ("NCHAR", Args::Length),
        _ if name.contains("INT") => ("INTEGER", Args::None),
        _ if name.contains("CHAR") || name.contains("CLOB") || name.contains("TEXT") => {
            ("TEXT", Args::Length)
        }
        _ if name.contains("BLOB") || name.is_empty() => ("NULL", Args::None),
        _ if name.contains("REAL") || name.contains("FLOA") || name.contains("DOUB") => {
            ("REAL", Args::None)
        }
        _ => ("NUMERIC", Args::Precision),
    }
}

static TYPE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::unwrap_used)] // a constant pattern
    Regex::new(r"^([\w ]+)(\(.*?\))?").unwrap()
});
static DIGITS: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::unwrap_used)] // a constant pattern
    Regex::new(r"[0-9]+").unwrap()
});

/// `declared` (PRAGMA's text) as SQLAlchemy prints its reflected type;
/// `generated`: the column is computed, and SQLite's type text carries
/// `GENERATED ALWAYS`.
pub(crate) fn sqlalchemy_type(declared: &str, generated: bool) -> String {
    let mut declared = declared.to_uppercase();
    if generated {
        declared = declared.replace("GENERATED", "").replace("ALWAYS", "");
        declared = declared.trim().to_owned();
    }
    let (name, args) = match TYPE.captures(&declared) {
        Some(c) => (
            c.get(1).map_or("", |m| m.as_str()).to_owned(),
            c.get(2).map(|m| m.as_str().to_owned()),
        ),
        None => (String::new(), Some(String::new())),
    };
    let (class, kind) = sqlalchemy_class(&name);
    let args: Vec<String> = args
        .map(|a| {
            DIGITS
                .find_iter(&a)
                .map(|d| {
                    let n = d.as_str().trim_start_matches('0');
                    if n.is_empty() { "0" } else { n }.to_owned()
                })
                .collect()
        })
        .unwrap_or_default();
    // A class given more arguments than it takes is built without any.
    match (kind, args.as_slice()) {
        (Args::Length, [length]) => with_length(class, length, None),
        (Args::Length, [length, collation]) => with_length(class, length, Some(collation)),
        (Args::Precision, [precision]) => format!("{class}({precision})"),
        (Args::Precision, [precision, scale, ..]) if args.len() <= 4 => {
            format!("{class}({precision}, {scale})")
        }
        _ => class.to_owned(),
    }
}

/// SQLAlchemy prints a length or collation only when it is not zero.
fn with_length(class: &str, length: &str, collation: Option<&String>) -> String {
    let mut out = class.to_owned();
    if length != "0" {
        out.push_str(&format!("({length})"));
    }
    if let Some(c) = collation.filter(|c| c.as_str() != "0") {
        out.push_str(&format!(" COLLATE \"{c}\""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_sqlalchemy_prints_them() {
        for (declared, printed) in [
            ("varchar(10)", "VARCHAR(10)"),
            ("NUMERIC(10,2)", "NUMERIC(10, 2)"),
            ("FLOAT(5)", "FLOAT"),
            ("DOUBLE PRECISION", "REAL"),
            ("", "NULL"),
            ("INTEGER(11)", "INTEGER"),
            ("STRING", "NUMERIC"),
            ("BINARY(16)", "NUMERIC(16)"),
            ("VARYING CHARACTER(255)", "TEXT(255)"),
            ("FLOATING POINT", "INTEGER"),
            ("VARCHAR(10, 20)", "VARCHAR(10) COLLATE \"20\""),
            ("VARCHAR(0)", "VARCHAR"),
            ("VARCHAR(1, 2, 3)", "VARCHAR"),
            ("NUMERIC (10,2)", "NUMERIC(10, 2)"),
            ("\"QUOTED\"", "NULL"),
        ] {
            assert_eq!(sqlalchemy_type(declared, false), printed, "{declared}");
        }
        assert_eq!(sqlalchemy_type("INTEGER GENERATED ALWAYS", true), "INTEGER");
    }
}
