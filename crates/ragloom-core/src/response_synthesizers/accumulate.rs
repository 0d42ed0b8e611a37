//! `Accumulate` (one answer per chunk) and `CompactAndAccumulate` (one per
//! pack of chunks), joined as `Response 1: ...` blocks (LlamaIndex 0.14.25).

use super::structured::OutputCls;
use super::{EMPTY_RESPONSE, Synthesizer, predict_answer, run_calls};
use crate::error::{Error, Result};
use crate::indices::PromptHelper;
use crate::llms::Llm;
use crate::prompts::default_prompts::text_qa_prompt;
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin};
use crate::utils::{setters, wrapped_setters};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;

/// What separates the numbered answers (LlamaIndex's default `separator`).
pub const DEFAULT_ACCUMULATE_SEPARATOR: &str = "\n---------------------\n";

/// Answers the query once per chunk (a chunk too big for the window is split
/// and each piece answered) and returns every answer, numbered:
/// `Response 1: ...` blocks joined by [`DEFAULT_ACCUMULATE_SEPARATOR`]
/// (LlamaIndex `Accumulate`). With `use_async` the calls run concurrently.
/// It cannot stream.
#[derive(Clone, Debug)]
pub struct Accumulate {
    llm: Arc<dyn Llm>,
    text_qa_template: BasePromptTemplate,
    prompt_helper: PromptHelper,
    use_async: bool,
    output_cls: Option<OutputCls>,
    separator: String,
}

impl Accumulate {
    /// An accumulating synthesizer with LlamaIndex's default text-QA prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        let prompt_helper = PromptHelper::from_llm_metadata(&llm.metadata());
        Self {
            llm,
            text_qa_template: text_qa_prompt(),
            prompt_helper,
            use_async: false,
            output_cls: None,
            separator: DEFAULT_ACCUMULATE_SEPARATOR.to_string(),
        }
    }

    setters!(
        /// Uses `helper` to fit chunks to the window.
        with_prompt_helper => prompt_helper: PromptHelper,
        /// Replaces the text-QA prompt (needs `{context_str}` and `{query_str}`).
        with_text_qa_template => text_qa_template: impl Into<BasePromptTemplate>,
        /// Answers the chunks concurrently.
        with_use_async => use_async: bool,
        /// Asks every call for JSON of `output_cls`; each numbered answer is that JSON.
        with_output_cls => output_cls: Option<OutputCls>,
        /// Replaces the separator between answers.
        with_separator => separator: impl Into<String>,
    );

    fn is_chat(&self) -> bool {
        self.llm.metadata().is_chat_model
    }

    async fn accumulate(&self, query_str: &str, chunks: &[String]) -> Result<String> {
        let template = self
            .text_qa_template
            .partial_format(&[("query_str", query_str)]);
        let is_chat = self.is_chat();
        let mut pieces = Vec::new();
        for chunk in chunks {
            pieces.extend(self.prompt_helper.repack(
                &template,
                std::slice::from_ref(chunk),
                is_chat,
            )?);
        }
        let (llm, cls, template) = (self.llm.as_ref(), self.output_cls.as_ref(), &template);
        let calls = pieces.iter().map(|piece| async move {
            predict_answer(llm, cls, template, &[("context_str", piece.as_str())]).await
        });
        let outputs = run_calls(calls.collect(), self.use_async).await?;
        Ok(format_responses(&outputs, &self.separator))
    }
}

/// `Response 1: a<separator>Response 2: b`, an empty answer shown as `Empty Response`.
fn format_responses(outputs: &[String], separator: &str) -> String {
    outputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let text = if text.is_empty() {
                EMPTY_RESPONSE
            } else {
                text
            };
            format!("Response {}: {text}", i + 1)
        })
        .collect::<Vec<_>>()
        .join(separator)
}

/// LlamaIndex raises `ValueError("Unable to stream in Accumulate response mode")`.
fn cannot_stream() -> Error {
    Error::Unsupported("Unable to stream in Accumulate response mode".to_string())
}

#[async_trait]
impl Synthesizer for Accumulate {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        self.accumulate(query_str, text_chunks).await
    }

    async fn stream_response(
        &self,
        _query_str: &str,
        _text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        Err(cannot_stream())
    }
}

own_prompts!(Accumulate {
    "text_qa_template" => text_qa_template ["context_str", "query_str"],
});

/// Packs the chunks to fill the window beside the text-QA prompt, then
/// answers each pack as [`Accumulate`] does (LlamaIndex `CompactAndAccumulate`).
#[derive(Clone, Debug)]
pub struct CompactAndAccumulate {
    accumulate: Accumulate,
}

impl CompactAndAccumulate {
    /// A compact-accumulate synthesizer with LlamaIndex's default text-QA prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            accumulate: Accumulate::new(llm),
        }
    }

    /// Packs, then answers with `accumulate` (its prompt, helper and options).
    pub fn from_accumulate(accumulate: Accumulate) -> Self {
        Self { accumulate }
    }

    wrapped_setters!(accumulate:
        /// Uses `helper` to pack chunks.
        with_prompt_helper(PromptHelper),
        /// Replaces the text-QA prompt.
        with_text_qa_template(impl Into<BasePromptTemplate>),
        /// Answers the packs concurrently.
        with_use_async(bool),
        /// See [`Accumulate::with_output_cls`].
        with_output_cls(Option<OutputCls>),
        /// Replaces the separator between answers.
        with_separator(impl Into<String>),
    );
}

#[async_trait]
impl Synthesizer for CompactAndAccumulate {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        let a = &self.accumulate;
        let template = a
            .text_qa_template
            .partial_format(&[("query_str", query_str)]);
        let packed = a
            .prompt_helper
            .repack(&template, text_chunks, a.is_chat())?;
        a.accumulate(query_str, &packed).await
    }

    /// Refused, as the accumulation it packs for refuses it.
    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        self.accumulate
            .stream_response(query_str, text_chunks)
            .await
    }
}

impl PromptMixin for CompactAndAccumulate {
    fn own_prompts(&self) -> PromptDictType {
        self.accumulate.own_prompts()
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        self.accumulate.update_own_prompts(prompts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_numbered_and_empty_ones_named() {
        let out = format_responses(&["a".into(), String::new()], DEFAULT_ACCUMULATE_SEPARATOR);
        assert_eq!(
            out,
            "Response 1: a\n---------------------\nResponse 2: Empty Response"
        );
    }
}
