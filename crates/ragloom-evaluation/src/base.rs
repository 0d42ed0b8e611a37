//! What every response evaluator shares (LlamaIndex `evaluation.base`): the
//! inputs, the `EvaluationResult`, the `Evaluator` trait and the model calls.

use async_trait::async_trait;
use ragloom_core::error::Result;
use ragloom_core::indices::SummaryIndex;
use ragloom_core::llms::{Llm, prompt_to_messages};
use ragloom_core::prompts::{BasePromptTemplate, PromptDictType};
use ragloom_core::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom_core::response_synthesizers::ResponseSynthesizerBuilder;
use ragloom_core::schema::{MetadataMode, Node, QueryBundle, Response};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What an evaluator judges. Each evaluator reads the fields it needs and
/// names the missing ones in its error (LlamaIndex passes these as keyword arguments).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvaluationInput {
    /// The question asked.
    pub query: Option<String>,
    /// The answer to judge.
    pub response: Option<String>,
    /// The retrieved texts the answer drew on.
    pub contexts: Option<Vec<String>>,
    /// A reference answer (correctness, semantic similarity, pairwise).
    pub reference: Option<String>,
    /// The answer compared with `response` (pairwise).
    pub second_response: Option<String>,
}

impl EvaluationInput {
    /// An input with `query` set.
    pub fn query(query: impl Into<String>) -> Self {
        Self {
            query: Some(query.into()),
            ..Self::default()
        }
    }

    /// The query, a response's text and its source nodes' contents as contexts
    /// (LlamaIndex `evaluate_response`).
    pub fn from_response(query: Option<&str>, response: &Response) -> Self {
        Self {
            query: query.map(str::to_owned),
            response: response.response.clone(),
            contexts: Some(
                response
                    .source_nodes
                    .iter()
                    .map(|n| n.node.get_content(MetadataMode::None))
                    .collect(),
            ),
            ..Self::default()
        }
    }

    /// Sets the answer to judge.
    pub fn with_response(mut self, response: impl Into<String>) -> Self {
        self.response = Some(response.into());
        self
    }

    /// Sets the retrieved texts.
    pub fn with_contexts<I, S>(mut self, contexts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.contexts = Some(contexts.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the reference answer (correctness).
    pub fn with_reference(mut self, reference: impl Into<String>) -> Self {
        self.reference = Some(reference.into());
        self
    }

    /// Sets the second answer (pairwise comparison).
    pub fn with_second_response(mut self, second: impl Into<String>) -> Self {
        self.second_response = Some(second.into());
        self
    }
}

/// Which order of the two answers a pairwise verdict came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvaluationSource {
    /// The answers in the order given.
    Original,
    /// The answers swapped, to cancel the judge's order bias.
    Flipped,
    /// The two orders disagreed: no verdict.
    Neither,
}

/// One evaluation (LlamaIndex `EvaluationResult`, the same fields and JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvaluationResult {
    /// The question asked.
    pub query: Option<String>,
    /// The retrieved texts the answer drew on.
    pub contexts: Option<Vec<String>>,
    /// The answer judged.
    pub response: Option<String>,
    /// Pass or fail, for evaluators that decide one.
    pub passing: Option<bool>,
    /// The judge's reasoning or raw reply.
    pub feedback: Option<String>,
    /// The judge's score, where it gives one.
    pub score: Option<f64>,
    /// Which order a pairwise verdict came from.
    pub pairwise_source: Option<EvaluationSource>,
    /// The judge's reply could not be read.
    #[serde(default)]
    pub invalid_result: bool,
    /// Why the result is invalid, when it is.
    pub invalid_reason: Option<String>,
}

/// A response evaluator (LlamaIndex `BaseEvaluator`).
#[async_trait]
pub trait Evaluator: Send + Sync + std::fmt::Debug {
    /// Judges `input` (LlamaIndex `aevaluate`).
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult>;

    /// Judges a query engine's response with its sources as contexts
    /// (LlamaIndex `aevaluate_response`).
    async fn evaluate_response(
        &self,
        query: Option<&str>,
        response: &Response,
    ) -> Result<EvaluationResult> {
        self.evaluate(&EvaluationInput::from_response(query, response))
            .await
    }
}

/// Asks `llm` about `query` over `contexts` as LlamaIndex's evaluators do: a
/// summary index of one document per context, answered in compact mode with
/// the evaluator's templates. Returns the answer as Python's `str(response)`.
pub(crate) async fn query_over_contexts(
    llm: &Arc<dyn Llm>,
    contexts: &[String],
    text_qa_template: &BasePromptTemplate,
    refine_template: &BasePromptTemplate,
    query: &str,
) -> Result<String> {
    let docs: Vec<Node> = contexts
        .iter()
        .map(|c| Node::document(c.as_str()))
        .collect();
    let index = SummaryIndex::from_documents(&docs).await?;
    let synthesizer = ResponseSynthesizerBuilder::new(llm.clone())
        .text_qa_template(text_qa_template.clone())
        .refine_template(refine_template.clone())
        .build()?;
    let engine = RetrieverQueryEngine::new(Arc::new(index.as_retriever()), synthesizer);
    let response = engine.query(&QueryBundle::new(query)).await?;
    Ok(response_str(&response))
}

/// Python's `str(response)`: the text, or `"None"` when there is none or it is empty.
pub(crate) fn response_str(response: &Response) -> String {
    match response.response.as_deref() {
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => "None".to_owned(),
    }
}

/// Sends an already formatted prompt as `LLM.predict` would: as one user
/// message to a chat model, as a completion otherwise.
pub(crate) async fn predict_text(llm: &dyn Llm, prompt: &str) -> Result<String> {
    if llm.metadata().is_chat_model {
        Ok(llm.chat(&prompt_to_messages(prompt)).await?.message.content)
    } else {
        Ok(llm.complete(prompt, true).await?.text)
    }
}

/// Replaces `slot` with `prompts[key]` when given.
pub(crate) fn update_prompt(prompts: &PromptDictType, key: &str, slot: &mut BasePromptTemplate) {
    if let Some(p) = prompts.get(key) {
        *slot = p.clone();
    }
}

/// `workers` (at least 1; the doc given) and `show_progress` for a builder
/// with those fields: the evaluators' batch runner and the dataset generator.
macro_rules! concurrency_setters {
    ($workers_doc:literal) => {
        #[doc = $workers_doc]
        pub fn workers(mut self, workers: usize) -> Self {
            self.workers = workers.max(1);
            self
        }

        /// Shows a progress bar while it runs (default off).
        pub fn show_progress(mut self, show: bool) -> Self {
            self.show_progress = show;
            self
        }
    };
}
pub(crate) use concurrency_setters;

/// The builder methods and [`PromptMixin`](ragloom_core::prompts::PromptMixin) of an
/// evaluator struct with an `eval_template` field, and as listed a
/// `raise_error` and a `refine_template` field.
macro_rules! evaluator_settings {
    (@eval $ty:ty) => {
        impl $ty {
            /// Replaces the evaluation prompt.
            pub fn eval_template(mut self, t: impl Into<::ragloom_core::prompts::BasePromptTemplate>) -> Self {
                self.eval_template = t.into();
                self
            }
        }
    };
    (@raise $ty:ty) => {
        impl $ty {
            /// A failing or unreadable judgement is `Error::Evaluation`
            /// instead of a result.
            pub fn raise_error(mut self, raise_error: bool) -> Self {
                self.raise_error = raise_error;
                self
            }
        }
    };
    (@mixin $ty:ty; $($key:literal => $field:ident),+) => {
        impl ::ragloom_core::prompts::PromptMixin for $ty {
            fn own_prompts(&self) -> ::ragloom_core::prompts::PromptDictType {
                ::ragloom_core::prompts::PromptDictType::from([$(($key.into(), self.$field.clone())),+])
            }

            fn update_own_prompts(
                &mut self,
                prompts: &::ragloom_core::prompts::PromptDictType,
            ) -> ::ragloom_core::error::Result<()> {
                $($crate::base::update_prompt(prompts, $key, &mut self.$field);)+
                Ok(())
            }
        }
    };
    ($ty:ty) => {
        evaluator_settings!(@eval $ty);
        evaluator_settings!(@mixin $ty; "eval_template" => eval_template);
    };
    ($ty:ty, raise_error) => {
        evaluator_settings!(@eval $ty);
        evaluator_settings!(@raise $ty);
        evaluator_settings!(@mixin $ty; "eval_template" => eval_template);
    };
    ($ty:ty, raise_error, refine_template) => {
        evaluator_settings!(@eval $ty);
        evaluator_settings!(@raise $ty);
        impl $ty {
            /// Replaces the refine prompt, used when the contexts take several calls.
            pub fn refine_template(mut self, t: impl Into<::ragloom_core::prompts::BasePromptTemplate>) -> Self {
                self.refine_template = t.into();
                self
            }
        }
        evaluator_settings!(
            @mixin $ty; "eval_template" => eval_template, "refine_template" => refine_template
        );
    };
}
pub(crate) use evaluator_settings;
