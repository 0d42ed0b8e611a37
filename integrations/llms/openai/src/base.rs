//! The request engine behind `OpenAI` and `OpenAILike`: builds chat and completion
//! bodies, calls the API through async-openai's bring-your-own-types methods, and routes each `Llm` method as LlamaIndex does.

use crate::client::{OpenAIClient, PROVIDER};
use crate::stream::{chat_stream, completion_stream};
use crate::wire::{
    WireChatCompletion, error_text, message_from_wire, message_to_wire, parse_arguments,
    schema_name, to_strict_json_schema,
};
use async_trait::async_trait;
use futures::StreamExt;
use ragloom_core::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, CompletionResponse, CompletionResponseStream,
    Llm, LlmMetadata, ToolChatRequest, ToolChoice, chat_response_to_completion_response,
    completion_response_to_chat_response, messages_to_prompt, messages_with_schema_instructions,
    parse_json_reply, stream_chat_response_to_completion_response,
    stream_completion_response_to_chat_response,
};
use ragloom_core::tools::ToolMetadata;
use ragloom_core::{Error, Result, Tokenizer};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;

/// Renders a conversation as one prompt for completion-only models.
pub type MessagesToPrompt = Arc<dyn Fn(&[ChatMessage]) -> String + Send + Sync>;
/// Wraps a raw prompt in the model's template (LlamaIndex's `completion_to_prompt`).
pub type CompletionToPrompt = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Sampling and request parameters shared by every call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Params {
    pub model: String,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub additional_kwargs: Map<String, Value>,
    pub strict: bool,
    pub reasoning_effort: Option<String>,
}

/// How `structured_chat` gets JSON out of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StructuredMode {
    /// `response_format` with the JSON schema (OpenAI's structured outputs;
    /// llama.cpp and vLLM enforce it with a grammar).
    ResponseFormat,
    /// One forced tool call whose arguments are the output (LlamaIndex's
    /// `FunctionCallingProgram`).
    ToolCall,
    /// The schema in the prompt, JSON taken from the reply (LlamaIndex's
    /// `LLMTextCompletionProgram`).
    Prompt,
}

pub(crate) struct Engine {
    pub class_name: &'static str,
    pub client: OpenAIClient,
    pub params: Params,
    pub metadata: LlmMetadata,
    pub structured: StructuredMode,
    /// Reasoning models take `max_completion_tokens` and `developer` messages.
    pub reasoning_model: bool,
    /// Counts prompt tokens to infer `max_tokens` for `/completions`.
    pub tokenizer: Option<Arc<dyn Tokenizer>>,
    pub messages_to_prompt: Option<MessagesToPrompt>,
    pub completion_to_prompt: Option<CompletionToPrompt>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(self.class_name)
            .field("model", &self.params.model)
            .field("client", &self.client)
            .field("temperature", &self.params.temperature)
            .field("max_tokens", &self.params.max_tokens)
            .field("seed", &self.params.seed)
            .field("stop", &self.params.stop)
            .field(
                "additional_kwargs",
                &self.params.additional_kwargs.keys().collect::<Vec<_>>(),
            )
            .field("metadata", &self.metadata)
            .field("structured", &self.structured)
            .finish_non_exhaustive()
    }
}

impl Engine {
    fn what(&self, endpoint: &str) -> String {
        format!("{endpoint} with model `{}`", self.params.model)
    }

    /// Parameters every request carries: LlamaIndex's `_get_model_kwargs`
    /// (`additional_kwargs` override the named ones), then the call's own.
    fn body(&self, stream: bool, extra: Map<String, Value>) -> Map<String, Value> {
        let p = &self.params;
        let mut body = Map::new();
        body.insert("model".to_owned(), json!(p.model));
        if let Some(t) = p.temperature {
            body.insert("temperature".to_owned(), json!(t));
        }
        if let Some(n) = p.max_tokens {
            let key = if self.reasoning_model {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.to_owned(), json!(n));
        }
        if let Some(seed) = p.seed {
            body.insert("seed".to_owned(), json!(seed));
        }
        if !p.stop.is_empty() {
            body.insert("stop".to_owned(), json!(p.stop));
        }
        if let Some(effort) = &p.reasoning_effort {
            body.insert("reasoning_effort".to_owned(), json!(effort));
        }
        for (k, v) in &p.additional_kwargs {
            body.insert(k.clone(), v.clone());
        }
        for (k, v) in extra {
            body.insert(k, v);
        }
        body.insert("stream".to_owned(), json!(stream));
        if !stream {
            // OpenAI refuses stream_options on a request that does not stream.
            body.remove("stream_options");
        }
        body
    }

    fn chat_body(
        &self,
        messages: &[ChatMessage],
        stream: bool,
        extra: Map<String, Value>,
    ) -> Map<String, Value> {
        let mut body = self.body(stream, extra);
        let wire: Vec<Value> = messages
            .iter()
            .map(|m| message_to_wire(m, self.reasoning_model))
            .collect();
        body.insert("messages".to_owned(), Value::Array(wire));
        body
    }

    fn provider_error(&self, message: String) -> Error {
        Error::Provider {
            provider: PROVIDER.to_owned(),
            message: self.client.scrub(&message),
            source: None,
        }
    }

    fn parse_reply(&self, what: &str, raw: &Value) -> Result<WireChatCompletion> {
        let reply: WireChatCompletion = serde_json::from_value(raw.clone()).map_err(|e| {
            Error::provider(
                PROVIDER,
                format!(
                    "{what}: unreadable reply ({e}): {}",
                    self.client.scrub(&raw.to_string())
                ),
                e,
            )
        })?;
        if let Some(error) = &reply.error {
            return Err(self.provider_error(format!(
                "{what}: the server reported an error: {}",
                error_text(error)
            )));
        }
        if reply.choices.is_empty() {
            return Err(self.provider_error(format!("{what}: the reply has no choices: {raw}")));
        }
        Ok(reply)
    }

    async fn chat_request(&self, body: Map<String, Value>) -> Result<ChatResponse> {
        let what = self.what("chat completion");
        let raw: Value = self
            .client
            .sdk()
            .chat()
            .create_byot(Value::Object(body))
            .await
            .map_err(|e| self.client.map_error(&what, e))?;
        let reply = self.parse_reply(&what, &raw)?;
        let usage = reply.usage.map(|u| u.to_usage());
        let message = reply
            .choices
            .first()
            .and_then(|c| c.message.as_ref().or(c.delta.as_ref()))
            .map(message_from_wire)
            .unwrap_or_else(|| ChatMessage::assistant(""));
        tracing::debug!(
            model = %self.params.model,
            prompt_tokens = usage.map(|u| u.prompt_tokens),
            completion_tokens = usage.map(|u| u.completion_tokens),
            tool_calls = message.tool_calls.len(),
            "openai chat completion"
        );
        Ok(ChatResponse {
            message,
            delta: None,
            raw: Some(raw),
            usage,
        })
    }

    async fn stream_chat_request(&self, body: Map<String, Value>) -> Result<ChatResponseStream> {
        let what = self.what("streamed chat completion");
        let chunks = self
            .client
            .sdk()
            .chat()
            .create_stream_byot::<Value, Value>(Value::Object(body))
            .await
            .map_err(|e| self.client.map_error(&what, e))?;
        Ok(chat_stream(chunks.boxed(), self.client.clone(), what))
    }

    /// The `/completions` body; `max_tokens`, when not set, is what the
    /// context window leaves beside the prompt if a tokenizer can count it
    /// (LlamaIndex's `_update_max_tokens`: that endpoint needs one).
    fn completion_body(&self, prompt: &str, stream: bool) -> Result<Map<String, Value>> {
        let mut body = self.body(stream, Map::new());
        if self.params.max_tokens.is_none() {
            if let Some(tokenizer) = &self.tokenizer {
                let used = tokenizer.count(prompt);
                let window = self.metadata.context_window;
                if used >= window {
                    return Err(Error::InvalidInput(format!(
                        "the prompt is {used} tokens long, leaving no room to answer in the \
                         {window}-token context window of model `{}`",
                        self.params.model
                    )));
                }
                body.insert("max_tokens".to_owned(), json!(window - used));
            }
        }
        body.insert("prompt".to_owned(), json!(prompt));
        Ok(body)
    }

    async fn complete_request(&self, prompt: &str) -> Result<CompletionResponse> {
        let what = self.what("completion");
        let body = self.completion_body(prompt, false)?;
        let raw: Value = self
            .client
            .sdk()
            .completions()
            .create_byot(Value::Object(body))
            .await
            .map_err(|e| self.client.map_error(&what, e))?;
        let reply = self.parse_reply(&what, &raw)?;
        let text = reply
            .choices
            .first()
            .and_then(|c| c.text.clone())
            .unwrap_or_default();
        Ok(CompletionResponse {
            text,
            delta: None,
            raw: Some(raw),
            usage: reply.usage.map(|u| u.to_usage()),
        })
    }

    async fn stream_complete_request(&self, prompt: &str) -> Result<CompletionResponseStream> {
        let what = self.what("streamed completion");
        let body = self.completion_body(prompt, true)?;
        let chunks = self
            .client
            .sdk()
            .completions()
            .create_stream_byot::<Value, Value>(Value::Object(body))
            .await
            .map_err(|e| self.client.map_error(&what, e))?;
        Ok(completion_stream(chunks.boxed(), self.client.clone(), what))
    }

    fn prompt_from_messages(&self, messages: &[ChatMessage]) -> String {
        match &self.messages_to_prompt {
            Some(f) => f(messages),
            None => messages_to_prompt(messages),
        }
    }

    fn formatted_prompt(&self, prompt: &str, formatted: bool) -> String {
        match &self.completion_to_prompt {
            Some(f) if !formatted => f(prompt),
            _ => prompt.to_owned(),
        }
    }

    /// `tools` and `tool_choice` in OpenAI's format. For function-calling
    /// models each function carries `strict` and closes its parameters
    /// (`additionalProperties: false`), as LlamaIndex's `_prepare_chat_with_tools` does.
    fn tools_payload(
        &self,
        tools: &[ToolMetadata],
        tool_choice: &ToolChoice,
    ) -> Map<String, Value> {
        let mut extra = Map::new();
        if tools.is_empty() {
            return extra;
        }
        let specs: Vec<Value> = tools
            .iter()
            .map(|tool| {
                // LlamaIndex sends descriptions unchecked here (skip_length_check=True).
                let mut spec = tool.to_openai_tool_unchecked();
                if self.metadata.is_function_calling_model {
                    if let Some(function) = spec.get_mut("function").and_then(Value::as_object_mut)
                    {
                        function.insert("strict".to_owned(), json!(self.params.strict));
                        if let Some(params) = function
                            .get_mut("parameters")
                            .and_then(Value::as_object_mut)
                        {
                            params.insert("additionalProperties".to_owned(), json!(false));
                        }
                    }
                }
                spec
            })
            .collect();
        extra.insert("tools".to_owned(), Value::Array(specs));
        extra.insert("tool_choice".to_owned(), tool_choice.to_openai());
        extra
    }

    fn require_chat_model(&self, what: &str) -> Result<()> {
        if self.metadata.is_chat_model {
            Ok(())
        } else {
            Err(Error::Unsupported(format!(
                "{what} needs the chat completions API, but model `{}` is configured as a \
                 completion model (is_chat_model = false)",
                self.params.model
            )))
        }
    }

    async fn structured_by_response_format(
        &self,
        messages: &[ChatMessage],
        schema: &Value,
    ) -> Result<Value> {
        let name = schema_name(schema);
        let mut format = Map::new();
        format.insert("name".to_owned(), json!(name));
        if let Some(description) = schema.get("description").and_then(Value::as_str) {
            format.insert("description".to_owned(), json!(description));
        }
        format.insert("schema".to_owned(), to_strict_json_schema(schema));
        format.insert("strict".to_owned(), json!(true));
        let mut extra = Map::new();
        extra.insert(
            "response_format".to_owned(),
            json!({"type": "json_schema", "json_schema": Value::Object(format)}),
        );
        let reply = self
            .chat_request(self.chat_body(messages, false, extra))
            .await?;
        parse_json_reply(&reply.message.content)
    }

    async fn structured_by_tool_call(
        &self,
        messages: &[ChatMessage],
        schema: &Value,
    ) -> Result<Value> {
        let name = schema_name(schema);
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tool = ToolMetadata::new(name, description).with_fn_schema(schema.clone());
        // LlamaIndex forces a call with tool_choice="required".
        let extra = self.tools_payload(&[tool], &ToolChoice::Required);
        let reply = self
            .chat_request(self.chat_body(messages, false, extra))
            .await?;
        match reply.message.tool_calls.first() {
            Some(call) => match parse_arguments(&call.arguments) {
                Value::Object(map) => Ok(Value::Object(map)),
                other => Err(Error::OutputParse(format!(
                    "model `{}` called `{}` with arguments that are not a JSON object: {other}",
                    self.params.model, call.name
                ))),
            },
            None => Err(Error::OutputParse(format!(
                "expected model `{}` to call the output tool, but it answered with text: {:?}",
                self.params.model, reply.message.content
            ))),
        }
    }
}

#[async_trait]
impl Llm for Engine {
    fn metadata(&self) -> LlmMetadata {
        self.metadata.clone()
    }

    async fn chat(&self, messages: &[ChatMessage]) -> Result<ChatResponse> {
        if self.metadata.is_chat_model {
            self.chat_request(self.chat_body(messages, false, Map::new()))
                .await
        } else {
            let prompt = self.prompt_from_messages(messages);
            Ok(completion_response_to_chat_response(
                self.complete_request(&prompt).await?,
            ))
        }
    }

    async fn complete(&self, prompt: &str, formatted: bool) -> Result<CompletionResponse> {
        let prompt = self.formatted_prompt(prompt, formatted);
        if self.metadata.is_chat_model {
            let messages = [ChatMessage::user(prompt)];
            Ok(chat_response_to_completion_response(
                self.chat_request(self.chat_body(&messages, false, Map::new()))
                    .await?,
            ))
        } else {
            self.complete_request(&prompt).await
        }
    }

    async fn stream_chat(&self, messages: &[ChatMessage]) -> Result<ChatResponseStream> {
        if self.metadata.is_chat_model {
            self.stream_chat_request(self.chat_body(messages, true, Map::new()))
                .await
        } else {
            let prompt = self.prompt_from_messages(messages);
            Ok(stream_completion_response_to_chat_response(
                self.stream_complete_request(&prompt).await?,
            ))
        }
    }

    async fn stream_complete(
        &self,
        prompt: &str,
        formatted: bool,
    ) -> Result<CompletionResponseStream> {
        let prompt = self.formatted_prompt(prompt, formatted);
        if self.metadata.is_chat_model {
            let messages = [ChatMessage::user(prompt)];
            Ok(stream_chat_response_to_completion_response(
                self.stream_chat_request(self.chat_body(&messages, true, Map::new()))
                    .await?,
            ))
        } else {
            self.stream_complete_request(&prompt).await
        }
    }

    async fn tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponse> {
        self.require_chat_model("chat_with_tools")?;
        let extra = self.tools_payload(request.tools, request.tool_choice);
        self.chat_request(self.chat_body(request.messages, false, extra))
            .await
    }

    async fn stream_tool_chat(&self, request: ToolChatRequest<'_>) -> Result<ChatResponseStream> {
        self.require_chat_model("stream_chat_with_tools")?;
        let extra = self.tools_payload(request.tools, request.tool_choice);
        self.stream_chat_request(self.chat_body(request.messages, true, extra))
            .await
    }

    async fn structured_chat(&self, messages: &[ChatMessage], schema: &Value) -> Result<Value> {
        let mode = if self.metadata.is_chat_model {
            self.structured
        } else {
            StructuredMode::Prompt
        };
        match mode {
            StructuredMode::ResponseFormat => {
                self.structured_by_response_format(messages, schema).await
            }
            StructuredMode::ToolCall => self.structured_by_tool_call(messages, schema).await,
            StructuredMode::Prompt => {
                let prompt = messages_with_schema_instructions(messages, schema)?;
                let reply = self.chat(&prompt).await?;
                parse_json_reply(&reply.message.content)
            }
        }
    }
}
