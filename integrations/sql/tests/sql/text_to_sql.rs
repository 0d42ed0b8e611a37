//! The SQL engines against LlamaIndex 0.14.25's own output on the sample
//! databases: table descriptions, result text, reply parsing, prompts and answers.

use crate::common::{build_db, recorded};
use ragloom_core::llms::{Llm, LlmMetadata, MockLlm};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::QueryBundle;
use ragloom_sql::{
    DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2, DEFAULT_TEXT_TO_SQL_TMPL, NLSQLTableQueryEngine,
    SQLDatabase, parse_response_to_sql,
};
use serde_json::Value;
use std::sync::Arc;

#[test]
fn prompts_are_llama_index_s() {
    let rec = recorded();
    assert_eq!(DEFAULT_TEXT_TO_SQL_TMPL, rec["text_to_sql_tmpl"]);
    assert_eq!(
        DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2,
        rec["response_synthesis_tmpl_v2"]
    );
    assert_eq!(
        ragloom_core::prompts::default_prompts::DEFAULT_REFINE_PROMPT_TMPL,
        rec["refine_tmpl"]
    );
}

#[tokio::test]
async fn tables_are_described_as_llama_index_describes_them() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recorded();
    for (script, key) in [
        ("sample.sql", "table_info"),
        ("odd_types.sql", "odd_table_info"),
    ] {
        let db = SQLDatabase::sqlite(build_db(dir.path(), script))
            .build()
            .unwrap();
        let expected = rec[key].as_object().unwrap();
        let names: Vec<&str> = expected.keys().map(String::as_str).collect();
        assert_eq!(db.usable_table_names(), names, "{script}");
        for (table, info) in expected {
            assert_eq!(
                db.table_info(table).await.unwrap(),
                *info,
                "{script}: {table}"
            );
        }
    }
    assert_eq!(rec["dialect"], "sqlite");
}

#[tokio::test]
async fn results_read_as_python_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    for run in recorded()["run_sql"].as_array().unwrap() {
        let sql = run["sql"].as_str().unwrap();
        let result = db.run_sql(sql).await.unwrap();
        assert_eq!(result.text, run["text"], "{sql}");
        assert_eq!(serde_json::json!(result.col_keys), run["col_keys"], "{sql}");
        let reprs: Vec<Vec<String>> = result
            .rows
            .iter()
            .map(|r| r.iter().map(|v| v.py_repr()).collect())
            .collect();
        assert_eq!(serde_json::json!(reprs), run["result_repr"], "{sql}");
    }
}

#[test]
fn replies_are_parsed_as_llama_index_parses_them() {
    for case in recorded()["parse"].as_array().unwrap() {
        let reply = case["reply"].as_str().unwrap();
        assert_eq!(parse_response_to_sql(reply), case["sql"], "{reply:?}");
    }
}

fn scripted(replies: &[Value]) -> Arc<MockLlm> {
    let llm = MockLlm::scripted(replies.iter().map(|r| r.as_str().unwrap().to_owned()))
        .with_metadata(LlmMetadata {
            context_window: 3900,
            num_output: 256,
            is_chat_model: false,
            ..LlmMetadata::default()
        });
    Arc::new(llm)
}

#[tokio::test]
async fn the_engine_asks_and_answers_as_llama_index_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    for case in recorded()["engine"].as_array().unwrap() {
        let question = case["question"].as_str().unwrap();
        let llm = scripted(case["replies"].as_array().unwrap());
        let options = &case["options"];
        let mut builder = NLSQLTableQueryEngine::builder(db.clone(), llm.clone() as Arc<dyn Llm>);
        if let Some(tables) = options["tables"].as_array() {
            builder = builder.tables(tables.iter().map(|t| t.as_str().unwrap().to_owned()));
        }
        if let Some(kwargs) = options["context_query_kwargs"].as_object() {
            builder = builder.context_query_kwargs(
                kwargs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())),
            );
        }
        if let Some(on) = options["synthesize_response"].as_bool() {
            builder = builder.synthesize_response(on);
        }
        if let Some(on) = options["markdown_response"].as_bool() {
            builder = builder.markdown_response(on);
        }
        let engine = builder.build().unwrap();
        let response = engine.query(&QueryBundle::new(question)).await.unwrap();

        let prompts: Vec<String> = llm.requests().iter().map(|r| r.prompt_text()).collect();
        assert_eq!(serde_json::json!(prompts), case["prompts"], "{question}");
        assert_eq!(response.to_string(), case["response"], "{question}");
        assert_eq!(
            response.metadata["sql_query"], case["sql_query"],
            "{question}"
        );
        if case["col_keys"].is_null() {
            assert!(!response.metadata.contains_key("col_keys"), "{question}");
        } else {
            assert_eq!(
                response.metadata["col_keys"], case["col_keys"],
                "{question}"
            );
            assert_eq!(response.metadata["result"], case["result"], "{question}");
        }
        let sources: Vec<String> = response
            .source_nodes
            .iter()
            .map(|n| n.node.get_content(ragloom_core::schema::MetadataMode::None))
            .collect();
        assert_eq!(
            serde_json::json!(sources),
            case["source_texts"],
            "{question}"
        );
    }
}
