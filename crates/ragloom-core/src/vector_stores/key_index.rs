//! Ordered indexes over metadata keys for [`SimpleVectorStore`](super::SimpleVectorStore):
//! each key's numbers and strings sorted with their rows, so `==`, `in` and ranges visit matching rows only.
//!
//! Numbers (booleans among them) are ordered as Python compares them (1 ==
//! 1.0 == true, integers against floats exactly) and strings by code point,
//! as Python's `<` does; values Python cannot order against the filter's
//! (a string against a number, null, lists) never match, so a lookup yields
//! exactly the rows a filter keeps. An `and` group whose filters all have
//! lookups uses the intersection as it is; any other filter beside them is
//! checked on those rows only.

use super::filters::{Num, as_num, num_cmp};
use super::types::{FilterCondition, FilterItem, FilterOperator, MetadataFilter, MetadataFilters};
use crate::schema::Metadata;
use serde_json::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// One metadata key's scalar values, sorted, with their rows.
#[derive(Debug, Default)]
pub(super) struct KeyIndex {
    /// Numeric values (NaN left out: it matches no comparison).
    numbers: Vec<(Num, u32)>,
    strings: Vec<(String, u32)>,
}

impl KeyIndex {
    /// Indexes `key` over every row's metadata (rows are positions in `metadata`).
    pub(super) fn build(metadata: &[Option<Metadata>], key: &str) -> Self {
        let mut index = Self::default();
        for (r, m) in metadata.iter().enumerate() {
            // A store's rows fit in u32: 4 billion vectors would not fit in memory anyway.
            let Ok(row) = u32::try_from(r) else { break };
            match m.as_ref().and_then(|m| m.get(key)) {
                Some(Value::String(s)) => index.strings.push((s.clone(), row)),
                Some(v) => {
                    if let Some(n) = as_num(v).filter(|n| !is_nan(*n)) {
                        index.numbers.push((n, row));
                    }
                }
                None => {}
            }
        }
        // Without NaN the comparison is a total order.
        index
            .numbers
            .sort_by(|a, b| num_cmp(a.0, b.0).unwrap_or(Ordering::Equal));
        index.strings.sort_unstable();
        index
    }

    /// The rows (unordered) whose value `op` keeps against `wanted`; `None`
    /// when the filter is not one the index answers.
    fn lookup(&self, op: FilterOperator, wanted: &Value) -> Option<Vec<u32>> {
        use FilterOperator as Op;
        match op {
            Op::Eq | Op::Gt | Op::Gte | Op::Lt | Op::Lte => self.compare(op, wanted),
            // `in` over a string or an object tests substrings or keys: not an equality.
            Op::In => match wanted {
                Value::Array(items) => {
                    let mut rows = Vec::new();
                    for item in items {
                        rows.extend(self.compare(Op::Eq, item)?);
                    }
                    Some(rows)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The rows whose value compares with `wanted` as `op` asks.
    fn compare(&self, op: FilterOperator, wanted: &Value) -> Option<Vec<u32>> {
        if let Some(bound) = as_num(wanted) {
            if is_nan(bound) {
                return Some(Vec::new());
            }
            let position = |v: &Num| num_cmp(*v, bound).unwrap_or(Ordering::Equal);
            return Some(select(&self.numbers, op, |(v, _)| position(v)));
        }
        match wanted {
            Value::String(bound) => Some(select(&self.strings, op, |(v, _)| {
                v.as_str().cmp(bound.as_str())
            })),
            // Nothing equals or orders against null here: a null value never matches.
            Value::Null => Some(Vec::new()),
            _ => None,
        }
    }
}

fn is_nan(n: Num) -> bool {
    matches!(n, Num::Float(f) if f.is_nan())
}

/// The rows of the entries of `sorted` (ascending by `cmp_to_bound`) that
/// `op` keeps: the entries below, at or above the bound.
fn select<T>(
    sorted: &[(T, u32)],
    op: FilterOperator,
    cmp_to_bound: impl Fn(&(T, u32)) -> Ordering,
) -> Vec<u32> {
    let below = sorted.partition_point(|e| cmp_to_bound(e) == Ordering::Less);
    let not_above = sorted.partition_point(|e| cmp_to_bound(e) != Ordering::Greater);
    let span = match op {
        FilterOperator::Eq => below..not_above,
        FilterOperator::Gt => not_above..sorted.len(),
        FilterOperator::Gte => below..sorted.len(),
        FilterOperator::Lt => 0..below,
        FilterOperator::Lte => 0..not_above,
        _ => 0..0,
    };
    sorted[span].iter().map(|&(_, r)| r).collect()
}

/// Whether the index can answer `filter`.
fn indexable(filter: &MetadataFilter) -> bool {
    use FilterOperator as Op;
    let scalar = |v: &Value| !matches!(v, Value::Array(_) | Value::Object(_));
    match filter.operator {
        Op::Eq | Op::Gt | Op::Gte | Op::Lt | Op::Lte => scalar(&filter.value),
        Op::In => matches!(&filter.value, Value::Array(items) if items.iter().all(scalar)),
        _ => false,
    }
}

/// The keys whose index could narrow `filters`: those of the top-level
/// filters of an `and` group that an index answers.
pub(super) fn narrowing_keys(filters: &MetadataFilters) -> Vec<&str> {
    if filters.condition != FilterCondition::And {
        return Vec::new();
    }
    let mut keys: Vec<&str> = filters
        .filters
        .iter()
        .filter_map(|item| match item {
            FilterItem::Filter(f) if indexable(f) => Some(f.key.as_str()),
            _ => None,
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Rows found through the key indexes.
#[derive(Debug, PartialEq)]
pub(super) struct Narrowed {
    /// Every row that can match the filters, ascending.
    pub rows: Vec<usize>,
    /// Whether these are exactly the rows the filters keep (every filter of
    /// the group was looked up), so checking them again is unnecessary.
    pub exact: bool,
}

/// The rows every indexable top-level filter of an `and` group keeps (the
/// intersection of their lookups), from the indexes `index` returns for
/// [`narrowing_keys`]. `None` when no filter narrows.
pub(super) fn narrowed_rows(
    filters: &MetadataFilters,
    index: impl Fn(&str) -> Option<Arc<KeyIndex>>,
) -> Option<Narrowed> {
    if filters.condition != FilterCondition::And {
        return None;
    }
    let mut result: Option<Vec<u32>> = None;
    let mut looked_up = 0;
    for item in &filters.filters {
        let FilterItem::Filter(f) = item else {
            continue;
        };
        if !indexable(f) {
            continue;
        }
        let Some(mut rows) = index(&f.key).and_then(|idx| idx.lookup(f.operator, &f.value)) else {
            continue;
        };
        looked_up += 1;
        rows.sort_unstable();
        rows.dedup();
        result = Some(match result {
            None => rows,
            Some(acc) => intersect(&acc, &rows),
        });
    }
    result.map(|rows| Narrowed {
        rows: rows.into_iter().map(|r| r as usize).collect(),
        exact: looked_up == filters.filters.len(),
    })
}

/// The values in both ascending lists.
fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Option<Metadata> {
        v.as_object().cloned()
    }

    fn rows_of() -> Vec<Option<Metadata>> {
        vec![
            meta(json!({"k": "a", "n": 1})),
            meta(json!({"k": "b", "n": 2.0})),
            None,
            meta(json!({"k": ["a"], "n": true})),
            meta(json!({"k": "a", "n": 2.5})),
            meta(json!({"k": "ab", "n": "2"})),
        ]
    }

    fn rows(filters: &MetadataFilters) -> Option<Vec<usize>> {
        let metadata = rows_of();
        narrowed_rows(filters, |key| {
            Some(Arc::new(KeyIndex::build(&metadata, key)))
        })
        .map(|n| n.rows)
    }

    #[test]
    fn equality_in_and_ranges_look_up_python_s_matches() {
        let one = |f: MetadataFilter| MetadataFilters::and([f]);
        assert_eq!(rows(&one(MetadataFilter::eq("k", "a"))), Some(vec![0, 4]));
        // 1 == 1.0 == True; the string "2" is not the number 2.
        assert_eq!(rows(&one(MetadataFilter::eq("n", 1.0))), Some(vec![0, 3]));
        assert_eq!(
            rows(&one(MetadataFilter::is_in("n", [2, 1]))),
            Some(vec![0, 1, 3])
        );
        assert_eq!(rows(&one(MetadataFilter::gt("n", 1))), Some(vec![1, 4]));
        assert_eq!(rows(&one(MetadataFilter::lte("n", 2))), Some(vec![0, 1, 3]));
        assert_eq!(rows(&one(MetadataFilter::gte("k", "ab"))), Some(vec![1, 5]));
        assert_eq!(
            rows(&one(MetadataFilter::lt("k", "b"))),
            Some(vec![0, 4, 5])
        );
        assert_eq!(rows(&one(MetadataFilter::eq("k", "zzz"))), Some(vec![]));
        assert_eq!(rows(&one(MetadataFilter::eq("n", f64::NAN))), Some(vec![]));
        // Substring `in`, list values, `!=` and `or` groups are left to the scan.
        for filters in [
            one(MetadataFilter::new("k", json!("abc"), FilterOperator::In)),
            one(MetadataFilter::eq("k", json!(["a"]))),
            one(MetadataFilter::ne("k", "a")),
            MetadataFilters::or([MetadataFilter::eq("k", "a")]),
        ] {
            assert_eq!(rows(&filters), None, "{filters:?}");
        }
    }

    #[test]
    fn an_and_group_intersects_and_is_exact_only_when_every_filter_was_looked_up() {
        let metadata = rows_of();
        let index = |key: &str| Some(Arc::new(KeyIndex::build(&metadata, key)));
        let range =
            MetadataFilters::and([MetadataFilter::gte("n", 1), MetadataFilter::lt("n", 2.5)]);
        assert_eq!(
            narrowed_rows(&range, index),
            Some(Narrowed {
                rows: vec![0, 1, 3],
                exact: true
            })
        );
        let mixed =
            MetadataFilters::and([MetadataFilter::eq("k", "a"), MetadataFilter::ne("n", 1)]);
        assert_eq!(
            narrowed_rows(&mixed, index),
            Some(Narrowed {
                rows: vec![0, 4],
                exact: false
            })
        );
        assert_eq!(narrowing_keys(&range), vec!["n"]);
    }
}
