//! Structured answers: `output_cls` (answers as JSON of a caller's type, read
//! back through [`StructuredSynthesize`]) and `structured_answer_filtering`'s `StructuredRefineResponse`.

use super::Synthesizer;
use crate::error::{Error, Result};
use crate::llms::{FunctionCallingLlm, Llm, ToolChoice, output_schema, parse_structured};
use crate::prompts::BasePromptTemplate;
use crate::schema::{NodeWithScore, QueryBundle, Response};
use crate::tools::{ToolMetadata, json_dumps};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Used to answer a given query based on the provided context.
///
/// Also indicates if the query was satisfied with the provided answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredRefineResponse {
    // First, as in LlamaIndex: models emit fields in schema order, so a
    // streamed reply says early whether the rest is worth waiting for.
    /// True if there was enough context given to provide an answer that satisfies the query.
    pub query_satisfied: bool,
    /// The answer for the given query, based on the context and not prior knowledge.
    pub answer: String,
}

impl StructuredRefineResponse {
    /// The tool (and format) name models are offered, as LlamaIndex names it.
    pub const NAME: &'static str = "StructuredRefineResponse";

    /// The tool function-calling models are asked to call: the type's name,
    /// its doc comment as the description and its fields as the arguments.
    pub fn tool_metadata() -> ToolMetadata {
        let schema = output_schema::<Self>();
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        ToolMetadata::new(Self::NAME, description)
            .with_fn_schema(crate::tools::normalize_schema(&schema))
    }
}

/// Checks that a JSON value is an instance of the output type.
type Validator = Arc<dyn Fn(&Value) -> Result<()> + Send + Sync>;

/// The type answers must take (LlamaIndex's `output_cls`), kept without its
/// Rust type so synthesizers stay object-safe: its JSON schema, its name and
/// a check that a JSON value deserialises into it.
#[derive(Clone)]
pub struct OutputCls {
    name: String,
    schema: Value,
    validate: Validator,
}

impl fmt::Debug for OutputCls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputCls")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OutputCls {
    /// The output class for `T`.
    pub fn of<T: DeserializeOwned + JsonSchema + 'static>() -> Self {
        Self {
            name: T::schema_name().into_owned(),
            schema: output_schema::<T>(),
            validate: Arc::new(|value: &Value| parse_structured::<T>(value.clone()).map(|_| ())),
        }
    }

    /// The type's schema name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSON schema sent to the model.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks that `value` is a valid instance; a mismatch is [`Error::OutputParse`].
    pub fn validate(&self, value: &Value) -> Result<()> {
        (self.validate)(value)
    }
}

/// A response whose answer is a value of the caller's type (LlamaIndex
/// `PydanticResponse`).
#[derive(Clone, Debug, PartialEq)]
pub struct PydanticResponse<T> {
    /// The answer; `None` when there was nothing to answer from (the
    /// synthesizer said `Empty Response`).
    pub response: Option<T>,
    /// The nodes the answer was made from.
    pub source_nodes: Vec<NodeWithScore>,
    /// The source nodes' metadata by node id, as on [`Response`].
    pub metadata: serde_json::Map<String, Value>,
}

impl<T: DeserializeOwned + JsonSchema> PydanticResponse<T> {
    /// Reads the JSON answer of a synthesizer built with `output_cls::<T>()`.
    /// An answer that is not a `T` is [`Error::OutputParse`] quoting it.
    pub fn from_response(response: Response) -> Result<Self> {
        let parsed = match response.response.as_deref() {
            None | Some(super::EMPTY_RESPONSE) => None,
            Some(text) => {
                let value: Value = serde_json::from_str(text).map_err(|e| {
                    Error::OutputParse(format!(
                        "the answer is not JSON for `{}` ({e}); was the synthesizer built with \
                         `output_cls::<{}>()`? The answer was: {text:?}",
                        T::schema_name(),
                        T::schema_name()
                    ))
                })?;
                Some(parse_structured::<T>(value)?)
            }
        };
        Ok(Self {
            response: parsed,
            source_nodes: response.source_nodes,
            metadata: response.metadata,
        })
    }
}

/// Typed answers for every [`Synthesizer`] (blanket impl), so the trait
/// itself stays object-safe.
#[async_trait]
pub trait StructuredSynthesize: Synthesizer {
    /// [`Synthesizer::synthesize`], the answer read as a `T`. The synthesizer
    /// must have been built with `output_cls::<T>()` so the model was asked for `T`'s schema.
    async fn synthesize_structured<T>(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        additional_source_nodes: Vec<NodeWithScore>,
    ) -> Result<PydanticResponse<T>>
    where
        T: DeserializeOwned + JsonSchema + Send,
    {
        let response = self
            .synthesize(query, nodes, additional_source_nodes)
            .await?;
        PydanticResponse::from_response(response)
    }
}

impl<S: Synthesizer + ?Sized> StructuredSynthesize for S {}

/// Formats `prompt` for the model as messages (a chat model gets the chat form).
fn messages_for(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<Vec<crate::llms::ChatMessage>> {
    let is_chat = llm.metadata().is_chat_model;
    prompt.select(is_chat).format_messages(vars)
}

/// One structured call (LlamaIndex `structured_predict(output_cls, ...)`):
/// the model's JSON, checked against `output_cls`, as compact JSON text.
pub(crate) async fn predict_structured(
    llm: &dyn Llm,
    output_cls: &OutputCls,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<String> {
    let messages = messages_for(llm, prompt, vars)?;
    let value = llm.structured_chat(&messages, output_cls.schema()).await?;
    output_cls.validate(&value)?;
    Ok(serde_json::to_string(&value)?)
}

/// Asks for a [`StructuredRefineResponse`]: through a tool call when the
/// model has native function calling (the tool is required), else as JSON
/// through [`Llm::structured_chat`] (LlamaIndex's `get_program_for_llm`).
pub(crate) async fn predict_refine_response(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<StructuredRefineResponse> {
    let messages = messages_for(llm, prompt, vars)?;
    let metadata = llm.metadata();
    if metadata.is_function_calling_model {
        let tool = StructuredRefineResponse::tool_metadata();
        let reply = llm
            .chat_with_tools(&messages, &[tool], &ToolChoice::Required)
            .await?;
        let calls = llm.get_tool_calls_from_response(&reply, true)?;
        if calls.len() > 1 {
            return Err(Error::OutputParse(format!(
                "model `{}` made {} tool calls for one {}; expected one",
                metadata.model_name,
                calls.len(),
                StructuredRefineResponse::NAME
            )));
        }
        let arguments = calls
            .into_iter()
            .next()
            .map(|c| c.arguments)
            .unwrap_or(Value::Null);
        serde_json::from_value(arguments.clone()).map_err(|e| {
            Error::OutputParse(format!(
                "the `{}` tool call does not fit its schema: {e}; the arguments were: {}",
                StructuredRefineResponse::NAME,
                json_dumps(&arguments)
            ))
        })
    } else {
        let schema = output_schema::<StructuredRefineResponse>();
        let value = llm.structured_chat(&messages, &schema).await?;
        parse_structured::<StructuredRefineResponse>(value)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Answer {
        city: String,
    }

    #[test]
    fn refine_response_tool_is_named_and_described_as_in_llamaindex() {
        let tool = StructuredRefineResponse::tool_metadata();
        assert_eq!(tool.name, "StructuredRefineResponse");
        assert_eq!(
            tool.description,
            "Used to answer a given query based on the provided context.\n\nAlso indicates if the \
             query was satisfied with the provided answer."
        );
        let props = tool.fn_schema["properties"].as_object().unwrap();
        assert_eq!(
            props.keys().collect::<Vec<_>>(),
            ["query_satisfied", "answer"]
        );
        assert_eq!(
            tool.fn_schema["required"],
            serde_json::json!(["query_satisfied", "answer"])
        );
    }

    #[test]
    fn output_cls_validates_and_pydantic_response_parses() {
        let cls = OutputCls::of::<Answer>();
        assert_eq!(cls.name(), "Answer");
        assert!(cls.validate(&serde_json::json!({"city": "Paris"})).is_ok());
        assert!(matches!(
            cls.validate(&serde_json::json!({"town": 1})),
            Err(Error::OutputParse(_))
        ));
        let ok =
            PydanticResponse::<Answer>::from_response(Response::new(r#"{"city":"Paris"}"#, vec![]))
                .unwrap();
        assert_eq!(
            ok.response,
            Some(Answer {
                city: "Paris".into()
            })
        );
        let empty = PydanticResponse::<Answer>::from_response(Response::new(
            super::super::EMPTY_RESPONSE,
            vec![],
        ))
        .unwrap();
        assert_eq!(empty.response, None);
        let err =
            PydanticResponse::<Answer>::from_response(Response::new("Paris", vec![])).unwrap_err();
        assert!(err.to_string().contains("output_cls::<Answer>()"), "{err}");
    }
}
