//! `SubQuestionOutputParser`: the sub-questions in a model's JSON reply, with
//! or without the `items` wrapper of the few-shot example.

use super::SubQuestion;
use crate::error::{Error, Result};
use crate::output_parsers::parse_json_markdown;
use crate::tools::json_dumps;
use serde_json::Value;

/// Reads sub-questions out of a reply (LlamaIndex `SubQuestionOutputParser`):
/// the JSON of a ```` ```json ```` fence or of the reply itself, prose around
/// it ignored, either `{"items": [...]}` or a bare list. Each entry needs the
/// string fields `sub_question` and `tool_name`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubQuestionOutputParser;

impl SubQuestionOutputParser {
    /// The sub-questions in `output`; anything else is [`Error::OutputParse`] quoting it.
    pub fn parse(&self, output: &str) -> Result<Vec<SubQuestion>> {
        let mut value = parse_json_markdown(output)?;
        if let Value::Object(map) = &mut value {
            if let Some(items) = map.remove("items") {
                value = items;
            }
        }
        let Value::Array(items) = value else {
            return Err(Error::OutputParse(format!(
                "expected a list of sub-questions (or {{\"items\": [...]}}), got {}; the reply was: {output:?}",
                json_dumps(&value)
            )));
        };
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                serde_json::from_value::<SubQuestion>(item.clone()).map_err(|e| {
                    Error::OutputParse(format!(
                        "sub-question {} is not {{\"sub_question\": str, \"tool_name\": str}} ({e}): {}; the reply was: {output:?}",
                        i + 1,
                        json_dumps(&item)
                    ))
                })
            })
            .collect()
    }
}
