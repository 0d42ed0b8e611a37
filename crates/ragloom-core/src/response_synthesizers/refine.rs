//! `Refine` (one call per chunk, refining the answer) and `CompactAndRefine`
//! (pack chunks to fill the window first), with LlamaIndex 0.14.25's call pattern.

use super::{EMPTY_RESPONSE, Synthesizer};
use crate::error::Result;
use crate::llms::{Llm, predict, stream_predict};
use crate::prompts::default_prompts::{refine_prompt, text_qa_prompt};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptHelper, PromptMixin};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::collections::VecDeque;
use std::sync::Arc;

/// Answers with the first chunk, then refines the answer with each further
/// chunk, one LLM call per chunk (LlamaIndex `Refine`).
#[derive(Clone, Debug)]
pub struct Refine {
    llm: Arc<dyn Llm>,
    text_qa_template: BasePromptTemplate,
    refine_template: BasePromptTemplate,
    prompt_helper: PromptHelper,
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
        }
    }

    /// Uses `helper` to size chunks.
    pub fn with_prompt_helper(mut self, helper: PromptHelper) -> Self {
        self.prompt_helper = helper;
        self
    }

    /// Replaces the text-QA prompt (needs `{context_str}` and `{query_str}`).
    pub fn with_text_qa_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.text_qa_template = t.into();
        self
    }

    /// Replaces the refine prompt (needs `{context_msg}`, `{query_str}`, `{existing_answer}`).
    pub fn with_refine_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.refine_template = t.into();
        self
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
            queue.extend(self.prompt_helper.repack(
                max_prompt,
                std::slice::from_ref(chunk),
                is_chat,
            )?);
        }
        let mut response = prev;
        let mut pending: Option<(BasePromptTemplate, Vec<(String, String)>)> = None;
        while let Some(chunk) = queue.pop_front() {
            if let Some((prompt, vars)) = pending.take() {
                // As LlamaIndex: an empty reply leaves the previous answer standing.
                let reply = self.call(&prompt, &vars).await?;
                if !reply.is_empty() {
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
                        // The chunk does not fit beside this answer: refine with its parts in order.
                        // (LlamaIndex 0.14.25 queues them with `extendleft`, which reverses them.)
                        for part in parts.drain(..).rev() {
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

    async fn call(&self, prompt: &BasePromptTemplate, vars: &[(String, String)]) -> Result<String> {
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        predict(self.llm.as_ref(), prompt, &vars).await
    }

    async fn respond(&self, query_str: &str, chunks: &[String]) -> Result<String> {
        let state = self.run(query_str, chunks, None).await?;
        let text = match state.last_call {
            Some((prompt, vars)) => {
                Some(self.call(&prompt, &vars).await?).filter(|t| !t.is_empty())
            }
            None => None,
        };
        Ok(text
            .or(state.response)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| EMPTY_RESPONSE.to_string()))
    }

    async fn respond_stream(
        &self,
        query_str: &str,
        chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        let state = self.run(query_str, chunks, None).await?;
        match state.last_call {
            Some((prompt, vars)) => {
                let vars: Vec<(&str, &str)> =
                    vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                stream_predict(self.llm.clone(), &prompt, &vars).await
            }
            None => {
                let text = state
                    .response
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| EMPTY_RESPONSE.into());
                Ok(Box::pin(futures::stream::once(async move { Ok(text) })))
            }
        }
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

impl PromptMixin for Refine {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::from([
            (
                "text_qa_template".to_string(),
                self.text_qa_template.clone(),
            ),
            ("refine_template".to_string(), self.refine_template.clone()),
        ])
    }

    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        if let Some(p) = prompts.get("text_qa_template") {
            p.require_vars(&["context_str", "query_str"])?;
            self.text_qa_template = p.clone();
        }
        if let Some(p) = prompts.get("refine_template") {
            p.require_vars(&["context_msg", "query_str", "existing_answer"])?;
            self.refine_template = p.clone();
        }
        Ok(())
    }
}

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

    /// Uses `helper` to size chunks.
    pub fn with_prompt_helper(mut self, helper: PromptHelper) -> Self {
        self.refine = self.refine.with_prompt_helper(helper);
        self
    }

    /// Replaces the text-QA prompt.
    pub fn with_text_qa_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.refine = self.refine.with_text_qa_template(t);
        self
    }

    /// Replaces the refine prompt.
    pub fn with_refine_template(mut self, t: impl Into<BasePromptTemplate>) -> Self {
        self.refine = self.refine.with_refine_template(t);
        self
    }

    fn compact(&self, query_str: &str, chunks: &[String]) -> Result<Vec<String>> {
        let r = &self.refine;
        let qa = r
            .text_qa_template
            .partial_format(&[("query_str", query_str)]);
        let refine = r
            .refine_template
            .partial_format(&[("query_str", query_str)]);
        let max_prompt = Refine::biggest_prompt(&qa, &refine);
        r.prompt_helper.repack(max_prompt, chunks, r.is_chat())
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
