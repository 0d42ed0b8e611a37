//! `SubQuestionQueryEngine`: split a complex query into sub-questions for named
//! query engines, answer them concurrently, and synthesize from the answers.

use super::QueryEngine;
use super::QueryEngineTool;
use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::question_gen::{
    FunctionCallingQuestionGenerator, LLMQuestionGenerator, QuestionGenerator, SubQuestion,
};
use crate::response_synthesizers::{ResponseMode, Synthesizer, get_response_synthesizer};
use crate::schema::{Node, NodeWithScore, QueryBundle, Response, StreamingResponse};
use crate::tools::{Tool, ToolMetadata};
use async_trait::async_trait;
use futures::future::join_all;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use tracing::Instrument;

/// A sub-question with its answer and the nodes behind it (LlamaIndex `SubQuestionAnswerPair`).
#[derive(Clone, Debug, PartialEq)]
pub struct SubQuestionAnswerPair {
    /// The sub-question.
    pub sub_q: SubQuestion,
    /// The answer text (`str(response)`), once answered.
    pub answer: Option<String>,
    /// The sources of the answer.
    pub sources: Vec<NodeWithScore>,
}

impl SubQuestionAnswerPair {
    /// The node the final synthesis reads: `Sub question: ...\nResponse: ...`,
    /// as LlamaIndex writes it.
    pub fn to_node(&self) -> NodeWithScore {
        let answer = self.answer.as_deref().unwrap_or("None");
        NodeWithScore::new(
            Node::text_node(format!(
                "Sub question: {}\nResponse: {answer}",
                self.sub_q.sub_question
            )),
            None,
        )
    }
}

/// Breaks a query into sub-questions, each for one named query engine, runs
/// them (concurrently by default) and synthesizes the final answer from
/// their answers (LlamaIndex `SubQuestionQueryEngine`).
///
/// As in LlamaIndex, a sub-question naming an unknown tool, or whose engine
/// fails, is skipped with a warning; the response's metadata lists the
/// answered ones under `sub_qa` and the skipped ones, with why, under
/// `failed_sub_questions`. The final sources are the `Sub question: ...`
/// nodes followed by every sub-answer's sources.
#[derive(Clone, Debug)]
pub struct SubQuestionQueryEngine {
    question_gen: Arc<dyn QuestionGenerator>,
    response_synthesizer: Arc<dyn Synthesizer>,
    metadatas: Vec<ToolMetadata>,
    query_engines: HashMap<String, Arc<dyn QueryEngine>>,
    use_async: bool,
    verbose: bool,
}

/// Options of a [`SubQuestionQueryEngine`] (LlamaIndex `from_defaults`).
#[derive(Debug)]
pub struct SubQuestionQueryEngineBuilder {
    query_engine_tools: Vec<QueryEngineTool>,
    llm: Option<Arc<dyn Llm>>,
    question_gen: Option<Arc<dyn QuestionGenerator>>,
    response_synthesizer: Option<Arc<dyn Synthesizer>>,
    use_async: bool,
    verbose: bool,
}

/// A sub-question that could not be answered, and why.
struct Failure {
    sub_q: SubQuestion,
    error: String,
}

impl SubQuestionQueryEngine {
    /// A builder over the tools the sub-questions may name.
    pub fn builder(query_engine_tools: Vec<QueryEngineTool>) -> SubQuestionQueryEngineBuilder {
        SubQuestionQueryEngineBuilder {
            query_engine_tools,
            llm: None,
            question_gen: None,
            response_synthesizer: None,
            use_async: true,
            verbose: false,
        }
    }

    async fn query_subq(
        &self,
        sub_q: &SubQuestion,
    ) -> std::result::Result<SubQuestionAnswerPair, Failure> {
        let span = tracing::info_span!("sub_question", tool = %sub_q.tool_name, question = %sub_q.sub_question);
        async {
            let fail = |error: String| {
                tracing::warn!(tool = %sub_q.tool_name, error = %error, "sub-question skipped");
                Failure {
                    sub_q: sub_q.clone(),
                    error,
                }
            };
            let Some(engine) = self.query_engines.get(&sub_q.tool_name) else {
                let mut known: Vec<&str> = self.query_engines.keys().map(String::as_str).collect();
                known.sort_unstable();
                return Err(fail(format!(
                    "no query engine tool is named `{}` (known: {})",
                    sub_q.tool_name,
                    known.join(", ")
                )));
            };
            if self.verbose {
                println!("[{}] Q: {}", sub_q.tool_name, sub_q.sub_question);
            }
            let response = engine
                .query(&QueryBundle::new(sub_q.sub_question.clone()))
                .await
                .map_err(|e| fail(e.to_string()))?;
            let answer = response.to_string();
            if self.verbose {
                println!("[{}] A: {answer}", sub_q.tool_name);
            }
            Ok(SubQuestionAnswerPair {
                sub_q: sub_q.clone(),
                answer: Some(answer),
                sources: response.source_nodes,
            })
        }
        .instrument(span)
        .await
    }

    /// Generates the sub-questions for `query` and answers them; the
    /// skipped ones come back separately.
    async fn answer_sub_questions(
        &self,
        query: &QueryBundle,
    ) -> Result<(Vec<SubQuestionAnswerPair>, Vec<Failure>)> {
        let sub_questions = self.question_gen.generate(&self.metadatas, query).await?;
        if self.verbose {
            println!("Generated {} sub questions.", sub_questions.len());
        }
        let outcomes = if self.use_async {
            join_all(sub_questions.iter().map(|q| self.query_subq(q))).await
        } else {
            let mut out = Vec::with_capacity(sub_questions.len());
            for q in &sub_questions {
                out.push(self.query_subq(q).await);
            }
            out
        };
        let mut pairs = Vec::new();
        let mut failures = Vec::new();
        for outcome in outcomes {
            match outcome {
                Ok(p) => pairs.push(p),
                Err(f) => failures.push(f),
            }
        }
        Ok((pairs, failures))
    }

    /// The synthesis input: the `Sub question: ...` nodes, every answer's
    /// sources, and the metadata describing what was asked.
    fn synthesis_parts(
        pairs: Vec<SubQuestionAnswerPair>,
        failures: &[Failure],
    ) -> (
        Vec<NodeWithScore>,
        Vec<NodeWithScore>,
        serde_json::Map<String, Value>,
    ) {
        let nodes = pairs.iter().map(SubQuestionAnswerPair::to_node).collect();
        let sub_qa: Vec<Value> = pairs
            .iter()
            .map(|p| {
                json!({
                    "sub_question": p.sub_q.sub_question,
                    "tool_name": p.sub_q.tool_name,
                    "answer": p.answer,
                })
            })
            .collect();
        let failed: Vec<Value> = failures
            .iter()
            .map(|f| {
                json!({
                    "sub_question": f.sub_q.sub_question,
                    "tool_name": f.sub_q.tool_name,
                    "error": f.error,
                })
            })
            .collect();
        let sources = pairs.into_iter().flat_map(|p| p.sources).collect();
        let mut metadata = serde_json::Map::new();
        metadata.insert("sub_qa".to_owned(), Value::Array(sub_qa));
        metadata.insert("failed_sub_questions".to_owned(), Value::Array(failed));
        (nodes, sources, metadata)
    }
}

#[async_trait]
impl QueryEngine for SubQuestionQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", engine = "sub_question", query = %query.query_str);
        async {
            let (pairs, failures) = self.answer_sub_questions(query).await?;
            let (nodes, sources, metadata) = Self::synthesis_parts(pairs, &failures);
            let mut response = self
                .response_synthesizer
                .synthesize(query, nodes, sources)
                .await?;
            response.metadata.extend(metadata);
            Ok(response)
        }
        .instrument(span)
        .await
    }

    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let span = tracing::info_span!("query", engine = "sub_question", query = %query.query_str, stream = true);
        async {
            let (pairs, failures) = self.answer_sub_questions(query).await?;
            let (nodes, sources, metadata) = Self::synthesis_parts(pairs, &failures);
            let mut response = self
                .response_synthesizer
                .stream_synthesize(query, nodes, sources)
                .await?;
            response.metadata.extend(metadata);
            Ok(response)
        }
        .instrument(span)
        .await
    }
}

// Prompts of the question generator (`question_gen:...`) and the
// synthesizer (`response_synthesizer:...`), as LlamaIndex keys them.
crate::prompts::delegate_prompts!(SubQuestionQueryEngine { "question_gen" => question_gen, "response_synthesizer" => response_synthesizer });

impl SubQuestionQueryEngineBuilder {
    /// The LLM for the default question generator and synthesizer.
    pub fn llm(mut self, llm: Arc<dyn Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// A question generator to use instead of the default one.
    pub fn question_gen(mut self, question_gen: Arc<dyn QuestionGenerator>) -> Self {
        self.question_gen = Some(question_gen);
        self
    }

    /// The synthesizer of the final answer (default: `ResponseMode::Compact`).
    pub fn response_synthesizer(mut self, synthesizer: Arc<dyn Synthesizer>) -> Self {
        self.response_synthesizer = Some(synthesizer);
        self
    }

    /// Answer the sub-questions concurrently (default true) or one by one.
    pub fn use_async(mut self, use_async: bool) -> Self {
        self.use_async = use_async;
        self
    }

    /// Print the sub-questions and answers to stdout, as LlamaIndex's
    /// `verbose` does (default false here; they are always traced).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Builds the engine. The question generator defaults to the
    /// function-calling one for models with native tool calling and to
    /// [`LLMQuestionGenerator`] otherwise; the synthesizer to a compact one.
    pub fn build(self) -> Result<SubQuestionQueryEngine> {
        let need_llm = |what: &str| {
            Error::InvalidInput(format!(
                "a sub-question query engine needs an LLM or a {what}"
            ))
        };
        let question_gen = match (self.question_gen, &self.llm) {
            (Some(q), _) => q,
            (None, Some(llm)) if llm.metadata().is_function_calling_model => {
                Arc::new(FunctionCallingQuestionGenerator::new(llm.clone())?)
            }
            (None, Some(llm)) => Arc::new(LLMQuestionGenerator::new(llm.clone())),
            (None, None) => return Err(need_llm("question generator")),
        };
        let response_synthesizer = match (self.response_synthesizer, &self.llm) {
            (Some(s), _) => s,
            (None, Some(llm)) => get_response_synthesizer(llm.clone(), ResponseMode::Compact)?,
            (None, None) => return Err(need_llm("response synthesizer")),
        };
        let metadatas: Vec<ToolMetadata> = self
            .query_engine_tools
            .iter()
            .map(|t| t.metadata().clone())
            .collect();
        // As a Python dict: a repeated name keeps the last engine.
        let query_engines = self
            .query_engine_tools
            .iter()
            .map(|t| (t.metadata().name.clone(), t.query_engine().clone()))
            .collect();
        Ok(SubQuestionQueryEngine {
            question_gen,
            response_synthesizer,
            metadatas,
            query_engines,
            use_async: self.use_async,
            verbose: self.verbose,
        })
    }
}
