//! `FaithfulnessEvaluator`: does the context support the response, or did
//! the model make it up? A YES/NO judgement over the contexts.

use super::base::{
    EvaluationInput, EvaluationResult, Evaluator, evaluator_settings, query_over_contexts,
};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::Llm;
use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};
use std::sync::Arc;

/// LlamaIndex's faithfulness prompt (`{query_str}` is the response judged).
pub const FAITHFULNESS_EVAL_TMPL: &str = "Please tell if a given piece of information is supported by the context.\nYou need to answer with either YES or NO.\nAnswer YES if any of the context supports the information, even if most of the context is unrelated. Some examples are provided below. \n\nInformation: Apple pie is generally double-crusted.\nContext: An apple pie is a fruit pie in which the principal filling ingredient is apples. \nApple pie is often served with whipped cream, ice cream ('apple pie à la mode'), custard or cheddar cheese.\nIt is generally double-crusted, with pastry both above and below the filling; the upper crust may be solid or latticed (woven of crosswise strips).\nAnswer: YES\nInformation: Apple pies tastes bad.\nContext: An apple pie is a fruit pie in which the principal filling ingredient is apples. \nApple pie is often served with whipped cream, ice cream ('apple pie à la mode'), custard or cheddar cheese.\nIt is generally double-crusted, with pastry both above and below the filling; the upper crust may be solid or latticed (woven of crosswise strips).\nAnswer: NO\nInformation: {query_str}\nContext: {context_str}\nAnswer: ";

/// Its refine prompt, used when the contexts do not fit one call.
pub const FAITHFULNESS_REFINE_TMPL: &str = "We want to understand if the following information is present in the context information: {query_str}\nWe have provided an existing YES/NO answer: {existing_answer}\nWe have the opportunity to refine the existing answer (only if needed) with some more context below.\n------------\n{context_msg}\n------------\nIf the existing answer was already YES, still answer YES. If the information is present in the new context, answer YES. Otherwise answer NO.\n";

/// Passing when the judge's reply contains "yes" (any case); score 1 or 0.
#[derive(Debug, Clone)]
pub struct FaithfulnessEvaluator {
    llm: Arc<dyn Llm>,
    raise_error: bool,
    eval_template: BasePromptTemplate,
    refine_template: BasePromptTemplate,
}

impl FaithfulnessEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            raise_error: false,
            eval_template: PromptTemplate::new(FAITHFULNESS_EVAL_TMPL).into(),
            refine_template: PromptTemplate::new(FAITHFULNESS_REFINE_TMPL).into(),
        }
    }
}

/// The result of a YES/NO `reply`, read as LlamaIndex's faithfulness and
/// relevancy read it: passing (score 1) when it contains "yes" in any case.
pub(crate) fn yes_no_result(
    input: &EvaluationInput,
    reply: String,
    raise_error: bool,
) -> Result<EvaluationResult> {
    let passing = reply.to_lowercase().contains("yes");
    if !passing && raise_error {
        return Err(Error::Evaluation("The response is invalid".into()));
    }
    Ok(EvaluationResult {
        query: input.query.clone(),
        contexts: input.contexts.clone(),
        response: input.response.clone(),
        passing: Some(passing),
        score: Some(if passing { 1.0 } else { 0.0 }),
        feedback: Some(reply),
        ..EvaluationResult::default()
    })
}

#[async_trait]
impl Evaluator for FaithfulnessEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(contexts), Some(response)) = (&input.contexts, &input.response) else {
            return Err(Error::InvalidInput(
                "contexts and response must be provided".into(),
            ));
        };
        let reply = query_over_contexts(
            &self.llm,
            contexts,
            &self.eval_template,
            &self.refine_template,
            response,
        )
        .await?;
        yes_no_result(input, reply, self.raise_error)
    }
}

evaluator_settings!(FaithfulnessEvaluator, raise_error, refine_template);
