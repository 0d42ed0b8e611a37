//! Picking the tables a question needs: `SQLTableNodeMapping`'s nodes as
//! LlamaIndex writes them, and an engine whose prompt holds only the tables
//! its retriever picked.

use crate::common::{build_db, recorded};
use async_trait::async_trait;
use ragloom_core::embeddings::HashEmbedding;
use ragloom_core::llms::{Llm, MockLlm};
use ragloom_core::objects::{ObjectIndex, ObjectNodeMapping, ObjectRetriever};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::schema::QueryBundle;
use ragloom_sql::{SQLDatabase, SQLTableNodeMapping, SQLTableRetrieverQueryEngine, SQLTableSchema};
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn table_nodes_read_as_llama_index_s() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let mapping = SQLTableNodeMapping::new(db);
    for case in recorded()["table_nodes"].as_array().unwrap() {
        let table = SQLTableSchema {
            table_name: case["table_name"].as_str().unwrap().to_owned(),
            context_str: case["context_str"].as_str().map(str::to_owned),
        };
        let node = mapping.to_node(&table).await.unwrap();
        assert_eq!(node.text, case["text"], "{}", table.table_name);
        assert_eq!(mapping.to_object(&node).unwrap(), table);
    }
}

#[tokio::test]
async fn an_object_index_ranks_tables_by_their_description() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let mapping = Arc::new(SQLTableNodeMapping::new(db));
    let tables = mapping.all_tables();
    let index = ObjectIndex::from_objects(&tables, mapping, Arc::new(HashEmbedding::new(512)))
        .await
        .unwrap();
    let picked = index
        .as_retriever(1)
        .retrieve("orders: customer_id, product_id, quantity and the note of each order")
        .await
        .unwrap();
    assert_eq!(picked.len(), 1);
    assert_eq!(picked[0].table_name, "orders");
}

/// Picks fixed tables and remembers what it was asked.
#[derive(Debug, Default)]
struct Picker {
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl ObjectRetriever<SQLTableSchema> for Picker {
    async fn retrieve(&self, query: &str) -> ragloom_core::Result<Vec<SQLTableSchema>> {
        self.asked.lock().unwrap().push(query.to_owned());
        Ok(["customer", "city"]
            .map(|t| SQLTableSchema {
                table_name: t.to_owned(),
                context_str: None,
            })
            .to_vec())
    }
}

#[tokio::test]
async fn only_the_picked_tables_reach_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let db = SQLDatabase::sqlite(build_db(dir.path(), "sample.sql"))
        .build()
        .unwrap();
    let picker = Arc::new(Picker::default());
    let llm = Arc::new(
        MockLlm::scripted([
            "SELECT customer.name FROM customer JOIN city ON city.id = customer.city_id WHERE city.name = 'Tokyo'",
            "Kenji.",
        ])
        .chat_model(false),
    );
    let engine = SQLTableRetrieverQueryEngine::builder(db, llm.clone() as Arc<dyn Llm>)
        .table_retriever(picker.clone())
        .build()
        .unwrap();
    let response = engine
        .query(&QueryBundle::new("Who lives in Tokyo?"))
        .await
        .unwrap();
    assert_eq!(response.to_string(), "Kenji.");
    assert_eq!(*picker.asked.lock().unwrap(), ["Who lives in Tokyo?"]);
    let prompt = llm.requests()[0].prompt_text();
    assert!(prompt.contains("Table 'customer' has columns"), "{prompt}");
    assert!(prompt.contains("Table 'city' has columns"), "{prompt}");
    for absent in ["'orders'", "'product'", "'country'"] {
        assert!(!prompt.contains(absent), "{absent} in {prompt}");
    }
    // Both a table list and a retriever is a mistake, said at build time.
    let db2 = SQLDatabase::sqlite(dir.path().join("sample.db"))
        .build()
        .unwrap();
    let both = SQLTableRetrieverQueryEngine::builder(db2, llm as Arc<dyn Llm>)
        .tables(["city"])
        .table_retriever(picker)
        .build()
        .unwrap_err();
    assert!(both.to_string().contains("not both"), "{both}");
}
