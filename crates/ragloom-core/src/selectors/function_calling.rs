//! Selectors over native tool calling (LlamaIndex's `PydanticSingleSelector` /
//! `PydanticMultiSelector`): the model fills a `SingleSelection` / `MultiSelection` tool call.

use super::prompts::{DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL, DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL};
use super::{PromptVars, Selector, SelectorResult, SingleSelection, choice_to_index};
use crate::error::{Error, Result};
use crate::llms::{FunctionCallingLlm, Llm, ToolCall, ToolChoice};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::schema::QueryBundle;
use crate::tools::{ToolMetadata, json_dumps};
use crate::utils::setters;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tracing::Instrument;

/// The `SingleSelection` tool the model is asked to call: LlamaIndex's
/// pydantic model as a function (name, docstring, schema without titles).
pub fn single_selection_tool() -> ToolMetadata {
    ToolMetadata::new("SingleSelection", "A single selection of a choice.")
        .with_fn_schema(single_selection_schema())
}

fn single_selection_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "index": {"type": "integer"},
            "reason": {"type": "string"}
        },
        "required": ["index", "reason"]
    })
}

/// The `MultiSelection` tool: a list of `SingleSelection`s.
pub fn multi_selection_tool() -> ToolMetadata {
    let mut item = single_selection_schema();
    if let Value::Object(map) = &mut item {
        map.insert(
            "description".to_owned(),
            Value::String("A single selection of a choice.".to_owned()),
        );
    }
    ToolMetadata::new("MultiSelection", "A multi-selection of choices.").with_fn_schema(json!({
        "type": "object",
        "properties": {"selections": {"type": "array", "items": item}},
        "required": ["selections"]
    }))
}

#[derive(Deserialize)]
struct RawSelection {
    index: Value,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct RawMultiSelection {
    selections: Vec<RawSelection>,
}

fn check_function_calling(llm: &dyn Llm) -> Result<()> {
    let md = llm.metadata();
    if md.is_function_calling_model {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "model `{}` does not support the function calling API; use LLMSingleSelector / \
             LLMMultiSelector (or get_selector_from_llm) instead",
            md.model_name
        )))
    }
}

/// Asks the model to call `tool` once with the formatted prompt as the user
/// message (`tool_required`, as LlamaIndex's `FunctionCallingProgram`), and
/// returns that call's arguments.
async fn call_once(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
    tool: &ToolMetadata,
) -> Result<ToolCall> {
    let messages = prompt.select(true).format_messages(vars)?;
    let response = llm
        .chat_with_tools(&messages, std::slice::from_ref(tool), &ToolChoice::Required)
        .await?;
    let mut calls = llm.get_tool_calls_from_response(&response, true)?;
    if calls.len() > 1 {
        return Err(Error::OutputParse(format!(
            "model `{}` called `{}` {} times; one call was expected",
            llm.metadata().model_name,
            tool.name,
            calls.len()
        )));
    }
    let Some(call) = calls.pop() else {
        return Err(Error::OutputParse(format!(
            "model `{}` did not call `{}`",
            llm.metadata().model_name,
            tool.name
        )));
    };
    if call.name != tool.name {
        return Err(Error::OutputParse(format!(
            "model `{}` called `{}`, but the only tool offered was `{}`",
            llm.metadata().model_name,
            call.name,
            tool.name
        )));
    }
    Ok(call)
}

fn selection(raw: RawSelection, num_choices: usize, args: &str) -> Result<SingleSelection> {
    let choice = match &raw.index {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        Error::OutputParse(format!(
            "the selection's `index` is {}, not a whole number; the arguments were: {args}",
            json_dumps(&raw.index)
        ))
    })?;
    Ok(SingleSelection {
        // The prompt numbers choices from 1, as LlamaIndex's does.
        index: choice_to_index(choice, num_choices, args)?,
        reason: raw.reason.unwrap_or_default(),
    })
}

fn parse_args<T: serde::de::DeserializeOwned>(call: &ToolCall, what: &str) -> Result<T> {
    serde_json::from_value(call.arguments.clone()).map_err(|e| {
        Error::OutputParse(format!(
            "the `{}` call could not be read as {what}: {e}; the arguments were: {}",
            call.name,
            json_dumps(&call.arguments)
        ))
    })
}

/// Chooses one choice through a `SingleSelection` tool call (LlamaIndex
/// `PydanticSingleSelector`, which works with any function-calling model).
#[derive(Clone, Debug)]
pub struct FunctionCallingSingleSelector {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
}

/// LlamaIndex's name for a [`FunctionCallingSingleSelector`].
pub type PydanticSingleSelector = FunctionCallingSingleSelector;

impl FunctionCallingSingleSelector {
    /// The selector with LlamaIndex's prompt; a model without native tool
    /// calling is refused, as LlamaIndex's `from_defaults` refuses it.
    pub fn new(llm: Arc<dyn Llm>) -> Result<Self> {
        check_function_calling(&*llm)?;
        Ok(Self::unchecked(llm))
    }

    pub(crate) fn unchecked(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            prompt: PromptTemplate::new(DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL).into(),
        }
    }

    setters!(
        /// Replaces the prompt (`prompt_template_str`).
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );
}

#[async_trait]
impl Selector for FunctionCallingSingleSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let span = tracing::info_span!(
            "select",
            selector = "function_calling_single",
            choices = choices.len()
        );
        async {
            let vars = PromptVars::new(choices, query, None);
            let call = call_once(
                &*self.llm,
                &self.prompt,
                &vars.pairs(),
                &single_selection_tool(),
            )
            .await?;
            let raw: RawSelection = parse_args(&call, "a SingleSelection")?;
            let args = json_dumps(&call.arguments);
            Ok(SelectorResult {
                selections: vec![selection(raw, choices.len(), &args)?],
            })
        }
        .instrument(span)
        .await
    }
}

// As LlamaIndex's pydantic selectors: no prompts exposed (set one with `with_prompt`).
own_prompts!(FunctionCallingSingleSelector {});

/// Chooses up to `max_outputs` choices through a `MultiSelection` tool call
/// (LlamaIndex `PydanticMultiSelector`).
#[derive(Clone, Debug)]
pub struct FunctionCallingMultiSelector {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    max_outputs: Option<usize>,
}

/// LlamaIndex's name for a [`FunctionCallingMultiSelector`].
pub type PydanticMultiSelector = FunctionCallingMultiSelector;

impl FunctionCallingMultiSelector {
    /// The selector with LlamaIndex's prompt; a model without native tool calling is refused.
    pub fn new(llm: Arc<dyn Llm>) -> Result<Self> {
        check_function_calling(&*llm)?;
        Ok(Self::unchecked(llm))
    }

    pub(crate) fn unchecked(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            prompt: PromptTemplate::new(DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL).into(),
            max_outputs: None,
        }
    }

    setters!(
        /// At most this many choices (default: the number of choices).
        max_outputs => max_outputs: usize,
        /// Replaces the prompt (`prompt_template_str`).
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );
}

#[async_trait]
impl Selector for FunctionCallingMultiSelector {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let span = tracing::info_span!(
            "select",
            selector = "function_calling_multi",
            choices = choices.len()
        );
        async {
            let vars = PromptVars::new(choices, query, Some(self.max_outputs));
            let call = call_once(
                &*self.llm,
                &self.prompt,
                &vars.pairs(),
                &multi_selection_tool(),
            )
            .await?;
            let raw: RawMultiSelection = parse_args(&call, "a MultiSelection")?;
            let args = json_dumps(&call.arguments);
            let selections = raw
                .selections
                .into_iter()
                .map(|s| selection(s, choices.len(), &args))
                .collect::<Result<Vec<_>>>()?;
            Ok(SelectorResult { selections })
        }
        .instrument(span)
        .await
    }
}

// As LlamaIndex's pydantic selectors: no prompts exposed (set one with `with_prompt`).
own_prompts!(FunctionCallingMultiSelector {});
