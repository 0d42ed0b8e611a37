//! Core [`MetadataFilters`] as a SQL condition on the `metadata_` column, with
//! the semantics of `ragloom_core::vector_stores::matches` (Python's, in process).
//!
//! Every key and value is a bound parameter; the statement text only holds
//! operators, JSON type names and array positions. Each leaf is written so that
//! it is `TRUE`, `FALSE`, or `NULL` exactly where Python raises (a comparison
//! between a string and a number, `text_match` on a list, ...); a leaf then
//! reads `NULL` as "no match", so `not` groups stay correct. A missing key or a
//! JSON `null` matches only `!=`, `nin` and `is_empty`, as in core.
//!
//! Values compare as Python compares them: numbers and booleans as exact
//! decimals (`True == 1`, `2 == 2.0`), strings by code point (`COLLATE "C"`),
//! lists element by element. `text_match_insensitive` lowercases both sides in
//! PostgreSQL, with ICU's root locale when the server has it (as Python's
//! `str.lower`), else with the database's own `LC_CTYPE`.

use crate::sql::{Arg, Sql};
use ragloom_core::vector_stores::{
    FilterCondition, FilterItem, FilterOperator, MetadataFilter, MetadataFilters,
};
use serde_json::Value;

/// The metadata column as `jsonb`, whether the table stores `json` or `jsonb`.
const META: &str = "metadata_::jsonb";

/// Writes filter conditions into a [`Sql`], binding every key and value.
pub(crate) struct FilterSql<'a> {
    sql: &'a mut Sql,
    /// `COLLATE "und-x-icu"` when the server has ICU, for case-insensitive matching.
    lower_collation: &'static str,
}

impl<'a> FilterSql<'a> {
    /// A writer binding into `sql`; `icu` says whether the server has the
    /// `und-x-icu` collation.
    pub(crate) fn new(sql: &'a mut Sql, icu: bool) -> Self {
        Self {
            sql,
            lower_collation: if icu { " COLLATE \"und-x-icu\"" } else { "" },
        }
    }

    /// The condition for a whole group (returned, not yet pushed).
    pub(crate) fn group(&mut self, filters: &MetadataFilters) -> String {
        if filters.filters.is_empty() {
            return "TRUE".into();
        }
        let parts: Vec<String> = filters
            .filters
            .iter()
            .map(|item| match item {
                FilterItem::Filter(f) => self.leaf(f),
                FilterItem::Filters(group) => self.group(group),
            })
            .collect();
        match filters.condition {
            FilterCondition::And => format!("({})", parts.join(" AND ")),
            FilterCondition::Or => format!("({})", parts.join(" OR ")),
            FilterCondition::Not => format!("(NOT ({}))", parts.join(" OR ")),
        }
    }

    fn bind_text(&mut self, s: &str) -> String {
        self.sql.bind(Arg::Text(s.to_string()))
    }

    fn leaf(&mut self, filter: &MetadataFilter) -> String {
        let key = self.bind_text(&filter.key);
        let v = format!("({META} -> {key})");
        if filter.operator == FilterOperator::IsEmpty {
            return format!("({v} IS NULL OR {v} IN ('null'::jsonb, '\"\"'::jsonb, '[]'::jsonb))");
        }
        let wanted = &filter.value;
        let expr = match filter.operator {
            FilterOperator::Eq => self.eq(&v, wanted),
            FilterOperator::Ne => format!("(NOT {})", self.eq(&v, wanted)),
            FilterOperator::Gt => self.cmp(&v, wanted, ">"),
            FilterOperator::Gte => self.cmp(&v, wanted, ">="),
            FilterOperator::Lt => self.cmp(&v, wanted, "<"),
            FilterOperator::Lte => self.cmp(&v, wanted, "<="),
            FilterOperator::In => self.is_in(&v, wanted),
            FilterOperator::Nin => format!("(NOT {})", self.is_in(&v, wanted)),
            FilterOperator::Contains => self.contains(&v, wanted),
            FilterOperator::Any => self.any_all(&v, wanted, true),
            FilterOperator::All => self.any_all(&v, wanted, false),
            FilterOperator::TextMatch => self.text_match(&v, wanted, false),
            FilterOperator::TextMatchInsensitive => self.text_match(&v, wanted, true),
            FilterOperator::IsEmpty => "TRUE".into(), // answered above
        };
        let when_absent = matches!(filter.operator, FilterOperator::Ne | FilterOperator::Nin);
        format!(
            "(CASE WHEN {v} IS NULL OR jsonb_typeof({v}) = 'null' THEN {} \
             ELSE COALESCE({expr}, FALSE) END)",
            if when_absent { "TRUE" } else { "FALSE" }
        )
    }

    /// `x` (a non-NULL jsonb) as an exact number: numbers and booleans, else NULL.
    fn num(x: &str) -> String {
        format!(
            "(CASE jsonb_typeof({x}) WHEN 'number' THEN ({x} #>> '{{}}')::numeric \
             WHEN 'boolean' THEN (CASE WHEN {x} = 'true'::jsonb THEN 1 ELSE 0 END)::numeric END)"
        )
    }

    /// Binds a boolean or number as the text of a `numeric`.
    fn bind_num(&mut self, value: &Value) -> String {
        self.sql
            .bind(Arg::Text(Self::num_text(value).unwrap_or_default()))
    }

    fn num_text(value: &Value) -> Option<String> {
        match value {
            Value::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Python's `x == wanted`; never NULL for a non-NULL `x`.
    fn eq(&mut self, x: &str, wanted: &Value) -> String {
        match wanted {
            Value::Null => format!("(jsonb_typeof({x}) = 'null')"),
            Value::Bool(_) | Value::Number(_) => {
                let p = self.bind_num(wanted);
                format!("COALESCE({} = {p}::numeric, FALSE)", Self::num(x))
            }
            Value::String(s) => {
                let p = self.bind_text(s);
                format!("({x} = to_jsonb({p}::text))")
            }
            Value::Array(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, w)| self.eq(&format!("({x} -> {i})"), w))
                    .collect();
                let all = all_of(&parts);
                format!(
                    "(CASE WHEN jsonb_typeof({x}) <> 'array' THEN FALSE \
                     WHEN jsonb_array_length({x}) <> {} THEN FALSE ELSE ({all}) END)",
                    items.len()
                )
            }
            Value::Object(map) => {
                let parts: Vec<String> = map
                    .iter()
                    .map(|(k, w)| {
                        let kp = self.bind_text(k);
                        let inner = self.eq(&format!("({x} -> {kp})"), w);
                        format!("COALESCE({x} ? {kp} AND {inner}, FALSE)")
                    })
                    .collect();
                let all = all_of(&parts);
                format!(
                    "(CASE WHEN jsonb_typeof({x}) <> 'object' THEN FALSE \
                     WHEN (SELECT count(*) FROM jsonb_object_keys({x})) <> {} THEN FALSE \
                     ELSE ({all}) END)",
                    map.len()
                )
            }
        }
    }

    /// Python's `x <op> wanted`; NULL where Python raises.
    fn cmp(&mut self, x: &str, wanted: &Value, op: &str) -> String {
        match wanted {
            Value::Bool(_) | Value::Number(_) => {
                let p = self.bind_num(wanted);
                format!("({} {op} {p}::numeric)", Self::num(x))
            }
            Value::String(s) => {
                let p = self.bind_text(s);
                // Byte order of UTF-8 is code point order, as Python compares.
                format!(
                    "(CASE WHEN jsonb_typeof({x}) = 'string' \
                     THEN ({x} #>> '{{}}') COLLATE \"C\" {op} {p}::text END)"
                )
            }
            Value::Array(items) => {
                // Python orders lists by their first unequal pair, else by length.
                let n = items.len();
                let len = format!("jsonb_array_length({x})");
                let mut out = format!("(CASE WHEN jsonb_typeof({x}) <> 'array' THEN NULL::boolean");
                for (i, w) in items.iter().enumerate() {
                    let elem = format!("({x} -> {i})");
                    let same = self.eq(&elem, w);
                    let order = self.cmp(&elem, w, op);
                    out.push_str(&format!(
                        " WHEN {len} <= {i} THEN ({len} {op} {n}) WHEN NOT {same} THEN {order}"
                    ));
                }
                out.push_str(&format!(" ELSE ({len} {op} {n}) END)"));
                out
            }
            Value::Null | Value::Object(_) => "NULL::boolean".into(),
        }
    }

    /// Python's `x in wanted`; NULL where Python raises.
    fn is_in(&mut self, x: &str, wanted: &Value) -> String {
        match wanted {
            Value::Array(items) => {
                let mut strings = Vec::new();
                let mut numbers = Vec::new();
                let mut terms = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => strings.push(s.clone()),
                        Value::Bool(_) | Value::Number(_) => {
                            numbers.push(Self::num_text(item).unwrap_or_default());
                        }
                        other => terms.push(self.eq(x, other)),
                    }
                }
                if !strings.is_empty() {
                    let p = self.sql.bind(Arg::TextArray(strings));
                    terms.push(format!(
                        "(jsonb_typeof({x}) = 'string' AND ({x} #>> '{{}}') = ANY({p}))"
                    ));
                }
                if !numbers.is_empty() {
                    let p = self.sql.bind(Arg::TextArray(numbers));
                    terms.push(format!(
                        "COALESCE({} = ANY({p}::numeric[]), FALSE)",
                        Self::num(x)
                    ));
                }
                if terms.is_empty() {
                    "FALSE".into()
                } else {
                    format!("({})", terms.join(" OR "))
                }
            }
            Value::String(s) => {
                let p = self.bind_text(s);
                // The metadata string must occur inside the filter's string.
                format!(
                    "(CASE WHEN jsonb_typeof({x}) = 'string' THEN strpos({p}::text, {x} #>> '{{}}') > 0 END)"
                )
            }
            Value::Object(_) => {
                let p = self.bind_text(&wanted.to_string());
                format!(
                    "(CASE jsonb_typeof({x}) WHEN 'string' THEN {p}::jsonb ? ({x} #>> '{{}}') \
                     WHEN 'array' THEN NULL::boolean WHEN 'object' THEN NULL::boolean ELSE FALSE END)"
                )
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => "NULL::boolean".into(),
        }
    }

    /// Python's `wanted in x`; NULL where Python raises.
    fn contains(&mut self, x: &str, wanted: &Value) -> String {
        let in_array = self.eq("_el._v", wanted);
        let (in_string, in_object) = match wanted {
            Value::String(s) => {
                let p = self.bind_text(s);
                (
                    format!("(strpos({x} #>> '{{}}', {p}) > 0)"),
                    format!("({x} ? {p})"),
                )
            }
            Value::Array(_) | Value::Object(_) => ("NULL::boolean".into(), "NULL::boolean".into()),
            _ => ("NULL::boolean".into(), "FALSE".into()),
        };
        format!(
            "(CASE jsonb_typeof({x}) \
             WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements({x}) AS _el(_v) WHERE {in_array}) \
             WHEN 'string' THEN {in_string} WHEN 'object' THEN {in_object} ELSE NULL::boolean END)"
        )
    }

    /// Python's `any(w in x for w in wanted)` / `all(...)`, stopping where
    /// Python stops (a raising item decides unless an earlier one already did).
    fn any_all(&mut self, x: &str, wanted: &Value, any: bool) -> String {
        let items: Vec<Value> = match wanted {
            Value::Array(items) => items.clone(),
            Value::String(s) => s.chars().map(|c| Value::String(c.to_string())).collect(),
            Value::Object(map) => map.keys().map(|k| Value::String(k.clone())).collect(),
            _ => return "NULL::boolean".into(),
        };
        if items.is_empty() {
            // Python's any([]) and all([]), whatever the metadata holds.
            return if any { "FALSE" } else { "TRUE" }.into();
        }
        let mut out = String::from("(CASE");
        for item in &items {
            let c = self.contains(x, item);
            if any {
                out.push_str(&format!(
                    " WHEN {c} IS NULL THEN NULL::boolean WHEN {c} THEN TRUE"
                ));
            } else {
                out.push_str(&format!(
                    " WHEN {c} IS NULL THEN NULL::boolean WHEN NOT {c} THEN FALSE"
                ));
            }
        }
        out.push_str(if any {
            " ELSE FALSE END)"
        } else {
            " ELSE TRUE END)"
        });
        out
    }

    fn text_match(&mut self, x: &str, wanted: &Value, insensitive: bool) -> String {
        let Value::String(s) = wanted else {
            return "NULL::boolean".into();
        };
        let p = self.bind_text(s);
        let found = if insensitive {
            let c = self.lower_collation;
            format!("strpos(lower(({x} #>> '{{}}'){c}), lower({p}::text{c})) > 0")
        } else {
            format!("strpos({x} #>> '{{}}', {p}) > 0")
        };
        format!("(CASE WHEN jsonb_typeof({x}) = 'string' THEN {found} END)")
    }
}

/// `parts` joined by `AND`; `TRUE` when there are none (Python's `all([])`).
fn all_of(parts: &[String]) -> String {
    if parts.is_empty() {
        "TRUE".to_string()
    } else {
        parts.join(" AND ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(filters: &MetadataFilters) -> Sql {
        let mut sql = Sql::default();
        let cond = FilterSql::new(&mut sql, true).group(filters);
        sql.push(&cond);
        sql
    }

    #[test]
    fn keys_and_values_are_bound_never_inlined() {
        let evil = "x'); DROP TABLE data_t; --";
        let filters = MetadataFilters::or([
            MetadataFilter::eq(evil, evil),
            MetadataFilter::is_in(evil, [evil, "b"]),
            MetadataFilter::text_match_insensitive(evil, evil),
            MetadataFilter::contains(evil, json!({"k": evil})),
            MetadataFilter::gt(evil, json!([evil, 1])),
        ]);
        let sql = render(&filters);
        assert!(!sql.text.contains("DROP"), "{}", sql.text);
        assert!(!sql.text.contains(evil));
        assert!(
            sql.args
                .iter()
                .any(|a| matches!(a, Arg::Text(s) if s == evil))
        );
    }

    #[test]
    fn empty_groups_match_everything() {
        assert_eq!(render(&MetadataFilters::default()).text, "TRUE");
        let nested = MetadataFilters::not([MetadataFilters::default()]);
        assert_eq!(render(&nested).text, "(NOT (TRUE))");
    }

    #[test]
    fn absent_keys_match_only_negations() {
        let ne = render(&MetadataFilters::and([MetadataFilter::ne("a", 1)]));
        assert!(ne.text.contains("= 'null' THEN TRUE"), "{}", ne.text);
        let eq = render(&MetadataFilters::and([MetadataFilter::eq("a", 1)]));
        assert!(eq.text.contains("= 'null' THEN FALSE"), "{}", eq.text);
    }
}
