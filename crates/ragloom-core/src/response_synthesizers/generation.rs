//! `Generation`: the query alone through the simple input prompt, the
//! retrieved context ignored (LlamaIndex 0.14.25).

use super::Synthesizer;
use crate::error::Result;
use crate::llms::{Llm, predict, stream_predict};
use crate::prompts::BasePromptTemplate;
use crate::prompts::default_prompts::simple_input_prompt;
use crate::prompts::own_prompts;
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;

/// Answers from the model's own knowledge: one call with the query through
/// `simple_template` (`{query_str}`), even with no nodes (LlamaIndex `Generation`).
#[derive(Clone, Debug)]
pub struct Generation {
    llm: Arc<dyn Llm>,
    simple_template: BasePromptTemplate,
}

impl Generation {
    /// A generation synthesizer with LlamaIndex's simple input prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            simple_template: simple_input_prompt(),
        }
    }

    /// Replaces the simple input prompt (needs `{query_str}`).
    pub fn with_simple_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.simple_template = t.into();
        self
    }
}

#[async_trait]
impl Synthesizer for Generation {
    async fn get_response(&self, query_str: &str, _text_chunks: &[String]) -> Result<String> {
        predict(
            self.llm.as_ref(),
            &self.simple_template,
            &[("query_str", query_str)],
        )
        .await
    }

    async fn stream_response(
        &self,
        query_str: &str,
        _text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        stream_predict(
            self.llm.clone(),
            &self.simple_template,
            &[("query_str", query_str)],
        )
        .await
    }

    /// The context plays no part: the model is called even without nodes.
    fn needs_context(&self) -> bool {
        false
    }
}

own_prompts!(Generation {
    "simple_template" => simple_template ["query_str"],
});
