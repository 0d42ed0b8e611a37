//! Response synthesizers: turn a query and retrieved nodes into an answer
//! with an LLM, in one of LlamaIndex's `ResponseMode`s.

mod refine;

pub use refine::{CompactAndRefine, Refine};

use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::prompts::{PromptHelper, PromptMixin};
use crate::schema::{MetadataMode, NodeWithScore, QueryBundle, Response, StreamingResponse};
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// The answer given when there is no context at all (LlamaIndex's text).
pub const EMPTY_RESPONSE: &str = "Empty Response";

/// How retrieved chunks become an answer (LlamaIndex `ResponseMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
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

    /// Answers `query` from `nodes`; the response's sources are `nodes`
    /// followed by `additional_source_nodes`.
    async fn synthesize(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<Response> {
        let span = tracing::info_span!("synthesize", query = %query.query_str, nodes = nodes.len());
        if nodes.is_empty() {
            return Ok(Response::new(EMPTY_RESPONSE, additional_source_nodes));
        }
        let chunks = node_texts(&nodes);
        let text = self
            .get_response(&query.query_str, &chunks)
            .instrument(span)
            .await?;
        let mut sources = nodes;
        sources.extend(additional_source_nodes);
        Ok(Response::new(text, sources))
    }

    /// Answers `query` from `nodes` as a stream of text deltas.
    async fn stream_synthesize(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<StreamingResponse> {
        let mut sources = nodes.clone();
        sources.extend(additional_source_nodes);
        let response_gen = if nodes.is_empty() {
            Box::pin(futures::stream::once(async {
                Ok(EMPTY_RESPONSE.to_string())
            }))
        } else {
            self.stream_response(&query.query_str, &node_texts(&nodes))
                .await?
        };
        Ok(StreamingResponse {
            response_gen,
            source_nodes: sources,
            metadata: Default::default(),
        })
    }
}

/// The text of each node as an LLM sees it (`MetadataMode::Llm`).
pub fn node_texts(nodes: &[NodeWithScore]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| n.node.get_content(MetadataMode::Llm))
        .collect()
}

/// Builds the synthesizer for `mode` (LlamaIndex `get_response_synthesizer`).
/// Modes beyond `Refine` and `Compact` are not available in this version and
/// are an [`Error::Unsupported`].
pub fn get_response_synthesizer(
    llm: Arc<dyn Llm>,
    mode: ResponseMode,
) -> Result<Arc<dyn Synthesizer>> {
    let helper = PromptHelper::from_llm_metadata(&llm.metadata());
    match mode {
        ResponseMode::Refine => Ok(Arc::new(Refine::new(llm).with_prompt_helper(helper))),
        ResponseMode::Compact => Ok(Arc::new(
            CompactAndRefine::new(llm).with_prompt_helper(helper),
        )),
        other => Err(Error::Unsupported(format!(
            "response mode {other:?} is not available yet"
        ))),
    }
}
