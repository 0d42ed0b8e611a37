//! `SelectionOutputParser`: the numbered choices (`[{"choice": 1, "reason": ...}]`)
//! an LLM selector answers with, and the format instructions appended to its prompt.

use super::utils::{marshal_llm_to_json, parse_candidate};
use crate::error::{Error, Result};
use crate::llms::parse_json_reply;
use crate::tools::json_dumps;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// LlamaIndex's `FORMAT_STR`: how the answer should look. Appended to
/// selector prompts with its braces doubled (see [`SelectionOutputParser::format`]).
pub const FORMAT_STR: &str = "The output should be ONLY JSON formatted as a JSON instance.\n\nHere is an example:\n[\n    {\n        choice: 1,\n        reason: \"<insert reason for choice>\"\n    },\n    ...\n]\n";

/// One choice of a selector's answer: the 1-based `choice` and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The chosen item's number, counting from 1 as the prompt's list does.
    pub choice: i64,
    /// The model's reason.
    pub reason: String,
}

/// Doubles every brace (LlamaIndex's `_escape_curly_braces`).
pub fn escape_curly_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// Parses a selector's answer into [`Answer`]s (LlamaIndex `SelectionOutputParser`).
///
/// The reply may wrap the JSON in prose or a code fence, use unquoted keys,
/// single quotes or trailing commas (LlamaIndex falls back to YAML for those),
/// answer with one object instead of a list, or nest the answers one level
/// down (`{"answer": {...}}`). Where LlamaIndex keeps only the last of
/// several nested answers, this keeps them all; a bare number in the list is
/// taken as a choice with no reason, and a missing reason is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectionOutputParser;

impl SelectionOutputParser {
    /// The parser.
    pub fn new() -> Self {
        Self
    }

    /// `prompt` followed by a blank line and [`FORMAT_STR`] with its braces
    /// doubled, exactly as LlamaIndex 0.14.25 appends it (its formatter leaves
    /// the doubled braces in the text the model sees).
    pub fn format(&self, prompt: &str) -> String {
        format!("{prompt}\n\n{}", escape_curly_braces(FORMAT_STR))
    }

    /// The answers in `output`; no JSON, or an answer without a usable
    /// `choice`, is [`Error::OutputParse`] quoting the reply.
    pub fn parse(&self, output: &str) -> Result<Vec<Answer>> {
        let value = find_json(output).ok_or_else(|| {
            Error::OutputParse(format!(
                "the selector's reply holds no JSON list of choices; the reply was: {output:?}"
            ))
        })?;
        let items = match value {
            Value::Array(items) => items,
            obj @ Value::Object(_) => vec![obj],
            other => {
                return Err(Error::OutputParse(format!(
                    "the selector's reply is not a JSON list of choices but {}; the reply was: {output:?}",
                    json_dumps(&other)
                )));
            }
        };
        let mut answers = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let before = answers.len();
            collect_answers(item, &mut answers).map_err(|why| {
                Error::OutputParse(format!(
                    "answer {} of the selector's reply: {why}; the reply was: {output:?}",
                    i + 1
                ))
            })?;
            if answers.len() == before {
                return Err(Error::OutputParse(format!(
                    "answer {} of the selector's reply has no `choice`: {}; the reply was: {output:?}",
                    i + 1,
                    json_dumps(item)
                )));
            }
        }
        Ok(answers)
    }
}

/// LlamaIndex's cut first; failing that, a fenced block or another span.
fn find_json(output: &str) -> Option<Value> {
    parse_candidate(marshal_llm_to_json(output)).or_else(|| parse_json_reply(output).ok())
}

/// The answers in `item`: itself when it has a `choice`, else those nested in it.
fn collect_answers(item: &Value, out: &mut Vec<Answer>) -> std::result::Result<(), String> {
    match item {
        Value::Object(map) => {
            if let Some(choice) = map.get("choice") {
                let choice = choice_number(choice)?;
                let reason = match map.get("reason") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => json_dumps(other),
                };
                out.push(Answer { choice, reason });
                return Ok(());
            }
            for value in map.values() {
                match value {
                    Value::Object(_) => collect_answers(value, out)?,
                    Value::Array(list) => {
                        for v in list.iter().filter(|v| v.is_object()) {
                            collect_answers(v, out)?;
                        }
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Value::Number(_) | Value::String(_) => {
            out.push(Answer {
                choice: choice_number(item)?,
                reason: String::new(),
            });
            Ok(())
        }
        _ => Ok(()),
    }
}

fn choice_number(value: &Value) -> std::result::Result<i64, String> {
    let n = match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    n.ok_or_else(|| format!("`choice` is {}, not a whole number", json_dumps(value)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_answer_lists_keep_every_answer() {
        let answers = SelectionOutputParser
            .parse(r#"{"choices": [{"choice": 1, "reason": "a"}, {"choice": "2", "reason": "b"}]}"#)
            .unwrap();
        assert_eq!(answers.iter().map(|a| a.choice).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(SelectionOutputParser.parse("[3]").unwrap()[0].choice, 3);
        assert!(
            SelectionOutputParser
                .parse(r#"[{"choice": "two"}]"#)
                .is_err()
        );
    }

    #[test]
    fn format_appends_doubled_braces() {
        let text = SelectionOutputParser.format("Q");
        assert!(text.starts_with("Q\n\nThe output should be ONLY JSON"));
        assert!(text.contains("[\n    {{\n        choice: 1,"));
    }
}
