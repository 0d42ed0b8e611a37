//! `ReActOutputParser`: turns a ReAct model reply into a reasoning step, the
//! way LlamaIndex's parser does, with its lenient reading of action inputs.

use super::dirty_json;
use super::types::{ActionReasoningStep, ReasoningStep, ResponseReasoningStep};
use ragloom_core::error::{Error, Result};
use ragloom_core::schema::py_strip;
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The thought given to a reply that follows no format at all.
pub const IMPLICIT_THOUGHT: &str = "(Implicit) I can answer without any more tools!";

/// Parses ReAct replies (LlamaIndex `ReActOutputParser`).
///
/// A reply with none of `Thought:`, `Action:`, `Answer:` is an implicit
/// answer. An `Action:` before any `Answer:` is an action, whose input is the
/// JSON object after `Action Input:` (read leniently; see [`parse_action_input`]).
/// Otherwise an `Answer:` after a `Thought:` is the answer. Anything else is
/// [`Error::OutputParse`] with LlamaIndex's message.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReActOutputParser;

impl ReActOutputParser {
    /// A parser.
    pub fn new() -> Self {
        Self
    }

    /// Parses one reply. `is_streaming` marks an answer still arriving.
    pub fn parse(&self, output: &str, is_streaming: bool) -> Result<ReasoningStep> {
        let thought_idx = output.find("Thought:");
        let action_idx = output.find("Action:");
        let answer_idx = output.find("Answer:");
        if thought_idx.is_none() && action_idx.is_none() && answer_idx.is_none() {
            return Ok(ReasoningStep::Response(ResponseReasoningStep {
                thought: IMPLICIT_THOUGHT.to_owned(),
                response: output.to_owned(),
                is_streaming,
            }));
        }
        // An action written before any answer wins: the model meant to call a tool first.
        match (action_idx, answer_idx) {
            (Some(action), Some(answer)) if action < answer => {
                return parse_action_reasoning_step(output).map(ReasoningStep::Action);
            }
            (Some(_), None) => {
                return parse_action_reasoning_step(output).map(ReasoningStep::Action);
            }
            _ => {}
        }
        if answer_idx.is_some() {
            let (thought, response) = extract_final_response(output)?;
            return Ok(ReasoningStep::Response(ResponseReasoningStep {
                thought,
                response,
                is_streaming,
            }));
        }
        Err(Error::OutputParse(format!(
            "Could not parse output: {output}"
        )))
    }
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    // The patterns are constants, checked by the tests; an invalid one is a bug here.
    #[allow(clippy::expect_used)]
    cell.get_or_init(|| Regex::new(pattern).expect("valid constant regex"))
}

/// Thought, tool name and raw action input of an action reply (LlamaIndex `extract_tool_use`).
pub fn extract_tool_use(input_text: &str) -> Result<(String, String, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &RE,
        r"(?s)(?:\s*Thought: (.*?)|(.+))\n+Action: ([^\n\(\) ]+).*?\n+Action Input: .*?(\{.*\})",
    );
    let fail = || {
        Error::OutputParse(format!(
            "Could not extract tool use from input text: {input_text}"
        ))
    };
    let caps = re.captures(input_text).ok_or_else(fail)?;
    // Python takes the thought group unless it is empty, then the free-text group.
    let thought = caps
        .get(1)
        .map(|m| m.as_str())
        .filter(|s| !s.is_empty())
        .or_else(|| caps.get(2).map(|m| m.as_str()))
        .ok_or_else(fail)?;
    let action = caps.get(3).map(|m| m.as_str()).ok_or_else(fail)?;
    let action_input = caps.get(4).map(|m| m.as_str()).ok_or_else(fail)?;
    Ok((
        py_strip(thought).to_owned(),
        py_strip(action).to_owned(),
        py_strip(action_input).to_owned(),
    ))
}

/// Thought and answer of an answer reply (LlamaIndex `extract_final_response`).
pub fn extract_final_response(input_text: &str) -> Result<(String, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = regex(&RE, r"(?s)\s*Thought:(.*?)Answer:(.*?)$");
    let caps = re.captures(input_text).ok_or_else(|| {
        Error::OutputParse(format!(
            "Could not extract final answer from input text: {input_text}"
        ))
    })?;
    let group = |i| caps.get(i).map(|m| py_strip(m.as_str()).to_owned());
    Ok((group(1).unwrap_or_default(), group(2).unwrap_or_default()))
}

/// The span from the first `{` to the last `}` (LlamaIndex `extract_json_str`).
pub fn extract_json_str(text: &str) -> Result<&str> {
    let text = py_strip(text);
    match (text.find('{'), text.rfind('}')) {
        (Some(start), Some(end)) if start < end => Ok(&text[start..=end]),
        _ => Err(Error::OutputParse(format!(
            "Could not extract json string from output: {text}"
        ))),
    }
}

/// An action input read leniently, as the `dirtyjson` package reads it
/// (single quotes, bare keys, trailing commas, comments), or, when even that fails, its `"key": "string"` pairs as LlamaIndex's
/// `action_input_parser` rescues them.
pub fn parse_action_input(json_str: &str) -> Map<String, Value> {
    match dirty_json::loads(json_str) {
        Ok(Value::Object(map)) => map,
        _ => action_input_parser(json_str),
    }
}

/// LlamaIndex's fallback: quotes that are not inside a word become `"`, then
/// every `"key": "value"` pair is taken as a string argument.
pub fn action_input_parser(json_str: &str) -> Map<String, Value> {
    let chars: Vec<char> = json_str.chars().collect();
    let is_word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let processed: String = chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let inside_word = i > 0 && is_word(chars.get(i - 1)) && is_word(chars.get(i + 1));
            if c == '\'' && !inside_word { '"' } else { c }
        })
        .collect();
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = regex(&RE, r#""(\w+)":\s*"([^"]*)""#);
    let mut out = Map::new();
    for caps in re.captures_iter(&processed) {
        if let (Some(k), Some(v)) = (caps.get(1), caps.get(2)) {
            out.insert(k.as_str().to_owned(), Value::String(v.as_str().to_owned()));
        }
    }
    out
}

/// Parses an action reply into its step (LlamaIndex `parse_action_reasoning_step`).
pub fn parse_action_reasoning_step(output: &str) -> Result<ActionReasoningStep> {
    let (thought, action, action_input) = extract_tool_use(output)?;
    let json_str = extract_json_str(&action_input)?;
    Ok(ActionReasoningStep {
        thought,
        action,
        action_input: parse_action_input(json_str),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fallback_keeps_apostrophes_inside_words() {
        let map = action_input_parser("{'input': 'it's fine', 'n': 5 oops}");
        assert_eq!(map["input"], "it's fine");
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn streaming_flag_reaches_the_answer() {
        let step = ReActOutputParser::new()
            .parse("Thought: t\nAnswer: par", true)
            .unwrap();
        assert_eq!(
            step.get_content(),
            "Thought: t\nAnswer (Starts With): par ..."
        );
    }
}
