//! `AnswerRelevancyEvaluator`: does the answer address the query? Two
//! questions worth a point each; the score is the points over 2.

use super::base::{EvaluationInput, EvaluationResult, Evaluator, evaluator_settings};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{Llm, predict};
use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};
use regex::Regex;
use std::sync::{Arc, LazyLock};

/// LlamaIndex's answer relevancy prompt (`{query}`, `{response}`).
pub const ANSWER_RELEVANCY_EVAL_TMPL: &str = "Your task is to evaluate if the response is relevant to the query.\nThe evaluation should be performed in a step-by-step manner by answering the following questions:\n1. Does the provided response match the subject matter of the user's query?\n2. Does the provided response attempt to address the focus or perspective on the subject matter taken on by the user's query?\nEach question above is worth 1 point. Provide detailed feedback on response according to the criteria questions above  After your feedback provide a final result by strictly following this format: '[RESULT] followed by the integer number representing the total score assigned to the response'\n\nQuery: \n {query}\nResponse: \n {response}\nFeedback:";

/// The result line: some text, then the last `[RESULT]` followed by a digit.
/// ASCII digits only (Python's `\d` also takes other scripts' digits).
static RESULT_DIGIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([\s\S]+)\[RESULT\]\s*([0-9])").expect("valid regex"));

/// The score and feedback of a `[RESULT] n` reply, `None` when it has none.
pub(crate) fn parse_result_line(re: &Regex, reply: &str) -> Result<Option<(f64, String)>> {
    let Some(caps) = re.captures(reply) else {
        return Ok(None);
    };
    let score = caps[2].parse::<f64>().map_err(|_| {
        Error::OutputParse(format!("could not convert string to float: {:?}", &caps[2]))
    })?;
    Ok(Some((
        score,
        ragloom_core::schema::py_strip(&caps[1]).to_owned(),
    )))
}

/// Unscored (`invalid_result`) when the reply has no `[RESULT] n` line.
#[derive(Debug, Clone)]
pub struct AnswerRelevancyEvaluator {
    llm: Arc<dyn Llm>,
    raise_error: bool,
    eval_template: BasePromptTemplate,
    score_threshold: f64,
}

impl AnswerRelevancyEvaluator {
    /// An evaluator judging with `llm` and LlamaIndex's prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            raise_error: false,
            eval_template: PromptTemplate::new(ANSWER_RELEVANCY_EVAL_TMPL).into(),
            score_threshold: 2.0,
        }
    }

    /// The points the score is divided by (default 2).
    pub fn score_threshold(mut self, threshold: f64) -> Self {
        self.score_threshold = threshold;
        self
    }
}

/// The result of a `[RESULT]`-scored reply, shared with context relevancy.
pub(crate) fn scored_result(
    parsed: Option<(f64, String)>,
    reply: String,
    threshold: f64,
    raise_error: bool,
) -> Result<EvaluationResult> {
    if parsed.is_none() && raise_error {
        return Err(Error::Evaluation("The response is invalid".into()));
    }
    Ok(EvaluationResult {
        invalid_result: parsed.is_none(),
        invalid_reason: parsed
            .is_none()
            .then(|| "Unable to parse the output string.".to_owned()),
        score: parsed.map(|(s, _)| if s != 0.0 { s / threshold } else { s }),
        feedback: Some(reply),
        ..EvaluationResult::default()
    })
}

#[async_trait]
impl Evaluator for AnswerRelevancyEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(response)) = (&input.query, &input.response) else {
            return Err(Error::InvalidInput(
                "query and response must be provided".into(),
            ));
        };
        let reply = predict(
            self.llm.as_ref(),
            &self.eval_template,
            &[("query", query), ("response", response)],
        )
        .await?;
        let parsed = parse_result_line(&RESULT_DIGIT, &reply)?;
        Ok(EvaluationResult {
            query: Some(query.clone()),
            response: Some(response.clone()),
            ..scored_result(parsed, reply, self.score_threshold, self.raise_error)?
        })
    }
}

evaluator_settings!(AnswerRelevancyEvaluator, raise_error);
