//! `LLMQuestionGenerator`: the few-shot sub-question prompt to any LLM, the
//! reply parsed as JSON.

use super::output_parser::SubQuestionOutputParser;
use super::prompts::{DEFAULT_SUB_QUESTION_PROMPT_TMPL, build_tools_text};
use super::{QuestionGenerator, SubQuestion};
use crate::error::Result;
use crate::llms::{Llm, predict};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// Asks an LLM for sub-questions as JSON (LlamaIndex `LLMQuestionGenerator`),
/// with LlamaIndex's prompt and its Uber/Lyft few-shot example.
#[derive(Clone, Debug)]
pub struct LLMQuestionGenerator {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    output_parser: SubQuestionOutputParser,
}

impl LLMQuestionGenerator {
    /// The generator with LlamaIndex's default prompt (`from_defaults`).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            prompt: PromptTemplate::new(DEFAULT_SUB_QUESTION_PROMPT_TMPL).into(),
            output_parser: SubQuestionOutputParser,
        }
    }

    /// Replaces the prompt (`prompt_template_str`); it gets `{tools_str}` and `{query_str}`.
    pub fn with_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.prompt = prompt.into();
        self
    }
}

#[async_trait]
impl QuestionGenerator for LLMQuestionGenerator {
    async fn generate(
        &self,
        tools: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<Vec<SubQuestion>> {
        let span = tracing::info_span!(
            "generate_sub_questions",
            tools = tools.len(),
            sub_questions = tracing::field::Empty
        );
        async {
            let tools_str = build_tools_text(tools);
            let reply = predict(
                &*self.llm,
                &self.prompt,
                &[("tools_str", &tools_str), ("query_str", &query.query_str)],
            )
            .await?;
            let subs = self.output_parser.parse(&reply)?;
            tracing::Span::current().record("sub_questions", subs.len());
            Ok(subs)
        }
        .instrument(span)
        .await
    }
}

own_prompts!(LLMQuestionGenerator {
    "question_gen_prompt" => prompt ["tools_str", "query_str"],
});
