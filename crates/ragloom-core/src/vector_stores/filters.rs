//! Metadata filter evaluation for in-process stores: the one function every
//! ragloom store calls, with LlamaIndex's semantics (`vector_stores/utils.py`).
//!
//! Values compare as Python compares them: numbers as numbers (`2 == 2.0`,
//! `True == 1`, integers exactly even beyond 2^53), strings by code point,
//! lists element by element. A missing key or a `null` value matches only `!=`
//! and `nin` (and `is_empty`). Where Python would raise (`>` between a string
//! and a number, `text_match` on a number, `in` with a scalar), the filter
//! simply does not match. `in`, `any` and `all` iterate a string value
//! character by character, as Python does.
//!
//! Nested [`MetadataFilters`] are evaluated recursively; LlamaIndex's
//! `SimpleVectorStore` rejects nesting, ragloom accepts it. `and` needs every
//! item to match, `or` one, `not` none (as LlamaIndex's other stores define
//! it). A group with no filters matches everything, whatever its condition.

use super::types::{FilterCondition, FilterItem, FilterOperator, MetadataFilter, MetadataFilters};
use crate::schema::Metadata;
use serde_json::{Number, Value};
use std::cmp::Ordering;

/// Whether `metadata` satisfies `filters`.
pub fn matches(filters: &MetadataFilters, metadata: &Metadata) -> bool {
    if filters.filters.is_empty() {
        return true;
    }
    let mut results = filters.filters.iter().map(|item| match item {
        FilterItem::Filter(f) => filter_matches(f, metadata),
        FilterItem::Filters(group) => matches(group, metadata),
    });
    match filters.condition {
        FilterCondition::And => results.all(|m| m),
        FilterCondition::Or => results.any(|m| m),
        FilterCondition::Not => !results.any(|m| m),
    }
}

fn filter_matches(filter: &MetadataFilter, metadata: &Metadata) -> bool {
    let found = metadata.get(&filter.key);
    if filter.operator == FilterOperator::IsEmpty {
        return match found {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(_) => false,
        };
    }
    match found {
        None | Some(Value::Null) => {
            matches!(filter.operator, FilterOperator::Ne | FilterOperator::Nin)
        }
        Some(value) => apply(filter.operator, value, &filter.value).unwrap_or(false),
    }
}

/// `Some(answer)`, or `None` where Python raises `TypeError`.
fn apply(op: FilterOperator, meta: &Value, wanted: &Value) -> Option<bool> {
    use FilterOperator as Op;
    match op {
        Op::Eq => Some(py_eq(meta, wanted)),
        Op::Ne => Some(!py_eq(meta, wanted)),
        Op::Gt => py_cmp(meta, wanted).map(Ordering::is_gt),
        Op::Gte => py_cmp(meta, wanted).map(Ordering::is_ge),
        Op::Lt => py_cmp(meta, wanted).map(Ordering::is_lt),
        Op::Lte => py_cmp(meta, wanted).map(Ordering::is_le),
        Op::In => py_contains(wanted, meta),
        Op::Nin => py_contains(wanted, meta).map(|found| !found),
        Op::Contains => py_contains(meta, wanted),
        Op::TextMatch => match (meta, wanted) {
            (Value::String(m), Value::String(w)) => Some(m.contains(w.as_str())),
            _ => None,
        },
        Op::TextMatchInsensitive => match (meta, wanted) {
            (Value::String(m), Value::String(w)) => {
                Some(m.to_lowercase().contains(&w.to_lowercase()))
            }
            _ => None,
        },
        Op::All => {
            for item in py_iter(wanted)? {
                if !py_contains(meta, &item)? {
                    return Some(false);
                }
            }
            Some(true)
        }
        Op::Any => {
            for item in py_iter(wanted)? {
                if py_contains(meta, &item)? {
                    return Some(true);
                }
            }
            Some(false)
        }
        Op::IsEmpty => None, // handled before, where a missing key still counts
    }
}

/// A JSON number or boolean as Python sees it: an exact integer or a float.
#[derive(Clone, Copy, Debug)]
pub(super) enum Num {
    Int(i128),
    Float(f64),
}

pub(super) fn as_num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(number(n)),
        _ => None,
    }
}

fn number(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

pub(super) fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => int_float_cmp(x, y),
        (Num::Float(x), Num::Int(y)) => int_float_cmp(y, x).map(Ordering::reverse),
    }
}

/// Exact comparison of an integer with a float, as Python does (no rounding
/// of the integer: 2**53 + 1 > 2.0**53).
fn int_float_cmp(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        });
    }
    // Rounding is monotonic, so a strict difference after rounding is real;
    // a tie means `f` is integral and converts to i128 exactly.
    match (i as f64).partial_cmp(&f)? {
        Ordering::Equal => Some(i.cmp(&(f as i128))),
        other => Some(other),
    }
}

/// Python's `==` on JSON values.
fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (as_num(a), as_num(b)) {
        return num_cmp(x, y) == Some(Ordering::Equal);
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => false,
    }
}

/// Python's ordering of two values; `None` where Python raises `TypeError`.
fn py_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (as_num(a), as_num(b)) {
        return num_cmp(x, y);
    }
    match (a, b) {
        // Rust's `str` order is byte order of UTF-8, which is code point order.
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Array(x), Value::Array(y)) => {
            // Python skips equal elements with `==` and orders the first
            // differing pair; equal prefixes order by length.
            match x.iter().zip(y).find(|(p, q)| !py_eq(p, q)) {
                Some((p, q)) => py_cmp(p, q),
                None => Some(x.len().cmp(&y.len())),
            }
        }
        _ => None,
    }
}

/// Python's `item in container`; `None` where Python raises `TypeError`.
fn py_contains(container: &Value, item: &Value) -> Option<bool> {
    match container {
        Value::Array(items) => Some(items.iter().any(|x| py_eq(x, item))),
        Value::String(s) => match item {
            Value::String(needle) => Some(s.contains(needle.as_str())),
            _ => None,
        },
        Value::Object(map) => match item {
            Value::String(k) => Some(map.contains_key(k)),
            // Unhashable keys raise; other scalars are never string keys.
            Value::Array(_) | Value::Object(_) => None,
            _ => Some(false),
        },
        _ => None,
    }
}

/// Python's `iter(value)`: list items, a string's characters, an object's keys.
fn py_iter(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items.clone()),
        Value::String(s) => Some(s.chars().map(|c| Value::String(c.to_string())).collect()),
        Value::Object(map) => Some(map.keys().map(|k| Value::String(k.clone())).collect()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn md(v: Value) -> Metadata {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn numbers_compare_as_numbers() {
        let m = md(json!({"a": 2, "b": 2.5, "big": 9007199254740993u64, "t": true}));
        assert!(matches(&MetadataFilters::from_pairs([("a", 2.0)]), &m));
        assert!(matches(
            &MetadataFilters::and([MetadataFilter::lt("a", 2.5)]),
            &m
        ));
        assert!(matches(
            &MetadataFilters::and([MetadataFilter::gt("b", 2)]),
            &m
        ));
        // 2**53 + 1 is not 2.0**53, though both round to the same f64.
        assert!(!matches(
            &MetadataFilters::from_pairs([("big", 9007199254740992.0)]),
            &m
        ));
        assert!(matches(
            &MetadataFilters::and([MetadataFilter::gt("big", 9007199254740992.0)]),
            &m
        ));
        assert!(matches(&MetadataFilters::from_pairs([("t", 1)]), &m));
    }

    #[test]
    fn inapplicable_filters_do_not_match() {
        let m = md(json!({"s": "abc", "n": 3}));
        for f in [
            MetadataFilter::gt("s", 1),
            MetadataFilter::lt("n", "z"),
            MetadataFilter::text_match("n", "3"),
            MetadataFilter::new("n", 3, FilterOperator::In),
            MetadataFilter::contains("n", 3),
        ] {
            assert!(!matches(&MetadataFilters::and([f.clone()]), &m), "{f:?}");
        }
    }

    #[test]
    fn missing_keys_match_only_negations() {
        let m = md(json!({"x": null}));
        for key in ["x", "absent"] {
            assert!(matches(
                &MetadataFilters::and([MetadataFilter::ne(key, 1)]),
                &m
            ));
            assert!(matches(
                &MetadataFilters::and([MetadataFilter::nin(key, [1])]),
                &m
            ));
            assert!(matches(
                &MetadataFilters::and([MetadataFilter::is_empty(key)]),
                &m
            ));
            assert!(!matches(
                &MetadataFilters::and([MetadataFilter::eq(key, 1)]),
                &m
            ));
            assert!(!matches(
                &MetadataFilters::and([MetadataFilter::text_match(key, "")]),
                &m
            ));
        }
    }

    #[test]
    fn nested_groups_combine() {
        let m = md(json!({"author": "Ann", "year": 2020, "tags": ["x", "y"]}));
        let inner = MetadataFilters::or([
            MetadataFilter::eq("year", 1999),
            MetadataFilter::any("tags", ["y"]),
        ]);
        assert!(matches(
            &MetadataFilters::and([
                FilterItem::from(MetadataFilter::eq("author", "Ann")),
                inner.clone().into()
            ]),
            &m
        ));
        assert!(!matches(&MetadataFilters::not([inner.clone()]), &m));
        assert!(matches(
            &MetadataFilters::not([MetadataFilters::and([
                MetadataFilter::eq("year", 2020),
                MetadataFilter::eq("author", "Bob")
            ])]),
            &m
        ));
        assert!(matches(&MetadataFilters::not(Vec::<FilterItem>::new()), &m));
    }
}
