//! `RouterQueryEngine`: a selector picks the query engine(s) whose description
//! fits the query; several answers are combined by a summarizer (tree summarize).

use super::QueryEngine;
use super::QueryEngineTool;
use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::prompts::{PromptDictType, PromptMixin};
use crate::response_synthesizers::{ResponseMode, Synthesizer, get_response_synthesizer};
use crate::schema::{NodeWithScore, QueryBundle, Response, StreamingResponse};
use crate::selectors::{Selector, SelectorResult, SingleSelection, get_selector_from_llm};
use crate::tools::ToolMetadata;
use async_trait::async_trait;
use futures::future::try_join_all;
use serde_json::Value;
use std::sync::Arc;
use tracing::Instrument;

/// Routes each query to the engine(s) a [`Selector`] picks from their tool
/// descriptions (LlamaIndex `RouterQueryEngine`).
///
/// One selection: that engine answers. Several: they answer concurrently and
/// the summarizer (default: `ResponseMode::TreeSummarize` with LlamaIndex's
/// tree-summarize prompt) combines their answers, which become its text
/// chunks; the sources are all theirs. The response's metadata carries
/// `selector_result` (`{"selections": [{"index", "reason"}]}`).
#[derive(Clone, Debug)]
pub struct RouterQueryEngine {
    selector: Arc<dyn Selector>,
    query_engines: Vec<Arc<dyn QueryEngine>>,
    metadatas: Vec<ToolMetadata>,
    summarizer: Option<Arc<dyn Synthesizer>>,
    /// Why there is no summarizer, reported when one is needed.
    summarizer_missing: String,
    verbose: bool,
}

/// Options of a [`RouterQueryEngine`] (LlamaIndex `RouterQueryEngine.from_defaults`).
#[derive(Debug)]
pub struct RouterQueryEngineBuilder {
    query_engine_tools: Vec<QueryEngineTool>,
    llm: Option<Arc<dyn Llm>>,
    selector: Option<Arc<dyn Selector>>,
    summarizer: Option<Arc<dyn Synthesizer>>,
    select_multi: bool,
    verbose: bool,
}

impl RouterQueryEngine {
    /// A builder over the candidate engines, wrapped as tools so their
    /// names and descriptions reach the selector.
    pub fn builder(query_engine_tools: Vec<QueryEngineTool>) -> RouterQueryEngineBuilder {
        RouterQueryEngineBuilder {
            query_engine_tools,
            llm: None,
            selector: None,
            summarizer: None,
            select_multi: false,
            verbose: false,
        }
    }

    /// The candidates' metadata, in the order the selector sees them.
    pub fn metadatas(&self) -> &[ToolMetadata] {
        &self.metadatas
    }

    fn engine(&self, index: usize) -> Result<&Arc<dyn QueryEngine>> {
        self.query_engines.get(index).ok_or_else(|| {
            Error::InvalidInput(format!(
                "the selector chose engine {index}, but the router has {} engines",
                self.query_engines.len()
            ))
        })
    }

    fn log_selection(&self, index: usize, reason: &str) {
        let name = self.metadatas.get(index).map_or("?", |m| m.name.as_str());
        tracing::info!(engine = index, name, reason, "selecting query engine");
        if self.verbose {
            println!("Selecting query engine {index}: {reason}.");
        }
    }

    /// The one selection of a single-engine result.
    fn single<'a>(&self, result: &'a SelectorResult) -> Result<&'a SingleSelection> {
        result.selections.first().ok_or_else(|| {
            Error::OutputParse("Failed to select query engine: the selector chose none".to_owned())
        })
    }

    async fn select(&self, query: &QueryBundle) -> Result<SelectorResult> {
        let result = self.selector.select(&self.metadatas, query).await?;
        if result.selections.is_empty() {
            return Err(Error::OutputParse(
                "Failed to select query engine: the selector chose none".to_owned(),
            ));
        }
        for s in &result.selections {
            self.engine(s.index)?;
        }
        Ok(result)
    }

    /// Runs every selected engine concurrently.
    async fn query_all(
        &self,
        result: &SelectorResult,
        query: &QueryBundle,
    ) -> Result<Vec<Response>> {
        let mut runs = Vec::with_capacity(result.selections.len());
        for s in &result.selections {
            self.log_selection(s.index, &s.reason);
            runs.push(self.engine(s.index)?.query(query));
        }
        try_join_all(runs).await
    }

    fn summarizer(&self) -> Result<&Arc<dyn Synthesizer>> {
        self.summarizer.as_ref().ok_or_else(|| {
            Error::Unsupported(format!(
                "the selector chose several engines, and combining their answers needs a summarizer: {}; \
                 pass one with RouterQueryEngineBuilder::summarizer",
                self.summarizer_missing
            ))
        })
    }
}

/// The answers as summarizer chunks (`str(response)`) and all their sources
/// (LlamaIndex `combine_responses`).
fn combine_inputs(responses: Vec<Response>) -> (Vec<String>, Vec<NodeWithScore>) {
    let texts = responses.iter().map(|r| r.to_string()).collect();
    let sources = responses.into_iter().flat_map(|r| r.source_nodes).collect();
    (texts, sources)
}

fn with_selector_result(
    mut metadata: serde_json::Map<String, Value>,
    result: &SelectorResult,
) -> serde_json::Map<String, Value> {
    metadata.insert(
        "selector_result".to_owned(),
        serde_json::to_value(result).unwrap_or(Value::Null),
    );
    metadata
}

#[async_trait]
impl QueryEngine for RouterQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", engine = "router", query = %query.query_str);
        async {
            let result = self.select(query).await?;
            let mut response = if result.selections.len() > 1 {
                let responses = self.query_all(&result, query).await?;
                let summarizer = self.summarizer()?;
                let (texts, sources) = combine_inputs(responses);
                let summary = summarizer
                    .get_response(&query.query_str, &texts)
                    .instrument(tracing::info_span!("synthesize", combine = texts.len()))
                    .await?;
                Response::new(summary, sources)
            } else {
                let s = self.single(&result)?;
                self.log_selection(s.index, &s.reason);
                self.engine(s.index)?.query(query).await?
            };
            response.metadata =
                with_selector_result(std::mem::take(&mut response.metadata), &result);
            Ok(response)
        }
        .instrument(span)
        .await
    }

    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let span = tracing::info_span!("query", engine = "router", query = %query.query_str, stream = true);
        async {
            let result = self.select(query).await?;
            let mut response = if result.selections.len() > 1 {
                let responses = self.query_all(&result, query).await?;
                let summarizer = self.summarizer()?;
                let (texts, sources) = combine_inputs(responses);
                StreamingResponse {
                    response_gen: summarizer.stream_response(&query.query_str, &texts).await?,
                    source_nodes: sources,
                    metadata: Default::default(),
                }
            } else {
                let s = self.single(&result)?;
                self.log_selection(s.index, &s.reason);
                self.engine(s.index)?.stream_query(query).await?
            };
            response.metadata =
                with_selector_result(std::mem::take(&mut response.metadata), &result);
            Ok(response)
        }
        .instrument(span)
        .await
    }
}

/// Prompts of the summarizer (`summarizer:...`) and the selector (`selector:...`),
/// as LlamaIndex keys them; the candidate engines are not included.
impl PromptMixin for RouterQueryEngine {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::new()
    }

    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        let mut modules: Vec<(&'static str, &dyn PromptMixin)> = Vec::new();
        if let Some(s) = &self.summarizer {
            modules.push(("summarizer", s.as_ref() as &dyn PromptMixin));
        }
        modules.push(("selector", self.selector.as_ref() as &dyn PromptMixin));
        modules
    }

    fn update_own_prompts(&mut self, _prompts: &PromptDictType) -> Result<()> {
        Ok(())
    }

    fn prompt_module_mut(&mut self, name: &str) -> Option<&mut dyn PromptMixin> {
        match name {
            "summarizer" => self
                .summarizer
                .as_mut()
                .and_then(Arc::get_mut)
                .map(|s| s as &mut dyn PromptMixin),
            "selector" => Arc::get_mut(&mut self.selector).map(|s| s as &mut dyn PromptMixin),
            _ => None,
        }
    }
}

impl RouterQueryEngineBuilder {
    /// The LLM for the default selector and summarizer.
    pub fn llm(mut self, llm: Arc<dyn Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// A selector to use instead of the default one.
    pub fn selector(mut self, selector: Arc<dyn Selector>) -> Self {
        self.selector = Some(selector);
        self
    }

    /// The synthesizer that combines several engines' answers (its `get_response`
    /// receives them as text chunks).
    pub fn summarizer(mut self, summarizer: Arc<dyn Synthesizer>) -> Self {
        self.summarizer = Some(summarizer);
        self
    }

    /// Whether the default selector may pick several engines (`select_multi`, default false).
    pub fn select_multi(mut self, select_multi: bool) -> Self {
        self.select_multi = select_multi;
        self
    }

    /// Print each selection to stdout, as LlamaIndex's `verbose` does (default
    /// false; selections are always logged through `tracing`).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Builds the router. The selector defaults to [`get_selector_from_llm`]
    /// and the summarizer to `get_response_synthesizer(llm, TreeSummarize)`,
    /// so either needs an LLM. When no summarizer can be built, single
    /// selections still work and a multiple one reports why.
    pub fn build(self) -> Result<RouterQueryEngine> {
        if self.query_engine_tools.is_empty() {
            return Err(Error::InvalidInput(
                "a router needs at least one query engine tool".to_owned(),
            ));
        }
        let selector = match (self.selector, &self.llm) {
            (Some(s), _) => s,
            (None, Some(llm)) => get_selector_from_llm(llm.clone(), self.select_multi),
            (None, None) => {
                return Err(Error::InvalidInput(
                    "a router needs an LLM or a selector".to_owned(),
                ));
            }
        };
        let (summarizer, summarizer_missing) = match (self.summarizer, &self.llm) {
            (Some(s), _) => (Some(s), String::new()),
            (None, Some(llm)) => {
                match get_response_synthesizer(llm.clone(), ResponseMode::TreeSummarize) {
                    Ok(s) => (Some(s), String::new()),
                    Err(e) => (
                        None,
                        format!("the default TreeSummarize could not be built ({e})"),
                    ),
                }
            }
            (None, None) => (None, "no LLM or summarizer was given".to_owned()),
        };
        Ok(RouterQueryEngine {
            selector,
            query_engines: self
                .query_engine_tools
                .iter()
                .map(|t| t.query_engine().clone())
                .collect(),
            metadatas: self
                .query_engine_tools
                .iter()
                .map(|t| crate::tools::Tool::metadata(t).clone())
                .collect(),
            summarizer,
            summarizer_missing,
            verbose: self.verbose,
        })
    }
}
