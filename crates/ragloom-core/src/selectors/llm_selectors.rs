//! `LLMSingleSelector` and `LLMMultiSelector`: the choices are listed in a text
//! prompt and the model answers with a JSON list of numbered choices.

use super::prompts::{DEFAULT_MULTI_SELECT_PROMPT_TMPL, DEFAULT_SINGLE_SELECT_PROMPT_TMPL};
use super::{Selector, SelectorResult, SingleSelection, build_choices_text, choice_to_index};
use crate::error::Result;
use crate::llms::Llm;
use crate::output_parsers::{SelectionOutputParser, escape_curly_braces, predict_with_format};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate, PromptType};
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
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

    /// Replaces the prompt (`prompt_template_str`); it may use `{num_choices}`,
    /// `{context_list}` and `{query_str}`. The format instructions are still appended.
    pub fn with_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.prompt = prompt.into();
        self
    }
}

#[async_trait]
impl Selector for LLMSingleSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let num_choices = choices.len().to_string();
        let context_list = build_choices_text(choices);
        let vars = [
            ("num_choices", num_choices.as_str()),
            ("context_list", context_list.as_str()),
            ("query_str", query.query_str.as_str()),
        ];
        run(
            &*self.llm,
            &self.prompt,
            &vars,
            self.output_parser,
            choices.len(),
            "single",
        )
        .await
    }
}

impl PromptMixin for LLMSingleSelector {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([("prompt".to_owned(), self.prompt.clone())])
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("prompt") {
            p.require_vars(&["context_list", "query_str"])?;
            self.prompt = p.clone();
        }
        Ok(())
    }
}

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

    /// At most this many choices (`max_outputs`; default: the number of choices).
    pub fn max_outputs(mut self, max_outputs: usize) -> Self {
        self.max_outputs = Some(max_outputs);
        self
    }

    /// Replaces the prompt; it may use `{num_choices}`, `{max_outputs}`,
    /// `{context_list}` and `{query_str}`. The format instructions are still appended.
    pub fn with_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.prompt = prompt.into();
        self
    }
}

#[async_trait]
impl Selector for LLMMultiSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let num_choices = choices.len().to_string();
        // LlamaIndex: `max_outputs or len(choices)`, so 0 means "all".
        let max_outputs = self
            .max_outputs
            .filter(|&m| m > 0)
            .unwrap_or(choices.len())
            .to_string();
        let context_list = build_choices_text(choices);
        let vars = [
            ("num_choices", num_choices.as_str()),
            ("max_outputs", max_outputs.as_str()),
            ("context_list", context_list.as_str()),
            ("query_str", query.query_str.as_str()),
        ];
        run(
            &*self.llm,
            &self.prompt,
            &vars,
            self.output_parser,
            choices.len(),
            "multi",
        )
        .await
    }
}

impl PromptMixin for LLMMultiSelector {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([("prompt".to_owned(), self.prompt.clone())])
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("prompt") {
            p.require_vars(&["context_list", "query_str"])?;
            self.prompt = p.clone();
        }
        Ok(())
    }
}

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
