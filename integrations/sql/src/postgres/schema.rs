//! A PostgreSQL schema as SQLAlchemy reflects it for LlamaIndex's table
//! descriptions (type names, comments, foreign keys), and the relations a plan names.

use super::db_error;
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::py_repr;
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::fmt;

/// A table or view, by schema and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Relation {
    pub(crate) schema: String,
    pub(crate) name: String,
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.name)
    }
}

/// Which relations a name means: those of `schema`, or with none, those
/// the search path shows (SQLAlchemy's default schema).
const SCOPE: &str = "(CASE WHEN $1::text IS NULL \
     THEN pg_table_is_visible(c.oid) AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
     ELSE n.nspname = $1::text END)";

pub(crate) async fn table_names(
    pool: &PgPool,
    schema: Option<&str>,
    views: bool,
) -> Result<BTreeSet<String>> {
    // SQLAlchemy's kinds: tables and partitioned tables; views are plain views.
    let kinds: Vec<String> = if views {
        vec!["r".into(), "p".into(), "v".into()]
    } else {
        vec!["r".into(), "p".into()]
    };
    let sql = format!(
        "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relkind::text = ANY($2) AND {SCOPE}"
    );
    let names: Vec<String> = sqlx::query_scalar(&sql)
        .bind(schema)
        .bind(&kinds)
        .fetch_all(pool)
        .await
        .map_err(|e| db_error("listing tables", e))?;
    Ok(names.into_iter().collect())
}

/// A usable table's oid, schema and kind.
pub(crate) async fn find(
    pool: &PgPool,
    schema: Option<&str>,
    table: &str,
) -> Result<(i64, String, String)> {
    let sql = format!(
        "SELECT c.oid::bigint, n.nspname::text, c.relkind::text FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = $2 AND {SCOPE}"
    );
    sqlx::query_as(&sql)
        .bind(schema)
        .bind(table)
        .fetch_optional(pool)
        .await
        .map_err(|e| db_error(&format!("looking up table `{table}`"), e))?
        .ok_or_else(|| Error::NotFound(format!("table `{table}` no longer exists")))
}

/// The usable tables, and the tables under the usable views (a plan names
/// those, not the view).
pub(crate) async fn allowed_relations(
    pool: &PgPool,
    schema: Option<&str>,
    usable: &[String],
) -> Result<BTreeSet<Relation>> {
    let mut allowed = BTreeSet::new();
    let mut views: Vec<i64> = Vec::new();
    for table in usable {
        let (oid, nspname, kind) = find(pool, schema, table).await?;
        allowed.insert(Relation {
            schema: nspname,
            name: table.clone(),
        });
        if kind == "v" || kind == "m" {
            views.push(oid);
        }
    }
    let mut seen: BTreeSet<i64> = views.iter().copied().collect();
    while let Some(view) = views.pop() {
        let under: Vec<(i64, String, String, String)> = sqlx::query_as(
            "SELECT DISTINCT c.oid::bigint, n.nspname::text, c.relname::text, c.relkind::text \
             FROM pg_rewrite r \
             JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid \
               AND d.refclassid = 'pg_class'::regclass \
             JOIN pg_class c ON c.oid = d.refobjid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE r.ev_class = $1::oid AND c.oid <> $1::oid",
        )
        .bind(view)
        .fetch_all(pool)
        .await
        .map_err(|e| db_error("reading what a view reads", e))?;
        for (oid, nspname, name, kind) in under {
            allowed.insert(Relation {
                schema: nspname,
                name,
            });
            if (kind == "v" || kind == "m") && seen.insert(oid) {
                views.push(oid);
            }
        }
    }
    Ok(allowed)
}

/// A column: name, `format_type`, kind of type, comment, longest enum
/// label, a domain's base type.
type ColumnRow = (
    String,
    String,
    String,
    Option<String>,
    Option<i32>,
    Option<String>,
);

/// LlamaIndex's `get_single_table_info` on PostgreSQL.
pub(crate) async fn table_info(pool: &PgPool, schema: Option<&str>, table: &str) -> Result<String> {
    let (oid, _, _) = find(pool, schema, table).await?;
    let err = |e| db_error(&format!("describing table `{table}`"), e);
    let columns: Vec<ColumnRow> =
        sqlx::query_as(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), t.typtype::text, \
               col_description(a.attrelid, a.attnum), \
               (SELECT max(length(e.enumlabel))::int FROM pg_enum e WHERE e.enumtypid = a.atttypid), \
               CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) END \
             FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
             WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum",
        )
        .bind(oid)
        .fetch_all(pool)
        .await
        .map_err(err)?;
    let columns: Vec<String> = columns
        .into_iter()
        .map(|(name, formatted, kind, comment, enum_len, domain)| {
            let ty = match (kind.as_str(), enum_len, domain) {
                ("e", Some(n), _) => format!("VARCHAR({n})"),
                ("d", _, Some(base)) => sqlalchemy_type(&base),
                _ => sqlalchemy_type(&formatted),
            };
            match comment {
                Some(c) if !c.is_empty() => format!("{name} ({ty}): '{c}'"),
                _ => format!("{name} ({ty})"),
            }
        })
        .collect();
    let comment: Option<String> = sqlx::query_scalar("SELECT obj_description($1::oid, 'pg_class')")
        .bind(oid)
        .fetch_one(pool)
        .await
        .map_err(err)?;
    let keys: Vec<(String, Vec<String>, Vec<String>)> = sqlx::query_as(
        "SELECT rc.relname::text, \
           ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord) \
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord), \
           ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord) \
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord) \
         FROM pg_constraint con JOIN pg_class rc ON rc.oid = con.confrelid \
         WHERE con.conrelid = $1::oid AND con.contype = 'f' ORDER BY con.conname",
    )
    .bind(oid)
    .fetch_all(pool)
    .await
    .map_err(err)?;
    let mut out = format!("Table '{table}' has columns: {}, ", columns.join(", "));
    if let Some(comment) = comment.filter(|c| !c.is_empty()) {
        out.push_str(&format!("with comment: ({comment}) "));
    }
    if !keys.is_empty() {
        let keys: Vec<String> = keys
            .iter()
            .map(|(referred, from, to)| {
                format!("{} -> {referred}.{}", list_repr(from), list_repr(to))
            })
            .collect();
        out.push_str(&format!(" and foreign keys: {}", keys.join(", ")));
    }
    out.push('.');
    Ok(out)
}

fn list_repr(items: &[String]) -> String {
    py_repr(&Value::Array(
        items.iter().cloned().map(Value::String).collect(),
    ))
}

/// `str()` of the type SQLAlchemy reflects from PostgreSQL's `format_type`
/// (`character varying(20)` → `VARCHAR(20)`, `timestamp with time zone` →
/// `TIMESTAMP`, any array → `ARRAY`); a type it does not know is `NULL`.
pub(crate) fn sqlalchemy_type(formatted: &str) -> String {
    if formatted.ends_with("[]") {
        return "ARRAY".into();
    }
    let (base, args) = match formatted.split_once('(') {
        Some((base, rest)) => {
            let args = rest.split(')').next().unwrap_or_default();
            // `timestamp(3) with time zone`: the words after the arguments too.
            let tail = rest.split_once(')').map_or("", |(_, t)| t);
            (format!("{base}{tail}"), Some(args.replace(',', ", ")))
        }
        None => (formatted.to_owned(), None),
    };
    let with_args = |name: &str| match &args {
        Some(a) => format!("{name}({a})"),
        None => name.to_owned(),
    };
    match base.trim() {
        "integer" => "INTEGER".into(),
        "bigint" => "BIGINT".into(),
        "smallint" => "SMALLINT".into(),
        "numeric" => with_args("NUMERIC"),
        "real" => "REAL".into(),
        "double precision" => "DOUBLE PRECISION".into(),
        "boolean" => "BOOLEAN".into(),
        "text" => "TEXT".into(),
        "character varying" => with_args("VARCHAR"),
        "character" => with_args("CHAR"),
        "\"char\"" | "name" => "VARCHAR".into(),
        "date" => "DATE".into(),
        "timestamp without time zone" | "timestamp with time zone" => "TIMESTAMP".into(),
        "time without time zone" | "time with time zone" => "TIME".into(),
        "interval" => "INTERVAL".into(),
        "uuid" => "UUID".into(),
        "json" => "JSON".into(),
        "jsonb" => "JSONB".into(),
        "bytea" => "BYTEA".into(),
        "bit" | "bit varying" => "BIT".into(),
        other @ ("inet" | "cidr" | "citext" | "macaddr" | "macaddr8" | "money" | "oid"
        | "regproc" | "regclass" | "tsvector" | "hstore" | "int4range" | "int8range"
        | "numrange" | "daterange" | "tsrange" | "tstzrange") => other.to_ascii_uppercase(),
        _ => "NULL".into(),
    }
}

/// Every relation a plan (`EXPLAIN (VERBOSE, FORMAT JSON)`) reads or writes.
pub(crate) fn plan_relations(plan: &Value, out: &mut BTreeSet<Relation>) {
    match plan {
        Value::Object(node) => {
            if let (Some(Value::String(name)), Some(Value::String(schema))) =
                (node.get("Relation Name"), node.get("Schema"))
            {
                out.insert(Relation {
                    schema: schema.clone(),
                    name: name.clone(),
                });
            }
            node.values().for_each(|v| plan_relations(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| plan_relations(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_named_as_sqlalchemy_names_them() {
        for (pg, sa) in [
            ("numeric(10,2)", "NUMERIC(10, 2)"),
            ("character varying(20)", "VARCHAR(20)"),
            ("timestamp(3) with time zone", "TIMESTAMP"),
            ("integer[]", "ARRAY"),
            ("character(3)", "CHAR(3)"),
            ("double precision", "DOUBLE PRECISION"),
            ("vector(3)", "NULL"),
            ("inet", "INET"),
        ] {
            assert_eq!(sqlalchemy_type(pg), sa, "{pg}");
        }
    }
}
