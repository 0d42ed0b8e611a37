//! Output parsers: read structured answers (JSON lists of choices, sub-questions)
//! out of free model text, tolerating code fences, stray prose and YAML-ish JSON.

pub mod selection;
pub mod utils;

pub use selection::{Answer, FORMAT_STR, SelectionOutputParser, escape_curly_braces};
pub use utils::{marshal_llm_to_json, parse_json_markdown, parse_relaxed_json};

use crate::error::Result;
use crate::llms::{ChatMessage, Llm, MessageRole, predict};
use crate::prompts::{BasePromptTemplate, ChatPromptTemplate, PromptTemplate, PromptType};

/// LlamaIndex's `LLM.predict` for a prompt that carries an output parser:
/// the prompt is formatted, `format_instructions` is applied to the result
/// (to the text for completion models; to a leading system message, else to
/// the last message, for chat models, as `BaseOutputParser.format_messages`
/// does), and the reply text is returned.
pub(crate) async fn predict_with_format(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
    format_instructions: &(dyn Fn(&str) -> String + Send + Sync),
) -> Result<String> {
    let is_chat = llm.metadata().is_chat_model;
    let selected = prompt.select(is_chat);
    // The formatted text is wrapped back into a template with its braces
    // doubled, so `predict` (and its `llm` span) sends it unchanged.
    let ready: BasePromptTemplate = if is_chat {
        let mut messages = selected.format_messages(vars)?;
        let target = match messages.first() {
            Some(first) if first.role == MessageRole::System => Some(0),
            Some(_) => Some(messages.len() - 1),
            None => None,
        };
        if let Some(i) = target {
            let formatted = format_instructions(&messages[i].content);
            messages[i].content = formatted;
        }
        ChatPromptTemplate::from_messages(
            messages
                .iter()
                .map(|m: &ChatMessage| (m.role, escape_curly_braces(&m.content)))
                .collect(),
            PromptType::Custom,
        )
        .into()
    } else {
        let text = format_instructions(&selected.format(vars)?);
        PromptTemplate::new(escape_curly_braces(&text)).into()
    };
    predict(llm, &ready, &[]).await
}
