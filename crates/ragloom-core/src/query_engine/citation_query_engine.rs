//! `CitationQueryEngine`: retrieved nodes are cut into numbered `Source N:`
//! chunks and the LLM is asked to cite them as `[N]` (LlamaIndex's citation prompts).

use super::QueryEngine;
use super::options::{QueryEngineOptions, query_engine_option_setters};
use crate::error::Result;
use crate::node_parser::{SentenceSplitter, TextSplitter};
use crate::postprocessor::{NodePostprocessor, retrieve_and_postprocess};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptTemplate};
use crate::response_synthesizers::Synthesizer;
use crate::retrievers::Retriever;
use crate::schema::{
    MetadataMode, NodeKind, NodeWithScore, QueryBundle, Response, StreamingResponse,
};
use crate::utils::setters;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// LlamaIndex's `DEFAULT_CITATION_CHUNK_SIZE`, in tokens.
pub const DEFAULT_CITATION_CHUNK_SIZE: usize = 512;
/// LlamaIndex's `DEFAULT_CITATION_CHUNK_OVERLAP`, in tokens.
pub const DEFAULT_CITATION_CHUNK_OVERLAP: usize = 20;

/// LlamaIndex's `CITATION_QA_TEMPLATE` text (`{context_str}`, `{query_str}`).
pub const CITATION_QA_TEMPLATE: &str = "Please provide an answer based solely on the provided sources. When referencing information from a source, cite the appropriate source(s) using their corresponding numbers. Every answer should include at least one source citation. Only cite a source when you are explicitly referencing it. If none of the sources are helpful, you should indicate that. For example:\nSource 1:\nThe sky is red in the evening and blue in the morning.\nSource 2:\nWater is wet when the sky is red.\nQuery: When is water wet?\nAnswer: Water will be wet when the sky is red [2], which occurs in the evening [1].\nNow it's your turn. Below are several numbered sources of information:\n------\n{context_str}\n------\nQuery: {query_str}\nAnswer: ";

/// LlamaIndex's `CITATION_REFINE_TEMPLATE` text (`{existing_answer}`,
/// `{context_msg}`, `{query_str}`); note the missing space after the existing
/// answer, which LlamaIndex has too.
pub const CITATION_REFINE_TEMPLATE: &str = "Please provide an answer based solely on the provided sources. When referencing information from a source, cite the appropriate source(s) using their corresponding numbers. Every answer should include at least one source citation. Only cite a source when you are explicitly referencing it. If none of the sources are helpful, you should indicate that. For example:\nSource 1:\nThe sky is red in the evening and blue in the morning.\nSource 2:\nWater is wet when the sky is red.\nQuery: When is water wet?\nAnswer: Water will be wet when the sky is red [2], which occurs in the evening [1].\nNow it's your turn. We have provided an existing answer: {existing_answer}Below are several numbered sources of information. Use them to refine the existing answer. If the provided sources are not helpful, you will repeat the existing answer.\nBegin refining!\n------\n{context_msg}\n------\nQuery: {query_str}\nAnswer: ";

/// The citation QA prompt (a plain template: chat models get it as one user message).
pub fn citation_qa_prompt() -> BasePromptTemplate {
    PromptTemplate::new(CITATION_QA_TEMPLATE).into()
}

/// The citation refine prompt.
pub fn citation_refine_prompt() -> BasePromptTemplate {
    PromptTemplate::new(CITATION_REFINE_TEMPLATE).into()
}

/// Answers with numbered citations (LlamaIndex `CitationQueryEngine`).
///
/// Each retrieved node's text (rendered with `metadata_mode`, default
/// `MetadataMode::None`) is split into chunks of `citation_chunk_size` tokens
/// (512, overlap 20); each chunk becomes a new node — a copy of its source
/// with a fresh id, no character offsets, the source's score, and the text
/// `Source N:\n{chunk}\n`, numbered across all nodes from 1. The synthesizer
/// (compact by default) answers with the citation prompts, and the response's
/// sources are those numbered nodes, so `[N]` in the answer is `source_nodes[N-1]`.
#[derive(Clone, Debug)]
pub struct CitationQueryEngine {
    retriever: Arc<dyn Retriever>,
    response_synthesizer: Arc<dyn Synthesizer>,
    text_splitter: Arc<dyn TextSplitter>,
    node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
    metadata_mode: MetadataMode,
}

/// Options of a [`CitationQueryEngine`] (LlamaIndex `CitationQueryEngine.from_args`);
/// its node postprocessors run before the nodes are numbered.
#[derive(Debug)]
pub struct CitationQueryEngineBuilder {
    retriever: Arc<dyn Retriever>,
    options: QueryEngineOptions,
    citation_qa_template: BasePromptTemplate,
    citation_refine_template: BasePromptTemplate,
    citation_chunk_size: usize,
    citation_chunk_overlap: usize,
    text_splitter: Option<Arc<dyn TextSplitter>>,
    metadata_mode: MetadataMode,
}

impl CitationQueryEngine {
    /// A builder over `retriever`, e.g. `Arc::new(index.as_retriever().similarity_top_k(3))`.
    pub fn builder(retriever: Arc<dyn Retriever>) -> CitationQueryEngineBuilder {
        CitationQueryEngineBuilder {
            retriever,
            options: QueryEngineOptions::default(),
            citation_qa_template: citation_qa_prompt(),
            citation_refine_template: citation_refine_prompt(),
            citation_chunk_size: DEFAULT_CITATION_CHUNK_SIZE,
            citation_chunk_overlap: DEFAULT_CITATION_CHUNK_OVERLAP,
            text_splitter: None,
            metadata_mode: MetadataMode::None,
        }
    }

    /// The retriever.
    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }

    /// The synthesizer answering from the numbered sources (with
    /// [`create_citation_nodes`](Self::create_citation_nodes), for answers
    /// that also list other sources).
    pub fn response_synthesizer(&self) -> &Arc<dyn Synthesizer> {
        &self.response_synthesizer
    }

    /// The numbered citation nodes made from `nodes` (LlamaIndex `_create_citation_nodes`).
    pub fn create_citation_nodes(&self, nodes: &[NodeWithScore]) -> Result<Vec<NodeWithScore>> {
        let mut out: Vec<NodeWithScore> = Vec::new();
        for n in nodes {
            let chunks = self
                .text_splitter
                .split_text(&n.node.get_content(self.metadata_mode))?;
            for chunk in chunks {
                let mut node = n.node.clone();
                // One chunk of a source is not the source: new id, no offsets.
                node.id_ = uuid::Uuid::new_v4().to_string();
                node.kind = NodeKind::Text;
                node.start_char_idx = None;
                node.end_char_idx = None;
                node.text = format!("Source {}:\n{chunk}\n", out.len() + 1);
                out.push(NodeWithScore::new(node, n.score));
            }
        }
        Ok(out)
    }

    /// Retrieves and postprocesses the nodes for `query` (not yet numbered).
    pub async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        retrieve_and_postprocess(self.retriever.as_ref(), &self.node_postprocessors, query).await
    }
}

#[async_trait]
impl QueryEngine for CitationQueryEngine {
    async fn query(&self, query: &QueryBundle) -> Result<Response> {
        let span = tracing::info_span!("query", engine = "citation", query = %query.query_str);
        async {
            let nodes = CitationQueryEngine::retrieve(self, query).await?;
            let nodes = self.create_citation_nodes(&nodes)?;
            self.response_synthesizer
                .synthesize(query, nodes, Vec::new())
                .await
        }
        .instrument(span)
        .await
    }

    async fn stream_query(&self, query: &QueryBundle) -> Result<StreamingResponse> {
        let span = tracing::info_span!("query", engine = "citation", query = %query.query_str, stream = true);
        async {
            let nodes = CitationQueryEngine::retrieve(self, query).await?;
            let nodes = self.create_citation_nodes(&nodes)?;
            self.response_synthesizer
                .stream_synthesize(query, nodes, Vec::new())
                .await
        }
        .instrument(span)
        .await
    }

    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        CitationQueryEngine::retrieve(self, query).await
    }

    /// Numbers `nodes` into citation sources and answers `query` from them.
    async fn synthesize(&self, query: &QueryBundle, nodes: Vec<NodeWithScore>) -> Result<Response> {
        let nodes = self.create_citation_nodes(&nodes)?;
        self.response_synthesizer
            .synthesize(query, nodes, Vec::new())
            .await
    }
}

// The synthesizer's prompts, keyed `response_synthesizer:<name>` as in LlamaIndex.
crate::prompts::delegate_prompts!(CitationQueryEngine { "response_synthesizer" => response_synthesizer });

impl CitationQueryEngineBuilder {
    query_engine_option_setters!(response_synthesizer);

    setters!(
        /// Replaces the citation QA prompt (`citation_qa_template`).
        citation_qa_template => citation_qa_template: impl Into<BasePromptTemplate>,
        /// Replaces the citation refine prompt (`citation_refine_template`).
        citation_refine_template => citation_refine_template: impl Into<BasePromptTemplate>,
        /// Tokens per citation chunk (default 512).
        citation_chunk_size => citation_chunk_size: usize,
        /// Tokens shared by neighbouring citation chunks (default 20).
        citation_chunk_overlap => citation_chunk_overlap: usize,
        /// A splitter to use instead of a `SentenceSplitter` at the citation chunk size.
        text_splitter => text_splitter: Arc<dyn TextSplitter>,
        /// How metadata is rendered into the text that is split (default `None`).
        metadata_mode => metadata_mode: MetadataMode,
    );

    /// Builds the engine. Without a synthesizer an LLM is required; the
    /// default synthesizer gets the citation prompts as its `text_qa_template`
    /// and `refine_template`. A chunk overlap not smaller than the chunk size
    /// is refused, naming both.
    pub fn build(mut self) -> Result<CitationQueryEngine> {
        let text_splitter: Arc<dyn TextSplitter> = match self.text_splitter {
            Some(s) => s,
            None => Arc::new(
                SentenceSplitter::new()
                    .chunk_size(self.citation_chunk_size)
                    .chunk_overlap(self.citation_chunk_overlap)
                    .build()?,
            ),
        };
        // A synthesizer given is used as it is: the citation prompts go only
        // to the default one.
        let prompts = PromptDictType::from([
            ("text_qa_template".to_owned(), self.citation_qa_template),
            ("refine_template".to_owned(), self.citation_refine_template),
        ]);
        let response_synthesizer = self
            .options
            .take_synthesizer("a citation query engine", prompts)?;
        Ok(CitationQueryEngine {
            retriever: self.retriever,
            response_synthesizer,
            text_splitter,
            node_postprocessors: self.options.node_postprocessors,
            metadata_mode: self.metadata_mode,
        })
    }
}
