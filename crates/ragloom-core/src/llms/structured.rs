//! Structured output into a caller's type (LlamaIndex's `structured_predict`
//! with an `output_cls`): the type's JSON schema goes to `structured_chat`, the reply is deserialised.

use super::llm::Llm;
use super::types::ChatMessage;
use crate::error::{Error, Result};
use crate::tools::{json_dumps, normalize_schema};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What to ask the model: a prompt (sent as one user message) or a conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum PredictInput {
    /// A prompt, sent as one user message.
    Prompt(String),
    /// A conversation.
    Messages(Vec<ChatMessage>),
}

impl PredictInput {
    /// The input as chat messages.
    pub fn into_messages(self) -> Vec<ChatMessage> {
        match self {
            PredictInput::Prompt(p) => vec![ChatMessage::user(p)],
            PredictInput::Messages(m) => m,
        }
    }
}

impl From<&str> for PredictInput {
    fn from(prompt: &str) -> Self {
        PredictInput::Prompt(prompt.to_owned())
    }
}

impl From<String> for PredictInput {
    fn from(prompt: String) -> Self {
        PredictInput::Prompt(prompt)
    }
}

impl From<Vec<ChatMessage>> for PredictInput {
    fn from(messages: Vec<ChatMessage>) -> Self {
        PredictInput::Messages(messages)
    }
}

impl From<&[ChatMessage]> for PredictInput {
    fn from(messages: &[ChatMessage]) -> Self {
        PredictInput::Messages(messages.to_vec())
    }
}

impl From<ChatMessage> for PredictInput {
    fn from(message: ChatMessage) -> Self {
        PredictInput::Messages(vec![message])
    }
}

/// The JSON schema sent for output type `T`: normalised as tool schemas are
/// (see [`normalize_schema`]) but keeping the type's `title` and
/// `description`, which providers use to name the format and models read as
/// the task.
pub fn output_schema<T: JsonSchema>() -> Value {
    let raw = schemars::schema_for!(T).to_value();
    let schema = normalize_schema(&raw);
    if let (Value::Object(normalised), Value::Object(raw)) = (&schema, &raw) {
        let mut out = serde_json::Map::new();
        for key in ["title", "description"] {
            if let Some(v) = raw.get(key) {
                out.insert(key.to_owned(), v.clone());
            }
        }
        out.extend(normalised.clone());
        return Value::Object(out);
    }
    schema
}

/// Structured output for every [`Llm`] (blanket impl): nothing to implement.
#[async_trait]
pub trait StructuredPredict: Llm {
    /// Asks for a `T`: its schema goes to [`Llm::structured_chat`] and the
    /// JSON that comes back is deserialised. A reply that is not JSON, or
    /// does not fit `T`, is [`Error::OutputParse`] saying what failed.
    async fn structured_predict<T>(&self, input: impl Into<PredictInput> + Send) -> Result<T>
    where
        T: DeserializeOwned + JsonSchema + Send,
    {
        let messages = input.into().into_messages();
        let schema = output_schema::<T>();
        let value = self.structured_chat(&messages, &schema).await?;
        parse_structured::<T>(value)
    }
}

impl<L: Llm + ?Sized> StructuredPredict for L {}

/// Deserialises a model's JSON into `T`; a mismatch is [`Error::OutputParse`]
/// naming the type and quoting the JSON.
pub fn parse_structured<T: DeserializeOwned + JsonSchema>(value: Value) -> Result<T> {
    let shown = json_dumps(&value);
    serde_json::from_value::<T>(value).map_err(|e| {
        Error::OutputParse(format!(
            "the model's JSON does not fit `{}`: {e}; the JSON was: {shown}",
            T::schema_name()
        ))
    })
}
