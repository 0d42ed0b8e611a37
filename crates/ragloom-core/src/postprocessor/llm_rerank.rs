//! `LLMRerank`: asks an LLM which retrieved nodes answer the query and how
//! relevant each is, batch by batch, and keeps the `top_n` by that relevance.

use super::NodePostprocessor;
use crate::error::{Error, Result};
pub use crate::indices::utils::{
    default_format_node_batch_fn, default_parse_choice_select_answer_fn,
};
use crate::llms::{Llm, predict};
pub use crate::prompts::default_prompts::DEFAULT_CHOICE_SELECT_PROMPT_TMPL;
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::schema::{Node, NodeWithScore, QueryBundle};
use async_trait::async_trait;
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_CHOICE_SELECT_PROMPT` (variables `context_str`, `query_str`).
pub fn default_choice_select_prompt() -> BasePromptTemplate {
    PromptTemplate::new(DEFAULT_CHOICE_SELECT_PROMPT_TMPL).into()
}

/// Renders a batch of nodes into the prompt's `{context_str}`.
pub type FormatNodeBatchFn = Arc<dyn Fn(&[Node]) -> String + Send + Sync>;

/// Reads an LLM answer for a batch of `num_choices` nodes into
/// `(1-based document number, relevance)` pairs, best first as the model
/// listed them.
pub type ParseChoiceSelectAnswerFn = Arc<dyn Fn(&str, usize) -> Vec<(usize, f32)> + Send + Sync>;

/// Reranks nodes with an LLM (LlamaIndex `LLMRerank`).
///
/// Nodes go to the LLM in batches of `choice_batch_size` (default 10),
/// rendered by the format function into `choice_select_prompt` (default
/// LlamaIndex's `DEFAULT_CHOICE_SELECT_PROMPT`); the batches are sent
/// concurrently, as Python's async path does. Each answer is read by the
/// parse function ([`default_parse_choice_select_answer_fn`]); the chosen
/// nodes get the relevance as their score, and the `top_n` (default 10)
/// highest are returned, ties in batch order. Nodes the LLM did not choose
/// are dropped. A query is required.
///
/// For chat models the same text prompt is sent as one user message
/// (LlamaIndex switches to a rich chat template with one message per
/// document there).
#[derive(Clone)]
pub struct LLMRerank {
    llm: Arc<dyn Llm>,
    /// The prompt, with `{context_str}` and `{query_str}`.
    pub choice_select_prompt: BasePromptTemplate,
    /// Nodes per LLM call (default 10).
    pub choice_batch_size: usize,
    /// How many nodes to return (default 10).
    pub top_n: usize,
    format_node_batch_fn: FormatNodeBatchFn,
    parse_choice_select_answer_fn: ParseChoiceSelectAnswerFn,
}

impl std::fmt::Debug for LLMRerank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LLMRerank")
            .field("llm", &self.llm.metadata().model_name)
            .field("choice_batch_size", &self.choice_batch_size)
            .field("top_n", &self.top_n)
            .finish_non_exhaustive()
    }
}

impl LLMRerank {
    /// A reranker over `llm` with LlamaIndex's defaults.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            choice_select_prompt: default_choice_select_prompt(),
            choice_batch_size: 10,
            top_n: 10,
            format_node_batch_fn: Arc::new(default_format_node_batch_fn),
            parse_choice_select_answer_fn: Arc::new(default_parse_choice_select_answer_fn),
        }
    }

    /// Sets `choice_batch_size` (at least 1, checked when used).
    pub fn choice_batch_size(mut self, n: usize) -> Self {
        self.choice_batch_size = n;
        self
    }

    /// Sets `top_n`.
    pub fn top_n(mut self, n: usize) -> Self {
        self.top_n = n;
        self
    }

    /// Replaces the prompt; it must have `{context_str}` and `{query_str}`.
    pub fn choice_select_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Result<Self> {
        let prompt = prompt.into();
        prompt.require_vars(&["context_str", "query_str"])?;
        self.choice_select_prompt = prompt;
        Ok(self)
    }

    /// Replaces how a batch of nodes is rendered.
    pub fn format_node_batch_fn(mut self, f: FormatNodeBatchFn) -> Self {
        self.format_node_batch_fn = f;
        self
    }

    /// Replaces how an answer is read.
    pub fn parse_choice_select_answer_fn(mut self, f: ParseChoiceSelectAnswerFn) -> Self {
        self.parse_choice_select_answer_fn = f;
        self
    }

    /// The LLM.
    pub fn llm(&self) -> &Arc<dyn Llm> {
        &self.llm
    }

    async fn rerank_batch(
        &self,
        batch: &[NodeWithScore],
        query_str: &str,
    ) -> Result<Vec<NodeWithScore>> {
        let nodes: Vec<Node> = batch.iter().map(|n| n.node.clone()).collect();
        let context_str = (self.format_node_batch_fn)(&nodes);
        let raw = predict(
            self.llm.as_ref(),
            &self.choice_select_prompt,
            &[("context_str", &context_str), ("query_str", query_str)],
        )
        .await?;
        let choices = (self.parse_choice_select_answer_fn)(&raw, nodes.len());
        // a custom parse function may still answer out of range: skip those
        Ok(choices
            .into_iter()
            .filter_map(|(num, relevance)| {
                let node = nodes.get(num.checked_sub(1)?)?;
                Some(NodeWithScore::new(node.clone(), Some(relevance)))
            })
            .collect())
    }
}

#[async_trait]
impl NodePostprocessor for LLMRerank {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let query = query.ok_or_else(|| {
            Error::InvalidInput("LLMRerank needs the query to rerank against".into())
        })?;
        if self.choice_batch_size == 0 {
            return Err(Error::InvalidInput(
                "LLMRerank: choice_batch_size must be at least 1".into(),
            ));
        }
        if nodes.is_empty() {
            return Ok(nodes);
        }
        let batches = nodes
            .chunks(self.choice_batch_size)
            .map(|b| self.rerank_batch(b, &query.query_str));
        let mut results: Vec<NodeWithScore> = futures::future::try_join_all(batches)
            .await?
            .into_iter()
            .flatten()
            .collect();
        results.sort_by(|a, b| {
            b.get_score()
                .partial_cmp(&a.get_score())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        results.truncate(self.top_n);
        Ok(results)
    }
}

own_prompts!(LLMRerank {
    "choice_select_prompt" => choice_select_prompt ["context_str", "query_str"],
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indices::utils::first_number;

    #[test]
    fn parser_never_panics_and_reads_what_it_can() {
        let p = default_parse_choice_select_answer_fn;
        assert_eq!(p("Doc: 2, Relevance: 7.5", 3), [(2, 7.5)]);
        assert_eq!(p("Doc: 0, Relevance: 9\nDoc: -1, Relevance: 9", 3), []);
        assert_eq!(
            p("Doc: 2, Relevance: 8\nDoc: 2, Relevance: 1", 3),
            [(2, 8.0)]
        );
        assert_eq!(p("Document #3 - relevance 6/10", 3), [(3, 6.0)]);
        assert_eq!(p("Doc: 1, Relevance: high", 3), [(1, 1.0)]);
        assert_eq!(p("Doc: 99999999999999999999999, Relevance: 1", 3), []);
        assert_eq!(p("Doc:, Relevance:\n,,,:\n::,::\ndoc\ndocument:", 3), []);
        assert_eq!(p("Relevance: 9, Doc: x", 3), []);
        assert_eq!(p("ｄｏｃ： ３, Relevance: ９", 3), []);
        assert_eq!(first_number("7."), Some(7.0));
        assert_eq!(first_number("x 12.25y"), Some(12.25));
        assert_eq!(first_number("none"), None);
    }
}
