//! `GuidelineEvaluator`: does the response follow written guidelines? The
//! judge answers JSON `{passing, feedback}`.

use super::base::{EvaluationInput, EvaluationResult, Evaluator, evaluator_settings, predict_text};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::{Llm, parse_json_reply};
use ragloom_core::prompts::{BasePromptTemplate, PromptTemplate};
use std::sync::Arc;

/// The guidelines used when none are given.
pub const DEFAULT_GUIDELINES: &str = "The response should fully answer the query.\nThe response should avoid being vague or ambiguous.\nThe response should be specific and use statistics or numbers when possible.\n";

/// LlamaIndex's guideline prompt (`{query}`, `{response}`, `{guidelines}`).
pub const GUIDELINE_EVAL_TMPL: &str = "Here is the original query:\nQuery: {query}\nCritique the following response based on the guidelines below:\nResponse: {response}\nGuidelines: {guidelines}\nNow please provide constructive criticism.\n";

/// What LlamaIndex's `PydanticOutputParser` appends to the formatted prompt
/// for its `EvaluationData` model. Its braces are doubled: Python escapes the
/// schema for a later formatting pass that never comes, so models see them doubled.
pub const GUIDELINE_FORMAT_INSTRUCTIONS: &str = "\n\n\nHere's a JSON schema to follow:\n{{\"properties\": {{\"passing\": {{\"description\": \"Whether the response passes the guidelines.\", \"title\": \"Passing\", \"type\": \"boolean\"}}, \"feedback\": {{\"description\": \"The feedback for the response based on the guidelines.\", \"title\": \"Feedback\", \"type\": \"string\"}}}}, \"required\": [\"passing\", \"feedback\"], \"title\": \"EvaluationData\", \"type\": \"object\"}}\n\nOutput a valid JSON object but do not repeat the schema.\n";

/// Passing and feedback as the judge's JSON says; score 1 or 0.
#[derive(Debug, Clone)]
pub struct GuidelineEvaluator {
    llm: Arc<dyn Llm>,
    guidelines: String,
    eval_template: BasePromptTemplate,
}

impl GuidelineEvaluator {
    /// An evaluator with [`DEFAULT_GUIDELINES`].
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            guidelines: DEFAULT_GUIDELINES.into(),
            eval_template: PromptTemplate::new(GUIDELINE_EVAL_TMPL).into(),
        }
    }

    /// The guidelines to judge by (empty: [`DEFAULT_GUIDELINES`], as in Python).
    pub fn guidelines(mut self, guidelines: impl Into<String>) -> Self {
        let guidelines = guidelines.into();
        self.guidelines = if guidelines.is_empty() {
            DEFAULT_GUIDELINES.into()
        } else {
            guidelines
        };
        self
    }
}

/// A boolean as pydantic reads one in lax mode: `true`/`false`, 1/0, and
/// the strings `true`, `yes`, `on`, `1`, `t`, `y` (and their negatives), any case.
fn lax_bool(v: &serde_json::Value) -> Option<bool> {
    use serde_json::Value;
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" | "t" | "y" => Some(true),
            "false" | "no" | "off" | "0" | "f" | "n" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

#[async_trait]
impl Evaluator for GuidelineEvaluator {
    async fn evaluate(&self, input: &EvaluationInput) -> Result<EvaluationResult> {
        let (Some(query), Some(response)) = (&input.query, &input.response) else {
            return Err(Error::InvalidInput(
                "query and response must be provided".into(),
            ));
        };
        let prompt = self.eval_template.format(&[
            ("query", query),
            ("response", response),
            ("guidelines", &self.guidelines),
        ])? + GUIDELINE_FORMAT_INSTRUCTIONS;
        let reply = predict_text(self.llm.as_ref(), &prompt).await?;
        let value = parse_json_reply(&reply)?;
        let (Some(passing), Some(feedback)) = (
            value.get("passing").and_then(lax_bool),
            value.get("feedback").and_then(|v| v.as_str()),
        ) else {
            return Err(Error::OutputParse(format!(
                "expected {{\"passing\": bool, \"feedback\": string}}, got {reply:?}"
            )));
        };
        Ok(EvaluationResult {
            query: Some(query.clone()),
            response: Some(response.clone()),
            passing: Some(passing),
            score: Some(if passing { 1.0 } else { 0.0 }),
            feedback: Some(feedback.to_owned()),
            ..EvaluationResult::default()
        })
    }
}

evaluator_settings!(GuidelineEvaluator);
