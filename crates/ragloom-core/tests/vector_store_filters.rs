//! Metadata filter evaluation checked against a table recorded from
//! llama-index-core 0.14.25 (`tests/data/vector_stores/gen_filters.py`).
#![allow(clippy::unwrap_used)]

use ragloom_core::Metadata;
use ragloom_core::vector_stores::{
    FilterItem, FilterOperator, MetadataFilter, MetadataFilters, matches,
};
use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/vector_stores/");

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DATA}{name}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every operator x value x metadata shape: ragloom agrees with Python where
/// Python answers, and does not match where Python raises.
#[test]
fn every_operator_agrees_with_python() {
    let table = load("filters_cases.json");
    let key = table["key"].as_str().unwrap();
    let shapes: Vec<Metadata> = table["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_object().unwrap().clone())
        .collect();
    let mut seen_ops = std::collections::HashSet::new();
    let mut checked = 0;
    for row in table["grid"].as_array().unwrap() {
        let operator: FilterOperator = serde_json::from_value(row["operator"].clone()).unwrap();
        seen_ops.insert(operator);
        let filter = MetadataFilter::new(key, row["value"].clone(), operator);
        let filters = MetadataFilters::and([filter.clone()]);
        let results = row["results"].as_str().unwrap();
        assert_eq!(results.len(), shapes.len());
        for (md, letter) in shapes.iter().zip(results.chars()) {
            let want = letter == 'T';
            assert_eq!(
                matches(&filters, md),
                want,
                "{filter:?} on {md:?}: Python says {letter}"
            );
            checked += 1;
        }
    }
    assert_eq!(seen_ops.len(), FilterOperator::ALL_OPERATORS.len());
    assert!(checked > 6000, "{checked}");
}

/// Conditions, a leaf Python cannot apply under each condition, and nesting.
#[test]
fn conditions_and_nesting_agree() {
    let table = load("filters_cases.json");
    let cases = table["cases"].as_array().unwrap();
    let mut nested = 0;
    for case in cases {
        let filters: MetadataFilters = serde_json::from_value(case["filters"].clone()).unwrap();
        if filters
            .filters
            .iter()
            .any(|f| matches!(f, FilterItem::Filters(_)))
        {
            nested += 1;
        }
        let md = case["metadata"].as_object().unwrap();
        let want = case["expected"].as_bool().unwrap();
        assert_eq!(matches(&filters, md), want, "{case}");
        if let Some(py) = case["python"].as_bool() {
            if !filters
                .filters
                .iter()
                .any(|f| matches!(f, FilterItem::Filters(_)))
            {
                assert_eq!(want, py, "{case}");
            }
        }
    }
    assert!(nested >= 20, "{nested}");
}

/// Python's JSON of a nested MetadataFilters reads and writes back unchanged.
#[test]
fn filters_round_trip_python_json() {
    let text = std::fs::read_to_string(format!("{DATA}filters_shape.json")).unwrap();
    let want: Value = serde_json::from_str(&text).unwrap();
    let filters: MetadataFilters = serde_json::from_value(want.clone()).unwrap();
    assert_eq!(filters.filters.len(), 2);
    assert!(matches!(&filters.filters[1], FilterItem::Filters(g) if g.filters.len() == 3));
    assert_eq!(serde_json::to_string(&filters).unwrap(), text.trim());
}
