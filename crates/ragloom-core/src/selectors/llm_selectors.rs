//! `LLMSingleSelector` and `LLMMultiSelector`: the choices are listed in a text
//! prompt and the model answers with a JSON list of numbered choices.

use super::prompts::{DEFAULT_MULTI_SELECT_PROMPT_TMPL, DEFAULT_SINGLE_SELECT_PROMPT_TMPL};
use super::{
    Cardinality, Multi, PromptVars, Selector, SelectorResult, Single, SingleSelection,
    choice_to_index,
};
use crate::error::Result;
use crate::llms::Llm;
use crate::output_parsers::{SelectionOutputParser, escape_curly_braces, predict_with_format};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptMixin, PromptTemplate, PromptType};
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
use crate::utils::setters;
use async_trait::async_trait;
use std::marker::PhantomData;
use std::sync::Arc;
use tracing::Instrument;

/// Asks the LLM, in a text prompt, for the most relevant choice (`K` =
/// [`Single`]) or up to `max_outputs` of them ([`Multi`]); the reply is read
/// by [`SelectionOutputParser`]. Named by LlamaIndex's names,
/// [`LLMSingleSelector`] and [`LLMMultiSelector`].
#[derive(Clone, Debug)]
pub struct LLMSelector<K> {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    output_parser: SelectionOutputParser,
    max_outputs: Option<usize>,
    kind: PhantomData<K>,
}

/// Asks the LLM for the one most relevant choice (LlamaIndex `LLMSingleSelector`).
///
/// The prompt is [`DEFAULT_SINGLE_SELECT_PROMPT_TMPL`] followed by the
/// parser's format instructions. A reply naming several choices yields
/// several selections, as in LlamaIndex.
pub type LLMSingleSelector = LLMSelector<Single>;

/// Asks the LLM for up to `max_outputs` relevant choices (LlamaIndex `LLMMultiSelector`).
///
/// As LlamaIndex's `from_defaults` does, the format instructions are part of
/// the default template and are appended once more when the prompt is formatted,
/// so the model sees them twice, braces doubled, exactly as LlamaIndex 0.14.25 sends them.
pub type LLMMultiSelector = LLMSelector<Multi>;

impl<K> LLMSelector<K> {
    fn with_template(llm: Arc<dyn Llm>, template: String) -> Self {
        Self {
            llm,
            prompt: PromptTemplate::with_type(template, PromptType::Custom).into(),
            output_parser: SelectionOutputParser,
            max_outputs: None,
            kind: PhantomData,
        }
    }
}

impl LLMSingleSelector {
    /// The selector with LlamaIndex's default prompt (`from_defaults`).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self::with_template(llm, DEFAULT_SINGLE_SELECT_PROMPT_TMPL.to_owned())
    }

    setters!(
        /// Replaces the prompt (`prompt_template_str`); it may use `{num_choices}`,
        /// `{context_list}` and `{query_str}`. The format instructions are still appended.
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );
}

impl LLMMultiSelector {
    /// The selector with LlamaIndex's default prompt, up to as many outputs as choices.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        // LlamaIndex's template text after `output_parser.format(...)`, its
        // braces doubled once more so that formatting here leaves what
        // LlamaIndex's formatter leaves.
        let template = format!(
            "{DEFAULT_MULTI_SELECT_PROMPT_TMPL}{}",
            escape_curly_braces(&SelectionOutputParser.format(""))
        );
        Self::with_template(llm, template)
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
impl<K: Cardinality> Selector for LLMSelector<K>
where
    Self: PromptMixin,
{
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let vars = PromptVars::new(choices, query, K::MULTI.then_some(self.max_outputs));
        run(
            &*self.llm,
            &self.prompt,
            &vars.pairs(),
            self.output_parser,
            choices.len(),
            K::NAME,
        )
        .await
    }
}

own_prompts!(LLMSingleSelector {
    "prompt" => prompt ["context_list", "query_str"],
});

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
