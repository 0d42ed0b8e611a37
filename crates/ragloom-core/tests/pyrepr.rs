//! `float_repr` against Python's `repr(float)` for thousands of recorded doubles,
//! and node hashes over metadata holding floats (LlamaIndex hashes `str(metadata)`).
#![allow(clippy::unwrap_used)]
// The literals are exact binary values whose shortest digits are the point of the test.
#![allow(clippy::excessive_precision)]

use ragloom_core::schema::{Metadata, Node, float_repr, py_repr};
use serde_json::Value;

fn recorded() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/pyrepr/float_repr.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn float_repr_matches_python_for_every_recorded_double() {
    let data = recorded();
    let cases = data["cases"].as_array().unwrap();
    assert!(cases.len() > 4000, "only {} cases", cases.len());
    let mut wrong = Vec::new();
    for case in cases {
        let bits = u64::from_str_radix(case[0].as_str().unwrap(), 16).unwrap();
        let want = case[1].as_str().unwrap();
        let got = float_repr(f64::from_bits(bits));
        if got != want {
            wrong.push(format!("{bits:016x}: python {want}, ragloom {got}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn ties_round_half_to_even_as_python_does() {
    // The exact value is halfway between ...562 and ...563; Python keeps the even digit.
    assert_eq!(float_repr(750.34869384765625), "750.3486938476562");
    assert_eq!(float_repr(-524.07073974609375), "-524.0707397460938");
    assert_eq!(
        float_repr(f64::from(750.348_7_f32)),
        float_repr(750.34869384765625)
    );
}

#[test]
fn node_hashes_over_float_metadata_match_llamaindex() {
    let data = recorded();
    for case in data["hashes"].as_array().unwrap() {
        let metadata: Metadata = case["metadata"].as_object().unwrap().clone();
        let text = case["text"].as_str().unwrap();
        let node = match case["kind"].as_str().unwrap() {
            "document" => Node::document(text),
            _ => Node::text_node(text),
        }
        .with_metadata_map(metadata.clone());
        assert_eq!(
            node.hash(),
            case["hash"].as_str().unwrap(),
            "{}",
            py_repr(&Value::Object(metadata))
        );
    }
}
