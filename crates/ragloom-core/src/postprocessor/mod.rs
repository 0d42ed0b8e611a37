//! Node postprocessors: rerank, filter or rewrite retrieved nodes before they
//! reach the synthesizer, applied in order by query engines.
//!
//! Each is LlamaIndex's class of the same name with the same fields and
//! defaults: [`SimilarityPostprocessor`], [`KeywordNodePostprocessor`],
//! [`TimeWeightedPostprocessor`], [`FixedRecencyPostprocessor`],
//! [`LongContextReorder`], [`MetadataReplacementPostProcessor`] (with
//! [`crate::node_parser::SentenceWindowNodeParser`]),
//! [`PrevNextNodePostprocessor`], [`AutoPrevNextNodePostprocessor`] and [`LLMRerank`]. Give them to
//! `query_engine_builder().node_postprocessor(..)`; they run in the order given.

mod fixed_recency;
mod keyword;
mod llm_rerank;
mod long_context_reorder;
mod metadata_replacement;
mod prev_next;
mod similarity;
mod time_weighted;

pub use fixed_recency::{FixedRecencyPostprocessor, parse_date};
pub use keyword::{KeywordNodePostprocessor, keyword_tokens};
pub use llm_rerank::{
    DEFAULT_CHOICE_SELECT_PROMPT_TMPL, FormatNodeBatchFn, LLMRerank, ParseChoiceSelectAnswerFn,
    default_choice_select_prompt, default_format_node_batch_fn,
    default_parse_choice_select_answer_fn,
};
pub use long_context_reorder::LongContextReorder;
pub use metadata_replacement::MetadataReplacementPostProcessor;
pub use prev_next::{
    AutoPrevNextNodePostprocessor, DEFAULT_INFER_PREV_NEXT_TMPL,
    DEFAULT_REFINE_INFER_PREV_NEXT_TMPL, PrevNextMode, PrevNextNodePostprocessor,
    get_backward_nodes, get_forward_nodes,
};
pub use similarity::SimilarityPostprocessor;
pub use time_weighted::TimeWeightedPostprocessor;

use crate::error::Result;
use crate::schema::{NodeWithScore, QueryBundle};
use async_trait::async_trait;

/// Reranks, filters or rewrites retrieved nodes.
#[async_trait]
pub trait NodePostprocessor: Send + Sync + std::fmt::Debug {
    /// Processes `nodes` retrieved for `query`.
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>>;
}

/// Retrieves for `query` with `retriever`, then runs `postprocessors` in
/// order (what a query engine or chat engine does before it answers).
pub async fn retrieve_and_postprocess(
    retriever: &dyn crate::retrievers::Retriever,
    postprocessors: &[std::sync::Arc<dyn NodePostprocessor>],
    query: &QueryBundle,
) -> Result<Vec<NodeWithScore>> {
    use tracing::Instrument;
    let span =
        tracing::info_span!("retrieve", query = %query.query_str, nodes = tracing::field::Empty);
    async {
        let mut nodes = retriever.retrieve(query).await?;
        for p in postprocessors {
            nodes = p.postprocess_nodes(nodes, Some(query)).await?;
        }
        tracing::Span::current().record("nodes", nodes.len());
        Ok(nodes)
    }
    .instrument(span)
    .await
}

/// The `node_postprocessor` setter of a builder whose `options` field holds
/// `node_postprocessors` (the chat and query engine builders).
macro_rules! node_postprocessor_setter {
    () => {
        /// Adds a postprocessor for the retrieved nodes; they run in the order added.
        pub fn node_postprocessor(
            mut self,
            postprocessor: std::sync::Arc<dyn $crate::postprocessor::NodePostprocessor>,
        ) -> Self {
            self.options.node_postprocessors.push(postprocessor);
            self
        }
    };
}
pub(crate) use node_postprocessor_setter;
