//! `LLMRerank`: asks an LLM which retrieved nodes answer the query and how
//! relevant each is, batch by batch, and keeps the `top_n` by that relevance.

use super::NodePostprocessor;
use crate::error::{Error, Result};
use crate::llms::{Llm, predict};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use crate::schema::{MetadataMode, Node, NodeWithScore, QueryBundle};
use async_trait::async_trait;
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_CHOICE_SELECT_PROMPT_TMPL`, verbatim.
pub const DEFAULT_CHOICE_SELECT_PROMPT_TMPL: &str = "A list of documents is shown below. Each document has a number next to it along \
with a summary of the document. A question is also provided. \n\
Respond with the numbers of the documents \
you should consult to answer the question, in order of relevance, as well \n\
as the relevance score. The relevance score is a number from 1-10 based on \
how relevant you think the document is to the question.\n\
Do not include any documents that are not relevant to the question. \n\
Example format: \n\
Document 1:\n<summary of document 1>\n\n\
Document 2:\n<summary of document 2>\n\n\
...\n\n\
Document 10:\n<summary of document 10>\n\n\
Question: <question>\n\
Answer:\n\
Doc: 9, Relevance: 7\n\
Doc: 3, Relevance: 4\n\
Doc: 7, Relevance: 3\n\n\
Let's try this now: \n\n\
{context_str}\n\
Question: {query_str}\n\
Answer:\n";

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

/// LlamaIndex's `default_format_node_batch_fn`: `Document n:` and the node's
/// LLM-mode content, blocks separated by a blank line.
pub fn default_format_node_batch_fn(nodes: &[Node]) -> String {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| format!("Document {}:\n{}", i + 1, n.get_content(MetadataMode::Llm)))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first number in `s`: digits with an optional decimal part.
fn first_number(s: &str) -> Option<f32> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let rest = &s[start..];
    let mut end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if let Some(frac) = rest[end..].strip_prefix('.') {
        let digits = frac
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(frac.len());
        if digits > 0 {
            end += 1 + digits;
        }
    }
    rest[..end].parse().ok()
}

/// The number after a `doc`/`document` label (`Doc: 3`, `Document #3`, `doc 3`).
fn labelled_doc_number(line: &str) -> Option<i64> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("doc")?;
    let rest = line[at + 3..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '#' | '.'));
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

/// LlamaIndex's `default_parse_choice_select_answer_fn`, made robust.
///
/// Each line of the form `Doc: <n>, Relevance: <m>` gives a choice, read as
/// Python reads it (the number after the first `:` of the part before the
/// comma; the first number after the `:` of the part after it). Beyond
/// Python, and never panicking: a line that does not split into exactly two
/// comma parts is still read when it names a `Doc`/`Document` number
/// (`Doc 3 - Relevance 8`, `Doc: 1, Relevance: 2, extra`); other lines and
/// extra text are skipped; numbers outside `1..=num_choices` are dropped
/// (Python drops those above, and wraps 0 and negatives to other nodes); a
/// document listed twice counts once, at its first mention; a decimal
/// relevance keeps its decimals (Python keeps the integer part); a choice
/// with no readable relevance scores 1.0 (Python's score when no line has
/// one, and a misalignment of its two lists when only some lack one).
pub fn default_parse_choice_select_answer_fn(
    answer: &str,
    num_choices: usize,
) -> Vec<(usize, f32)> {
    let mut out: Vec<(usize, f32)> = Vec::new();
    for line in answer.split('\n') {
        let parts: Vec<&str> = line.split(',').collect();
        let python_num = (parts.len() == 2)
            .then(|| parts[0].split(':').nth(1))
            .flatten()
            .and_then(|s| s.trim().parse::<i64>().ok());
        let Some(num) = python_num.or_else(|| labelled_doc_number(line)) else {
            continue;
        };
        let Ok(num) = usize::try_from(num) else {
            continue;
        };
        if num == 0 || num > num_choices || out.iter().any(|(n, _)| *n == num) {
            continue;
        }
        let after_comma = parts
            .get(1)
            .and_then(|p| p.split(':').nth(1))
            .and_then(first_number);
        let labelled = || {
            let lower = line.to_ascii_lowercase();
            let at = lower.find("relevance")?;
            first_number(&line[at + "relevance".len()..])
        };
        let relevance = after_comma.or_else(labelled).unwrap_or(1.0);
        out.push((num, relevance));
    }
    out
}

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

impl PromptMixin for LLMRerank {
    fn own_prompts(&self) -> PromptDictType {
        let mut p = PromptDictType::new();
        p.insert(
            "choice_select_prompt".to_string(),
            self.choice_select_prompt.clone(),
        );
        p
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("choice_select_prompt") {
            p.require_vars(&["context_str", "query_str"])?;
            self.choice_select_prompt = p.clone();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
