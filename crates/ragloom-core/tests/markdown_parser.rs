//! MarkdownNodeParser against LlamaIndex 0.14.25's recorded output
//! (tests/data/markdown/gen_markdown.py).
#![allow(clippy::unwrap_used)]

use ragloom_core::node_parser::{MarkdownNodeParser, NodeParser};
use ragloom_core::{Document, NodeRelationship};
use serde_json::Value;

#[test]
fn sections_equal_pythons() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/markdown/markdown.json"
    );
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = rec.as_object().unwrap();
    assert_eq!(cases.len(), 12);
    for (name, case) in cases {
        let doc_name = name.split('|').next().unwrap();
        let doc = Document::document(case["text"].as_str().unwrap())
            .with_id(format!("doc-{doc_name}"))
            .with_metadata("file_name", format!("{doc_name}.md"));
        let parser =
            MarkdownNodeParser::new().header_path_separator(case["separator"].as_str().unwrap());
        let nodes = parser.get_nodes_from_documents(&[doc]).unwrap();
        let expected = case["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), expected.len(), "{name}");
        for (i, (node, exp)) in nodes.iter().zip(expected).enumerate() {
            assert_eq!(node.text, exp["text"].as_str().unwrap(), "{name} #{i}");
            assert_eq!(
                &node.metadata,
                exp["metadata"].as_object().unwrap(),
                "{name} #{i}"
            );
            assert_eq!(
                node.start_char_idx.map(|x| x as u64),
                exp["start_char_idx"].as_u64(),
                "{name} #{i}"
            );
            assert_eq!(
                node.end_char_idx.map(|x| x as u64),
                exp["end_char_idx"].as_u64(),
                "{name} #{i}"
            );
            assert_eq!(node.ref_doc_id(), Some(format!("doc-{doc_name}").as_str()));
            assert_eq!(
                node.relationships.contains_key(&NodeRelationship::Previous),
                i > 0
            );
        }
    }
}
