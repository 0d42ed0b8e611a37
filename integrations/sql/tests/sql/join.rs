//! `SQLJoinQueryEngine` and `SQLAutoVectorQueryEngine` against LlamaIndex
//! 0.14.25's recorded runs (tests/py/record_sql_vector.py): every prompt in
//! order, the answer, its metadata and sources, and the errors.

use crate::common::{build_db, data};
use ragloom_core::embeddings::MockEmbedding;
use ragloom_core::indices::{VectorIndexAutoRetriever, VectorStoreIndex};
use ragloom_core::llms::{Llm, MockLlm};
use ragloom_core::prompts::PromptMixin;
use ragloom_core::query_engine::{QueryEngine, QueryEngineTool, RetrieverQueryEngine};
use ragloom_core::schema::{Node, QueryBundle};
use ragloom_core::tools::ToolMetadata;
use ragloom_core::vector_stores::VectorStoreInfo;
use ragloom_sql::{
    DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL, DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
    DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL, NLSQLTableQueryEngine, SQLAutoVectorQueryEngine,
    SQLDatabase, SQLJoinQueryEngine,
};
use serde_json::Value;
use std::sync::Arc;

const SQL_TOOL_DESC: &str = "Useful for translating a natural language query into a SQL query over a table containing: city, containing the population and country of each city; country, containing the name and continent of each country.";
const OTHER_TOOL_DESC: &str = "Useful for answering semantic questions about different cities";

fn recorded() -> Value {
    serde_json::from_str(&std::fs::read_to_string(data("sql_vector.json")).unwrap()).unwrap()
}

async fn city_index(rec: &Value) -> VectorStoreIndex {
    let nodes: Vec<Node> = rec["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            Node::text_node(n["text"].as_str().unwrap())
                .with_id(n["id"].as_str().unwrap())
                .with_metadata_map(serde_json::from_value(n["metadata"].clone()).unwrap())
        })
        .collect();
    VectorStoreIndex::builder(Arc::new(MockEmbedding::new(8)))
        .from_nodes(nodes)
        .await
        .unwrap()
}

/// Runs one recorded case and compares it; `auto` builds the SQL + vector engine.
async fn check(
    case: &Value,
    db: &SQLDatabase,
    index: &VectorStoreIndex,
    info: &VectorStoreInfo,
    auto: bool,
) {
    let name = case["name"].as_str().unwrap();
    let replies: Vec<String> = case["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    let llm = Arc::new(MockLlm::scripted(replies).chat_model(false));
    let dyn_llm = llm.clone() as Arc<dyn Llm>;
    let sql = NLSQLTableQueryEngine::builder(db.clone(), dyn_llm.clone())
        .tables(["city".to_owned(), "country".to_owned()])
        .build()
        .unwrap();
    let sql_tool = QueryEngineTool::new(
        Arc::new(sql.clone()),
        ToolMetadata::new("sql_tool", SQL_TOOL_DESC),
    );
    let options = &case["options"];
    let mut builder = if auto {
        let auto_retriever =
            VectorIndexAutoRetriever::new(index.clone(), info.clone(), dyn_llm.clone());
        SQLAutoVectorQueryEngine::from_sql_and_vector_query_engines(
            sql,
            "sql_tool",
            SQL_TOOL_DESC,
            auto_retriever,
            "vector_tool",
            OTHER_TOOL_DESC,
            dyn_llm.clone(),
        )
        .unwrap()
    } else {
        let other =
            RetrieverQueryEngine::builder(Arc::new(index.as_retriever().similarity_top_k(2)))
                .llm(dyn_llm.clone())
                .build()
                .unwrap();
        let other_tool = QueryEngineTool::new(
            Arc::new(other),
            ToolMetadata::new("vector_tool", OTHER_TOOL_DESC),
        );
        SQLJoinQueryEngine::builder(sql_tool, other_tool, dyn_llm.clone())
    };
    if let Some(on) = options["use_sql_join_synthesis"]
        .as_bool()
        .or(options["use_sql_vector_synthesis"].as_bool())
    {
        builder = builder.use_sql_join_synthesis(on);
    }
    builder = builder.verbose(options["verbose"].as_bool().unwrap_or(true));
    let engine = builder.build().unwrap();
    let outcome = engine
        .query(&QueryBundle::new(case["question"].as_str().unwrap()))
        .await;

    let prompts: Vec<String> = llm.requests().iter().map(|r| r.prompt_text()).collect();
    assert_eq!(
        serde_json::json!(prompts),
        case["prompts"],
        "{name}: prompts"
    );
    match (&case["error"], outcome) {
        (Value::Null, Ok(response)) => {
            assert_eq!(response.to_string(), case["response"], "{name}");
            // Python's SQL answer carries its node's random id as a key.
            let mut want: Vec<&str> = case["metadata"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "<uuid>")
                .collect();
            let mut got: Vec<&str> = response
                .metadata
                .keys()
                .map(String::as_str)
                .filter(|k| !(k.len() == 36 && k.matches('-').count() == 4))
                .collect();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{name}: metadata keys");
            if let Some(sql) = case["metadata"]["sql_query"].as_str() {
                assert_eq!(response.metadata["sql_query"], sql, "{name}");
            }
            let sources: Vec<&str> = response.source_nodes.iter().map(|n| n.node_id()).collect();
            let want_sources: Vec<String> = case["source_nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["id"].as_str().unwrap().to_owned())
                .collect();
            if want_sources.iter().all(|id| id.starts_with('n')) {
                assert_eq!(sources, want_sources, "{name}: sources");
            } else {
                assert_eq!(sources.len(), want_sources.len(), "{name}: sources");
            }
        }
        (Value::Object(_), Err(e)) => assert!(!e.to_string().is_empty(), "{name}"),
        (want, got) => panic!("{name}: expected {want}, got {got:?}"),
    }
}

#[tokio::test]
async fn sql_joined_with_another_engine_as_llama_index_joins_them() {
    let rec = recorded();
    let t = &rec["sql_join_templates"];
    assert_eq!(
        DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
        t["DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL"]
    );
    assert_eq!(
        DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL,
        t["DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL"]
    );
    assert_eq!(
        DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL,
        t["DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL"]
    );

    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let index = city_index(&rec).await;
    let info: VectorStoreInfo = serde_json::from_value(rec["vector_store_info"].clone()).unwrap();
    for case in rec["sql_join_cases"].as_array().unwrap() {
        check(case, &db, &index, &info, false).await;
    }
    for case in rec["sql_auto_vector_cases"].as_array().unwrap() {
        check(case, &db, &index, &info, true).await;
    }

    // The prompts are LlamaIndex's keys.
    let llm = Arc::new(MockLlm::default()) as Arc<dyn Llm>;
    let sql = NLSQLTableQueryEngine::builder(db.clone(), llm.clone())
        .build()
        .unwrap();
    let tool =
        |name: &str| QueryEngineTool::new(Arc::new(sql.clone()), ToolMetadata::new(name, "d"));
    let engine = SQLJoinQueryEngine::builder(tool("a"), tool("b"), llm)
        .build()
        .unwrap();
    let keys: Vec<String> = engine.get_prompts().into_keys().collect();
    assert_eq!(
        serde_json::json!(keys),
        rec["sql_join_engine_defaults"]["prompt_keys"]
    );
}
