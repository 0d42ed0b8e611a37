//! Query transforms: rewrite a `QueryBundle` before it reaches an index —
//! `HyDEQueryTransform` embeds a hypothetical answer instead of (or beside) the question.

use crate::error::Result;
use crate::llms::{Llm, predict};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptMixin, PromptTemplate, PromptType};
use crate::schema::QueryBundle;
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::sync::Arc;
use tracing::Instrument;

/// LlamaIndex's `HYDE_TMPL` (`{context_str}` is the question).
pub const HYDE_TMPL: &str = "Please write a passage to answer the question\nTry to include as many key details as possible.\n\n\n{context_str}\n\n\nPassage:\"\"\"\n";

/// LlamaIndex's `DEFAULT_HYDE_PROMPT`.
pub fn default_hyde_prompt() -> BasePromptTemplate {
    PromptTemplate::with_type(HYDE_TMPL, PromptType::Summary).into()
}

/// Rewrites a query before retrieval (LlamaIndex `BaseQueryTransform`).
#[async_trait]
pub trait QueryTransform: PromptMixin + Send + Sync + std::fmt::Debug {
    /// The transformed query; `metadata` carries what a transform may need
    /// (LlamaIndex passes e.g. an index summary).
    async fn run_with_metadata(
        &self,
        query: &QueryBundle,
        metadata: &Map<String, Value>,
    ) -> Result<QueryBundle>;

    /// The transformed query, without metadata.
    async fn run(&self, query: &QueryBundle) -> Result<QueryBundle> {
        self.run_with_metadata(query, &Map::new()).await
    }
}

/// Leaves the query as it is (LlamaIndex `IdentityQueryTransform`).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityQueryTransform;

#[async_trait]
impl QueryTransform for IdentityQueryTransform {
    async fn run_with_metadata(
        &self,
        query: &QueryBundle,
        _metadata: &Map<String, Value>,
    ) -> Result<QueryBundle> {
        Ok(query.clone())
    }
}

own_prompts!(IdentityQueryTransform {});

/// Hypothetical Document Embeddings (LlamaIndex `HyDEQueryTransform`, after
/// Gao et al., "Precise Zero-Shot Dense Retrieval without Relevance Labels"):
/// the LLM writes a passage answering the question, and retrieval embeds that
/// passage — followed, with `include_original` (the default), by the query's
/// own embedding strings. The query text itself is unchanged, so the answer
/// is still synthesized for the user's question.
#[derive(Clone, Debug)]
pub struct HyDEQueryTransform {
    llm: Arc<dyn Llm>,
    hyde_prompt: BasePromptTemplate,
    include_original: bool,
}

impl HyDEQueryTransform {
    /// HyDE with LlamaIndex's prompt, keeping the original query's embedding strings.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            hyde_prompt: default_hyde_prompt(),
            include_original: true,
        }
    }

    /// Whether the query's own embedding strings follow the hypothetical passage (default true).
    pub fn include_original(mut self, include_original: bool) -> Self {
        self.include_original = include_original;
        self
    }

    /// Replaces the prompt (`hyde_prompt`); it gets the question as `{context_str}`.
    pub fn with_hyde_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.hyde_prompt = prompt.into();
        self
    }
}

#[async_trait]
impl QueryTransform for HyDEQueryTransform {
    async fn run_with_metadata(
        &self,
        query: &QueryBundle,
        _metadata: &Map<String, Value>,
    ) -> Result<QueryBundle> {
        let span = tracing::info_span!("query_transform", transform = "hyde");
        async {
            let hypothetical_doc = predict(
                &*self.llm,
                &self.hyde_prompt,
                &[("context_str", &query.query_str)],
            )
            .await?;
            let mut embedding_strs = vec![hypothetical_doc];
            if self.include_original {
                embedding_strs.extend(query.embedding_strs());
            }
            Ok(QueryBundle {
                query_str: query.query_str.clone(),
                custom_embedding_strs: Some(embedding_strs),
                embedding: None,
                keyword_terms: query.keyword_terms.clone(),
            })
        }
        .instrument(span)
        .await
    }
}

own_prompts!(HyDEQueryTransform {
    "hyde_prompt" => hyde_prompt ["context_str"],
});
