//! `NLSQLTableQueryEngine`: a question answered from the rows of SQL the
//! model wrote, with LlamaIndex's synthesis prompt, or the rows themselves.

use crate::prompts::response_synthesis_prompt;
use crate::retriever::{NLSQLRetriever, NLSQLRetrieverBuilder};
use crate::value::markdown_table;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::Llm;
use ragloom_core::prompts::default_prompts::DEFAULT_REFINE_PROMPT_TMPL;
use ragloom_core::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use ragloom_core::query_engine::QueryEngine;
use ragloom_core::response_synthesizers::{CompactAndRefine, Synthesizer};
use ragloom_core::schema::{NodeWithScore, QueryBundle, Response, py_str, py_strip};
use serde_json::Value;
use std::sync::Arc;
use tracing::Instrument;

/// Answers a question over a [`crate::SQLDatabase`] (LlamaIndex
/// `NLSQLTableQueryEngine`): the model writes SQL ([`NLSQLRetriever`]),
/// it runs under the database's guards, and the model answers from the
/// rows — or, without synthesis, the rows are the answer. The response's
/// metadata holds `sql_query`, `result` and `col_keys`.
#[derive(Clone, Debug)]
pub struct NLSQLTableQueryEngine {
    retriever: NLSQLRetriever,
    llm: Arc<dyn Llm>,
    synthesize_response: bool,
    markdown_response: bool,
    response_synthesis_prompt: BasePromptTemplate,
    refine_synthesis_prompt: BasePromptTemplate,
}

/// LlamaIndex's `SQLTableRetrieverQueryEngine`: an [`NLSQLTableQueryEngine`]
/// whose builder was given a table retriever, so only the tables relevant to
/// a question reach the prompt — for databases with too many tables to
/// describe them all: `SQLTableRetrieverQueryEngine::builder(db, llm).table_retriever(r)`.
pub type SQLTableRetrieverQueryEngine = NLSQLTableQueryEngine;

/// Options of an [`NLSQLTableQueryEngine`]; the retriever's options too.
#[derive(Debug)]
pub struct NLSQLTableQueryEngineBuilder {
    retriever: NLSQLRetrieverBuilder,
    llm: Arc<dyn Llm>,
    synthesize_response: bool,
    markdown_response: bool,
    response_synthesis_prompt: Option<BasePromptTemplate>,
    refine_synthesis_prompt: Option<BasePromptTemplate>,
}

impl NLSQLTableQueryEngine {
    /// A builder over `database`, with `llm` writing the SQL and the answer.
    pub fn builder(
        database: crate::SQLDatabase,
        llm: Arc<dyn Llm>,
    ) -> NLSQLTableQueryEngineBuilder {
        NLSQLTableQueryEngineBuilder {
            retriever: NLSQLRetriever::builder(database, Arc::clone(&llm)),
            llm,
            synthesize_response: true,
            markdown_response: false,
            response_synthesis_prompt: None,
            refine_synthesis_prompt: None,
        }
    }

    /// The engine with every default (LlamaIndex `NLSQLTableQueryEngine(sql_database, llm=llm)`).
    pub fn new(database: crate::SQLDatabase, llm: Arc<dyn Llm>) -> Result<Self> {
        Self::builder(database, llm).build()
    }

    /// The retriever that writes and runs the SQL.
    pub fn sql_retriever(&self) -> &NLSQLRetriever {
        &self.retriever
    }

    fn rows_text(&self, nodes: &[NodeWithScore]) -> String {
        if self.markdown_response {
            let tables: Vec<String> = nodes
                .iter()
                .map(|n| {
                    let md = &n.node.metadata;
                    let col_keys: Vec<String> = md
                        .get("col_keys")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(py_str).collect())
                        .unwrap_or_default();
                    let rows: Vec<Vec<crate::SqlValue>> = md
                        .get("result")
                        .and_then(Value::as_array)
                        .map(|rows| {
                            rows.iter()
                                .map(|r| {
                                    r.as_array()
                                        .map(|cells| cells.iter().map(cell).collect())
                                        .unwrap_or_default()
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    markdown_table(&col_keys, &rows)
                })
                .collect();
            py_strip(&tables.join("\n\n")).to_owned()
        } else {
            nodes
                .iter()
                .map(|n| n.node.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

/// A JSON cell as the value it came from, for printing with Python's `str`.
fn cell(value: &Value) -> crate::SqlValue {
    match value {
        Value::Null => crate::SqlValue::Null,
        Value::String(s) => crate::SqlValue::Text(s.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => crate::SqlValue::Integer(i),
            None => crate::SqlValue::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        other => crate::SqlValue::Text(py_str(other)),
    }
}

#[async_trait]
impl QueryEngine for NLSQLTableQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", engine = "nl_sql_table", query = %query.query_str);
        async {
            let (nodes, metadata) = self.retriever.retrieve_with_metadata(query).await?;
            if !self.synthesize_response {
                return Ok(Response {
                    response: Some(self.rows_text(&nodes)),
                    source_nodes: Vec::new(),
                    metadata,
                });
            }
            let sql = metadata
                .get("sql_query")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let qa = self
                .response_synthesis_prompt
                .partial_format(&[("sql_query", sql)]);
            let synthesizer = CompactAndRefine::new(Arc::clone(&self.llm))
                .with_text_qa_template(qa)
                .with_refine_template(self.refine_synthesis_prompt.clone());
            let mut response = synthesizer.synthesize(query, nodes, Vec::new()).await?;
            response.metadata.extend(metadata);
            Ok(response)
        }
        .instrument(span)
        .await
    }

    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self.retriever.retrieve_with_metadata(query).await?.0)
    }
}

impl PromptMixin for NLSQLTableQueryEngine {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([(
            "response_synthesis_prompt".to_owned(),
            self.response_synthesis_prompt.clone(),
        )])
    }

    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        vec![("sql_retriever", &self.retriever as &dyn PromptMixin)]
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("response_synthesis_prompt") {
            same_vars(p, &response_synthesis_prompt())?;
            self.response_synthesis_prompt = p.clone();
        }
        Ok(())
    }

    fn prompt_module_mut(&mut self, name: &str) -> Option<&mut dyn PromptMixin> {
        (name == "sql_retriever").then_some(&mut self.retriever as &mut dyn PromptMixin)
    }
}

/// LlamaIndex's `_validate_prompt`: a custom prompt has the default's variables.
fn same_vars(custom: &BasePromptTemplate, default: &BasePromptTemplate) -> Result<()> {
    let mut want = default.template_vars();
    let mut have = custom.template_vars();
    want.sort();
    have.sort();
    if want == have {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "custom_prompt must have the following template variables: {}",
            want.join(", ")
        )))
    }
}

fn default_refine_prompt() -> BasePromptTemplate {
    PromptTemplate::new(DEFAULT_REFINE_PROMPT_TMPL).into()
}

impl NLSQLTableQueryEngineBuilder {
    /// Configures the retriever (tables, descriptions, `sql_only`, ...).
    pub fn retriever(
        mut self,
        f: impl FnOnce(NLSQLRetrieverBuilder) -> NLSQLRetrieverBuilder,
    ) -> Self {
        self.retriever = f(self.retriever);
        self
    }

    /// Only these tables are described to the model (LlamaIndex `tables`).
    pub fn tables<I, S>(self, tables: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.retriever(|r| r.tables(tables))
    }

    /// A retriever picking the tables shown for each question (what makes
    /// this LlamaIndex's `SQLTableRetrieverQueryEngine`).
    pub fn table_retriever(
        self,
        retriever: Arc<dyn ragloom_core::objects::ObjectRetriever<crate::SQLTableSchema>>,
    ) -> Self {
        self.retriever(|r| r.table_retriever(retriever))
    }

    /// Descriptions added to tables' columns (LlamaIndex `context_query_kwargs`).
    pub fn context_query_kwargs<I, K, V>(self, descriptions: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.retriever(|r| r.context_query_kwargs(descriptions))
    }

    /// Whether the model answers from the rows (default true); without, the
    /// rows' text is the answer.
    pub fn synthesize_response(mut self, on: bool) -> Self {
        self.synthesize_response = on;
        self
    }

    /// Without synthesis, the rows as a Markdown table (default false).
    pub fn markdown_response(mut self, on: bool) -> Self {
        self.markdown_response = on;
        self
    }

    /// The answering prompt; it must have exactly `{query_str}`,
    /// `{sql_query}` and `{context_str}`.
    pub fn response_synthesis_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.response_synthesis_prompt = Some(prompt.into());
        self
    }

    /// The prompt refining the answer over rows that did not fit one call;
    /// it must have the variables of LlamaIndex's refine prompt.
    pub fn refine_synthesis_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.refine_synthesis_prompt = Some(prompt.into());
        self
    }

    /// Builds the engine; a prompt with other variables than its default's is an error.
    pub fn build(self) -> Result<NLSQLTableQueryEngine> {
        let response_synthesis_prompt = match self.response_synthesis_prompt {
            Some(p) => {
                same_vars(&p, &response_synthesis_prompt())?;
                p
            }
            None => response_synthesis_prompt(),
        };
        let refine_synthesis_prompt = match self.refine_synthesis_prompt {
            Some(p) => {
                same_vars(&p, &default_refine_prompt())?;
                p
            }
            None => default_refine_prompt(),
        };
        Ok(NLSQLTableQueryEngine {
            retriever: self.retriever.build()?,
            llm: self.llm,
            synthesize_response: self.synthesize_response,
            markdown_response: self.markdown_response,
            response_synthesis_prompt,
            refine_synthesis_prompt,
        })
    }
}
