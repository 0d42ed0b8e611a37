//! The three ways to retrieve from a [`SummaryIndex`]: every node, the top k
//! by embedding, or the nodes an LLM picks batch by batch ("Doc: n, Relevance: m").

use super::SummaryIndex;
use crate::embeddings::{Embedding, SimilarityMode, embed_missing, query_embedding, similarity};
use crate::error::{Error, Result};
use crate::llms::{Llm, predict};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use crate::retrievers::Retriever;
use crate::retrievers::bm25::top_k;
use crate::schema::{Node, NodeWithScore, QueryBundle};
use async_trait::async_trait;
use std::sync::Arc;

pub use crate::indices::utils::{
    default_format_node_batch_fn, default_parse_choice_select_answer_fn,
};
pub use crate::prompts::default_prompts::DEFAULT_CHOICE_SELECT_PROMPT_TMPL;

/// LlamaIndex's default `choice_batch_size`.
pub const DEFAULT_CHOICE_BATCH_SIZE: usize = 10;

/// Returns every node of the index, unscored, in order (LlamaIndex `SummaryIndexRetriever`).
#[derive(Clone, Debug)]
pub struct SummaryIndexRetriever {
    index: SummaryIndex,
}

impl SummaryIndexRetriever {
    /// A retriever over `index`.
    pub fn new(index: SummaryIndex) -> Self {
        Self { index }
    }
}

#[async_trait]
impl Retriever for SummaryIndexRetriever {
    async fn retrieve(&self, _query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self
            .index
            .nodes()
            .await?
            .into_iter()
            .map(|n| NodeWithScore::new(n, None))
            .collect())
    }
}

/// Ranks the index's nodes by cosine similarity to the query and returns the
/// top k (LlamaIndex `SummaryIndexEmbeddingRetriever`, `similarity_top_k` 1).
/// Nodes stored without an embedding are embedded at query time (their
/// embed-mode text), as in LlamaIndex; ties keep the index order.
#[derive(Clone, Debug)]
pub struct SummaryIndexEmbeddingRetriever {
    index: SummaryIndex,
    embed_model: Arc<dyn Embedding>,
    similarity_top_k: usize,
}

impl SummaryIndexEmbeddingRetriever {
    /// A retriever over `index` embedding with `embed_model`, top 1.
    pub fn new(index: SummaryIndex, embed_model: Arc<dyn Embedding>) -> Self {
        Self {
            index,
            embed_model,
            similarity_top_k: 1,
        }
    }

    /// How many nodes to return (default 1).
    pub fn similarity_top_k(mut self, k: usize) -> Self {
        self.similarity_top_k = k;
        self
    }
}

#[async_trait]
impl Retriever for SummaryIndexEmbeddingRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let mut nodes = self.index.nodes().await?;
        let query_embedding = query_embedding(self.embed_model.as_ref(), query).await?;
        embed_missing(self.embed_model.as_ref(), &mut nodes, false).await?;
        let mut scored = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let e = n.embedding.as_deref().unwrap_or_default();
            if e.len() != query_embedding.len() {
                return Err(Error::InvalidInput(format!(
                    "node `{}` has an embedding of length {}, the query one of length {}",
                    n.id_,
                    e.len(),
                    query_embedding.len()
                )));
            }
            scored.push((i, similarity(&query_embedding, e, SimilarityMode::Cosine)));
        }
        let best = top_k(scored, self.similarity_top_k);
        let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
        Ok(best
            .into_iter()
            .filter_map(|(i, s)| {
                slots
                    .get_mut(i)
                    .and_then(Option::take)
                    .map(|n| NodeWithScore::new(n, Some(s)))
            })
            .collect())
    }
}

/// Asks an LLM, `choice_batch_size` nodes at a time, which nodes answer the
/// query, and returns them scored by the relevance it gave (LlamaIndex
/// `SummaryIndexLLMRetriever`), batch after batch in the order the LLM listed them.
#[derive(Clone, Debug)]
pub struct SummaryIndexLLMRetriever {
    index: SummaryIndex,
    llm: Arc<dyn Llm>,
    choice_select_prompt: BasePromptTemplate,
    choice_batch_size: usize,
}

impl SummaryIndexLLMRetriever {
    /// A retriever over `index` asking `llm`, batches of 10.
    pub fn new(index: SummaryIndex, llm: Arc<dyn Llm>) -> Self {
        Self {
            index,
            llm,
            choice_select_prompt: PromptTemplate::new(DEFAULT_CHOICE_SELECT_PROMPT_TMPL).into(),
            choice_batch_size: DEFAULT_CHOICE_BATCH_SIZE,
        }
    }

    /// Nodes shown to the LLM per call (default 10, at least 1).
    pub fn choice_batch_size(mut self, n: usize) -> Self {
        self.choice_batch_size = n.max(1);
        self
    }

    /// Replaces the choice-select prompt (fields `{context_str}`, `{query_str}`).
    pub fn choice_select_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.choice_select_prompt = prompt.into();
        self
    }
}

#[async_trait]
impl Retriever for SummaryIndexLLMRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let node_ids = self.index.node_ids();
        let docstore = &self.index.storage_context().docstore;
        let mut results = Vec::new();
        for batch_ids in node_ids.chunks(self.choice_batch_size) {
            let batch = docstore.get_nodes(batch_ids).await?;
            let context = default_format_node_batch_fn(&batch);
            let raw = predict(
                self.llm.as_ref(),
                &self.choice_select_prompt,
                &[("context_str", &context), ("query_str", &query.query_str)],
            )
            .await?;
            for (num, rel) in default_parse_choice_select_answer_fn(&raw, batch.len()) {
                if let Some(n) = batch.get(num - 1) {
                    results.push(NodeWithScore::new(n.clone(), Some(rel)));
                }
            }
        }
        Ok(results)
    }
}

impl PromptMixin for SummaryIndexLLMRetriever {
    fn own_prompts(&self) -> PromptDictType {
        let mut d = PromptDictType::new();
        d.insert(
            "choice_select_prompt".into(),
            self.choice_select_prompt.clone(),
        );
        d
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("choice_select_prompt") {
            self.choice_select_prompt = p.clone();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_python_and_skips_what_it_cannot_read() {
        // One parser serves the summary index and LLMRerank: a choice with an
        // unreadable relevance is kept with 1.0; out-of-range numbers are dropped.
        let got = default_parse_choice_select_answer_fn(
            "Doc: 9, Relevance: 7\nDoc: 3, Relevance: 4/10\nnoise\nDoc: 12, Relevance: 9\n\
             Doc: 0, Relevance: 5\nDoc: x, Relevance: 5\nDoc: 2, Relevance: high\nDoc: 1,Relevance:8",
            10,
        );
        assert_eq!(got, [(9, 7.0), (3, 4.0), (2, 1.0), (1, 8.0)]);
    }

    #[test]
    fn batches_are_numbered_from_one() {
        let nodes = [Node::text_node("alpha"), Node::text_node("beta")];
        assert_eq!(
            default_format_node_batch_fn(&nodes),
            "Document 1:\nalpha\n\nDocument 2:\nbeta"
        );
    }
}
