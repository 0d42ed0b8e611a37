//! `NLSQLRetriever`: the model writes SQL for a question from the tables'
//! descriptions; the SQL runs and its rows come back as a node.

use crate::database::{SQLDatabase, SqlResult};
use crate::limits::statement_error;
use crate::parser::parse_response_to_sql;
use crate::prompts::text_to_sql_prompt;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{ChatMessage, Llm, predict};
use ragloom_core::objects::ObjectRetriever;
use ragloom_core::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use ragloom_core::retrievers::Retriever;
use ragloom_core::schema::{Node, NodeWithScore, QueryBundle};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use tracing::Instrument;

/// A table and what the model is told about it beyond its columns
/// (LlamaIndex `SQLTableSchema`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SQLTableSchema {
    /// The table's name.
    pub table_name: String,
    /// A description added after the columns (`context_query_kwargs`).
    pub context_str: Option<String>,
}

/// Retrieves by asking the model for SQL and running it (LlamaIndex
/// `NLSQLRetriever`). The node is the rows' text (`[('Tokyo', 13960000)]`)
/// with `sql_query`, `result` and `col_keys` in its metadata, kept from
/// the model's view; a statement that fails gives a node `Error: ...` the
/// model can read (`handle_sql_errors`, the default).
#[derive(Clone, Debug)]
pub struct NLSQLRetriever {
    database: SQLDatabase,
    llm: Arc<dyn Llm>,
    text_to_sql_prompt: BasePromptTemplate,
    tables: TableSource,
    handle_sql_errors: bool,
    sql_only: bool,
    return_raw: bool,
    retry_on_error: bool,
    structured_output: bool,
}

/// Which tables a question is shown: always the same, or those a retriever
/// picks for it.
#[derive(Clone, Debug)]
enum TableSource {
    Fixed(Vec<SQLTableSchema>),
    Retriever(Arc<dyn ObjectRetriever<SQLTableSchema>>),
}

/// Options of an [`NLSQLRetriever`].
#[derive(Debug)]
pub struct NLSQLRetrieverBuilder {
    retriever: NLSQLRetriever,
    tables: Option<Vec<String>>,
    context_query_kwargs: HashMap<String, String>,
    table_retriever: Option<Arc<dyn ObjectRetriever<SQLTableSchema>>>,
}

impl NLSQLRetriever {
    /// A builder over `database`, asking `llm` for SQL.
    pub fn builder(database: SQLDatabase, llm: Arc<dyn Llm>) -> NLSQLRetrieverBuilder {
        NLSQLRetrieverBuilder {
            retriever: NLSQLRetriever {
                database,
                llm,
                text_to_sql_prompt: text_to_sql_prompt(),
                tables: TableSource::Fixed(Vec::new()),
                handle_sql_errors: true,
                sql_only: false,
                return_raw: true,
                retry_on_error: false,
                structured_output: false,
            },
            tables: None,
            context_query_kwargs: HashMap::new(),
            table_retriever: None,
        }
    }

    /// The database.
    pub fn database(&self) -> &SQLDatabase {
        &self.database
    }

    /// The tables' descriptions as the prompt's `{schema}` gets them, one
    /// paragraph each (LlamaIndex `_get_table_context`): the fixed tables,
    /// or those the table retriever picks for `query`.
    pub async fn table_context(&self, query: &QueryBundle) -> Result<String> {
        let tables = match &self.tables {
            TableSource::Fixed(tables) => tables.clone(),
            TableSource::Retriever(r) => r.retrieve(&query.query_str).await?,
        };
        let mut parts = Vec::with_capacity(tables.len());
        for table in &tables {
            let mut info = self.database.table_info(&table.table_name).await?;
            if let Some(context) = &table.context_str {
                info.push_str(" The table description is: ");
                info.push_str(context);
            }
            parts.push(info);
        }
        Ok(parts.join("\n\n"))
    }

    /// The nodes and LlamaIndex's metadata: `sql_query`, then (when the
    /// statement ran) `result` and `col_keys`.
    pub async fn retrieve_with_metadata(
        &self,
        query: &QueryBundle,
    ) -> Result<(Vec<NodeWithScore>, Map<String, Value>)> {
        let schema = self.table_context(query).await?;
        tracing::debug!(schema = %schema, "table descriptions");
        let vars = [
            ("query_str", query.query_str.as_str()),
            ("schema", schema.as_str()),
            ("dialect", self.database.dialect()),
        ];
        let prompt = self.text_to_sql_prompt.format(&vars)?;
        let mut sql = self.ask_for_sql(&prompt).await?;
        tracing::info!(sql = %sql, "predicted SQL");
        let mut metadata = Map::new();
        if self.sql_only {
            metadata.insert("sql_query".into(), json!(sql));
            metadata.insert("result".into(), json!(sql));
            return Ok((
                vec![NodeWithScore::new(Node::text_node(sql), None)],
                metadata,
            ));
        }
        let mut outcome = self.database.run_sql(&sql).await;
        if self.retry_on_error
            && let Err(e) = &outcome
            && let Some(failure) = statement_error(e)
        {
            // Once: the prompt again, the failed statement and why, and the
            // model's second try.
            let failure = failure.to_string();
            let retry = format!(
                "{prompt}{sql}\nSQLResult: Error: {failure}\n\nThat statement failed. Write a corrected one.\nQuestion: {}\nSQLQuery: ",
                query.query_str
            );
            metadata.insert("failed_sql_query".into(), json!(sql));
            metadata.insert("sql_error".into(), json!(failure));
            sql = self
                .ask_for_sql(&retry)
                .instrument(tracing::info_span!("text_to_sql_retry"))
                .await?;
            tracing::info!(sql = %sql, "predicted SQL, second try");
            outcome = self.database.run_sql(&sql).await;
        }
        metadata.insert("sql_query".into(), json!(sql));
        match outcome {
            Ok(result) => {
                let nodes = self.result_nodes(&sql, &result);
                metadata.insert("result".into(), result.rows_json());
                metadata.insert("col_keys".into(), json!(result.col_keys));
                if result.truncated {
                    metadata.insert("truncated".into(), json!(true));
                }
                Ok((nodes, metadata))
            }
            Err(e) if self.handle_sql_errors => {
                let message =
                    statement_error(&e).map_or_else(|| e.to_string(), ToString::to_string);
                tracing::info!(error = %message, "the SQL gave no result");
                let node = Node::text_node(format!("Error: {message}"));
                Ok((vec![NodeWithScore::new(node, None)], metadata))
            }
            Err(e) => Err(e),
        }
    }

    /// The model's SQL for `prompt` (the text-to-SQL prompt, formatted):
    /// its reply parsed as LlamaIndex parses it, or with structured output
    /// the `sql_query` field of the JSON the model was held to.
    async fn ask_for_sql(&self, prompt: &str) -> Result<String> {
        if self.structured_output {
            let messages = [ChatMessage::user(prompt)];
            let reply = self
                .llm
                .structured_chat(&messages, &sql_query_schema())
                .instrument(tracing::info_span!("text_to_sql", structured = true))
                .await?;
            let sql = reply
                .get("sql_query")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Error::OutputParse(format!(
                        "the model's JSON has no `sql_query` string: {reply}"
                    ))
                })?;
            return Ok(parse_response_to_sql(sql));
        }
        let reply = predict(
            self.llm.as_ref(),
            &PromptTemplate::new("{prompt}").into(),
            &[("prompt", prompt)],
        )
        .instrument(tracing::info_span!("text_to_sql"))
        .await?;
        Ok(parse_response_to_sql(&reply))
    }

    fn result_nodes(&self, sql: &str, result: &SqlResult) -> Vec<NodeWithScore> {
        if self.return_raw {
            let mut node = Node::text_node(result.text.clone());
            node.metadata.insert("sql_query".into(), json!(sql));
            node.metadata.insert("result".into(), result.rows_json());
            node.metadata
                .insert("col_keys".into(), json!(result.col_keys));
            let hidden: Vec<String> = ["sql_query", "result", "col_keys"]
                .map(String::from)
                .to_vec();
            node.excluded_embed_metadata_keys = hidden.clone();
            node.excluded_llm_metadata_keys = hidden;
            vec![NodeWithScore::new(node, None)]
        } else {
            result
                .rows
                .iter()
                .map(|row| {
                    let mut node = Node::text_node("");
                    for (key, value) in result.col_keys.iter().zip(row) {
                        node.metadata.insert(key.clone(), value.to_json());
                    }
                    NodeWithScore::new(node, None)
                })
                .collect()
        }
    }
}

#[async_trait]
impl Retriever for NLSQLRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self.retrieve_with_metadata(query).await?.0)
    }
}

/// The JSON the model is held to with structured output.
fn sql_query_schema() -> Value {
    json!({
        "title": "SQLQuery",
        "description": "One SQL statement that answers the question.",
        "type": "object",
        "properties": {
            "sql_query": {
                "type": "string",
                "description": "One SQL statement, starting with SELECT or WITH.",
                "pattern": "^(SELECT|WITH) ",
            },
        },
        "required": ["sql_query"],
        "additionalProperties": false,
    })
}

impl PromptMixin for NLSQLRetriever {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([(
            "text_to_sql_prompt".to_owned(),
            self.text_to_sql_prompt.clone(),
        )])
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("text_to_sql_prompt") {
            p.require_vars(&["query_str", "schema"])?;
            self.text_to_sql_prompt = p.clone();
        }
        Ok(())
    }
}

impl NLSQLRetrieverBuilder {
    /// Only these tables are described to the model, in this order
    /// (LlamaIndex `tables`; default: every usable table).
    pub fn tables<I, S>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tables = Some(tables.into_iter().map(Into::into).collect());
        self
    }

    /// A retriever picking the tables shown for each question (LlamaIndex
    /// `table_retriever`, e.g. an `ObjectIndex` over [`crate::SQLTableNodeMapping`]);
    /// not with [`tables`](Self::tables).
    pub fn table_retriever(mut self, retriever: Arc<dyn ObjectRetriever<SQLTableSchema>>) -> Self {
        self.table_retriever = Some(retriever);
        self
    }

    /// A description added to a table's columns (LlamaIndex `context_query_kwargs`).
    pub fn context_query_kwargs<I, K, V>(mut self, descriptions: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.context_query_kwargs = descriptions
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// The prompt asking for SQL (default [`crate::DEFAULT_TEXT_TO_SQL_TMPL`]);
    /// it must have `{query_str}` and `{schema}`, and may have `{dialect}`.
    pub fn text_to_sql_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.retriever.text_to_sql_prompt = prompt.into();
        self
    }

    /// Whether a failed statement becomes a node saying why (default true)
    /// rather than an error.
    pub fn handle_sql_errors(mut self, on: bool) -> Self {
        self.retriever.handle_sql_errors = on;
        self
    }

    /// When a statement fails (invalid SQL, a guard's refusal), show the
    /// model the statement and the error once and run its second statement
    /// (default false: one call, as LlamaIndex). The response's metadata then
    /// also holds `failed_sql_query` and `sql_error`.
    pub fn retry_on_error(mut self, on: bool) -> Self {
        self.retriever.retry_on_error = on;
        self
    }

    /// Hold the model to JSON `{"sql_query": "SELECT ..."}` with the LLM's
    /// constrained output (`Llm::structured_chat`: a JSON schema the server
    /// enforces where it can — OpenAI's structured outputs, llama.cpp's
    /// grammar, Ollama's `format`), instead of reading the SQL out of free
    /// text (default false, as LlamaIndex). The schema asks for one
    /// statement starting with `SELECT` or `WITH`.
    pub fn structured_output(mut self, on: bool) -> Self {
        self.retriever.structured_output = on;
        self
    }

    /// Only write the SQL, never run it (default false).
    pub fn sql_only(mut self, on: bool) -> Self {
        self.retriever.sql_only = on;
        self
    }

    /// One node holding the rows' text (default true), or one node per row
    /// with the columns as metadata.
    pub fn return_raw(mut self, on: bool) -> Self {
        self.retriever.return_raw = on;
        self
    }

    /// Builds the retriever; a table that is not usable, or a prompt
    /// without its variables, is an error.
    pub fn build(mut self) -> Result<NLSQLRetriever> {
        self.retriever
            .text_to_sql_prompt
            .require_vars(&["query_str", "schema"])?;
        if let Some(retriever) = self.table_retriever {
            if self.tables.is_some() {
                return Err(Error::InvalidInput(
                    "give the tables or a table retriever, not both".into(),
                ));
            }
            self.retriever.tables = TableSource::Retriever(retriever);
            return Ok(self.retriever);
        }
        let usable = self.retriever.database.usable_table_names();
        let names = self.tables.unwrap_or_else(|| usable.to_vec());
        for name in &names {
            if !usable.contains(name) {
                return Err(Error::NotFound(format!(
                    "table `{name}` is not one of the usable tables: {}",
                    usable.join(", ")
                )));
            }
        }
        self.retriever.tables = TableSource::Fixed(
            names
                .into_iter()
                .map(|table_name| SQLTableSchema {
                    context_str: self.context_query_kwargs.get(&table_name).cloned(),
                    table_name,
                })
                .collect(),
        );
        Ok(self.retriever)
    }
}
