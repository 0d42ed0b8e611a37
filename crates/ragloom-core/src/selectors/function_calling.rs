//! Selectors over native tool calling (LlamaIndex's `PydanticSingleSelector` /
//! `PydanticMultiSelector`): the model fills a `SingleSelection` / `MultiSelection` tool call.

use super::prompts::{DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL, DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL};
use super::{
    Cardinality, Multi, PromptVars, Selector, SelectorResult, Single, SingleSelection,
    choice_to_index,
};
use crate::error::{Error, Result};
use crate::llms::{FunctionCallingLlm, Llm, ToolCall, ToolChoice};
use crate::prompts::{BasePromptTemplate, PromptDictType, PromptMixin, PromptTemplate};
use crate::schema::QueryBundle;
use crate::tools::{ToolMetadata, json_dumps};
use crate::utils::setters;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::marker::PhantomData;
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

/// Chooses through a forced tool call: a `SingleSelection` (`K` =
/// [`Single`]) or a `MultiSelection` of up to `max_outputs` ([`Multi`]), on
/// any function-calling model. Named by LlamaIndex's names,
/// [`FunctionCallingSingleSelector`] and [`FunctionCallingMultiSelector`].
#[derive(Clone, Debug)]
pub struct FunctionCallingSelector<K> {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
    max_outputs: Option<usize>,
    kind: PhantomData<K>,
}

/// Chooses one choice through a `SingleSelection` tool call (LlamaIndex
/// `PydanticSingleSelector`, which works with any function-calling model).
pub type FunctionCallingSingleSelector = FunctionCallingSelector<Single>;

/// Chooses up to `max_outputs` choices through a `MultiSelection` tool call
/// (LlamaIndex `PydanticMultiSelector`).
pub type FunctionCallingMultiSelector = FunctionCallingSelector<Multi>;

/// LlamaIndex's name for a [`FunctionCallingSingleSelector`].
pub type PydanticSingleSelector = FunctionCallingSingleSelector;

/// LlamaIndex's name for a [`FunctionCallingMultiSelector`].
pub type PydanticMultiSelector = FunctionCallingMultiSelector;

impl<K: Cardinality> FunctionCallingSelector<K> {
    /// The selector with LlamaIndex's prompt; a model without native tool
    /// calling is refused, as LlamaIndex's `from_defaults` refuses it.
    pub fn new(llm: Arc<dyn Llm>) -> Result<Self> {
        check_function_calling(&*llm)?;
        Ok(Self::unchecked(llm))
    }

    pub(crate) fn unchecked(llm: Arc<dyn Llm>) -> Self {
        let template = if K::MULTI {
            DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL
        } else {
            DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL
        };
        Self {
            llm,
            prompt: PromptTemplate::new(template).into(),
            max_outputs: None,
            kind: PhantomData,
        }
    }

    setters!(
        /// Replaces the prompt (`prompt_template_str`).
        with_prompt => prompt: impl Into<BasePromptTemplate>,
    );

    /// The selections in the tool call's arguments.
    fn selections(&self, call: &ToolCall, num_choices: usize) -> Result<Vec<SingleSelection>> {
        let args = json_dumps(&call.arguments);
        if !K::MULTI {
            let raw: RawSelection = parse_args(call, "a SingleSelection")?;
            return Ok(vec![selection(raw, num_choices, &args)?]);
        }
        let raw: RawMultiSelection = parse_args(call, "a MultiSelection")?;
        raw.selections
            .into_iter()
            .map(|s| selection(s, num_choices, &args))
            .collect()
    }
}

impl FunctionCallingMultiSelector {
    setters!(
        /// At most this many choices (default: the number of choices).
        max_outputs => max_outputs: usize,
    );
}

#[async_trait]
impl<K: Cardinality> Selector for FunctionCallingSelector<K> {
    async fn select(
        &self,
        choices: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<SelectorResult> {
        let selector = format!("function_calling_{}", K::NAME);
        let span = tracing::info_span!("select", selector, choices = choices.len());
        async {
            let vars = PromptVars::new(choices, query, K::MULTI.then_some(self.max_outputs));
            let tool = if K::MULTI {
                multi_selection_tool()
            } else {
                single_selection_tool()
            };
            let call = call_once(&*self.llm, &self.prompt, &vars.pairs(), &tool).await?;
            Ok(SelectorResult {
                selections: self.selections(&call, choices.len())?,
            })
        }
        .instrument(span)
        .await
    }
}

// As LlamaIndex's pydantic selectors: no prompts exposed (set one with `with_prompt`).
impl<K: Cardinality> PromptMixin for FunctionCallingSelector<K> {
    fn own_prompts(&self) -> PromptDictType {
        PromptDictType::new()
    }

    fn update_own_prompts(&mut self, _prompts: &PromptDictType) -> Result<()> {
        Ok(())
    }
}
