//! A PostgreSQL table as `CREATE TABLE` text, as SQLAlchemy renders a table
//! it reflected (`CreateTable(table).compile(engine)`): what LlamaIndex's
//! `DatabaseToolSpec.describe_tables` shows the model.

use super::db_error;
use ragloom_core::error::Result;
use sqlx::PgPool;

/// A column: name, `format_type`, default, not null, identity kind, and
/// for an identity its sequence's increment, start, min, max, cache, cycle.
type ColumnRow = (
    String,
    String,
    Option<String>,
    bool,
    String,
    Option<(i64, i64, i64, i64, i64, bool)>,
);

/// What the column query returns.
type ColumnQueryRow = (
    String,
    String,
    Option<String>,
    bool,
    String,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<bool>,
);

/// A constraint: name, kind, definition, referred schema, whether that is
/// the current schema, delete and update actions, referred table.
type ConstraintRow = (
    String,
    String,
    String,
    Option<String>,
    bool,
    String,
    String,
    String,
);

/// `CREATE TABLE` for the table with `oid`, shown as `shown` (`shop.orders`
/// when the database has a schema, as SQLAlchemy shows a table it reflected
/// from one; then foreign keys name their table's schema too).
pub(crate) async fn create_table(
    pool: &PgPool,
    oid: i64,
    shown: &str,
    qualify: bool,
) -> Result<String> {
    let err = |e| db_error(&format!("reading the definition of `{shown}`"), e);
    let rows: Vec<ColumnQueryRow> =
        sqlx::query_as(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), \
               pg_get_expr(d.adbin, d.adrelid), a.attnotnull, a.attidentity::text, \
               s.seqincrement, s.seqstart, s.seqmin, s.seqmax, s.seqcache, s.seqcycle \
             FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             LEFT JOIN pg_sequence s ON a.attidentity <> '' \
               AND s.seqrelid = pg_get_serial_sequence(quote_ident(n.nspname) || '.' || quote_ident(c.relname), a.attname)::regclass \
             WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        )
        .bind(oid)
        .fetch_all(pool)
        .await
        .map_err(err)?;
    let columns: Vec<ColumnRow> = rows
        .into_iter()
        .map(|(n, t, d, nn, id, inc, start, min, max, cache, cycle)| {
            let seq = match (inc, start, min, max, cache, cycle) {
                (Some(a), Some(b), Some(c), Some(d), Some(e), Some(f)) => Some((a, b, c, d, e, f)),
                _ => None,
            };
            (n, t, d, nn, id, seq)
        })
        .collect();
    let mut items: Vec<String> = columns.iter().map(column).collect();

    // Constraints in the order SQLAlchemy reflects them: the primary key,
    // foreign keys, unique constraints, checks, each kind by name.
    let constraints: Vec<ConstraintRow> =
        sqlx::query_as(
            "SELECT con.conname::text, con.contype::text, pg_get_constraintdef(con.oid), \
               rn.nspname::text, coalesce(rn.nspname = current_schema(), true), \
               con.confdeltype::text, con.confupdtype::text, \
               coalesce((SELECT rc.relname::text FROM pg_class rc WHERE rc.oid = con.confrelid), '') \
             FROM pg_constraint con \
             LEFT JOIN pg_class r ON r.oid = con.confrelid \
             LEFT JOIN pg_namespace rn ON rn.oid = r.relnamespace \
             WHERE con.conrelid = $1::oid AND con.contype IN ('p', 'f', 'u', 'c') \
             ORDER BY array_position(ARRAY['p', 'f', 'u', 'c'], con.contype::text), con.conname",
        )
        .bind(oid)
        .fetch_all(pool)
        .await
        .map_err(err)?;
    for (cname, kind, def, ref_schema, ref_default, on_delete, on_update, ref_table) in constraints
    {
        let body = match kind.as_str() {
            "p" | "u" => {
                let cols = parenthesised(&def).unwrap_or_default();
                if kind == "p" {
                    format!("PRIMARY KEY ({cols})")
                } else if def.contains("NULLS NOT DISTINCT") {
                    format!("UNIQUE NULLS NOT DISTINCT ({cols})")
                } else {
                    format!("UNIQUE NULLS DISTINCT ({cols})")
                }
            }
            "f" => {
                let from = parenthesised(&def).unwrap_or_default();
                let to = def
                    .split_once(" REFERENCES ")
                    .and_then(|(_, rest)| parenthesised(rest))
                    .unwrap_or_default();
                let target = match (&ref_schema, qualify || !ref_default) {
                    (Some(s), true) => format!("{s}.{ref_table}"),
                    _ => ref_table.clone(),
                };
                let mut out = format!("FOREIGN KEY({from}) REFERENCES {target} ({to})");
                for (word, action) in [("DELETE", &on_delete), ("UPDATE", &on_update)] {
                    if let Some(a) = referential_action(action) {
                        out.push_str(&format!(" ON {word} {a}"));
                    }
                }
                out
            }
            _ => {
                let expr = def.strip_prefix("CHECK ").unwrap_or(&def);
                let expr = expr.strip_suffix(" NOT VALID").unwrap_or(expr);
                let inner = unwrap_parens(expr);
                format!("CHECK ({})", unwrap_parens(inner))
            }
        };
        items.push(format!("CONSTRAINT {cname} {body}"));
    }
    Ok(format!(
        "\nCREATE TABLE {shown} (\n\t{}\n)\n\n",
        items.join(", \n\t")
    ))
}

/// One column as SQLAlchemy's PostgreSQL dialect renders it.
fn column((name, formatted, default, not_null, identity, seq): &ColumnRow) -> String {
    let ty = ddl_type(formatted);
    let serial = default
        .as_deref()
        .is_some_and(|d| d.starts_with("nextval("));
    if serial {
        let kind = match ty.as_str() {
            "BIGINT" => "BIGSERIAL",
            "SMALLINT" => "SMALLSERIAL",
            _ => "SERIAL",
        };
        return format!("{name} {kind}{}", if *not_null { " NOT NULL" } else { "" });
    }
    let mut out = format!("{name} {ty}");
    if let Some(default) = default {
        out.push_str(&format!(" DEFAULT {default}"));
    }
    if !identity.is_empty() {
        let (inc, start, min, max, cache, cycle) = seq.unwrap_or((1, 1, 1, i64::MAX, 1, false));
        out.push_str(&format!(
            " GENERATED {} AS IDENTITY (INCREMENT BY {inc} START WITH {start} MINVALUE {min} MAXVALUE {max} CACHE {cache} {})",
            if identity == "a" { "ALWAYS" } else { "BY DEFAULT" },
            if cycle { "CYCLE" } else { "NO CYCLE" }
        ));
        return out;
    }
    if *not_null {
        out.push_str(" NOT NULL");
    }
    out
}

/// `format_type` as SQLAlchemy's PostgreSQL type compiler prints the type it
/// reflects: `character varying(20)` → `VARCHAR(20)`, `numeric(10,2)` →
/// `NUMERIC(10, 2)`, `integer[]` → `INTEGER[]`; other names upper-cased,
/// enums and other user types as they are named.
pub(crate) fn ddl_type(formatted: &str) -> String {
    if let Some(element) = formatted.strip_suffix("[]") {
        return format!("{}[]", ddl_type(element));
    }
    let (base, args, tail) = match formatted.split_once('(') {
        Some((base, rest)) => {
            let (args, tail) = rest.split_once(')').unwrap_or((rest, ""));
            (base, Some(args.replace(',', ", ")), tail)
        }
        None => (formatted, None, ""),
    };
    let args = args.map_or(String::new(), |a| format!("({a})"));
    let builtin = matches!(
        base.split(' ').next().unwrap_or_default(),
        "integer"
            | "bigint"
            | "smallint"
            | "numeric"
            | "real"
            | "double"
            | "boolean"
            | "text"
            | "date"
            | "timestamp"
            | "time"
            | "interval"
            | "uuid"
            | "json"
            | "jsonb"
            | "bytea"
            | "money"
            | "inet"
            | "cidr"
            | "macaddr"
            | "oid"
            | "tsvector"
            | "bit"
    );
    match base {
        "character varying" => format!("VARCHAR{args}"),
        "character" => format!("CHAR{args}"),
        _ if builtin => format!(
            "{}{args}{}",
            base.to_ascii_uppercase(),
            tail.to_ascii_uppercase()
        ),
        // An enum or another type of the database's own, as it is named.
        _ => format!("{base}{args}{tail}"),
    }
}

/// The text inside the first parentheses of `def`.
fn parenthesised(def: &str) -> Option<String> {
    let (_, rest) = def.split_once('(')?;
    Some(rest.split_once(')')?.0.to_owned())
}

/// `expr` without one pair of parentheses around the whole of it.
fn unwrap_parens(expr: &str) -> &str {
    let Some(inner) = expr.strip_prefix('(').and_then(|e| e.strip_suffix(')')) else {
        return expr;
    };
    // `(a) AND (b)` is not wrapped as a whole.
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return expr;
                }
            }
            _ => {}
        }
    }
    inner
}

fn referential_action(code: &str) -> Option<&'static str> {
    match code {
        "r" => Some("RESTRICT"),
        "c" => Some("CASCADE"),
        "n" => Some("SET NULL"),
        "d" => Some("SET DEFAULT"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_sqlalchemy_s_postgresql_compiler_prints_them() {
        for (pg, sa) in [
            ("numeric(10,2)", "NUMERIC(10, 2)"),
            ("character varying(64)", "VARCHAR(64)"),
            ("timestamp with time zone", "TIMESTAMP WITH TIME ZONE"),
            ("double precision", "DOUBLE PRECISION"),
            (
                "timestamp(3) without time zone",
                "TIMESTAMP(3) WITHOUT TIME ZONE",
            ),
            ("integer[]", "INTEGER[]"),
            ("shop.order_status", "shop.order_status"),
        ] {
            assert_eq!(ddl_type(pg), sa, "{pg}");
        }
        assert_eq!(unwrap_parens("((quantity > 0))"), "(quantity > 0)");
        assert_eq!(unwrap_parens("(a > 0) AND (b > 0)"), "(a > 0) AND (b > 0)");
    }
}
