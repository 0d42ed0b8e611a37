//! `SQLJoinQueryEngine` and `SQLAutoVectorQueryEngine`: a selector picks the
//! SQL engine or the other one; a SQL answer may lead to a more specific
//! question for the other engine, and the two answers are combined.

use crate::join_prompts::{
    DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL, DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
    DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL,
};
use crate::query_engine::NLSQLTableQueryEngine;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::indices::VectorIndexAutoRetriever;
use ragloom_core::llms::{Llm, predict};
use ragloom_core::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use ragloom_core::query_engine::{QueryEngine, QueryEngineTool, RetrieverQueryEngine};
use ragloom_core::schema::{QueryBundle, Response};
use ragloom_core::selectors::{Selector, get_selector_from_llm};
use ragloom_core::tools::{Tool, ToolMetadata};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Whether a rewritten question means "nothing more to ask".
pub type CheckStop = Arc<dyn Fn(&QueryBundle) -> bool + Send + Sync>;

/// Turns a question and its SQL answer into a more specific question for
/// another engine, or `None` (LlamaIndex `SQLAugmentQueryTransform`).
#[derive(Clone)]
pub struct SQLAugmentQueryTransform {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    check_stop: CheckStop,
}

impl fmt::Debug for SQLAugmentQueryTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SQLAugmentQueryTransform")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl PromptMixin for SQLAugmentQueryTransform {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([(
            "sql_augment_transform_prompt".to_owned(),
            self.prompt.clone(),
        )])
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("sql_augment_transform_prompt") {
            p.require_vars(&["query_str", "sql_query_str", "sql_response_str"])?;
            self.prompt = p.clone();
        }
        Ok(())
    }
}

impl SQLAugmentQueryTransform {
    /// With LlamaIndex's prompt, stopping when the model answers exactly
    /// `None` in any case (LlamaIndex's check: `"None."` goes on).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            prompt: BasePromptTemplate::from(PromptTemplate::new(
                DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL,
            )),
            check_stop: Arc::new(|q: &QueryBundle| q.query_str.to_lowercase() == "none"),
        }
    }

    /// Another stop check.
    pub fn check_stop(mut self, check: CheckStop) -> Self {
        self.check_stop = check;
        self
    }

    /// The more specific question, which is still embedded as `query` was
    /// (its text is the retrieval query's embedding string, as in LlamaIndex).
    pub async fn run(
        &self,
        query: &str,
        sql_query: &str,
        sql_response: &str,
    ) -> Result<QueryBundle> {
        let new_query = predict(
            self.llm.as_ref(),
            &self.prompt,
            &[
                ("query_str", query),
                ("sql_query_str", sql_query),
                ("sql_response_str", sql_response),
            ],
        )
        .await?;
        Ok(QueryBundle {
            custom_embedding_strs: Some(vec![query.to_owned()]),
            ..QueryBundle::new(new_query)
        })
    }

    /// Whether `query` says there is nothing more to ask.
    pub fn is_stop(&self, query: &QueryBundle) -> bool {
        (self.check_stop)(query)
    }
}

/// Joins a SQL engine with another (LlamaIndex `SQLJoinQueryEngine`).
///
/// A selector picks by the tools' descriptions. The other engine answers
/// alone; the SQL engine answers first, then its answer turns the question
/// into a more specific one (unless the model says `None`), which the other
/// engine answers, and the model combines the two. The response's metadata
/// is the SQL answer's and the other's; its sources the other's.
#[derive(Clone, Debug)]
pub struct SQLJoinQueryEngine {
    sql_tool: QueryEngineTool,
    other_tool: QueryEngineTool,
    selector: Arc<dyn Selector>,
    llm: Arc<dyn Llm>,
    synthesis_prompt: BasePromptTemplate,
    augment: SQLAugmentQueryTransform,
    use_sql_join_synthesis: bool,
    verbose: bool,
}

/// Options of a [`SQLJoinQueryEngine`].
#[derive(Debug)]
pub struct SQLJoinQueryEngineBuilder {
    engine: SQLJoinQueryEngine,
}

impl SQLJoinQueryEngine {
    /// The SQL tool (an engine whose answers carry `sql_query`, such as
    /// [`NLSQLTableQueryEngine`]), the other tool, and the LLM that selects,
    /// rewrites and combines.
    pub fn builder(
        sql_query_tool: QueryEngineTool,
        other_query_tool: QueryEngineTool,
        llm: Arc<dyn Llm>,
    ) -> SQLJoinQueryEngineBuilder {
        SQLJoinQueryEngineBuilder {
            engine: SQLJoinQueryEngine {
                sql_tool: sql_query_tool,
                other_tool: other_query_tool,
                selector: get_selector_from_llm(Arc::clone(&llm), false),
                augment: SQLAugmentQueryTransform::new(Arc::clone(&llm)),
                llm,
                synthesis_prompt: BasePromptTemplate::from(PromptTemplate::new(
                    DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
                )),
                use_sql_join_synthesis: true,
                verbose: true,
            },
        }
    }

    fn say(&self, line: &str) {
        tracing::info!("> {line}");
        if self.verbose {
            println!("{line}");
        }
    }

    async fn query_sql_other(&self, query: &QueryBundle) -> Result<Response> {
        let sql_response = self.sql_tool.query_engine().query(query).await?;
        if !self.use_sql_join_synthesis {
            return Ok(sql_response);
        }
        let Some(Value::String(sql_query)) = sql_response.metadata.get("sql_query").cloned() else {
            return Err(Error::InvalidInput(format!(
                "the SQL tool `{}` answered without `sql_query` in its metadata: give it an NLSQLTableQueryEngine",
                self.sql_tool.metadata().name
            )));
        };
        let sql_text = sql_response.to_string();
        self.say(&format!("SQL query: {sql_query}"));
        self.say(&format!("SQL response: {sql_text}"));
        let flat_sql = sql_query.replace(['\n', '\t'], " ");
        let new_query = self
            .augment
            .run(&query.query_str, &flat_sql, &sql_text)
            .await?;
        self.say(&format!(
            "Transformed query given SQL response: {}",
            new_query.query_str
        ));
        if self.augment.is_stop(&new_query) {
            return Ok(sql_response);
        }
        let other_response = self.other_tool.query_engine().query(&new_query).await?;
        let other_text = other_response.to_string();
        self.say(&format!("query engine response: {other_text}"));
        let answer = predict(
            self.llm.as_ref(),
            &self.synthesis_prompt,
            &[
                ("query_str", &query.query_str),
                ("sql_query_str", &sql_query),
                ("sql_response_str", &sql_text),
                ("query_engine_query_str", &new_query.query_str),
                ("query_engine_response_str", &other_text),
            ],
        )
        .await?;
        let mut metadata = sql_response.metadata;
        metadata.extend(other_response.metadata);
        Ok(Response {
            response: Some(answer),
            source_nodes: other_response.source_nodes,
            metadata,
        })
    }
}

impl SQLJoinQueryEngineBuilder {
    /// Another selector (default: the one the LLM suits).
    pub fn selector(mut self, selector: Arc<dyn Selector>) -> Self {
        self.engine.selector = selector;
        self
    }

    /// Another combining prompt, with `{query_str}`, `{sql_query_str}`,
    /// `{sql_response_str}`, `{query_engine_query_str}` and `{query_engine_response_str}`.
    pub fn sql_join_synthesis_prompt(mut self, prompt: BasePromptTemplate) -> Self {
        self.engine.synthesis_prompt = prompt;
        self
    }

    /// Another rewriting step.
    pub fn sql_augment_query_transform(mut self, transform: SQLAugmentQueryTransform) -> Self {
        self.engine.augment = transform;
        self
    }

    /// `false`: a SQL answer is the answer, with no second question (default true).
    pub fn use_sql_join_synthesis(mut self, on: bool) -> Self {
        self.engine.use_sql_join_synthesis = on;
        self
    }

    /// Prints each step (default true, as LlamaIndex).
    pub fn verbose(mut self, on: bool) -> Self {
        self.engine.verbose = on;
        self
    }

    /// The engine; a combining prompt without its variables is an error.
    pub fn build(self) -> Result<SQLJoinQueryEngine> {
        self.engine.synthesis_prompt.require_vars(&[
            "query_str",
            "sql_query_str",
            "sql_response_str",
            "query_engine_query_str",
            "query_engine_response_str",
        ])?;
        Ok(self.engine)
    }
}

#[async_trait]
impl QueryEngine for SQLJoinQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let choices = [
            self.sql_tool.metadata().clone(),
            self.other_tool.metadata().clone(),
        ];
        let result = self.selector.select(&choices, query).await?;
        let index = result.ind()?;
        let reason = result.reason()?.to_owned();
        match index {
            0 => {
                self.say(&format!("Querying SQL database: {reason}"));
                self.query_sql_other(query).await
            }
            1 => {
                self.say(&format!("Querying other query engine: {reason}"));
                self.other_tool.query_engine().query(query).await
            }
            other => Err(Error::InvalidInput(format!(
                "the selector chose {other}, but there are two engines (0: SQL, 1: other)"
            ))),
        }
    }
}

impl PromptMixin for SQLJoinQueryEngine {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([(
            "sql_join_synthesis_prompt".to_owned(),
            self.synthesis_prompt.clone(),
        )])
    }

    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        vec![
            ("selector", self.selector.as_ref() as &dyn PromptMixin),
            (
                "sql_augment_query_transform",
                &self.augment as &dyn PromptMixin,
            ),
        ]
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("sql_join_synthesis_prompt") {
            p.require_vars(&["query_str", "sql_query_str", "sql_response_str"])?;
            self.synthesis_prompt = p.clone();
        }
        Ok(())
    }

    fn prompt_module_mut(&mut self, name: &str) -> Option<&mut dyn PromptMixin> {
        match name {
            "selector" => Arc::get_mut(&mut self.selector).map(|s| s as &mut dyn PromptMixin),
            "sql_augment_query_transform" => Some(&mut self.augment),
            _ => None,
        }
    }
}

/// SQL for the structured part, a [`VectorIndexAutoRetriever`] for the rest
/// (LlamaIndex `SQLAutoVectorQueryEngine`): a [`SQLJoinQueryEngine`] whose
/// other engine retrieves with the auto retriever, and whose combining
/// prompt speaks of a vector store.
#[derive(Debug)]
pub struct SQLAutoVectorQueryEngine;

impl SQLAutoVectorQueryEngine {
    /// The SQL engine and the auto retriever, each named and described for
    /// the selector (LlamaIndex `from_sql_and_vector_query_engines`); the
    /// vector side answers with a [`RetrieverQueryEngine`] over the retriever.
    #[allow(clippy::too_many_arguments)]
    pub fn from_sql_and_vector_query_engines(
        sql_query_engine: NLSQLTableQueryEngine,
        sql_tool_name: &str,
        sql_tool_description: &str,
        vector_auto_retriever: VectorIndexAutoRetriever,
        vector_tool_name: &str,
        vector_tool_description: &str,
        llm: Arc<dyn Llm>,
    ) -> Result<SQLJoinQueryEngineBuilder> {
        let vector_engine = RetrieverQueryEngine::builder(Arc::new(vector_auto_retriever))
            .llm(Arc::clone(&llm))
            .build()?;
        Ok(Self::builder(
            QueryEngineTool::new(
                Arc::new(sql_query_engine),
                ToolMetadata::new(sql_tool_name, sql_tool_description),
            ),
            QueryEngineTool::new(
                Arc::new(vector_engine),
                ToolMetadata::new(vector_tool_name, vector_tool_description),
            ),
            llm,
        ))
    }

    /// The builder of a [`SQLJoinQueryEngine`] with LlamaIndex's SQL +
    /// vector combining prompt; `vector_query_tool` should answer with a
    /// `VectorIndexAutoRetriever` (see [`Self::from_sql_and_vector_query_engines`]).
    pub fn builder(
        sql_query_tool: QueryEngineTool,
        vector_query_tool: QueryEngineTool,
        llm: Arc<dyn Llm>,
    ) -> SQLJoinQueryEngineBuilder {
        SQLJoinQueryEngine::builder(sql_query_tool, vector_query_tool, llm)
            .sql_join_synthesis_prompt(BasePromptTemplate::from(PromptTemplate::new(
                DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL,
            )))
    }
}
