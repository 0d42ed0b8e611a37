//! The tokenizer, Punkt and both splitters against what llama-index-core
//! 0.14.25 / nltk 3.10.4 / tiktoken produce (recorded by
//! `tests/data/splitters/gen_splitters.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ragloom_core::node_parser::{
    IdFunc, NodeParser, PunktSentenceTokenizer, SentenceSplitter, TextSplitter, TokenTextSplitter,
};
use ragloom_core::{Cl100kTokenizer, Node, NodeRelationship, Tokenizer, TransformComponent};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/splitters")
}

/// A text named as in the recorded data: `data:x` is in this crate's test
/// data, anything else in the shared corpus.
fn read_text(name: &str) -> String {
    let path = match name.strip_prefix("data:") {
        Some(local) => data_dir().join(local),
        None => common::corpus_dir().join(name),
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (the corpus files must be present to run these tests)",
            path.display()
        )
    })
}

fn load(name: &str) -> Value {
    let path = data_dir().join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn sha(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn id_func() -> IdFunc {
    Arc::new(|i, doc: &Node| format!("{}-{}", doc.id_, i))
}

fn spans_of(v: &Value) -> Vec<(usize, usize)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_u64().unwrap() as usize,
                p[1].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn assert_spans(label: &str, text: &str, got: &[(usize, usize)], want: &[(usize, usize)]) {
    if got == want {
        return;
    }
    let first = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let chars: Vec<char> = text.chars().collect();
    let ctx = |(s, e): (usize, usize)| -> String {
        chars[s.min(chars.len())..e.min(chars.len()).max(s.min(chars.len()))]
            .iter()
            .collect()
    };
    panic!(
        "{label}: {} spans vs nltk's {}; first difference at #{first}: ours {:?} {:?}, nltk {:?} {:?}",
        got.len(),
        want.len(),
        got.get(first),
        got.get(first).map(|&s| ctx(s)),
        want.get(first),
        want.get(first).map(|&s| ctx(s)),
    );
}

#[test]
fn punkt_spans_equal_nltk_on_every_corpus_file() {
    let data = load("punkt_spans.json");
    let punkt = PunktSentenceTokenizer::new();
    let files = data["files"].as_object().unwrap();
    assert_eq!(
        files.len(),
        6,
        "five corpus files and the multilingual text"
    );
    for (name, rec) in files {
        let text = read_text(name);
        assert_eq!(
            (text.chars().count(), sha(&text)),
            (
                rec["chars"].as_u64().unwrap() as usize,
                rec["sha256"].as_str().unwrap().to_string()
            ),
            "{name} is not the text the expectations were recorded from"
        );
        let want = spans_of(&rec["spans"]);
        assert!(want.len() > 20, "{name}: too few sentences recorded");
        assert_spans(name, &text, &punkt.span_tokenize(&text), &want);
    }
}

#[test]
fn punkt_spans_equal_nltk_on_edge_cases_and_fuzz() {
    let data = load("punkt_spans.json");
    let punkt = PunktSentenceTokenizer::new();
    let mut n = 0;
    for group in ["cases", "fuzz"] {
        for case in data[group].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            let want = spans_of(&case["spans"]);
            assert_spans(
                &format!("{group} {text:?}"),
                text,
                &punkt.span_tokenize(text),
                &want,
            );
            n += 1;
        }
    }
    assert!(n > 600);
}

#[test]
fn tokenizer_equals_tiktoken_as_llama_index_calls_it() {
    let tok = Cl100kTokenizer::new();
    for case in load("token_counts.json").as_array().unwrap() {
        if let Some(text) = case["text"].as_str() {
            let want: Vec<u32> = case["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(tok.encode(text), want, "{text:?}");
        } else {
            let name = case["file"].as_str().unwrap();
            let text = read_text(name);
            assert_eq!(
                tok.count(&text) as u64,
                case["count"].as_u64().unwrap(),
                "{name}"
            );
        }
    }
}

fn document_for(case: &Value, id: &str) -> Node {
    let mut doc = Node::document(read_text(case["file"].as_str().unwrap())).with_id(id);
    doc.metadata = case["metadata"].as_object().cloned().unwrap_or_default();
    doc.excluded_embed_metadata_keys = strings(&case["excluded_embed"]);
    doc.excluded_llm_metadata_keys = strings(&case["excluded_llm"]);
    doc
}

fn sentence_splitter_for(params: &Value) -> SentenceSplitter {
    let mut s = SentenceSplitter::new().id_func(id_func());
    let p = params.as_object().unwrap();
    if let Some(v) = p.get("chunk_size") {
        s = s.chunk_size(v.as_u64().unwrap() as usize);
    }
    if let Some(v) = p.get("chunk_overlap") {
        s = s.chunk_overlap(v.as_u64().unwrap() as usize);
    }
    if let Some(v) = p.get("separator") {
        s = s.separator(v.as_str().unwrap());
    }
    if let Some(v) = p.get("paragraph_separator") {
        s = s.paragraph_separator(v.as_str().unwrap());
    }
    if let Some(v) = p.get("secondary_chunking_regex") {
        s = s.secondary_chunking_regex(v.as_str());
    }
    if let Some(v) = p.get("include_metadata") {
        s = s.include_metadata(v.as_bool().unwrap());
    }
    if let Some(v) = p.get("include_prev_next_rel") {
        s = s.include_prev_next_rel(v.as_bool().unwrap());
    }
    s.build().unwrap()
}

fn token_splitter_for(params: &Value) -> TokenTextSplitter {
    let mut s = TokenTextSplitter::new().id_func(id_func());
    let p = params.as_object().unwrap();
    if let Some(v) = p.get("chunk_size") {
        s = s.chunk_size(v.as_u64().unwrap() as usize);
    }
    if let Some(v) = p.get("chunk_overlap") {
        s = s.chunk_overlap(v.as_u64().unwrap() as usize);
    }
    if let Some(v) = p.get("separator") {
        s = s.separator(v.as_str().unwrap());
    }
    if let Some(v) = p.get("backup_separators") {
        s = s.backup_separators(strings(v));
    }
    if let Some(v) = p.get("keep_whitespaces") {
        s = s.keep_whitespaces(v.as_bool().unwrap());
    }
    if let Some(v) = p.get("include_metadata") {
        s = s.include_metadata(v.as_bool().unwrap());
    }
    if let Some(v) = p.get("include_prev_next_rel") {
        s = s.include_prev_next_rel(v.as_bool().unwrap());
    }
    s.build().unwrap()
}

/// Settings as Python's `to_dict()`, the id function aside (Python names
/// the test's function, ragloom only knows it is custom).
fn without_id_func(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("id_func");
    v
}

/// Every node's offsets select exactly its text, counting characters.
fn assert_offsets_slice_text(label: &str, doc: &Node, nodes: &[Node]) {
    let chars: Vec<char> = doc.text.chars().collect();
    for n in nodes {
        let (s, e) = (n.start_char_idx.unwrap(), n.end_char_idx.unwrap());
        let slice: String = chars[s..e].iter().collect();
        assert_eq!(slice, n.text, "{label}: node {} offsets {s}..{e}", n.id_);
    }
}

fn node_dicts(nodes: &[Node]) -> Vec<Value> {
    nodes
        .iter()
        .map(|n| Value::Object(n.to_llama_dict()))
        .collect()
}

fn assert_nodes_equal(label: &str, got: &[Node], want: &Value) {
    let want = want.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{label}: node count");
    for (i, (g, w)) in node_dicts(got).iter().zip(want).enumerate() {
        assert_eq!(
            g, w,
            "{label}: node #{i} differs from Python's\nours:   {g}\npython: {w}"
        );
    }
}

fn check_case(kind: &str, case: &Value, nodes: &[Node], doc: &Node) {
    let name = format!("{kind} {}", case["name"].as_str().unwrap());
    let want = case["chunks"].as_array().unwrap();
    assert_eq!(
        nodes.len() as u64,
        case["count"].as_u64().unwrap(),
        "{name}: chunk count"
    );
    for (i, (n, w)) in nodes.iter().zip(want).enumerate() {
        let got = serde_json::json!([
            n.start_char_idx,
            n.end_char_idx,
            n.text.chars().count(),
            sha(&n.text)
        ]);
        assert_eq!(&got, w, "{name}: chunk #{i} (start, end, chars, sha256)");
    }
    assert_offsets_slice_text(&name, doc, nodes);
    if let Some(full) = case.get("nodes") {
        assert_nodes_equal(&name, nodes, full);
    }
}

#[test]
fn sentence_splitter_equals_llama_index() {
    let cases = load("sentence_splitter.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 14);
    for case in cases {
        let splitter = sentence_splitter_for(&case["params"]);
        assert_eq!(
            without_id_func(splitter.settings()),
            without_id_func(case["settings"].clone()),
            "{}: settings",
            case["name"]
        );
        let doc = document_for(case, "doc");
        let nodes = splitter
            .get_nodes_from_documents(std::slice::from_ref(&doc))
            .unwrap();
        check_case("SentenceSplitter", case, &nodes, &doc);
    }
}

#[test]
fn token_text_splitter_equals_llama_index() {
    let cases = load("token_splitter.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 7);
    for case in cases {
        let splitter = token_splitter_for(&case["params"]);
        assert_eq!(
            without_id_func(splitter.settings()),
            without_id_func(case["settings"].clone()),
            "{}: settings",
            case["name"]
        );
        let doc = document_for(case, "doc");
        let nodes = splitter
            .get_nodes_from_documents(std::slice::from_ref(&doc))
            .unwrap();
        check_case("TokenTextSplitter", case, &nodes, &doc);
    }
}

#[test]
fn metadata_aware_sizing_matters_and_matches() {
    // The same essay with and without metadata: Python gives more, smaller
    // chunks when metadata takes room, and so must we.
    let cases = load("sentence_splitter.json");
    let by_name = |n: &str| {
        cases
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .unwrap()
            .clone()
    };
    let plain = by_name("essay_256_20");
    let with_meta = by_name("essay_metadata_256_20");
    assert!(with_meta["count"].as_u64() > plain["count"].as_u64());

    let doc = document_for(&with_meta, "doc");
    let nodes = sentence_splitter_for(&with_meta["params"])
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .unwrap();
    let source = doc.as_related_node_info();
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n.metadata, doc.metadata, "metadata inherited");
        assert_eq!(
            n.excluded_llm_metadata_keys, doc.excluded_llm_metadata_keys,
            "excluded keys inherited"
        );
        assert_eq!(n.source_node(), Some(&source), "source is the document");
        let prev = n.prev_node().map(|p| p.node_id.clone());
        let next = n.next_node().map(|p| p.node_id.clone());
        assert_eq!(prev, (i > 0).then(|| nodes[i - 1].id_.clone()));
        assert_eq!(
            next,
            (i + 1 < nodes.len()).then(|| nodes[i + 1].id_.clone())
        );
        let tokens = Cl100kTokenizer::new();
        let meta_len = tokens.count(&ragloom_core::node_parser::metadata_str_for_splitting(&doc));
        assert!(
            tokens.count(&n.text) + meta_len <= 256,
            "chunk {i} leaves room"
        );
    }
}

#[test]
fn errors_and_edge_cases_equal_python() {
    let data = load("errors.json");
    let too_long = Node::document("Some text. More text.")
        .with_id("d")
        .with_metadata("title", "word ".repeat(300));
    for (key, result) in [
        (
            "SentenceSplitter_metadata_too_long",
            SentenceSplitter::new()
                .chunk_size(256)
                .chunk_overlap(10)
                .get_nodes_from_documents(std::slice::from_ref(&too_long)),
        ),
        (
            "TokenTextSplitter_metadata_too_long",
            TokenTextSplitter::new()
                .chunk_size(256)
                .chunk_overlap(10)
                .get_nodes_from_documents(std::slice::from_ref(&too_long)),
        ),
    ] {
        let msg = result.unwrap_err().to_string();
        assert!(msg.contains(data[key].as_str().unwrap()), "{key}: {msg}");
        assert!(msg.contains("node d"), "{key} names the node: {msg}");
    }
    for (key, result) in [
        (
            "SentenceSplitter_overlap",
            SentenceSplitter::new()
                .chunk_size(10)
                .chunk_overlap(11)
                .build()
                .map(|_| ()),
        ),
        (
            "TokenTextSplitter_overlap",
            TokenTextSplitter::new()
                .chunk_size(10)
                .chunk_overlap(11)
                .build()
                .map(|_| ()),
        ),
    ] {
        let err = result.unwrap_err();
        assert!(matches!(err, ragloom_core::Error::InvalidInput(_)));
        assert!(err.to_string().contains(data[key].as_str().unwrap()));
    }
    let single = SentenceSplitter::new()
        .chunk_size(1)
        .chunk_overlap(0)
        .split_text("東京🚀 x")
        .unwrap_err();
    assert!(
        single
            .to_string()
            .contains(data["single_token"].as_str().unwrap())
    );
    let tiny = TokenTextSplitter::new()
        .chunk_size(1)
        .chunk_overlap(0)
        .split_text("東京🚀 x")
        .unwrap();
    assert_eq!(tiny, strings(&data["token_splitter_tiny"]));

    // Python gives one empty node for an empty document and none for a
    // whitespace-only one.
    let edge = data["edge"].as_object().unwrap();
    assert_eq!(edge["SentenceSplitter_empty"].as_array().unwrap().len(), 1);
    assert!(
        edge["SentenceSplitter_spaces"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    for (label, text) in [("empty", ""), ("spaces", "   \n\n  "), ("one_word", "word")] {
        let doc = Node::document(text).with_id("e");
        let s = SentenceSplitter::new().id_func(id_func());
        let t = TokenTextSplitter::new().id_func(id_func());
        let parsed = [
            (
                "SentenceSplitter",
                s.get_nodes_from_documents(std::slice::from_ref(&doc)),
            ),
            (
                "TokenTextSplitter",
                t.get_nodes_from_documents(std::slice::from_ref(&doc)),
            ),
        ];
        for (class, nodes) in parsed {
            let nodes = nodes.unwrap();
            assert_nodes_equal(label, &nodes, &edge[&format!("{class}_{label}")]);
        }
    }
    let defaults = &data["default_settings"];
    assert_eq!(
        SentenceSplitter::new().settings(),
        defaults["SentenceSplitter"]
    );
    assert_eq!(
        TokenTextSplitter::new().settings(),
        defaults["TokenTextSplitter"]
    );
}

#[test]
fn chunks_of_chunks_and_several_documents_equal_python() {
    let data = load("two_level.json");
    let doc = Node::document(read_text("data:multilingual.txt"))
        .with_id("root")
        .with_metadata("lang", "mixed");
    let first = SentenceSplitter::new()
        .chunk_size(128)
        .chunk_overlap(16)
        .id_func(id_func())
        .get_nodes_from_documents(&[doc])
        .unwrap();
    assert_nodes_equal("first level", &first, &data["first"]);
    let second = TokenTextSplitter::new()
        .chunk_size(32)
        .chunk_overlap(4)
        .id_func(id_func())
        .get_nodes_from_documents(&first)
        .unwrap();
    assert_nodes_equal("second level", &second, &data["second"]);
    // the second level points at the root document, not at the first-level chunk
    assert!(second.iter().all(|n| n.ref_doc_id() == Some("root")));

    let docs = [
        Node::document("First document. It has two sentences.")
            .with_id("a")
            .with_metadata("k", "a"),
        Node::document("Second document here. Also two sentences. And three.")
            .with_id("b")
            .with_metadata("k", "b"),
    ];
    let nodes = SentenceSplitter::new()
        .chunk_size(8)
        .chunk_overlap(2)
        .id_func(id_func())
        .get_nodes_from_documents(&docs)
        .unwrap();
    assert_nodes_equal("two documents", &nodes, &load("two_docs.json"));
    let last_of_a = nodes
        .iter()
        .rposition(|n| n.ref_doc_id() == Some("a"))
        .unwrap();
    assert!(
        nodes[last_of_a].next_node().is_none(),
        "no Next across documents"
    );
    assert!(
        nodes[last_of_a + 1].prev_node().is_none(),
        "no Previous across documents"
    );
}

#[tokio::test]
async fn transform_is_get_nodes_from_documents() {
    let doc = Node::document(read_text("data:multilingual.txt")).with_id("m");
    let splitter = SentenceSplitter::new()
        .chunk_size(64)
        .chunk_overlap(8)
        .id_func(id_func());
    assert_eq!(splitter.class_name(), "SentenceSplitter");
    let via_transform = splitter.transform(vec![doc.clone()]).await.unwrap();
    let direct = splitter
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .unwrap();
    assert_eq!(node_dicts(&via_transform), node_dicts(&direct));
    assert!(via_transform.len() > 5);
    let token = TokenTextSplitter::new().chunk_size(64).chunk_overlap(8);
    assert_eq!(token.class_name(), "TokenTextSplitter");
    let nodes = token.transform(vec![doc.clone()]).await.unwrap();
    assert_offsets_slice_text("token transform", &doc, &nodes);
    // default ids are fresh UUID v4s
    for n in &nodes {
        let id = uuid_like(&n.id_);
        assert!(id, "{} is not a UUID v4", n.id_);
    }
}

fn uuid_like(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts[2].starts_with('4')
}

#[test]
fn split_text_alone_matches_the_parsed_chunks() {
    let text = read_text("data:multilingual.txt");
    let s = SentenceSplitter::new().chunk_size(64).chunk_overlap(8);
    let chunks = s.split_text(&text).unwrap();
    let nodes = s
        .get_nodes_from_documents(&[Node::document(text.clone())])
        .unwrap();
    let texts: Vec<&str> = nodes.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(chunks, texts);
    assert_eq!(nodes[0].relationships.len(), 2, "Source and Next");
    assert!(
        nodes[0]
            .relationships
            .contains_key(&NodeRelationship::Source)
    );
}

#[test]
fn random_mixed_texts_split_as_in_python() {
    let cases = load("split_fuzz.json");
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 150);
    for (i, case) in cases.iter().enumerate() {
        let text = case["text"].as_str().unwrap();
        let size = case["chunk_size"].as_u64().unwrap() as usize;
        let overlap = case["chunk_overlap"].as_u64().unwrap() as usize;
        let doc = Node::document(text).with_id("d");
        let docs = std::slice::from_ref(&doc);
        let parsed = [
            (
                "SentenceSplitter",
                SentenceSplitter::new()
                    .chunk_size(size)
                    .chunk_overlap(overlap)
                    .get_nodes_from_documents(docs),
            ),
            (
                "TokenTextSplitter",
                TokenTextSplitter::new()
                    .chunk_size(size)
                    .chunk_overlap(overlap)
                    .get_nodes_from_documents(docs),
            ),
        ];
        for (class, nodes) in parsed {
            let got: Vec<Value> = nodes
                .unwrap()
                .iter()
                .map(|n| serde_json::json!([n.text, n.start_char_idx, n.end_char_idx]))
                .collect();
            assert_eq!(
                Value::Array(got),
                case[class],
                "case #{i} {class} {size}/{overlap} on {text:?}"
            );
        }
    }
}
