//! Tables as nodes (LlamaIndex's `SQLTableNodeMapping`), so an
//! `ObjectIndex` can pick the few tables a question needs out of hundreds.

use crate::database::SQLDatabase;
use crate::retriever::SQLTableSchema;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::objects::ObjectNodeMapping;
use ragloom_core::schema::Node;

/// Each table's node is its description (and its context), so similarity
/// to a question ranks tables (LlamaIndex `SQLTableNodeMapping`).
#[derive(Clone, Debug)]
pub struct SQLTableNodeMapping {
    database: SQLDatabase,
}

impl SQLTableNodeMapping {
    /// A mapping describing tables of `database`.
    pub fn new(database: SQLDatabase) -> Self {
        Self { database }
    }

    /// A [`SQLTableSchema`] for every usable table, without context.
    pub fn all_tables(&self) -> Vec<SQLTableSchema> {
        self.database
            .usable_table_names()
            .iter()
            .map(|t| SQLTableSchema {
                table_name: t.clone(),
                context_str: None,
            })
            .collect()
    }
}

#[async_trait]
impl ObjectNodeMapping<SQLTableSchema> for SQLTableNodeMapping {
    async fn to_node(&self, table: &SQLTableSchema) -> Result<Node> {
        let name = &table.table_name;
        let mut text = format!(
            "Schema of table {name}:\n{}\n",
            self.database.table_info(name).await?
        );
        let mut node = Node::text_node("");
        node.id_ = name.clone();
        node.metadata.insert("name".into(), name.clone().into());
        if let Some(context) = &table.context_str {
            text.push_str(&format!("Context of table {name}:\n{context}"));
            node.metadata
                .insert("context".into(), context.clone().into());
        }
        node.text = text;
        node.excluded_embed_metadata_keys = vec!["name".into(), "context".into()];
        node.excluded_llm_metadata_keys = vec!["name".into(), "context".into()];
        Ok(node)
    }

    fn to_object(&self, node: &Node) -> Result<SQLTableSchema> {
        let table_name = node
            .metadata
            .get("name")
            .and_then(|v| v.as_str())
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "node `{}` is not a table node: it has no `name`",
                    node.id_
                ))
            })?
            .to_owned();
        let context_str = node
            .metadata
            .get("context")
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        Ok(SQLTableSchema {
            table_name,
            context_str,
        })
    }
}
