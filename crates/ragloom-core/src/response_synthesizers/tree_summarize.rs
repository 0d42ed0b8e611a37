//! `TreeSummarize`: pack the chunks beside the summary prompt, summarize each
//! pack, and summarize the summaries again until one pack remains (LlamaIndex 0.14.25).

use super::structured::OutputCls;
use super::{EMPTY_RESPONSE, Synthesizer, one_delta, predict_answer, run_calls};
use crate::error::{Error, Result};
use crate::indices::PromptHelper;
use crate::llms::{Llm, stream_predict};
use crate::prompts::BasePromptTemplate;
use crate::prompts::default_prompts::tree_summarize_prompt;
use crate::prompts::own_prompts;
use crate::utils::setters;
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;
use tracing::Instrument;

/// Summarizes bottom-up: each level repacks its texts to fill the window
/// beside `summary_template`, one call per pack; a level with one pack gives
/// the answer (LlamaIndex `TreeSummarize`). With `use_async` a level's packs
/// are summarized concurrently.
#[derive(Clone, Debug)]
pub struct TreeSummarize {
    llm: Arc<dyn Llm>,
    summary_template: BasePromptTemplate,
    prompt_helper: PromptHelper,
    use_async: bool,
    output_cls: Option<OutputCls>,
}

/// Where the recursion ended: the prompt and the last pack for the final call.
enum Root {
    Empty,
    Pack(BasePromptTemplate, String),
}

impl TreeSummarize {
    /// A tree summarizer with LlamaIndex's default summary prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        let prompt_helper = PromptHelper::from_llm_metadata(&llm.metadata());
        Self {
            llm,
            summary_template: tree_summarize_prompt(),
            prompt_helper,
            use_async: false,
            output_cls: None,
        }
    }

    setters!(
        /// Uses `helper` to pack chunks.
        with_prompt_helper => prompt_helper: PromptHelper,
        /// Replaces the summary prompt (needs `{context_str}` and `{query_str}`).
        with_summary_template => summary_template: impl Into<BasePromptTemplate>,
        /// Summarizes a level's packs concurrently.
        with_use_async => use_async: bool,
        /// Asks every call for JSON of `output_cls`; the summaries passed up the
        /// tree and the answer are that JSON.
        with_output_cls => output_cls: Option<OutputCls>,
    );

    /// Summarizes level by level until one pack remains; that pack's call is
    /// left to the caller so it can be streamed.
    async fn reduce(&self, query_str: &str, chunks: &[String]) -> Result<Root> {
        let is_chat = self.llm.metadata().is_chat_model;
        let template = self
            .summary_template
            .partial_format(&[("query_str", query_str)]);
        let mut texts = chunks.to_vec();
        let mut previous_packs: Option<usize> = None;
        let mut level = 0usize;
        loop {
            let packs = self.prompt_helper.repack(&template, &texts, is_chat)?;
            tracing::debug!(level, packs = packs.len(), "tree summarize level");
            match packs.len() {
                0 => return Ok(Root::Empty),
                1 => {
                    let pack = packs.into_iter().next().unwrap_or_default();
                    return Ok(Root::Pack(template, pack));
                }
                n => {
                    // LlamaIndex recurses without bound; summaries that do not
                    // shrink (a model echoing its prompt) would never end.
                    if previous_packs.is_some_and(|p| n >= p) {
                        return Err(Error::InvalidInput(format!(
                            "tree summarize is not converging: level {level} still has {n} packs \
                             (the level before had {}); the model's summaries are too long for \
                             the context window ({} tokens, {} reserved for output)",
                            previous_packs.unwrap_or(n),
                            self.prompt_helper.context_window,
                            self.prompt_helper.num_output
                        )));
                    }
                    previous_packs = Some(n);
                    let (llm, cls, template) =
                        (self.llm.as_ref(), self.output_cls.as_ref(), &template);
                    let calls = packs.iter().map(|pack| async move {
                        predict_answer(llm, cls, template, &[("context_str", pack.as_str())]).await
                    });
                    texts = run_calls(calls.collect(), self.use_async)
                        .instrument(tracing::info_span!(
                            "tree_summarize_level",
                            level,
                            packs = n
                        ))
                        .await?;
                }
            }
            level += 1;
        }
    }
}

#[async_trait]
impl Synthesizer for TreeSummarize {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        match self.reduce(query_str, text_chunks).await? {
            Root::Empty => Ok(EMPTY_RESPONSE.to_string()),
            Root::Pack(template, pack) => {
                predict_answer(
                    self.llm.as_ref(),
                    self.output_cls.as_ref(),
                    &template,
                    &[("context_str", pack.as_str())],
                )
                .await
            }
        }
    }

    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        match self.reduce(query_str, text_chunks).await? {
            Root::Empty => Ok(one_delta(EMPTY_RESPONSE.to_string())),
            Root::Pack(template, pack) => {
                let vars = [("context_str", pack.as_str())];
                match &self.output_cls {
                    None => stream_predict(self.llm.clone(), &template, &vars).await,
                    // JSON is only an answer once complete: one piece.
                    Some(cls) => Ok(one_delta(
                        predict_answer(self.llm.as_ref(), Some(cls), &template, &vars).await?,
                    )),
                }
            }
        }
    }
}

own_prompts!(TreeSummarize {
    "summary_template" => summary_template ["context_str", "query_str"],
});
