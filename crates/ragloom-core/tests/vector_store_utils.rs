//! The node payload helpers checked against dicts recorded from
//! llama-index-core 0.14.25 (`tests/data/vector_stores/gen_metadata_dicts.py`).
#![allow(clippy::unwrap_used)]

use ragloom_core::Node;
use ragloom_core::utils::to_python_json_string;
use ragloom_core::vector_stores::{metadata_dict_to_node, node_to_metadata_dict};
use serde_json::Value;

fn cases(kind: &str) -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/vector_stores/metadata_dicts.json"
    );
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    data[kind].as_array().unwrap().clone()
}

/// Same keys, same order, same `_node_content` string, byte for byte as
/// Python's `json.dumps` of the dict; and the same errors for non-flat metadata.
#[test]
fn node_to_metadata_dict_matches_python() {
    let cases = cases("to_dict");
    assert!(cases.len() >= 20);
    let mut errors = 0;
    for case in &cases {
        let node: Node = serde_json::from_value(case["node"].clone()).unwrap();
        let got = node_to_metadata_dict(
            &node,
            case["remove_text"].as_bool().unwrap(),
            case["flat_metadata"].as_bool().unwrap(),
        );
        if let Some(message) = case["expected"]["error"].as_str() {
            errors += 1;
            let err = got.unwrap_err().to_string();
            let key = message.split_whitespace().nth(3).unwrap();
            assert!(
                err.contains(key) && err.contains(&node.id_),
                "{err} vs {message}"
            );
            continue;
        }
        let got = got.unwrap();
        assert_eq!(Value::Object(got.clone()), case["expected"], "{}", node.id_);
        assert_eq!(
            to_python_json_string(&got).unwrap(),
            case["expected_json"].as_str().unwrap(),
            "{}",
            node.id_
        );
    }
    assert_eq!(errors, 1);
}

/// The node Python rebuilds from a payload, field for field (`to_dict()`),
/// where Python succeeds; a payload without content is an error in both.
#[test]
fn metadata_dict_to_node_matches_python() {
    let mut checked = 0;
    for case in cases("from_dict") {
        let metadata = case["metadata"].as_object().unwrap();
        let text = case["text"].as_str();
        let got = metadata_dict_to_node(metadata, text);
        match case["expected"]["error"].as_str() {
            Some(message) if message.contains("Node content not found") => {
                assert!(got.is_err(), "{case}");
            }
            Some(message) if message.contains("index_id") => {
                assert!(got.is_err(), "{case}");
            }
            // Python trips over a document dict without a text resource; ragloom reads it.
            Some(_) => {}
            None => {
                let node = got.unwrap_or_else(|e| panic!("{e}: {case}"));
                assert_eq!(serde_json::to_value(&node).unwrap(), case["expected"]);
                assert_eq!(node.class_name(), case["python_class"].as_str().unwrap());
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}
