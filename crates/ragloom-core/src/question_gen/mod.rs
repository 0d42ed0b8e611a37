//! Question generators: break a complex query into sub-questions, each aimed
//! at one named tool, as JSON in text (`LLMQuestionGenerator`) or through a tool call.

mod function_calling;
mod llm_generators;
mod output_parser;
pub mod prompts;

pub use function_calling::{
    FunctionCallingQuestionGenerator, OpenAIQuestionGenerator, sub_question_list_tool,
};
pub use llm_generators::LLMQuestionGenerator;
pub use output_parser::SubQuestionOutputParser;
pub use prompts::build_tools_text;

use crate::error::Result;
use crate::prompts::PromptMixin;
use crate::schema::QueryBundle;
use crate::tools::ToolMetadata;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One sub-question and the tool meant to answer it (LlamaIndex `SubQuestion`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SubQuestion {
    /// The question.
    pub sub_question: String,
    /// The name of the tool (query engine) to ask.
    pub tool_name: String,
}

impl SubQuestion {
    /// A sub-question for `tool_name`.
    pub fn new(sub_question: impl Into<String>, tool_name: impl Into<String>) -> Self {
        Self {
            sub_question: sub_question.into(),
            tool_name: tool_name.into(),
        }
    }
}

/// A list of sub-questions (LlamaIndex `SubQuestionList`, the function-calling schema).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubQuestionList {
    /// The sub-questions.
    pub items: Vec<SubQuestion>,
}

/// Generates sub-questions for a query over described tools (LlamaIndex
/// `BaseQuestionGenerator`). Its prompts are reachable through [`PromptMixin`].
#[async_trait]
pub trait QuestionGenerator: PromptMixin + Send + Sync + std::fmt::Debug {
    /// The sub-questions that, answered by the named tools, answer `query`.
    async fn generate(
        &self,
        tools: &[ToolMetadata],
        query: &QueryBundle,
    ) -> Result<Vec<SubQuestion>>;
}
