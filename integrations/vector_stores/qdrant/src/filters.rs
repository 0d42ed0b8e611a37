//! Core `MetadataFilters` translated to Qdrant filters, once, into a small
//! plan that the remote (gRPC) and embedded (qdrant-edge) back ends render.
//!
//! Semantics follow core's `matches` where Qdrant can express them:
//! `and`/`or`/`not` become `must`/`should`/`must_not`, nested to any depth;
//! `!=` and `nin` are `must_not` of `==` and `in`, so a missing key matches
//! them as in core. Qdrant matches a list-valued payload when one element
//! matches, which is what `contains`, `any` and `all` need. An operator or
//! value Qdrant cannot express (`text_match_insensitive`, ordering on
//! strings, `==` on a list) is an [`Error::Unsupported`] naming the key.

use ragloom_core::error::{Error, Result};
use ragloom_core::vector_stores::{
    FilterCondition, FilterItem, FilterOperator, MetadataFilter, MetadataFilters,
};
use serde_json::Value;

/// One Qdrant condition, in the terms both back ends share.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cond {
    /// A nested filter: every `must`, one `should` (when any), no `must_not`.
    Filter(Plan),
    /// `match: {value: "..."}`.
    Keyword(String, String),
    /// `match: {value: 7}`.
    Integer(String, i64),
    /// `match: {value: true}`.
    Bool(String, bool),
    /// `match: {any: [...]}` on strings.
    AnyKeyword(String, Vec<String>),
    /// `match: {any: [...]}` on integers.
    AnyInteger(String, Vec<i64>),
    /// `range: {gt, gte, lt, lte}`.
    Range(String, Range),
    /// `match: {text: "..."}`: a substring test where the field has no full-text index.
    Text(String, String),
    /// `is_empty`: missing, `null` or `[]`.
    IsEmpty(String),
    /// `has_id: [...]`.
    HasId(Vec<String>),
}

/// Bounds of a numeric range condition.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Range {
    pub gt: Option<f64>,
    pub gte: Option<f64>,
    pub lt: Option<f64>,
    pub lte: Option<f64>,
}

/// A Qdrant `Filter`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Plan {
    pub must: Vec<Cond>,
    pub should: Vec<Cond>,
    pub must_not: Vec<Cond>,
}

impl Plan {
    pub(crate) fn is_empty(&self) -> bool {
        self.must.is_empty() && self.should.is_empty() && self.must_not.is_empty()
    }

    /// A filter no point satisfies (for `in []`).
    fn nothing(key: &str) -> Self {
        Plan {
            must: vec![Cond::IsEmpty(key.into())],
            must_not: vec![Cond::IsEmpty(key.into())],
            ..Plan::default()
        }
    }

    /// Every condition of `self` and of `other`.
    pub(crate) fn and(mut self, other: Plan) -> Plan {
        if other.is_empty() {
            return self;
        }
        if self.is_empty() {
            return other;
        }
        self.must.push(Cond::Filter(other));
        self
    }
}

/// The filter a query or a deletion sends: `filters`, plus LlamaIndex's
/// `doc_ids` (on the `doc_id` payload key) and `node_ids` (point ids).
pub(crate) fn plan(
    filters: Option<&MetadataFilters>,
    doc_ids: Option<&[String]>,
    point_ids: Option<Vec<String>>,
) -> Result<Plan> {
    let mut plan = match filters {
        Some(f) => translate(f)?,
        None => Plan::default(),
    };
    if let Some(ids) = doc_ids {
        plan = plan.and(Plan {
            must: vec![Cond::AnyKeyword("doc_id".into(), ids.to_vec())],
            ..Plan::default()
        });
    }
    if let Some(ids) = point_ids {
        plan = plan.and(Plan {
            must: vec![Cond::HasId(ids)],
            ..Plan::default()
        });
    }
    Ok(plan)
}

/// `filters` as a Qdrant filter.
pub(crate) fn translate(filters: &MetadataFilters) -> Result<Plan> {
    let mut conds = Vec::with_capacity(filters.filters.len());
    for item in &filters.filters {
        conds.push(match item {
            FilterItem::Filter(f) => Cond::Filter(one(f)?),
            FilterItem::Filters(group) => Cond::Filter(translate(group)?),
        });
    }
    // Single-condition groups are inlined, so plans stay shallow.
    let conds = conds.into_iter().map(flatten).collect();
    Ok(match filters.condition {
        FilterCondition::And => Plan {
            must: conds,
            ..Plan::default()
        },
        FilterCondition::Or => Plan {
            should: conds,
            ..Plan::default()
        },
        FilterCondition::Not => Plan {
            must_not: conds,
            ..Plan::default()
        },
    })
}

fn flatten(cond: Cond) -> Cond {
    match cond {
        Cond::Filter(Plan {
            mut must,
            should,
            must_not,
        }) if must.len() == 1 && should.is_empty() && must_not.is_empty() => {
            must.pop().unwrap_or(Cond::Filter(Plan::default()))
        }
        other => other,
    }
}

fn unsupported(f: &MetadataFilter, why: &str) -> Error {
    Error::Unsupported(format!(
        "Qdrant cannot express the filter `{} {} {}`: {why}",
        f.key,
        f.operator.as_str(),
        f.value
    ))
}

fn must(cond: Cond) -> Plan {
    Plan {
        must: vec![cond],
        ..Plan::default()
    }
}

fn must_not(plan: Plan) -> Plan {
    Plan {
        must_not: vec![flatten(Cond::Filter(plan))],
        ..Plan::default()
    }
}

/// One filter as a (small) plan.
fn one(f: &MetadataFilter) -> Result<Plan> {
    use FilterOperator as Op;
    let key = f.key.clone();
    match f.operator {
        Op::Eq | Op::Contains => equals(f, &f.value),
        Op::Ne => equals(f, &f.value).map(must_not),
        Op::Gt | Op::Gte | Op::Lt | Op::Lte => {
            let Some(n) = f.value.as_f64().filter(|_| !f.value.is_boolean()) else {
                return Err(unsupported(f, "Qdrant orders numbers only"));
            };
            let mut r = Range::default();
            match f.operator {
                Op::Gt => r.gt = Some(n),
                Op::Gte => r.gte = Some(n),
                Op::Lt => r.lt = Some(n),
                _ => r.lte = Some(n),
            }
            Ok(must(Cond::Range(key, r)))
        }
        Op::In | Op::Any => one_of(f),
        Op::Nin => one_of(f).map(must_not),
        Op::All => {
            let Value::Array(items) = &f.value else {
                return Err(unsupported(f, "`all` needs a list of values"));
            };
            if items.is_empty() {
                // Core: any present, non-null value holds all of nothing.
                return Ok(must_not(must(Cond::IsEmpty(key))));
            }
            let mut plan = Plan::default();
            for item in items {
                plan.must.push(flatten(Cond::Filter(equals(f, item)?)));
            }
            Ok(plan)
        }
        Op::TextMatch => match &f.value {
            Value::String(s) => Ok(must(Cond::Text(key, s.clone()))),
            _ => Err(unsupported(f, "`text_match` needs a string")),
        },
        Op::TextMatchInsensitive => Err(unsupported(
            f,
            "Qdrant has no case-insensitive substring match (it needs a full-text index with `lowercase`)",
        )),
        Op::IsEmpty => Ok(Plan {
            should: vec![
                Cond::IsEmpty(key.clone()),
                Cond::Keyword(key, String::new()),
            ],
            ..Plan::default()
        }),
    }
}

/// `key == value` (on a list-valued field: one element equals it).
fn equals(f: &MetadataFilter, value: &Value) -> Result<Plan> {
    let key = f.key.clone();
    Ok(must(match value {
        Value::String(s) => Cond::Keyword(key, s.clone()),
        Value::Bool(b) => Cond::Bool(key, *b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Cond::Integer(key, i),
            None => {
                let x = n
                    .as_f64()
                    .ok_or_else(|| unsupported(f, "the number is out of range"))?;
                Cond::Range(
                    key,
                    Range {
                        gte: Some(x),
                        lte: Some(x),
                        ..Range::default()
                    },
                )
            }
        },
        Value::Null | Value::Array(_) | Value::Object(_) => {
            return Err(unsupported(
                f,
                "Qdrant matches strings, numbers and booleans",
            ));
        }
    }))
}

/// `key in [values]`.
fn one_of(f: &MetadataFilter) -> Result<Plan> {
    let Value::Array(items) = &f.value else {
        return Err(unsupported(f, "this operator needs a list of values"));
    };
    if items.is_empty() {
        return Ok(Plan::nothing(&f.key));
    }
    if let Some(strings) = items
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
    {
        return Ok(must(Cond::AnyKeyword(f.key.clone(), strings)));
    }
    if let Some(ints) = items.iter().map(Value::as_i64).collect::<Option<Vec<_>>>() {
        return Ok(must(Cond::AnyInteger(f.key.clone(), ints)));
    }
    let mut should = Vec::with_capacity(items.len());
    for item in items {
        should.push(flatten(Cond::Filter(equals(f, item)?)));
    }
    Ok(Plan {
        should,
        ..Plan::default()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nesting_maps_to_must_should_must_not() {
        let f = MetadataFilters::or([
            FilterItem::from(MetadataFilter::eq("a", "x")),
            MetadataFilters::not([MetadataFilter::gt("n", 2)]).into(),
        ]);
        let plan = translate(&f).unwrap();
        assert_eq!(plan.should.len(), 2);
        assert_eq!(plan.should[0], Cond::Keyword("a".into(), "x".into()));
        let Cond::Filter(inner) = &plan.should[1] else {
            panic!("{plan:?}")
        };
        assert_eq!(inner.must_not.len(), 1);
    }

    #[test]
    fn inexpressible_filters_are_clear_errors() {
        for f in [
            MetadataFilter::text_match_insensitive("title", "Hello"),
            MetadataFilter::gt("title", "b"),
            MetadataFilter::eq("tags", json!(["a"])),
            MetadataFilter::new("tags", json!("a"), FilterOperator::In),
        ] {
            let err = translate(&MetadataFilters::and([f.clone()])).unwrap_err();
            assert!(
                matches!(&err, Error::Unsupported(m) if m.contains(&f.key)),
                "{err}"
            );
        }
    }

    #[test]
    fn in_with_floats_becomes_should_of_ranges() {
        let plan = one(&MetadataFilter::is_in("x", [1.5, 2.0])).unwrap();
        assert_eq!(plan.should.len(), 2);
        assert!(matches!(plan.should[0], Cond::Range(_, r) if r.gte == Some(1.5)));
    }
}
