//! `Refine` (one call per chunk, refining the answer) and `CompactAndRefine`
//! (pack chunks to fill the window first), with LlamaIndex 0.14.25's call pattern.

use super::structured::{OutputCls, predict_refine_response, predict_structured};
use super::{EMPTY_RESPONSE, Synthesizer, one_delta};
use crate::error::{Error, Result};
use crate::indices::PromptHelper;
use crate::llms::{Llm, predict, stream_predict};
use crate::prompts::default_prompts::{refine_prompt, text_qa_prompt};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin};
use crate::utils::{setters, wrapped_setters};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::collections::VecDeque;
use std::sync::Arc;

/// Tokens kept free beside each chunk when chunks are first packed for
/// refining, so the answer has room to grow (LlamaIndex `DEFAULT_RESPONSE_PADDING_SIZE`).
pub const DEFAULT_RESPONSE_PADDING_SIZE: usize = 500;

/// Answers with the first chunk, then refines the answer with each further
/// chunk, one LLM call per chunk (LlamaIndex `Refine`).
///
/// With `structured_answer_filtering` every call asks for a
/// [`StructuredRefineResponse`](super::StructuredRefineResponse) and answers
/// whose `query_satisfied` is false (or that do not parse) are dropped; with
/// an [`OutputCls`] every call asks for that type's JSON.
#[derive(Clone, Debug)]
pub struct Refine {
    llm: Arc<dyn Llm>,
    text_qa_template: BasePromptTemplate,
    refine_template: BasePromptTemplate,
    prompt_helper: PromptHelper,
    structured_answer_filtering: bool,
    output_cls: Option<OutputCls>,
    response_padding_size: usize,
}

impl Refine {
    /// A refine synthesizer with LlamaIndex's default prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        let prompt_helper = PromptHelper::from_llm_metadata(&llm.metadata());
        Self {
            llm,
            text_qa_template: text_qa_prompt(),
            refine_template: refine_prompt(),
            prompt_helper,
            structured_answer_filtering: false,
            output_cls: None,
            response_padding_size: DEFAULT_RESPONSE_PADDING_SIZE,
        }
    }

    setters!(
        /// Drops answers the model says do not satisfy the query (LlamaIndex
        /// `structured_answer_filtering`): by a tool call on function-calling
        /// models, by a JSON reply otherwise.
        with_structured_answer_filtering => structured_answer_filtering: bool,
        /// Asks every call for JSON of `output_cls` (LlamaIndex `output_cls`);
        /// the answer is that JSON. Ignored under structured answer filtering, as in LlamaIndex.
        with_output_cls => output_cls: Option<OutputCls>,
        /// Tokens kept free beside each chunk when chunks are first packed (default 500).
        with_response_padding_size => response_padding_size: usize,
        /// Uses `helper` to size chunks.
        with_prompt_helper => prompt_helper: PromptHelper,
        /// Replaces the text-QA prompt (needs `{context_str}` and `{query_str}`).
        with_text_qa_template => text_qa_template: impl Into<BasePromptTemplate>,
        /// Replaces the refine prompt (needs `{context_msg}`, `{query_str}`, `{existing_answer}`).
        with_refine_template => refine_template: impl Into<BasePromptTemplate>,
    );

    /// Whether the model streams its last answer token by token: not when
    /// the answer must first be parsed as JSON.
    fn streams_plain_text(&self) -> bool {
        !self.structured_answer_filtering && self.output_cls.is_none()
    }

    fn is_chat(&self) -> bool {
        self.llm.metadata().is_chat_model
    }

    /// The biggest of the two prompts by empty-prompt length, as LlamaIndex's
    /// `get_biggest_prompt` picks it (by characters, not tokens).
    fn biggest_prompt<'a>(
        a: &'a BasePromptTemplate,
        b: &'a BasePromptTemplate,
    ) -> &'a BasePromptTemplate {
        if b.empty_prompt_text().chars().count() > a.empty_prompt_text().chars().count() {
            b
        } else {
            a
        }
    }

    /// Plans the refine loop: which prompt and variables each LLM call gets.
    /// The last call is returned separately so it can be streamed.
    async fn run(
        &self,
        query_str: &str,
        chunks: &[String],
        prev: Option<String>,
    ) -> Result<RefineState> {
        let is_chat = self.is_chat();
        let max_prompt = Self::biggest_prompt(&self.text_qa_template, &self.refine_template);
        let mut queue: VecDeque<String> = VecDeque::new();
        for chunk in chunks {
            queue.extend(self.prompt_helper.repack_with_padding(
                max_prompt,
                std::slice::from_ref(chunk),
                self.response_padding_size,
                is_chat,
            )?);
        }
        let mut response = prev;
        let mut pending: Option<(BasePromptTemplate, Vec<(String, String)>)> = None;
        while let Some(chunk) = queue.pop_front() {
            if let Some((prompt, vars)) = pending.take() {
                // As LlamaIndex: an empty or dropped reply leaves the previous answer standing.
                if let Some(reply) = self.call(&prompt, &vars).await? {
                    response = Some(reply);
                }
            }
            match &response {
                None => {
                    let prompt = self
                        .text_qa_template
                        .partial_format(&[("query_str", query_str)]);
                    pending = Some((prompt, vec![("context_str".into(), chunk)]));
                }
                Some(existing) => {
                    let prompt = self
                        .refine_template
                        .partial_format(&[("query_str", query_str), ("existing_answer", existing)]);
                    let mut parts = self.prompt_helper.repack(
                        &prompt,
                        std::slice::from_ref(&chunk),
                        is_chat,
                    )?;
                    if parts.len() > 1 {
                        // The chunk does not fit beside this answer: queue its parts
                        // first. LlamaIndex 0.14.25 does so with `deque.extendleft`,
                        // which reverses them (last part first); ragloom keeps that
                        // order, because the answer grows with each call and so which
                        // part comes first decides how later chunks are packed, how
                        // many calls are made and whether the window overflows.
                        for part in parts.drain(..) {
                            queue.push_front(part);
                        }
                        continue;
                    }
                    let part = parts.pop().unwrap_or_default();
                    pending = Some((prompt, vec![("context_msg".into(), part)]));
                }
            }
        }
        Ok(RefineState {
            response,
            last_call: pending,
        })
    }

    /// One call of the loop (LlamaIndex's refine "program"): the new answer,
    /// or `None` when it is empty, judged unsatisfying, or unparseable
    /// (logged, as LlamaIndex logs it). Provider errors are returned.
    async fn call(
        &self,
        prompt: &BasePromptTemplate,
        vars: &[(String, String)],
    ) -> Result<Option<String>> {
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let llm = self.llm.as_ref();
        let answer = if self.structured_answer_filtering {
            predict_refine_response(llm, prompt, &vars)
                .await
                .map(|r| r.query_satisfied.then_some(r.answer))
        } else if let Some(cls) = &self.output_cls {
            predict_structured(llm, cls, prompt, &vars).await.map(Some)
        } else {
            predict(llm, prompt, &vars).await.map(Some)
        };
        match answer {
            Ok(answer) => Ok(answer.filter(|a| !a.is_empty())),
            Err(Error::OutputParse(why)) => {
                tracing::warn!(error = %why, "structured response error; answer dropped");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    async fn respond(&self, query_str: &str, chunks: &[String]) -> Result<String> {
        let state = self.run(query_str, chunks, None).await?;
        let mut response = state.response;
        if let Some((prompt, vars)) = state.last_call {
            if let Some(reply) = self.call(&prompt, &vars).await? {
                response = Some(reply);
            }
        }
        Ok(response
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| EMPTY_RESPONSE.to_string()))
    }

    async fn respond_stream(
        &self,
        query_str: &str,
        chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        let state = self.run(query_str, chunks, None).await?;
        let mut response = state.response;
        if let Some((prompt, vars)) = state.last_call {
            if self.streams_plain_text() {
                let vars: Vec<(&str, &str)> =
                    vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                return stream_predict(self.llm.clone(), &prompt, &vars).await;
            }
            // A structured answer is known only once its JSON is complete, so
            // it arrives as one piece (as LlamaIndex yields it).
            if let Some(reply) = self.call(&prompt, &vars).await? {
                response = Some(reply);
            }
        }
        let text = response
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| EMPTY_RESPONSE.into());
        Ok(one_delta(text))
    }
}

struct RefineState {
    response: Option<String>,
    last_call: Option<(BasePromptTemplate, Vec<(String, String)>)>,
}

#[async_trait]
impl Synthesizer for Refine {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        self.respond(query_str, text_chunks).await
    }

    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        self.respond_stream(query_str, text_chunks).await
    }
}

own_prompts!(Refine {
    "text_qa_template" => text_qa_template ["context_str", "query_str"],
    "refine_template" => refine_template ["context_msg", "query_str", "existing_answer"],
});

/// Packs the chunks to fill the context window beside the bigger of the QA and
/// refine prompts, then refines across the packs (LlamaIndex `CompactAndRefine`,
/// the default `ResponseMode::Compact`).
#[derive(Clone, Debug)]
pub struct CompactAndRefine {
    refine: Refine,
}

impl CompactAndRefine {
    /// A compact synthesizer with LlamaIndex's default prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            refine: Refine::new(llm),
        }
    }

    /// Compacts, then refines with `refine` (its prompts, helper and options).
    pub fn from_refine(refine: Refine) -> Self {
        Self { refine }
    }

    wrapped_setters!(refine:
        /// Uses `helper` to size chunks.
        with_prompt_helper(PromptHelper),
        /// Replaces the text-QA prompt.
        with_text_qa_template(impl Into<BasePromptTemplate>),
        /// Replaces the refine prompt.
        with_refine_template(impl Into<BasePromptTemplate>),
        /// See [`Refine::with_structured_answer_filtering`].
        with_structured_answer_filtering(bool),
        /// See [`Refine::with_output_cls`].
        with_output_cls(Option<OutputCls>),
        /// See [`Refine::with_response_padding_size`].
        with_response_padding_size(usize),
    );

    fn compact(&self, query_str: &str, chunks: &[String]) -> Result<Vec<String>> {
        let r = &self.refine;
        let qa = r
            .text_qa_template
            .partial_format(&[("query_str", query_str)]);
        let refine = r
            .refine_template
            .partial_format(&[("query_str", query_str)]);
        let max_prompt = Refine::biggest_prompt(&qa, &refine);
        r.prompt_helper.repack_with_padding(
            max_prompt,
            chunks,
            r.response_padding_size,
            r.is_chat(),
        )
    }
}

#[async_trait]
impl Synthesizer for CompactAndRefine {
    async fn get_response(&self, query_str: &str, text_chunks: &[String]) -> Result<String> {
        let packed = self.compact(query_str, text_chunks)?;
        self.refine.respond(query_str, &packed).await
    }

    async fn stream_response(
        &self,
        query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        let packed = self.compact(query_str, text_chunks)?;
        self.refine.respond_stream(query_str, &packed).await
    }
}

impl PromptMixin for CompactAndRefine {
    fn own_prompts(&self) -> PromptDictType {
        self.refine.own_prompts()
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        self.refine.update_own_prompts(prompts)
    }
}
