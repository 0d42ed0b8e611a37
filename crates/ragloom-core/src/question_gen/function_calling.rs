//! The function-calling question generator (LlamaIndex's `OpenAIQuestionGenerator`,
//! here for any model with native tool calling): the model fills a `SubQuestionList` call.

use super::prompts::{DEFAULT_OPENAI_SUB_QUESTION_PROMPT_TMPL, build_tools_text};
use super::{QuestionGenerator, SubQuestion, SubQuestionList};
use crate::error::{Error, Result};
use crate::llms::{FunctionCallingLlm, Llm, ToolChoice};
use crate::prompts::own_prompts;
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::schema::QueryBundle;
use crate::tools::{ToolMetadata, json_dumps};
use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use tracing::Instrument;

/// The `SubQuestionList` tool: LlamaIndex's pydantic model as a function
/// (its docstring as the description, its schema without titles).
pub fn sub_question_list_tool() -> ToolMetadata {
    ToolMetadata::new(
        "SubQuestionList",
        "A pydantic object wrapping a list of sub-questions.\n\nThis is mostly used to make getting a json schema easier.",
    )
    .with_fn_schema(json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sub_question": {"type": "string"},
                        "tool_name": {"type": "string"}
                    },
                    "required": ["sub_question", "tool_name"]
                }
            }
        },
        "required": ["items"]
    }))
}

/// Generates sub-questions through a forced `SubQuestionList` tool call
/// (LlamaIndex `OpenAIQuestionGenerator`, which needs OpenAI; this works with
/// any model whose `chat_with_tools` is native).
#[derive(Clone, Debug)]
pub struct FunctionCallingQuestionGenerator {
    llm: Arc<dyn Llm>,
    prompt: BasePromptTemplate,
}

/// LlamaIndex's name for a [`FunctionCallingQuestionGenerator`].
pub type OpenAIQuestionGenerator = FunctionCallingQuestionGenerator;

impl FunctionCallingQuestionGenerator {
    /// The generator with LlamaIndex's prompt; a model without native tool
    /// calling is refused (use [`super::LLMQuestionGenerator`]).
    pub fn new(llm: Arc<dyn Llm>) -> Result<Self> {
        let md = llm.metadata();
        if !md.is_function_calling_model {
            return Err(Error::InvalidInput(format!(
                "model `{}` does not support the function calling API; use LLMQuestionGenerator",
                md.model_name
            )));
        }
        Ok(Self {
            llm,
            prompt: PromptTemplate::new(DEFAULT_OPENAI_SUB_QUESTION_PROMPT_TMPL).into(),
        })
    }

    /// Replaces the prompt; it gets `{tools_str}` and `{query_str}`.
    pub fn with_prompt(mut self, prompt: impl Into<BasePromptTemplate>) -> Self {
        self.prompt = prompt.into();
        self
    }
}

#[async_trait]
impl QuestionGenerator for FunctionCallingQuestionGenerator {
    async fn generate(
        &self,
        tools: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<Vec<SubQuestion>> {
        let span = tracing::info_span!(
            "generate_sub_questions",
            tools = tools.len(),
            sub_questions = tracing::field::Empty
        );
        async {
            let tools_str = build_tools_text(tools);
            let messages = self
                .prompt
                .select(true)
                .format_messages(&[("tools_str", &tools_str), ("query_str", &query.query_str)])?;
            let tool = sub_question_list_tool();
            let choice = ToolChoice::Named(tool.name.clone());
            let response = self
                .llm
                .chat_with_tools(&messages, std::slice::from_ref(&tool), &choice)
                .await?;
            let calls = self.llm.get_tool_calls_from_response(&response, true)?;
            // As LlamaIndex's pydantic program: the first call is the answer.
            let Some(call) = calls.into_iter().find(|c| c.name == tool.name) else {
                return Err(Error::OutputParse(format!(
                    "model `{}` did not call `SubQuestionList`; its reply was: {:?}",
                    self.llm.metadata().model_name,
                    response.message.content
                )));
            };
            let list: SubQuestionList = serde_json::from_value(call.arguments.clone()).map_err(|e| {
                Error::OutputParse(format!(
                    "the `SubQuestionList` call could not be read ({e}); the arguments were: {}",
                    json_dumps(&call.arguments)
                ))
            })?;
            tracing::Span::current().record("sub_questions", list.items.len());
            Ok(list.items)
        }
        .instrument(span)
        .await
    }
}

own_prompts!(FunctionCallingQuestionGenerator {
    "question_gen_prompt" => prompt ["tools_str", "query_str"],
});
