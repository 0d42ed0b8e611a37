//! `CorrectnessEvaluator`: a 1–5 score of an answer against the query and a
//! reference answer, with the judge's reasoning; passing at 4 by default.

use super::base::{EvaluationInput, EvaluationResult, Evaluator, evaluator_settings};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{Llm, MessageRole, predict};
use ragloom_core::prompts::{BasePromptTemplate, ChatPromptTemplate, PromptType};
use std::sync::Arc;

/// LlamaIndex's correctness system prompt.
pub const CORRECTNESS_SYSTEM_TMPL: &str = "\nYou are an expert evaluation system for a question answering chatbot.\n\nYou are given the following information:\n- a user query, and\n- a generated answer\n\nYou may also be given a reference answer to use for reference in your evaluation.\n\nYour job is to judge the relevance and correctness of the generated answer.\nOutput a single score that represents a holistic evaluation.\nYou must return your response in a line with only the score.\nDo not return answers in any other format.\nOn a separate line provide your reasoning for the score as well.\n\nFollow these guidelines for scoring:\n- Your score has to be between 1 and 5, where 1 is the worst and 5 is the best.\n- If the generated answer is not relevant to the user query, you should give a score of 1.\n- If the generated answer is relevant but contains mistakes, you should give a score between 2 and 3.\n- If the generated answer is relevant and fully correct, you should give a score between 4 and 5.\n\nExample Response:\n4.0\nThe generated answer has the exact same metrics as the reference answer,     but it is not as concise.\n\n";

/// Its user prompt (`{query}`, `{reference_answer}`, `{generated_answer}`).
pub const CORRECTNESS_USER_TMPL: &str = "\n## User Query\n{query}\n\n## Reference Answer\n{reference_answer}\n\n## Generated Answer\n{generated_answer}\n";

/// What the reference is when none is given.
pub const NO_REFERENCE: &str = "(NO REFERENCE ANSWER SUPPLIED)";

/// The reply's first line is the score, the rest the reasoning.
#[derive(Debug, Clone)]
pub struct CorrectnessEvaluator {
    llm: Arc<dyn Llm>,
    eval_template: BasePromptTemplate,
    score_threshold: f64,
}

impl CorrectnessEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompts.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            eval_template: ChatPromptTemplate::from_messages(
                vec![
                    (MessageRole::System, CORRECTNESS_SYSTEM_TMPL.into()),
                    (MessageRole::User, CORRECTNESS_USER_TMPL.into()),
                ],
                PromptType::Custom,
            )
            .into(),
            score_threshold: 4.0,
        }
    }

    /// Passing is a score at or above this (default 4).
    pub fn score_threshold(mut self, threshold: f64) -> Self {
        self.score_threshold = threshold;
        self
    }
}

/// LlamaIndex's `default_parser`: the first line as a float (`None` if it is
/// not one) and the rest, leading newlines dropped. An empty reply is
/// `(None, "No response")`; a reply of one line is an error, as in Python.
pub fn parse_score_and_reasoning(reply: &str) -> Result<(Option<f64>, String)> {
    if ragloom_core::schema::py_strip(reply).is_empty() {
        return Ok((None, "No response".into()));
    }
    let Some((score, reasoning)) = reply.split_once('\n') else {
        return Err(Error::OutputParse(format!(
            "expected a score line and a reasoning line, got {reply:?}"
        )));
    };
    let score = ragloom_core::schema::py_strip(score).parse::<f64>().ok();
    Ok((score, reasoning.trim_start_matches('\n').to_owned()))
}

#[async_trait]
impl Evaluator for CorrectnessEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(response)) = (&input.query, &input.response) else {
            return Err(Error::InvalidInput(
                "query, and response must be provided".into(),
            ));
        };
        // Python's `reference or ...`: an empty reference is none.
        let reference = input
            .reference
            .as_deref()
            .filter(|r| !r.is_empty())
            .unwrap_or(NO_REFERENCE);
        let reply = predict(
            self.llm.as_ref(),
            &self.eval_template,
            &[
                ("query", query),
                ("generated_answer", response),
                ("reference_answer", reference),
            ],
        )
        .await?;
        let (score, reasoning) = parse_score_and_reasoning(&reply)?;
        Ok(EvaluationResult {
            query: Some(query.clone()),
            response: Some(response.clone()),
            passing: score.map(|s| s >= self.score_threshold),
            score,
            feedback: Some(reasoning),
            ..EvaluationResult::default()
        })
    }
}

evaluator_settings!(CorrectnessEvaluator);
