//! `SimpleSummarize`: every chunk joined, truncated to fit beside the text-QA
//! prompt, and answered in one call (LlamaIndex 0.14.25).

use super::{EMPTY_RESPONSE, Synthesizer};
use crate::error::Result;
use crate::indices::PromptHelper;
use crate::llms::{Llm, predict, stream_predict};
use crate::prompts::BasePromptTemplate;
use crate::prompts::default_prompts::text_qa_prompt;
use crate::prompts::own_prompts;
use crate::utils::setters;
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;

/// Joins the chunks with newlines, cuts the result to the room the text-QA
/// prompt leaves, and makes one call (LlamaIndex `SimpleSummarize`).
#[derive(Clone, Debug)]
pub struct SimpleSummarize {
    llm: Arc<dyn Llm>,
    text_qa_template: BasePromptTemplate,
    prompt_helper: PromptHelper,
}

impl SimpleSummarize {
    /// A simple summarizer with LlamaIndex's default text-QA prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        let prompt_helper = PromptHelper::from_llm_metadata(&llm.metadata());
        Self {
            llm,
            text_qa_template: text_qa_prompt(),
            prompt_helper,
        }
    }

    setters!(
        /// Uses `helper` to truncate the context.
        with_prompt_helper => prompt_helper: PromptHelper,
        /// Replaces the text-QA prompt (needs `{context_str}` and `{query_str}`).
        with_text_qa_template => text_qa_template: impl Into<BasePromptTemplate>,
    );

    /// The prompt with the query filled in, and the truncated context.
    fn prepare(&self, query_str: &str, chunks: &[String]) -> Result<(BasePromptTemplate, String)> {
        let template = self
            .text_qa_template
            .partial_format(&[("query_str", query_str)]);
        let single = chunks.join("\n");
        let is_chat = self.llm.metadata().is_chat_model;
        // LlamaIndex 0.14.25 formats the truncated *list* into the prompt
        // (its Python repr, brackets and escapes included); the model gets the text here.
        let context = self
            .prompt_helper
            .truncate(&template, std::slice::from_ref(&single), is_chat)?
            .into_iter()
            .next()
            .unwrap_or_default();
        Ok((template, context))
    }
}

#[async_trait]
impl Synthesizer for SimpleSummarize {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        let (template, context) = self.prepare(query_str, text_chunks)?;
        let text = predict(
            self.llm.as_ref(),
            &template,
            &[("context_str", context.as_str())],
        )
        .await?;
        Ok(if text.is_empty() {
            EMPTY_RESPONSE.to_string()
        } else {
            text
        })
    }

    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        let (template, context) = self.prepare(query_str, text_chunks)?;
        stream_predict(
            self.llm.clone(),
            &template,
            &[("context_str", context.as_str())],
        )
        .await
    }
}

own_prompts!(SimpleSummarize {
    "text_qa_template" => text_qa_template ["context_str", "query_str"],
});
