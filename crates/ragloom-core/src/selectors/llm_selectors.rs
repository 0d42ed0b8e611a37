//! `LLMSingleSelector` and `LLMMultiSelector`: the choices are listed in a text
//! prompt and the model answers with a JSON list of numbered choices.

use super::prompts::{DEFAULT_MULTI_SELECT_PROMPT_TMPL, DEFAULT_SINGLE_SELECT_PROMPT_TMPL};
use super::{PromptVars, Selector, SelectorResult, SingleSelection, choice_to_index};
use crate::error::Result;
use crate::llms::Llm;
use crate::output_parsers::{SelectionOutputParser, escape_curly_braces, predict_with_format};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptTemplate, PromptType};
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
use crate::utils::setters;
use async_trait::async_trait;
use std::sync::Arc;
use tracing::Instrument;

/// Asks the LLM for the one most relevant choice (LlamaIndex `LLMSingleSelector`).
///
/// The prompt is [`DEFAULT_SINGLE_SELECT_PROMPT_TMPL`] followed by the
/// parser's format instructions; the reply is read by [`SelectionOutputParser`].
/// A reply naming several choices yields several selections, as in LlamaIndex.
#[derive(Clone, Debug)]
pub struct LLMSingleSelector {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    output_parser: SelectionOutputParser,
}

impl LLMSingleSelector {
    /// The selector with LlamaIndex's default prompt (`from_defaults`).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            prompt: PromptTemplate::with_type(
                DEFAULT_SINGLE_SELECT_PROMPT_TMPL,
                PromptType::Custom,
            )
            .into(),
            output_parser: SelectionOutputParser,
        }
    }

    setters!(
        /// Replaces the prompt (`prompt_template_str`); it may use `{num_choices}`,
        /// `{context_list}` and `{query_str}`. The format instructions are still appended.
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );
}

#[async_trait]
impl Selector for LLMSingleSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let vars = PromptVars::new(choices, query, None);
        run(
            &*self.llm,
            &self.prompt,
            &vars.pairs(),
            self.output_parser,
            choices.len(),
            "single",
        )
        .await
    }
}

own_prompts!(LLMSingleSelector {
    "prompt" => prompt ["context_list", "query_str"],
});

/// Asks the LLM for up to `max_outputs` relevant choices (LlamaIndex `LLMMultiSelector`).
///
/// As LlamaIndex's `from_defaults` does, the format instructions are part of
/// the default template and are appended once more when the prompt is formatted,
/// so the model sees them twice, braces doubled, exactly as LlamaIndex 0.14.25 sends them.
#[derive(Clone, Debug)]
pub struct LLMMultiSelector {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    output_parser: SelectionOutputParser,
    max_outputs: Option<usize>,
}

impl LLMMultiSelector {
    /// The selector with LlamaIndex's default prompt, up to as many outputs as choices.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        let parser = SelectionOutputParser;
        // LlamaIndex's template text after `output_parser.format(...)`, its
        // braces doubled once more so that formatting here leaves what
        // LlamaIndex's formatter leaves.
        let template = format!(
            "{DEFAULT_MULTI_SELECT_PROMPT_TMPL}{}",
            escape_curly_braces(&parser.format(""))
        );
        Self {
            llm,
            prompt: PromptTemplate::with_type(template, PromptType::Custom).into(),
            output_parser: parser,
            max_outputs: None,
        }
    }

    setters!(
        /// At most this many choices (`max_outputs`; default: the number of choices).
        max_outputs => max_outputs: usize,
        /// Replaces the prompt; it may use `{num_choices}`, `{max_outputs}`,
        /// `{context_list}` and `{query_str}`. The format instructions are still appended.
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );
}

#[async_trait]
impl Selector for LLMMultiSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let vars = PromptVars::new(choices, query, Some(self.max_outputs));
        run(
            &*self.llm,
            &self.prompt,
            &vars.pairs(),
            self.output_parser,
            choices.len(),
            "multi",
        )
        .await
    }
}

own_prompts!(LLMMultiSelector {
    "prompt" => prompt ["context_list", "query_str"],
});

async fn run(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
    parser: SelectionOutputParser,
    num_choices: usize,
    kind: &'static str,
) -> Result<SelectorResult> {
    let span = tracing::info_span!("select", selector = kind, choices = num_choices);
    async {
        let reply = predict_with_format(llm, prompt, vars, &|text| parser.format(text)).await?;
        let answers = parser.parse(&reply)?;
        let selections = answers
            .into_iter()
            .map(|a| {
                Ok(SingleSelection {
                    index: choice_to_index(a.choice, num_choices, &reply)?,
                    reason: a.reason,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SelectorResult { selections })
    }
    .instrument(span)
    .await
}
