//! Equality indexes over metadata keys for [`SimpleVectorStore`](super::SimpleVectorStore):
//! the rows holding each scalar value, so `key == v` and `key in [...]` visit matching rows only.
//!
//! Values Python's `==` calls equal (`1`, `1.0`, `true`) share one
//! [`ScalarKey`] and no others do, so a lookup yields exactly the rows the
//! filter keeps: a query whose only filter is that equality uses them as
//! they are; other filters beside it are checked on those rows.

use super::types::{FilterCondition, FilterItem, FilterOperator, MetadataFilters};
use crate::schema::Metadata;
use serde_json::Value;
use std::collections::HashMap;

/// A scalar metadata value reduced so that values equal under Python's `==`
/// have equal keys: integral numbers (and booleans) by their integer value,
/// other finite numbers by their bits, strings as they are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ScalarKey {
    Int(i128),
    Float(u64),
    Str(String),
}

impl ScalarKey {
    /// The key of `value`; `None` for null, NaN, lists and objects, which
    /// are never indexed (an equality filter on them scans instead).
    fn of(value: &Value) -> Option<Self> {
        match value {
            Value::Bool(b) => Some(Self::Int(i128::from(*b))),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Self::Int(i128::from(i)))
                } else if let Some(u) = n.as_u64() {
                    Some(Self::Int(i128::from(u)))
                } else {
                    Self::of_float(n.as_f64()?)
                }
            }
            Value::String(s) => Some(Self::Str(s.clone())),
            _ => None,
        }
    }

    fn of_float(f: f64) -> Option<Self> {
        if f.is_nan() {
            return None;
        }
        // 2^127: integral floats below it convert to i128 exactly, and an
        // integral float equals exactly the integer of that value.
        const LIMIT: f64 = 1.7014118346046923e38;
        if f.fract() == 0.0 && f.abs() < LIMIT {
            // `as` is exact here: `f` is integral and in range (and -0.0 is 0).
            Some(Self::Int(f as i128))
        } else {
            Some(Self::Float(f.to_bits()))
        }
    }
}

/// The rows of one metadata key, by value.
#[derive(Debug, Default)]
pub(super) struct KeyIndex {
    rows: HashMap<ScalarKey, Vec<u32>>,
}

impl KeyIndex {
    /// Indexes `key` over every row's metadata (rows are positions in `metadata`).
    pub(super) fn build(metadata: &[Option<Metadata>], key: &str) -> Self {
        let mut rows: HashMap<ScalarKey, Vec<u32>> = HashMap::new();
        for (r, m) in metadata.iter().enumerate() {
            let Some(k) = m.as_ref().and_then(|m| m.get(key)).and_then(ScalarKey::of) else {
                continue;
            };
            // A store's rows fit in u32: 4 billion vectors would not fit in memory anyway.
            if let Ok(r) = u32::try_from(r) {
                rows.entry(k).or_default().push(r);
            }
        }
        Self { rows }
    }

    /// The rows whose value may equal `value`, ascending; `None` when
    /// `value` cannot be looked up (null, NaN, a list or an object).
    fn lookup(&self, value: &Value) -> Option<&[u32]> {
        let key = ScalarKey::of(value)?;
        Some(self.rows.get(&key).map_or(&[], Vec::as_slice))
    }
}

/// The keys whose index could narrow `filters`: those of top-level `==` and
/// `in [...]` filters of an `and` group, with values an index can look up.
pub(super) fn narrowing_keys(filters: &MetadataFilters) -> Vec<&str> {
    if filters.condition != FilterCondition::And {
        return Vec::new();
    }
    let mut keys: Vec<&str> = filters
        .filters
        .iter()
        .filter_map(|item| match item {
            FilterItem::Filter(f) if lookup_values(f.operator, &f.value).is_some() => {
                Some(f.key.as_str())
            }
            _ => None,
        })
        .collect();
    keys.dedup();
    keys
}

/// The values `key <operator> value` matches when equal to them, if the
/// filter is an equality an index answers.
fn lookup_values(operator: FilterOperator, value: &Value) -> Option<Vec<&Value>> {
    let indexable = |v: &&Value| ScalarKey::of(v).is_some();
    match operator {
        FilterOperator::Eq => Some(vec![value]).filter(|v| v.iter().all(indexable)),
        // `in` with a string or an object tests substrings or keys: not an equality.
        FilterOperator::In => match value {
            Value::Array(items) if items.iter().all(|v| indexable(&v)) => {
                Some(items.iter().collect())
            }
            _ => None,
        },
        _ => None,
    }
}

/// Rows found through the key indexes.
#[derive(Debug, PartialEq)]
pub(super) struct Narrowed {
    /// Every row that can match the filters, ascending.
    pub rows: Vec<usize>,
    /// Whether these are exactly the rows the filters keep (the filters are
    /// that one equality), so checking them again is unnecessary.
    pub exact: bool,
}

/// Every row that can match `filters`, from the indexes `index` returns for
/// [`narrowing_keys`]: the smallest row set among the top-level equality
/// filters. `None` when no filter narrows.
pub(super) fn narrowed_rows(
    filters: &MetadataFilters,
    index: impl Fn(&str) -> Option<std::sync::Arc<KeyIndex>>,
) -> Option<Narrowed> {
    if filters.condition != FilterCondition::And {
        return None;
    }
    let mut best: Option<Vec<usize>> = None;
    for item in &filters.filters {
        let FilterItem::Filter(f) = item else {
            continue;
        };
        let Some(values) = lookup_values(f.operator, &f.value) else {
            continue;
        };
        let Some(idx) = index(&f.key) else {
            continue;
        };
        let mut rows: Vec<usize> = Vec::new();
        for v in values {
            if let Some(found) = idx.lookup(v) {
                rows.extend(found.iter().map(|&r| r as usize));
            }
        }
        if best.as_ref().is_none_or(|b| rows.len() < b.len()) {
            rows.sort_unstable();
            rows.dedup();
            best = Some(rows);
        }
    }
    best.map(|rows| Narrowed {
        rows,
        exact: filters.filters.len() == 1,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::vector_stores::types::MetadataFilter;
    use serde_json::json;

    fn meta(v: Value) -> Option<Metadata> {
        v.as_object().cloned()
    }

    #[test]
    fn values_python_calls_equal_share_a_key() {
        for (a, b) in [
            (json!(1), json!(1.0)),
            (json!(true), json!(1)),
            (json!(false), json!(0.0)),
            (json!(-0.0), json!(0)),
            (json!(u64::MAX), json!(u64::MAX)),
            (json!("x"), json!("x")),
        ] {
            assert_eq!(ScalarKey::of(&a), ScalarKey::of(&b), "{a} vs {b}");
        }
        assert_ne!(ScalarKey::of(&json!(1.5)), ScalarKey::of(&json!(1)));
        assert_ne!(ScalarKey::of(&json!("1")), ScalarKey::of(&json!(1)));
        assert_eq!(ScalarKey::of(&json!(null)), None);
        assert_eq!(ScalarKey::of(&json!([1])), None);
    }

    #[test]
    fn equality_and_in_narrow_other_operators_do_not() {
        let rows = vec![
            meta(json!({"k": "a", "n": 1})),
            meta(json!({"k": "b", "n": 2.0})),
            None,
            meta(json!({"k": ["a"], "n": true})),
            meta(json!({"k": "a"})),
        ];
        let index = |key: &str| Some(std::sync::Arc::new(KeyIndex::build(&rows, key)));
        let f = |key: &str, op, value: Value| {
            MetadataFilters::and([MetadataFilter::new(key, value, op)])
        };

        let eq_a = f("k", FilterOperator::Eq, json!("a"));
        let rows = |filters: &MetadataFilters| narrowed_rows(filters, index).map(|n| n.rows);
        assert_eq!(rows(&eq_a), Some(vec![0, 4]));
        let n_in = f("n", FilterOperator::In, json!([1, 2]));
        assert_eq!(rows(&n_in), Some(vec![0, 1, 3]));
        assert_eq!(
            rows(&f("k", FilterOperator::Eq, json!("zzz"))),
            Some(vec![])
        );
        assert!(narrowed_rows(&eq_a, index).is_some_and(|n| n.exact));
        // Substring `in`, lists, `!=` and `or` groups are left to the scan.
        for filters in [
            f("k", FilterOperator::In, json!("abc")),
            f("k", FilterOperator::Eq, json!(["a"])),
            f("k", FilterOperator::Ne, json!("a")),
            MetadataFilters::or([MetadataFilter::eq("k", "a")]),
        ] {
            assert_eq!(rows(&filters), None, "{filters:?}");
        }
        // The smallest set wins among several equalities.
        let both = MetadataFilters::and([MetadataFilter::eq("k", "a"), MetadataFilter::eq("n", 2)]);
        assert_eq!(
            narrowed_rows(&both, index),
            Some(Narrowed {
                rows: vec![1],
                exact: false
            })
        );
        assert_eq!(narrowing_keys(&both), vec!["k", "n"]);
    }
}
