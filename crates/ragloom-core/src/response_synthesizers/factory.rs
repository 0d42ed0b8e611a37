//! `get_response_synthesizer` and its builder: LlamaIndex's keyword arguments
//! (mode, prompts, prompt helper, `use_async`, filtering, `output_cls`) as builder methods.

use super::structured::OutputCls;
use super::{
    Accumulate, CompactAndAccumulate, CompactAndRefine, ContextOnly, Generation, NoText, Refine,
    ResponseMode, SimpleSummarize, Synthesizer, TreeSummarize,
};
use crate::error::{Error, Result};
use crate::indices::PromptHelper;
use crate::llms::Llm;
use crate::prompts::BasePromptTemplate;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Builds the synthesizer for `mode` with LlamaIndex's defaults
/// (LlamaIndex `get_response_synthesizer(llm=..., response_mode=...)`).
pub fn get_response_synthesizer(
    llm: Arc<dyn Llm>,
    mode: ResponseMode,
) -> Result<Arc<dyn Synthesizer>> {
    ResponseSynthesizerBuilder::new(llm)
        .response_mode(mode)
        .build()
}

/// The options of LlamaIndex's `get_response_synthesizer`. Streaming is not
/// an option: every synthesizer has `synthesize` and `stream_synthesize`.
///
/// Options a mode does not use are ignored, as in LlamaIndex:
/// `structured_answer_filtering` applies to `Refine` and `Compact`;
/// `output_cls` to those and to `TreeSummarize`, `Accumulate` and
/// `CompactAccumulate`; `use_async` to `TreeSummarize`, `Accumulate` and `CompactAccumulate`.
///
/// ```
/// use ragloom_core::llms::MockLlm;
/// use ragloom_core::response_synthesizers::{ResponseMode, ResponseSynthesizerBuilder};
/// use std::sync::Arc;
///
/// let synth = ResponseSynthesizerBuilder::new(Arc::new(MockLlm::new()))
///     .response_mode(ResponseMode::TreeSummarize)
///     .use_async(true)
///     .summary_template("Summarize for {query_str}:\n{context_str}")
///     .build()?;
/// assert!(synth.get_prompts().contains_key("summary_template"));
/// # Ok::<(), ragloom_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ResponseSynthesizerBuilder {
    llm: Arc<dyn Llm>,
    response_mode: ResponseMode,
    prompt_helper: Option<PromptHelper>,
    text_qa_template: Option<BasePromptTemplate>,
    refine_template: Option<BasePromptTemplate>,
    summary_template: Option<BasePromptTemplate>,
    simple_template: Option<BasePromptTemplate>,
    use_async: bool,
    structured_answer_filtering: bool,
    output_cls: Option<OutputCls>,
}

impl ResponseSynthesizerBuilder {
    /// A builder for `llm` in the default mode (`Compact`).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            response_mode: ResponseMode::default(),
            prompt_helper: None,
            text_qa_template: None,
            refine_template: None,
            summary_template: None,
            simple_template: None,
            use_async: false,
            structured_answer_filtering: false,
            output_cls: None,
        }
    }

    /// The response mode.
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.response_mode = mode;
        self
    }

    /// Packs and truncates with `helper` (for example with a
    /// `chunk_size_limit`) instead of one sized from the LLM's metadata.
    pub fn prompt_helper(mut self, helper: PromptHelper) -> Self {
        self.prompt_helper = Some(helper);
        self
    }

    /// The text-QA prompt (`{context_str}`, `{query_str}`).
    pub fn text_qa_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.text_qa_template = Some(t.into());
        self
    }

    /// The refine prompt (`{context_msg}`, `{query_str}`, `{existing_answer}`).
    pub fn refine_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.refine_template = Some(t.into());
        self
    }

    /// The tree-summarize prompt (`{context_str}`, `{query_str}`).
    pub fn summary_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.summary_template = Some(t.into());
        self
    }

    /// The generation prompt (`{query_str}`).
    pub fn simple_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.simple_template = Some(t.into());
        self
    }

    /// Runs independent calls (tree levels, accumulated answers) concurrently.
    pub fn use_async(mut self, use_async: bool) -> Self {
        self.use_async = use_async;
        self
    }

    /// Drops refine answers the model says do not satisfy the query.
    pub fn structured_answer_filtering(mut self, on: bool) -> Self {
        self.structured_answer_filtering = on;
        self
    }

    /// Asks for answers as JSON of `T` (LlamaIndex `output_cls`); read them
    /// back as `T` with [`StructuredSynthesize::synthesize_structured`](super::StructuredSynthesize::synthesize_structured).
    pub fn output_cls<T: DeserializeOwned + JsonSchema + 'static>(mut self) -> Self {
        self.output_cls = Some(OutputCls::of::<T>());
        self
    }

    /// Builds the synthesizer. A custom prompt lacking a variable its mode
    /// fills is an error naming the variable.
    pub fn build(self) -> Result<Arc<dyn Synthesizer>> {
        self.check_templates()?;
        let helper = self
            .prompt_helper
            .clone()
            .unwrap_or_else(|| PromptHelper::from_llm_metadata(&self.llm.metadata()));
        let llm = self.llm;
        Ok(match self.response_mode {
            ResponseMode::Refine | ResponseMode::Compact => {
                let mut refine = Refine::new(llm)
                    .with_prompt_helper(helper)
                    .with_structured_answer_filtering(self.structured_answer_filtering)
                    .with_output_cls(self.output_cls);
                if let Some(t) = self.text_qa_template {
                    refine = refine.with_text_qa_template(t);
                }
                if let Some(t) = self.refine_template {
                    refine = refine.with_refine_template(t);
                }
                if self.response_mode == ResponseMode::Refine {
                    Arc::new(refine)
                } else {
                    Arc::new(CompactAndRefine::from_refine(refine))
                }
            }
            ResponseMode::TreeSummarize => {
                let mut s = TreeSummarize::new(llm)
                    .with_prompt_helper(helper)
                    .with_use_async(self.use_async)
                    .with_output_cls(self.output_cls);
                if let Some(t) = self.summary_template {
                    s = s.with_summary_template(t);
                }
                Arc::new(s)
            }
            ResponseMode::SimpleSummarize => {
                let mut s = SimpleSummarize::new(llm).with_prompt_helper(helper);
                if let Some(t) = self.text_qa_template {
                    s = s.with_text_qa_template(t);
                }
                Arc::new(s)
            }
            ResponseMode::Accumulate | ResponseMode::CompactAccumulate => {
                let mut s = Accumulate::new(llm)
                    .with_prompt_helper(helper)
                    .with_use_async(self.use_async)
                    .with_output_cls(self.output_cls);
                if let Some(t) = self.text_qa_template {
                    s = s.with_text_qa_template(t);
                }
                if self.response_mode == ResponseMode::Accumulate {
                    Arc::new(s)
                } else {
                    Arc::new(CompactAndAccumulate::from_accumulate(s))
                }
            }
            ResponseMode::Generation => {
                let mut s = Generation::new(llm);
                if let Some(t) = self.simple_template {
                    s = s.with_simple_template(t);
                }
                Arc::new(s)
            }
            ResponseMode::NoText => Arc::new(NoText::new()),
            ResponseMode::ContextOnly => Arc::new(ContextOnly::new()),
        })
    }

    fn check_templates(&self) -> Result<()> {
        let checks: [(&Option<BasePromptTemplate>, &str, &[&str]); 4] = [
            (
                &self.text_qa_template,
                "text_qa_template",
                &["context_str", "query_str"],
            ),
            (
                &self.refine_template,
                "refine_template",
                &["context_msg", "query_str", "existing_answer"],
            ),
            (
                &self.summary_template,
                "summary_template",
                &["context_str", "query_str"],
            ),
            (&self.simple_template, "simple_template", &["query_str"]),
        ];
        for (template, name, vars) in checks {
            if let Some(t) = template {
                t.require_vars(vars).map_err(|e| match e {
                    Error::InvalidInput(why) => Error::InvalidInput(format!("{name}: {why}")),
                    Error::Invalid { what, source } => Error::Invalid {
                        what: format!("{name}: {what}"),
                        source,
                    },
                    other => other,
                })?;
            }
        }
        Ok(())
    }
}
