//! Node postprocessors and `SentenceWindowNodeParser` against what
//! llama-index-core 0.14.25 produces on the same inputs (recorded by
//! `tests/data/postprocessors/gen_postprocessors.py`), plus a chain of
//! postprocessors run by a query engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use ragloom_core::llms::MockLlm;
use ragloom_core::node_parser::{NodeParser, SentenceWindowNodeParser};
use ragloom_core::postprocessor::{
    AutoPrevNextNodePostprocessor, FixedRecencyPostprocessor, KeywordNodePostprocessor, LLMRerank,
    LongContextReorder, MetadataReplacementPostProcessor, NodePostprocessor, PrevNextMode,
    PrevNextNodePostprocessor, SimilarityPostprocessor, TimeWeightedPostprocessor,
    default_format_node_batch_fn, default_parse_choice_select_answer_fn,
};
use ragloom_core::prompts::PromptMixin;
use ragloom_core::retrievers::Retriever;
use ragloom_core::storage::{DocStore, SimpleDocumentStore};
use ragloom_core::{
    Document, Error, MetadataMode, Node, NodeRelationship, NodeWithScore, QueryBundle, QueryEngine,
    RelatedNodeInfo, Result, RetrieverQueryEngine, TransformComponent,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::{Arc, LazyLock};

static PY: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("data/postprocessors/postprocessors.json")).unwrap()
});
static WINDOW: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("data/postprocessors/sentence_window.json")).unwrap()
});

/// A node from the generator's spec `{id, text?, score?, metadata?, prev?, next?}`.
fn nws(spec: &Value) -> NodeWithScore {
    let id = spec["id"].as_str().unwrap();
    let mut node = Node::text_node(spec["text"].as_str().unwrap_or(id)).with_id(id);
    if let Some(m) = spec["metadata"].as_object() {
        node = node.with_metadata_map(m.clone());
    }
    if let Some(p) = spec["prev"].as_str() {
        node = node.with_relationship(NodeRelationship::Previous, RelatedNodeInfo::new(p));
    }
    if let Some(n) = spec["next"].as_str() {
        node = node.with_relationship(NodeRelationship::Next, RelatedNodeInfo::new(n));
    }
    NodeWithScore::new(node, spec["score"].as_f64().map(|s| s as f32))
}

fn nodes_of(specs: &Value) -> Vec<NodeWithScore> {
    specs.as_array().unwrap().iter().map(nws).collect()
}

fn ids(nodes: &[NodeWithScore]) -> Vec<String> {
    nodes.iter().map(|n| n.node.id_.clone()).collect()
}

/// Compares ids and scores with Python's `[{id, score}]`.
fn assert_same(got: &[NodeWithScore], want: &Value, what: &str) {
    let want = want.as_array().unwrap();
    let want_ids: Vec<&str> = want.iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids(got), want_ids, "{what}");
    for (g, w) in got.iter().zip(want) {
        match (g.score, w["score"].as_f64()) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!((f64::from(a) - b).abs() < 1e-5, "{what}: {a} vs {b}"),
            (a, b) => panic!("{what}: score {a:?} vs {b:?}"),
        }
    }
}

fn query() -> QueryBundle {
    QueryBundle::new("What happened?")
}

#[tokio::test]
async fn similarity_cutoff_matches_python() {
    let input = nodes_of(&json!([
        {"id": "a", "score": 0.9}, {"id": "b", "score": null}, {"id": "c", "score": -0.2},
        {"id": "d", "score": 0.5}, {"id": "e", "score": 0.0}, {"id": "f", "score": 0.49}
    ]));
    for case in PY["similarity"].as_array().unwrap() {
        let p = match case["cutoff"].as_f64() {
            Some(c) => SimilarityPostprocessor::new(c as f32),
            None => SimilarityPostprocessor::default(),
        };
        let got = p
            .postprocess_nodes(input.clone(), Some(&query()))
            .await
            .unwrap();
        assert_same(&got, &case["output"], &format!("cutoff {}", case["cutoff"]));
    }
    // ragloom's extra: no cutoff keeps everything, unscored included
    let p = SimilarityPostprocessor {
        similarity_cutoff: None,
    };
    assert_eq!(p.postprocess_nodes(input, None).await.unwrap().len(), 6);
}

#[tokio::test]
async fn long_context_reorder_matches_python() {
    let cases = PY["long_context_reorder"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for case in cases {
        let got = LongContextReorder::new()
            .postprocess_nodes(nodes_of(&case["input"]), None)
            .await
            .unwrap();
        let want: Vec<&str> = case["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(ids(&got), want);
    }
}

#[tokio::test]
async fn time_weighted_matches_python() {
    let tw = &PY["time_weighted"];
    let now = tw["now"].as_f64().unwrap();
    for case in tw["cases"].as_array().unwrap() {
        let cfg = &case["config"];
        let mut p = TimeWeightedPostprocessor::new()
            .now(now)
            .top_k(cfg["top_k"].as_u64().unwrap() as usize);
        if let Some(d) = cfg["time_decay"].as_f64() {
            p = p.time_decay(d);
        }
        if let Some(k) = cfg["last_accessed_key"].as_str() {
            p = p.last_accessed_key(k);
        }
        if let Some(r) = cfg["time_access_refresh"].as_bool() {
            p = p.time_access_refresh(r);
        }
        let got = p
            .postprocess_nodes(nodes_of(&tw["nodes"]), None)
            .await
            .unwrap();
        assert_same(&got, &case["output"], &format!("{cfg}"));
        for (g, w) in got.iter().zip(case["output"].as_array().unwrap()) {
            let want = w["metadata"].as_object().unwrap();
            assert_eq!(g.node.metadata.len(), want.len(), "{cfg}");
            for (k, v) in want {
                assert_eq!(g.node.metadata[k].as_f64(), v.as_f64(), "{cfg} {k}");
            }
        }
    }
}

#[tokio::test]
async fn time_weighted_remembers_refreshes_and_rejects_bad_times() {
    let now = 1_000_000.0;
    let p = TimeWeightedPostprocessor::new().now(now).top_k(1);
    let old = |id: &str, score: f32| {
        NodeWithScore::new(
            Node::text_node(id)
                .with_id(id)
                .with_metadata("__last_accessed__", now - 36_000.0),
            Some(score),
        )
    };
    // b wins on score; returned, it is refreshed
    let first = p
        .postprocess_nodes(vec![old("a", 0.5), old("b", 0.6)], None)
        .await
        .unwrap();
    assert_eq!(ids(&first), ["b"]);
    assert_eq!(p.last_accessed("b"), Some(now));
    assert_eq!(p.last_accessed("a"), None);
    // the same stale metadata again: b's remembered access still counts
    let again = p
        .postprocess_nodes(vec![old("a", 0.7), old("b", 0.6)], None)
        .await
        .unwrap();
    assert_eq!(ids(&again), ["b"]);
    assert!((again[0].get_score() - 1.6).abs() < 1e-6);
    let fresh = TimeWeightedPostprocessor::new().now(now);
    let got = fresh
        .postprocess_nodes(vec![old("a", 0.7), old("b", 0.6)], None)
        .await
        .unwrap();
    assert_eq!(ids(&got), ["a"]);

    let bad = NodeWithScore::new(
        Node::text_node("x")
            .with_id("node-x")
            .with_metadata("__last_accessed__", "yesterday"),
        None,
    );
    let err = fresh.postprocess_nodes(vec![bad], None).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidInput(m) if m.contains("node-x") && m.contains("__last_accessed__"))
    );
}

#[tokio::test]
async fn fixed_recency_matches_python() {
    let cases = PY["fixed_recency"].as_array().unwrap();
    assert_eq!(cases.len(), 9);
    for case in cases {
        let p = FixedRecencyPostprocessor::new().top_k(case["top_k"].as_u64().unwrap() as usize);
        let got = p
            .postprocess_nodes(nodes_of(&case["input"]), Some(&query()))
            .await
            .unwrap();
        assert_same(&got, &case["output"], &format!("{}", case["input"]));
    }
}

#[tokio::test]
async fn fixed_recency_compares_offsets_and_names_bad_nodes() {
    let dated = |id: &str, date: Value| {
        NodeWithScore::new(
            Node::text_node(id).with_id(id).with_metadata("date", date),
            None,
        )
    };
    let p = FixedRecencyPostprocessor::new().top_k(3);
    // 12:00+03:00 is 09:00Z: before 10:00Z, after 08:30Z
    let got = p
        .postprocess_nodes(
            vec![
                dated("a", json!("2023-01-05T10:00:00Z")),
                dated("b", json!("2023-01-05T12:00:00+03:00")),
                dated("c", json!("2023-01-05T08:30:00Z")),
            ],
            None,
        )
        .await
        .unwrap();
    assert_eq!(ids(&got), ["a", "b", "c"]);
    let got = p
        .postprocess_nodes(
            vec![
                dated("a", json!("March 1, 2024")),
                dated("b", json!("2024-02-29")),
                dated("c", json!(1_709_337_600)), // 2024-03-02
            ],
            None,
        )
        .await
        .unwrap();
    assert_eq!(ids(&got), ["c", "a", "b"]);
    let err = p
        .postprocess_nodes(
            vec![dated("a", json!("2024-01-01")), dated("odd", json!("soon"))],
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(&err, Error::InvalidInput(m) if m.contains("odd") && m.contains("soon")));
    let missing = NodeWithScore::new(Node::text_node("t").with_id("undated"), None);
    let err = p.postprocess_nodes(vec![missing], None).await.unwrap_err();
    assert!(matches!(&err, Error::InvalidInput(m) if m.contains("undated") && m.contains("date")));
    assert!(p.postprocess_nodes(vec![], None).await.unwrap().is_empty());
}

#[tokio::test]
async fn prev_next_matches_python() {
    let pn = &PY["prev_next"];
    let chain = pn["chain"].as_array().unwrap();
    let store = Arc::new(SimpleDocumentStore::new());
    let chain_nodes: Vec<Node> = chain.iter().map(|s| nws(s).node).collect();
    store.add_documents(&chain_nodes, true, true).await.unwrap();
    let by_id = |id: &str| chain.iter().find(|s| s["id"] == id).unwrap();
    let cases = pn["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 30);
    for case in cases {
        let input: Vec<NodeWithScore> = case["retrieved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut n = nws(by_id(r[0].as_str().unwrap()));
                n.score = r[1].as_f64().map(|s| s as f32);
                n
            })
            .collect();
        let mode: PrevNextMode = case["mode"].as_str().unwrap().parse().unwrap();
        let p = PrevNextNodePostprocessor::new(store.clone())
            .num_nodes(case["num_nodes"].as_u64().unwrap() as usize)
            .mode(mode);
        let got = p.postprocess_nodes(input, Some(&query())).await.unwrap();
        assert_same(
            &got,
            &case["output"],
            &format!(
                "{} {} {}",
                case["retrieved"], case["mode"], case["num_nodes"]
            ),
        );
    }
    assert!("sideways".parse::<PrevNextMode>().is_err());
}

#[tokio::test]
async fn auto_prev_next_matches_python() {
    let pn = &PY["prev_next"];
    let chain = pn["chain"].as_array().unwrap();
    let store = Arc::new(SimpleDocumentStore::new());
    let chain_nodes: Vec<Node> = chain.iter().map(|s| nws(s).node).collect();
    store.add_documents(&chain_nodes, true, true).await.unwrap();
    let by_id = |id: &str| chain.iter().find(|s| s["id"] == id).unwrap();
    for case in PY["auto_prev_next"].as_array().unwrap() {
        let input: Vec<NodeWithScore> = case["retrieved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut n = nws(by_id(r[0].as_str().unwrap()));
                n.score = r[1].as_f64().map(|s| s as f32);
                n
            })
            .collect();
        let replies: Vec<String> = case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        let llm = Arc::new(MockLlm::scripted(replies));
        let p = AutoPrevNextNodePostprocessor::new(store.clone(), llm.clone());
        let got = p.postprocess_nodes(input, Some(&query())).await.unwrap();
        assert_same(&got, &case["output"], &format!("{}", case["retrieved"]));
        let prompts: Vec<String> = llm.requests().iter().map(|r| r.prompt_text()).collect();
        assert_eq!(json!(prompts), case["prompts"]);
    }
    let llm = Arc::new(MockLlm::scripted(["maybe"]));
    let p = AutoPrevNextNodePostprocessor::new(store.clone(), llm);
    let one = nws(by_id("c3"));
    let err = p
        .postprocess_nodes(vec![one.clone()], Some(&query()))
        .await
        .unwrap_err();
    assert!(matches!(&err, Error::OutputParse(m) if m.contains("maybe")));
    assert!(p.postprocess_nodes(vec![one], None).await.is_err());
}

#[tokio::test]
async fn prev_next_names_a_neighbour_missing_from_the_docstore() {
    let store = Arc::new(SimpleDocumentStore::new());
    let node = Node::text_node("x")
        .with_id("x")
        .with_relationship(NodeRelationship::Next, RelatedNodeInfo::new("ghost"));
    let p = PrevNextNodePostprocessor::new(store);
    let err = p
        .postprocess_nodes(vec![NodeWithScore::new(node, Some(1.0))], None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotFound(m) if m.contains("ghost")),
        "{err}"
    );
}

#[tokio::test]
async fn metadata_replacement_matches_python() {
    let mr = &PY["metadata_replacement"];
    let got = MetadataReplacementPostProcessor::new("window")
        .postprocess_nodes(nodes_of(&mr["input"]), None)
        .await
        .unwrap();
    for (g, w) in got.iter().zip(mr["output"].as_array().unwrap()) {
        assert_eq!(g.node.id_, w["id"].as_str().unwrap());
        assert_eq!(g.node.text, w["text"].as_str().unwrap());
        assert_eq!(
            g.node.get_content(MetadataMode::None),
            w["content_none"].as_str().unwrap()
        );
    }
    let n = NodeWithScore::new(Node::text_node("t").with_metadata("window", 3), None);
    let got = MetadataReplacementPostProcessor::new("window")
        .postprocess_nodes(vec![n], None)
        .await
        .unwrap();
    assert_eq!(got[0].node.text, "3");
}

#[tokio::test]
async fn keyword_filter_matches_whole_tokens_case_sensitively() {
    let texts = [
        ("n0", "The cat sat on the mat."),
        ("n1", "Cats are not a cat-like thing."),
        ("n2", "Concatenate strings in New York."),
        ("n3", "A dog, not a Cat."),
        ("n4", "new york has dogs"),
    ];
    let input: Vec<NodeWithScore> = texts
        .iter()
        .map(|(id, t)| {
            NodeWithScore::new(
                Node::text_node(*t).with_id(*id).with_metadata("tag", "cat"),
                Some(1.0),
            )
        })
        .collect();
    let run = |p: KeywordNodePostprocessor| {
        let input = input.clone();
        async move { ids(&p.postprocess_nodes(input, None).await.unwrap()) }
    };
    // "cat" is a whole token in n0 and n1 ("cat-like" is cat, -, like); metadata is not searched
    assert_eq!(
        run(KeywordNodePostprocessor::new().required_keywords(["cat"])).await,
        ["n0", "n1"]
    );
    assert_eq!(
        run(KeywordNodePostprocessor::new().required_keywords(["Cat"])).await,
        ["n3"]
    );
    // any one required keyword suffices; phrases match as token runs
    assert_eq!(
        run(KeywordNodePostprocessor::new().required_keywords(["New York", "dog"])).await,
        ["n2", "n3"]
    );
    assert_eq!(
        run(KeywordNodePostprocessor::new().exclude_keywords(["cat", "dogs"])).await,
        ["n2", "n3"]
    );
    assert_eq!(
        run(KeywordNodePostprocessor::new()
            .required_keywords(["a"])
            .exclude_keywords(["dog"]))
        .await,
        ["n1"]
    );
    assert_eq!(run(KeywordNodePostprocessor::new()).await.len(), 5);
    assert!(
        run(KeywordNodePostprocessor::new().required_keywords([" "]))
            .await
            .is_empty()
    );
    assert_eq!(KeywordNodePostprocessor::new().lang, "en");
}

#[tokio::test]
async fn llm_rerank_matches_python_prompts_and_order() {
    let rr = &PY["llm_rerank"];
    let query = QueryBundle::new(rr["query"].as_str().unwrap());
    for case in rr["cases"].as_array().unwrap() {
        let replies: Vec<String> = case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        let llm = Arc::new(MockLlm::scripted(replies));
        let p = LLMRerank::new(llm.clone())
            .choice_batch_size(case["choice_batch_size"].as_u64().unwrap() as usize)
            .top_n(case["top_n"].as_u64().unwrap() as usize);
        let got = p
            .postprocess_nodes(nodes_of(&rr["nodes"]), Some(&query))
            .await
            .unwrap();
        let prompts: Vec<String> = llm.requests().iter().map(|r| r.prompt_text()).collect();
        let want: Vec<&str> = case["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(prompts, want);
        assert_same(&got, &case["output"], &format!("{}", case["replies"]));
    }
    let llm = Arc::new(MockLlm::scripted(Vec::<String>::new()));
    let p = LLMRerank::new(llm);
    assert!(
        p.postprocess_nodes(vec![], Some(&query))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        p.postprocess_nodes(nodes_of(&rr["nodes"]), None).await,
        Err(Error::InvalidInput(_))
    ));
    assert!(
        p.clone()
            .choice_batch_size(0)
            .postprocess_nodes(nodes_of(&rr["nodes"]), Some(&query))
            .await
            .is_err()
    );
    assert_eq!(
        p.get_prompts().keys().collect::<Vec<_>>(),
        ["choice_select_prompt"]
    );
    assert!(p.clone().choice_select_prompt("no variables").is_err());
}

#[test]
fn choice_select_parse_and_format_match_python() {
    for case in PY["parse_choice_select"].as_array().unwrap() {
        let answer = case["answer"].as_str().unwrap();
        let n = case["num_choices"].as_u64().unwrap() as usize;
        let got = default_parse_choice_select_answer_fn(answer, n);
        let nums: Vec<usize> = got.iter().map(|(n, _)| *n).collect();
        let rels: Vec<f32> = got.iter().map(|(_, r)| *r).collect();
        let want_rels: Vec<f32> = case["relevances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_f64().unwrap() as f32)
            .collect();
        match answer {
            // documented differences: decimals kept; three comma parts still read
            "Doc: 2, Relevance: 7.5" => assert_eq!(got, [(2, 7.5)]),
            "Doc: 1, Relevance: 2, extra" => assert_eq!(got, [(1, 2.0)]),
            _ => {
                let want_nums: Vec<usize> = case["nums"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_u64().unwrap() as usize)
                    .collect();
                assert_eq!(nums, want_nums, "{answer:?}");
                assert_eq!(rels, want_rels, "{answer:?}");
            }
        }
    }
    let nodes: Vec<Node> = nodes_of(&PY["llm_rerank"]["nodes"])
        .into_iter()
        .take(3)
        .map(|n| n.node)
        .collect();
    assert_eq!(
        default_format_node_batch_fn(&nodes),
        PY["format_node_batch"].as_str().unwrap()
    );
}

fn sha16(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn sentence_window_small_document_matches_python() {
    let mut doc = Document::document(
        "Hello there. This is the first sentence!  And a second one?\n\n\
         Mr. Smith went to Washington. He left at 5 p.m. sharp. The end.",
    )
    .with_id("doc-1")
    .with_metadata("file_name", "small.txt")
    .with_metadata("author", "someone");
    doc.excluded_llm_metadata_keys = vec!["author".into()];
    let nodes = SentenceWindowNodeParser::new()
        .get_nodes_from_documents(std::slice::from_ref(&doc))
        .unwrap();
    let want = WINDOW["small"].as_array().unwrap();
    assert_eq!(nodes.len(), want.len());
    for (i, (n, w)) in nodes.iter().zip(want).enumerate() {
        assert_eq!(n.text, w["text"].as_str().unwrap(), "node {i}");
        assert_eq!(Value::Object(n.metadata.clone()), w["metadata"], "node {i}");
        assert_eq!(
            json!(n.excluded_embed_metadata_keys),
            w["excluded_embed_metadata_keys"]
        );
        assert_eq!(
            json!(n.excluded_llm_metadata_keys),
            w["excluded_llm_metadata_keys"]
        );
        assert_eq!(json!(n.start_char_idx), w["start_char_idx"], "node {i}");
        assert_eq!(json!(n.end_char_idx), w["end_char_idx"], "node {i}");
        assert_eq!(n.prev_node().is_some(), w["has_prev"].as_bool().unwrap());
        assert_eq!(n.next_node().is_some(), w["has_next"].as_bool().unwrap());
        assert_eq!(n.ref_doc_id(), Some("doc-1"));
        assert_eq!(
            n.get_content(MetadataMode::Llm),
            w["content_llm"].as_str().unwrap()
        );
        assert_eq!(
            n.get_content(MetadataMode::Embed),
            w["content_embed"].as_str().unwrap()
        );
    }
    // the document itself is left as it was
    assert_eq!(doc.excluded_llm_metadata_keys, ["author"]);
    assert!(doc.excluded_embed_metadata_keys.is_empty());
    let settings = SentenceWindowNodeParser::new().settings();
    assert_eq!(settings["window_size"], 3);
    assert_eq!(settings["class_name"], "SentenceWindowNodeParser");
}

#[test]
fn sentence_window_corpus_chunks_match_python() {
    for case in WINDOW["corpus"].as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let path = common::corpus_dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {} ({e}): the corpus must be present",
                path.display()
            )
        });
        let parser = SentenceWindowNodeParser::new()
            .window_size(case["window_size"].as_u64().unwrap() as usize);
        let nodes = parser
            .get_nodes_from_documents(&[Document::document(text)])
            .unwrap();
        let want = case["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), want.len(), "{file}");
        for (i, (n, w)) in nodes.iter().zip(want).enumerate() {
            let got = json!([
                n.start_char_idx,
                n.end_char_idx,
                sha16(&n.text),
                sha16(n.metadata["window"].as_str().unwrap())
            ]);
            assert_eq!(&got, w, "{file} node {i}");
        }
    }
}

/// A retriever handing back fixed scored nodes.
#[derive(Debug)]
struct Fixed(Vec<NodeWithScore>);

#[async_trait]
impl Retriever for Fixed {
    async fn retrieve(&self, _query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn query_engine_runs_postprocessors_in_order() {
    let retrieved: Vec<NodeWithScore> =
        [("A", 0.9), ("B", 0.2), ("C", 0.7), ("D", 0.5), ("E", 0.8)]
            .iter()
            .map(|(t, s)| {
                NodeWithScore::new(Node::text_node(format!("chunk {t}")).with_id(*t), Some(*s))
            })
            .collect();
    let llm = Arc::new(MockLlm::new());
    let engine = RetrieverQueryEngine::builder(Arc::new(Fixed(retrieved)))
        .llm(llm.clone())
        .node_postprocessor(Arc::new(SimilarityPostprocessor::new(0.4)))
        .node_postprocessor(Arc::new(LongContextReorder::new()))
        .build()
        .unwrap();
    let response = engine.query(&QueryBundle::new("q?")).await.unwrap();
    // the cutoff drops B, then the reorder puts the two best at the ends
    // (E first, A last) and the weakest, D, in the middle
    let order: Vec<&str> = response.source_nodes.iter().map(|n| n.node_id()).collect();
    assert_eq!(order, ["E", "D", "C", "A"]);
    let prompt = llm.last_request().unwrap().prompt_text();
    let at = |t: &str| prompt.find(&format!("chunk {t}")).unwrap();
    assert!(
        at("E") < at("D") && at("D") < at("C") && at("C") < at("A"),
        "{prompt}"
    );
    assert!(!prompt.contains("chunk B"));

    // the other order: reorder first, then the cutoff, keeps the reordered sequence
    let retrieved: Vec<NodeWithScore> = [("A", 0.9), ("B", 0.2), ("C", 0.7)]
        .iter()
        .map(|(t, s)| {
            NodeWithScore::new(Node::text_node(format!("chunk {t}")).with_id(*t), Some(*s))
        })
        .collect();
    let engine = RetrieverQueryEngine::builder(Arc::new(Fixed(retrieved)))
        .llm(Arc::new(MockLlm::new()))
        .node_postprocessor(Arc::new(LongContextReorder::new()))
        .node_postprocessor(Arc::new(MetadataReplacementPostProcessor::new("none")))
        .node_postprocessor(Arc::new(SimilarityPostprocessor::new(0.4)))
        .build()
        .unwrap();
    let nodes = engine.retrieve(&QueryBundle::new("q?")).await.unwrap();
    assert_eq!(ids(&nodes), ["A", "C"]);
}

#[tokio::test]
async fn sentence_window_then_metadata_replacement_shows_windows_to_the_llm() {
    let doc = Document::document("One. Two. Three. Four. Five.");
    let nodes = SentenceWindowNodeParser::new()
        .window_size(1)
        .get_nodes_from_documents(&[doc])
        .unwrap();
    let third = NodeWithScore::new(nodes[2].clone(), Some(0.9));
    let llm = Arc::new(MockLlm::new());
    let engine = RetrieverQueryEngine::builder(Arc::new(Fixed(vec![third])))
        .llm(llm.clone())
        .node_postprocessor(Arc::new(MetadataReplacementPostProcessor::new("window")))
        .build()
        .unwrap();
    engine.query(&QueryBundle::new("q?")).await.unwrap();
    let prompt = llm.last_request().unwrap().prompt_text();
    assert!(prompt.contains("Two.  Three.  Four."), "{prompt}");
    // the window keys are excluded from what the LLM sees
    assert!(!prompt.contains("original_text"), "{prompt}");
}

#[tokio::test]
async fn docstore_trait_object_serves_prev_next() {
    // PrevNextNodePostprocessor takes any DocStore behind an Arc
    let store: Arc<dyn DocStore> = Arc::new(SimpleDocumentStore::new());
    let p = PrevNextNodePostprocessor::new(store).mode(PrevNextMode::Both);
    let lone = NodeWithScore::new(Node::text_node("alone").with_id("lone"), Some(0.3));
    let got = p.postprocess_nodes(vec![lone], None).await.unwrap();
    assert_eq!(ids(&got), ["lone"]);
    assert_eq!(got[0].score, Some(0.3));
}
