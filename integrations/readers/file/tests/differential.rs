//! Markdown, CSV and JSON readers against LlamaIndex on hundreds of small
//! generated inputs (`data/differential.json`, from `data/gen_differential.py`),
//! and HTMLTagReader on generated pages (`data/html_tags.json`, from
//! `data/gen_html_tags.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ragloom_core::Metadata;
use ragloom_core::readers::FileReader;
use ragloom_readers_file::{CSVReader, HTMLTagReader, JSONReader, MarkdownReader, PandasCSVReader};
use serde_json::Value;
use std::path::Path;

fn reader(case: &Value) -> (Box<dyn FileReader>, &'static str) {
    let opts = &case["options"];
    let flag = |k: &str| opts.get(k).and_then(Value::as_bool);
    let num = |k: &str| opts.get(k).and_then(Value::as_u64).map(|n| n as usize);
    match case["reader"].as_str().unwrap() {
        "MarkdownReader" => {
            let mut r = MarkdownReader::new();
            if let Some(v) = flag("remove_hyperlinks") {
                r = r.remove_hyperlinks(v);
            }
            if let Some(v) = flag("remove_images") {
                r = r.remove_images(v);
            }
            (Box::new(r), ".md")
        }
        "CSVReader" => (Box::new(CSVReader::new().concat_rows(false)), ".csv"),
        "PandasCSVReader" => (Box::new(PandasCSVReader::new().concat_rows(false)), ".csv"),
        "JSONReader" => {
            let mut r = JSONReader::new();
            if let Some(v) = flag("clean_json") {
                r = r.clean_json(v);
            }
            if let Some(v) = num("levels_back") {
                r = r.levels_back(v);
            }
            if let Some(v) = num("collapse_length") {
                r = r.collapse_length(v);
            }
            (Box::new(r), ".json")
        }
        other => panic!("unknown reader {other}"),
    }
}

#[tokio::test]
async fn readers_agree_with_llamaindex_on_generated_inputs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() > 500);
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (reader, ext) = reader(case);
        let file = dir.path().join(format!("case{i}{ext}"));
        std::fs::write(&file, case["input"].as_str().unwrap()).unwrap();
        let got = match reader.load_file(&file, Metadata::new()).await {
            Ok(docs) => Value::from(docs.into_iter().map(|d| d.text).collect::<Vec<_>>()),
            Err(_) => Value::from("error"),
        };
        let want = match &case["output"] {
            Value::Object(_) => Value::from("error"),
            texts => texts.clone(),
        };
        if got != want {
            failures.push(format!(
                "#{i} {} {}\ninput: {:?}\nwant:  {want}\ngot:   {got}",
                case["reader"], case["options"], case["input"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn html_tag_reader_agrees_with_llamaindex_on_generated_pages() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/html_tags.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 600);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let reader = HTMLTagReader::new()
            .tag(case["tag"].as_str().unwrap())
            .ignore_no_id(case["ignore_no_id"].as_bool().unwrap());
        std::fs::write(&file, case["input"].as_str().unwrap()).unwrap();
        let docs = reader.load_file(&file, Metadata::new()).await.unwrap();
        let got: Value = docs
            .iter()
            .map(|d| {
                Value::from(vec![
                    Value::from(d.text.clone()),
                    d.metadata["tag_id"].clone(),
                ])
            })
            .collect();
        if got != case["output"] {
            failures.push(format!(
                "#{i} tag={} ignore_no_id={}\ninput: {:?}\nwant:  {}\ngot:   {got}",
                case["tag"], case["ignore_no_id"], case["input"], case["output"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} pages differ:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
