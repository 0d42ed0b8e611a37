//! `PairwiseComparisonEvaluator`: which of two answers is better? The judge
//! sees both orders; a verdict that flips with the order is no verdict.

use super::base::{
    EvaluationInput, EvaluationResult, EvaluationSource, Evaluator, evaluator_settings,
};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{Llm, MessageRole, predict};
use ragloom_core::prompts::{BasePromptTemplate, ChatPromptTemplate, PromptType};
use std::sync::Arc;

/// LlamaIndex's pairwise system prompt.
pub const PAIRWISE_SYSTEM_TMPL: &str = "Please act as an impartial judge and evaluate the quality of the responses provided by two AI question-answering assistants to the user question perhaps with added reference which are displayed below. You should choose the assistant that follows the user’s instructions and answers the user’s question better using the provided context. Your evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their responses. Begin your evaluation by comparing the two responses and provide a short explanation. Avoid any position biases and ensure that the order in which the responses were presented does not influence your decision. Do not allow the length of the responses to influence your evaluation. Do not favor certain names of the assistants. Be as objective as possible. After providing your explanation, output your final verdict by strictly following this format: '[[A]]' if assistant A is better, '[[B]]' if assistant B is better, and '[[C]]' for a tie.\n";

/// Its user prompt (`{query}`, `{reference}`, `{answer_1}`, `{answer_2}`).
pub const PAIRWISE_USER_TMPL: &str = "[User Question]\n{query}\n\n[The Start of Reference]\n{reference}\n[The End of Reference]\n\n[The Start of Assistant A’s Answer]\n{answer_1}\n[The End of Assistant A’s Answer]\n\n[The Start of Assistant B’s Answer]\n{answer_2}\n[The End of Assistant B’s Answer]";

/// Scores `response` (answer A) against `second_response`: 1 when A wins,
/// 0 when B wins, 0.5 for a tie or an order-dependent verdict.
#[derive(Debug, Clone)]
pub struct PairwiseComparisonEvaluator {
    llm: Arc<dyn Llm>,
    eval_template: BasePromptTemplate,
    enforce_consensus: bool,
}

impl PairwiseComparisonEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            eval_template: ChatPromptTemplate::from_messages(
                vec![
                    (MessageRole::System, PAIRWISE_SYSTEM_TMPL.into()),
                    (MessageRole::User, PAIRWISE_USER_TMPL.into()),
                ],
                PromptType::Custom,
            )
            .into(),
            enforce_consensus: true,
        }
    }

    /// Also asks with the answers swapped (default); off, one call decides.
    pub fn enforce_consensus(mut self, on: bool) -> Self {
        self.enforce_consensus = on;
        self
    }

    async fn judge(
        &self,
        query: &str,
        first: &str,
        second: &str,
        reference: &str,
    ) -> Result<EvaluationResult> {
        let reply = predict(
            self.llm.as_ref(),
            &self.eval_template,
            &[
                ("query", query),
                ("answer_1", first),
                ("answer_2", second),
                ("reference", reference),
            ],
        )
        .await?;
        let verdict = if reply.contains("[[A]]") {
            Some((Some(true), 1.0))
        } else if reply.contains("[[B]]") {
            Some((Some(false), 0.0))
        } else if reply.contains("[[C]]") {
            Some((None, 0.5))
        } else {
            None
        };
        Ok(match verdict {
            None => EvaluationResult {
                query: Some(query.into()),
                invalid_result: true,
                invalid_reason: Some("Output cannot be parsed".into()),
                feedback: Some(reply),
                ..EvaluationResult::default()
            },
            Some((passing, score)) => EvaluationResult {
                query: Some(query.into()),
                response: Some(reply.clone()),
                passing,
                score: Some(score),
                feedback: Some(reply),
                pairwise_source: Some(EvaluationSource::Original),
                ..EvaluationResult::default()
            },
        })
    }
}

/// LlamaIndex's `_resolve_results`: votes for each answer over both orders.
/// As there, a winning flipped verdict is returned as the flipped judge gave
/// it (its score is from the swapped order).
fn resolve(original: EvaluationResult, mut flipped: EvaluationResult) -> EvaluationResult {
    flipped.pairwise_source = Some(EvaluationSource::Flipped);
    let (a, b) = (
        original.score.unwrap_or_default(),
        flipped.score.unwrap_or_default(),
    );
    let votes_1 = a + (1.0 - b);
    let votes_2 = (1.0 - a) + b;
    if votes_1 > votes_2 {
        if a == 1.0 { original } else { flipped }
    } else if votes_2 > votes_1 {
        if a == 0.0 { original } else { flipped }
    } else if a == 0.5 {
        original
    } else {
        EvaluationResult {
            query: original.query,
            response: Some(String::new()),
            passing: None,
            score: Some(0.5),
            feedback: Some(String::new()),
            pairwise_source: Some(EvaluationSource::Neither),
            ..EvaluationResult::default()
        }
    }
}

#[async_trait]
impl Evaluator for PairwiseComparisonEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(response), Some(second)) =
            (&input.query, &input.response, &input.second_response)
        else {
            return Err(Error::InvalidInput(
                "query, response, second_response, and reference must be provided".into(),
            ));
        };
        let reference = input.reference.as_deref().unwrap_or("");
        let original = self.judge(query, response, second, reference).await?;
        if !self.enforce_consensus || original.invalid_result {
            return Ok(original);
        }
        let flipped = self.judge(query, second, response, reference).await?;
        if flipped.invalid_result {
            return Ok(EvaluationResult {
                query: original.query,
                response: original.response,
                feedback: flipped.response,
                invalid_result: true,
                invalid_reason: Some("Output cannot be parsed.".into()),
                ..EvaluationResult::default()
            });
        }
        Ok(resolve(original, flipped))
    }
}

evaluator_settings!(PairwiseComparisonEvaluator);
