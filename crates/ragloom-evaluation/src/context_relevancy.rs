//! `ContextRelevancyEvaluator`: could the retrieved contexts answer the
//! query? Two questions worth 2 points each; the score is the points over 4.

use super::answer_relevancy::{parse_result_line, scored_result};
use super::base::{
    EvaluationInput, EvaluationResult, Evaluator, evaluator_settings, query_over_contexts,
};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::Llm;
use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};
use regex::Regex;
use std::sync::{Arc, LazyLock};

/// LlamaIndex's context relevancy prompt (`{query_str}`, `{context_str}`).
pub const CONTEXT_RELEVANCY_EVAL_TMPL: &str = "Your task is to evaluate if the retrieved context from the document sources are relevant to the query.\nThe evaluation should be performed in a step-by-step manner by answering the following questions:\n1. Does the retrieved context match the subject matter of the user's query?\n2. Can the retrieved context be used exclusively to provide a full answer to the user's query?\nEach question above is worth 2 points, where partial marks are allowed and encouraged. Provide detailed feedback on the response according to the criteria questions previously mentioned. After your feedback provide a final result by strictly following this format: '[RESULT] followed by the float number representing the total score assigned to the response'\n\nQuery: \n {query_str}\nContext: \n {context_str}\nFeedback:";

/// Its refine prompt (the threshold, 4.0, is written into it).
pub const CONTEXT_RELEVANCY_REFINE_TMPL: &str = "We want to understand if the following query and response isin line with the context information: \n {query_str}\nWe have provided an existing evaluation score: \n {existing_answer}\nWe have the opportunity to refine the existing evaluation (only if needed) with some more context below.\n------------\n{context_msg}\n------------\nIf the existing evaluation was already 4.0, still answer 4.0. If the information is present in the new context, answer 4.0. Otherwise answer {existing_answer}.\n";

/// Some text, then the last `[RESULT]` followed by digits and dots. A reply
/// that is only the result line does not match, as in LlamaIndex.
static RESULT_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([\s\S]+)\[RESULT\]\s*([0-9.]+)").expect("valid regex"));

/// Unscored (`invalid_result`) when the reply has no `[RESULT] x` line.
#[derive(Debug, Clone)]
pub struct ContextRelevancyEvaluator {
    llm: Arc<dyn Llm>,
    raise_error: bool,
    eval_template: BasePromptTemplate,
    refine_template: BasePromptTemplate,
    score_threshold: f64,
}

impl ContextRelevancyEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            raise_error: false,
            eval_template: PromptTemplate::new(CONTEXT_RELEVANCY_EVAL_TMPL).into(),
            refine_template: PromptTemplate::new(CONTEXT_RELEVANCY_REFINE_TMPL).into(),
            score_threshold: 4.0,
        }
    }

    /// The points the score is divided by (default 4).
    pub fn score_threshold(mut self, threshold: f64) -> Self {
        self.score_threshold = threshold;
        self
    }
}

#[async_trait]
impl Evaluator for ContextRelevancyEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(contexts)) = (&input.query, &input.contexts) else {
            return Err(Error::InvalidInput(
                "Both query and contexts must be provided".into(),
            ));
        };
        let reply = query_over_contexts(
            &self.llm,
            contexts,
            &self.eval_template,
            &self.refine_template,
            query,
        )
        .await?;
        let parsed = parse_result_line(&RESULT_NUMBER, &reply)?;
        Ok(EvaluationResult {
            query: Some(query.clone()),
            contexts: Some(contexts.clone()),
            ..scored_result(parsed, reply, self.score_threshold, self.raise_error)?
        })
    }
}

evaluator_settings!(ContextRelevancyEvaluator, raise_error, refine_template);
