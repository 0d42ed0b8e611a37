//! `RelevancyEvaluator`: are the response and its contexts in line with the
//! query? A YES/NO judgement over the contexts.

use super::base::{
    EvaluationInput, EvaluationResult, Evaluator, evaluator_settings, query_over_contexts,
};
use super::faithfulness::yes_no_result;
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::Llm;
use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};
use std::sync::Arc;

/// LlamaIndex's relevancy prompt (its odd spacing included: the model sees it).
pub const RELEVANCY_EVAL_TMPL: &str = "Your task is to evaluate if the response for the query     is in line with the context information provided.\nYou have two options to answer. Either YES/ NO.\nAnswer - YES, if the response for the query     is in line with context information otherwise NO.\nQuery and Response: \n {query_str}\nContext: \n {context_str}\nAnswer: ";

/// Its refine prompt.
pub const RELEVANCY_REFINE_TMPL: &str = "We want to understand if the following query and response isin line with the context information: \n {query_str}\nWe have provided an existing YES/NO answer: \n {existing_answer}\nWe have the opportunity to refine the existing answer (only if needed) with some more context below.\n------------\n{context_msg}\n------------\nIf the existing answer was already YES, still answer YES. If the information is present in the new context, answer YES. Otherwise answer NO.\n";

/// Passing when the judge's reply contains "yes" (any case); score 1 or 0.
#[derive(Debug, Clone)]
pub struct RelevancyEvaluator {
    llm: Arc<dyn Llm>,
    raise_error: bool,
    eval_template: BasePromptTemplate,
    refine_template: BasePromptTemplate,
}

impl RelevancyEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            raise_error: false,
            eval_template: PromptTemplate::new(RELEVANCY_EVAL_TMPL).into(),
            refine_template: PromptTemplate::new(RELEVANCY_REFINE_TMPL).into(),
        }
    }
}

#[async_trait]
impl Evaluator for RelevancyEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(contexts), Some(response)) =
            (&input.query, &input.contexts, &input.response)
        else {
            return Err(Error::InvalidInput(
                "query, contexts, and response must be provided".into(),
            ));
        };
        let query_response = format!("Question: {query}\nResponse: {response}");
        let reply = query_over_contexts(
            &self.llm,
            contexts,
            &self.eval_template,
            &self.refine_template,
            &query_response,
        )
        .await?;
        yes_no_result(input, reply, self.raise_error)
    }
}

evaluator_settings!(RelevancyEvaluator, raise_error, refine_template);
