//! Selectors: pick one or several of a list of choices (tool descriptions) for
//! a query, by asking an LLM in text or through function calling; routers build on them.

mod function_calling;
mod llm_selectors;
pub mod prompts;

pub use function_calling::{
    FunctionCallingMultiSelector, FunctionCallingSelector, FunctionCallingSingleSelector,
    PydanticMultiSelector, PydanticSingleSelector, multi_selection_tool, single_selection_tool,
};
pub use llm_selectors::{LLMMultiSelector, LLMSelector, LLMSingleSelector};

use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::prompts::PromptMixin;
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One chosen item: its 0-based index in the choices and the model's reason
/// (LlamaIndex `SingleSelection`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SingleSelection {
    /// Index into the choices, from 0.
    pub index: usize,
    /// Why the model chose it.
    pub reason: String,
}

/// What a selector chose (LlamaIndex `SelectorResult`, alias `MultiSelection`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorResult {
    /// The chosen items, in the order the model gave them.
    pub selections: Vec<SingleSelection>,
}

/// LlamaIndex's name for a [`SelectorResult`].
pub type MultiSelection = SelectorResult;

impl SelectorResult {
    /// The one chosen index; an error when there is not exactly one (`.ind`).
    pub fn ind(&self) -> Result<usize> {
        self.only().map(|s| s.index)
    }

    /// The one reason; an error when there is not exactly one (`.reason`).
    pub fn reason(&self) -> Result<&str> {
        self.only().map(|s| s.reason.as_str())
    }

    /// Every chosen index (`.inds`).
    pub fn inds(&self) -> Vec<usize> {
        self.selections.iter().map(|s| s.index).collect()
    }

    /// Every reason (`.reasons`).
    pub fn reasons(&self) -> Vec<&str> {
        self.selections.iter().map(|s| s.reason.as_str()).collect()
    }

    fn only(&self) -> Result<&SingleSelection> {
        match self.selections.as_slice() {
            [one] => Ok(one),
            other => Err(Error::InvalidInput(format!(
                "there are {} selections; use inds()/reasons()",
                other.len()
            ))),
        }
    }
}

/// How many choices a selector picks: the type parameter of the selectors
/// ([`Single`] or [`Multi`]).
pub trait Cardinality: Clone + Copy + std::fmt::Debug + Send + Sync + 'static {
    /// Whether several choices may be picked (up to `max_outputs`).
    const MULTI: bool;
    /// `single` or `multi`, as traces name the selector.
    const NAME: &'static str;
}

/// One choice (LlamaIndex's single selectors).
#[derive(Clone, Copy, Debug, Default)]
pub struct Single;

/// Several choices, up to `max_outputs` (LlamaIndex's multi selectors).
#[derive(Clone, Copy, Debug, Default)]
pub struct Multi;

impl Cardinality for Single {
    const MULTI: bool = false;
    const NAME: &'static str = "single";
}

impl Cardinality for Multi {
    const MULTI: bool = true;
    const NAME: &'static str = "multi";
}

/// Chooses among choices described by [`ToolMetadata`] (LlamaIndex
/// `BaseSelector`). Its prompts are reachable through [`PromptMixin`].
#[async_trait]
pub trait Selector: PromptMixin + Send + Sync + std::fmt::Debug {
    /// The choices most relevant to `query`. Indices are 0-based and within `choices`.
    async fn select(&self, choices: &[ToolMetadata], query: &QueryBundle)
    -> Result<SelectorResult>;
}

/// The choices as the selector prompts list them (LlamaIndex
/// `_build_choices_text`): `(1) description`, each description on one line,
/// separated by blank lines.
pub fn build_choices_text(choices: &[ToolMetadata]) -> String {
    choices
        .iter()
        .enumerate()
        .map(|(i, c)| format!("({}) {}", i + 1, py_splitlines(&c.description).join(" ")))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The variables of a selector's prompt: `{num_choices}`, `{context_list}`,
/// `{query_str}`, and for a multi-selector `{max_outputs}` (LlamaIndex's
/// `max_outputs or len(choices)`: none or 0 means all).
pub(crate) struct PromptVars {
    num_choices: String,
    max_outputs: Option<String>,
    context_list: String,
    query_str: String,
}

impl PromptVars {
    /// `max_outputs` is `None` for a single selector, `Some(limit)` for a multi one.
    pub(crate) fn new(
        choices: &[ToolMetadata],
        query: &QueryBundle,
        max_outputs: Option<Option<usize>>,
    ) -> Self {
        Self {
            num_choices: choices.len().to_string(),
            max_outputs: max_outputs
                .map(|m| m.filter(|&m| m > 0).unwrap_or(choices.len()).to_string()),
            context_list: build_choices_text(choices),
            query_str: query.query_str.clone(),
        }
    }

    /// The pairs to format the prompt with.
    pub(crate) fn pairs(&self) -> Vec<(&str, &str)> {
        let mut vars = vec![("num_choices", self.num_choices.as_str())];
        if let Some(m) = &self.max_outputs {
            vars.push(("max_outputs", m.as_str()));
        }
        vars.push(("context_list", self.context_list.as_str()));
        vars.push(("query_str", self.query_str.as_str()));
        vars
    }
}

/// Python's `str.splitlines()`: lines without their breaks, no trailing empty line.
pub(crate) fn py_splitlines(text: &str) -> Vec<&str> {
    let is_break = |c: char| {
        matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    };
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_break(c) {
            lines.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(j, '\n')) = chars.peek() {
                    chars.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Turns a model's 1-based choice into a 0-based index, refusing numbers
/// outside `1..=num_choices` (LlamaIndex would index from the end for 0 or
/// fail later on an out-of-range one).
pub(crate) fn choice_to_index(choice: i64, num_choices: usize, reply: &str) -> Result<usize> {
    usize::try_from(choice)
        .ok()
        .filter(|c| (1..=num_choices).contains(c))
        .map(|c| c - 1)
        .ok_or_else(|| {
            Error::OutputParse(format!(
                "the selector chose {choice}, but the choices are numbered 1 to {num_choices}; the reply was: {reply:?}"
            ))
        })
}

/// The selector LlamaIndex's `get_selector_from_llm` picks: the
/// function-calling one when the model supports native tool calling,
/// otherwise the text-prompted [`LLMSingleSelector`] / [`LLMMultiSelector`].
pub fn get_selector_from_llm(llm: Arc<dyn Llm>, is_multi: bool) -> Arc<dyn Selector> {
    let function_calling = llm.metadata().is_function_calling_model;
    match (is_multi, function_calling) {
        (false, true) => Arc::new(FunctionCallingSingleSelector::unchecked(llm)),
        (true, true) => Arc::new(FunctionCallingMultiSelector::unchecked(llm)),
        (false, false) => Arc::new(LLMSingleSelector::new(llm)),
        (true, false) => Arc::new(LLMMultiSelector::new(llm)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_matches_python() {
        assert_eq!(py_splitlines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"]);
        assert_eq!(py_splitlines("a\n\nb"), ["a", "", "b"]);
        assert!(py_splitlines("").is_empty());
        assert_eq!(py_splitlines("\u{2028}x"), ["", "x"]);
    }

    #[test]
    fn choices_are_numbered_from_one_on_one_line_each() {
        let choices = [
            ToolMetadata::new("a", "first\nline"),
            ToolMetadata::new("b", "second"),
        ];
        assert_eq!(build_choices_text(&choices), "(1) first line\n\n(2) second");
    }

    #[test]
    fn out_of_range_choices_are_refused() {
        assert_eq!(choice_to_index(2, 2, "").ok(), Some(1));
        assert!(choice_to_index(0, 2, "").is_err());
        assert!(choice_to_index(3, 2, "r").is_err_and(|e| e.to_string().contains("1 to 2")));
    }
}
