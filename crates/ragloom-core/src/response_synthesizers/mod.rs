//! Response synthesizers: turn a query and retrieved nodes into an answer
//! with an LLM, in one of LlamaIndex's `ResponseMode`s.

mod accumulate;
mod factory;
mod generation;
mod no_text;
mod refine;
mod simple_summarize;
mod structured;
mod tree_summarize;

pub use accumulate::{Accumulate, CompactAndAccumulate, DEFAULT_ACCUMULATE_SEPARATOR};
pub use factory::{ResponseSynthesizerBuilder, get_response_synthesizer};
pub use generation::Generation;
pub use no_text::{ContextOnly, NoText};
pub use refine::{CompactAndRefine, DEFAULT_RESPONSE_PADDING_SIZE, Refine};
pub use simple_summarize::SimpleSummarize;
pub use structured::{OutputCls, PydanticResponse, StructuredRefineResponse, StructuredSynthesize};
pub use tree_summarize::TreeSummarize;

use crate::error::{Error, Result};
use crate::llms::{Llm, predict};
use crate::prompts::{BasePromptTemplate, PromptMixin};
use crate::schema::{MetadataMode, NodeWithScore, QueryBundle, Response, StreamingResponse};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::str::FromStr;
use tracing::Instrument;

/// The answer given when there is no context at all (LlamaIndex's text).
pub const EMPTY_RESPONSE: &str = "Empty Response";

/// How retrieved chunks become an answer (LlamaIndex `ResponseMode`; its
/// string values, `"compact"`, `"tree_summarize"`, ..., via [`ResponseMode::as_str`] and `FromStr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ResponseMode {
    /// One LLM call per chunk: answer with the first, refine with the rest.
    Refine,
    /// Pack chunks to fill the window, then refine across the packs (the default).
    #[default]
    Compact,
    /// Summarize packs recursively until one answer remains.
    TreeSummarize,
    /// Truncate all chunks into one prompt, one call.
    SimpleSummarize,
    /// One answer per chunk, joined.
    Accumulate,
    /// One answer per pack, joined.
    CompactAccumulate,
    /// Ignore the context; answer the query alone.
    Generation,
    /// No LLM call: the nodes only.
    NoText,
    /// The joined context as the answer.
    ContextOnly,
}

impl ResponseMode {
    /// Every mode, in LlamaIndex's declaration order.
    pub const ALL: [ResponseMode; 9] = [
        ResponseMode::Refine,
        ResponseMode::Compact,
        ResponseMode::SimpleSummarize,
        ResponseMode::TreeSummarize,
        ResponseMode::Generation,
        ResponseMode::NoText,
        ResponseMode::ContextOnly,
        ResponseMode::Accumulate,
        ResponseMode::CompactAccumulate,
    ];

    /// LlamaIndex's value for the mode (`"compact"`, `"tree_summarize"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Refine => "refine",
            ResponseMode::Compact => "compact",
            ResponseMode::SimpleSummarize => "simple_summarize",
            ResponseMode::TreeSummarize => "tree_summarize",
            ResponseMode::Generation => "generation",
            ResponseMode::NoText => "no_text",
            ResponseMode::ContextOnly => "context_only",
            ResponseMode::Accumulate => "accumulate",
            ResponseMode::CompactAccumulate => "compact_accumulate",
        }
    }
}

impl std::fmt::Display for ResponseMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResponseMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ResponseMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = ResponseMode::ALL.iter().map(|m| m.as_str()).collect();
                Error::InvalidInput(format!(
                    "unknown response mode `{s}`; expected one of {}",
                    known.join(", ")
                ))
            })
    }
}

/// Query + nodes → answer. Its prompts are reachable through [`PromptMixin`]
/// (`text_qa_template`, `refine_template`, ...).
#[async_trait]
pub trait Synthesizer: PromptMixin + Send + Sync + std::fmt::Debug {
    /// The answer text for `query_str` over `text_chunks`.
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String>;

    /// Like [`get_response`](Self::get_response), with the final LLM call streamed.
    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<futures::stream::BoxStream<'static, Result<String>>>;

    /// Whether an answer needs retrieved context: without nodes,
    /// [`synthesize`](Self::synthesize) then answers `Empty Response` without
    /// a call. `Generation`, which answers from the model alone, says no.
    fn needs_context(&self) -> bool {
        true
    }

    /// Answers `query` from `nodes`; the response's sources are `nodes`
    /// followed by `additional_source_nodes`, its metadata their metadata by
    /// node id (as LlamaIndex's). No nodes: `Empty Response` without a call
    /// (unless the synthesizer [needs no context](Self::needs_context)).
    async fn synthesize(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<Response> {
        let span = tracing::info_span!("synthesize", query = %query.query_str, nodes = nodes.len());
        if nodes.is_empty() && self.needs_context() {
            return Ok(Response::new(EMPTY_RESPONSE, additional_source_nodes));
        }
        let chunks = node_texts(&nodes);
        let text = self
            .get_response(&query.query_str, &chunks)
            .instrument(span)
            .await?;
        Ok(response_with_sources(text, nodes, additional_source_nodes))
    }

    /// Answers `query` from `nodes` as a stream of text deltas. Modes that
    /// cannot stream (accumulate) are an [`Error::Unsupported`].
    async fn stream_synthesize(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<StreamingResponse> {
        if nodes.is_empty() && self.needs_context() {
            return Ok(StreamingResponse {
                response_gen: one_delta(EMPTY_RESPONSE.to_string()),
                source_nodes: additional_source_nodes,
                metadata: Default::default(),
            });
        }
        let span = tracing::info_span!("synthesize", query = %query.query_str, nodes = nodes.len(), stream = true);
        let response_gen = self
            .stream_response(&query.query_str, &node_texts(&nodes))
            .instrument(span)
            .await?;
        Ok(streaming_with_sources(
            response_gen,
            nodes,
            additional_source_nodes,
        ))
    }
}

/// The text of each node as an LLM sees it (`MetadataMode::Llm`).
pub fn node_texts(nodes: &[NodeWithScore]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| n.node.get_content(MetadataMode::Llm))
        .collect()
}

/// The sources' metadata by node id (LlamaIndex `_get_metadata_for_response`).
fn sources_metadata(sources: &[NodeWithScore]) -> serde_json::Map<String, serde_json::Value> {
    sources
        .iter()
        .map(|n| {
            (
                n.node.id_.clone(),
                serde_json::Value::Object(n.node.metadata.clone()),
            )
        })
        .collect()
}

/// A response over `nodes` then `additional`, with their metadata.
pub(crate) fn response_with_sources(
    text: String,
    nodes: Vec<NodeWithScore>,
    additional: Vec<NodeWithScore>,
) -> Response {
    let mut sources = nodes;
    sources.extend(additional);
    let mut response = Response::new(text, Vec::new());
    response.metadata = sources_metadata(&sources);
    response.source_nodes = sources;
    response
}

/// A streaming response over `nodes` then `additional`, with their metadata.
pub(crate) fn streaming_with_sources(
    response_gen: BoxStream<'static, Result<String>>,
    nodes: Vec<NodeWithScore>,
    additional: Vec<NodeWithScore>,
) -> StreamingResponse {
    let mut sources = nodes;
    sources.extend(additional);
    StreamingResponse {
        response_gen,
        metadata: sources_metadata(&sources),
        source_nodes: sources,
    }
}

/// A stream of one delta holding all of `text`.
pub(crate) fn one_delta(text: String) -> BoxStream<'static, Result<String>> {
    Box::pin(futures::stream::once(async move { Ok(text) }))
}

/// One answer from `prompt`: plain text, or with `output_cls` that type's
/// JSON (LlamaIndex `predict` / `structured_predict`).
pub(crate) async fn predict_answer(
    llm: &dyn Llm,
    output_cls: Option<&OutputCls>,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<String> {
    match output_cls {
        Some(cls) => structured::predict_structured(llm, cls, prompt, vars).await,
        None => predict(llm, prompt, vars).await,
    }
}

/// Runs `calls` one after the other, or all at once when `use_async`
/// (LlamaIndex's `use_async`); the results keep the calls' order.
pub(crate) async fn run_calls<F>(calls: Vec<F>, use_async: bool) -> Result<Vec<String>>
where
    F: std::future::Future<Output = Result<String>>,
{
    if use_async {
        futures::future::try_join_all(calls).await
    } else {
        let mut out = Vec::with_capacity(calls.len());
        for call in calls {
            out.push(call.await?);
        }
        Ok(out)
    }
}
