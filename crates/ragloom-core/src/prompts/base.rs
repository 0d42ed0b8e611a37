//! Templates with `{var}` placeholders and partial formatting: plain text,
//! chat messages, and a selector that picks the chat form for chat models.

use crate::error::{Error, Result};
use crate::llms::{ChatMessage, MessageRole};
use crate::utils::{format_named, template_vars};
use std::collections::BTreeMap;

/// What a prompt is for, as LlamaIndex's `PromptType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PromptType {
    /// Answer a question from context (`text_qa_template`).
    QuestionAnswer,
    /// Refine an existing answer with more context.
    Refine,
    /// Summarize chunks (tree summarize).
    Summary,
    /// Pass the query through unchanged.
    SimpleInput,
    /// Anything else.
    #[default]
    Custom,
}

/// A text template such as `"Context: {context_str}\nQuery: {query_str}"`.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptTemplate {
    /// The template text with `{var}` placeholders.
    pub template: String,
    /// Variables already filled by [`PromptTemplate::partial_format`].
    pub kwargs: BTreeMap<String, String>,
    /// What this prompt is for.
    pub prompt_type: PromptType,
    /// Renames applied to caller variables before formatting
    /// (caller name → template name), LlamaIndex `template_var_mappings`.
    pub template_var_mappings: BTreeMap<String, String>,
}

impl PromptTemplate {
    /// A template of type [`PromptType::Custom`].
    pub fn new(template: impl Into<String>) -> Self {
        Self::with_type(template, PromptType::Custom)
    }

    /// A template of the given type.
    pub fn with_type(template: impl Into<String>, prompt_type: PromptType) -> Self {
        Self {
            template: template.into(),
            kwargs: BTreeMap::new(),
            prompt_type,
            template_var_mappings: BTreeMap::new(),
        }
    }

    /// The template's variables, in order of appearance.
    pub fn template_vars(&self) -> Vec<String> {
        template_vars(&self.template)
    }

    /// A copy with some variables filled in.
    pub fn partial_format(&self, vars: &[(&str, &str)]) -> Self {
        let mut out = self.clone();
        for (k, v) in vars {
            out.kwargs
                .insert(self.map_var(k).to_string(), v.to_string());
        }
        out
    }

    fn map_var<'a>(&'a self, name: &'a str) -> &'a str {
        self.template_var_mappings
            .get(name)
            .map(String::as_str)
            .unwrap_or(name)
    }

    /// Formats with the partial variables plus `vars`; a variable without a
    /// value is an error naming it.
    pub fn format(&self, vars: &[(&str, &str)]) -> Result<String> {
        let all = filled_vars(&self.kwargs, vars, |k| self.map_var(k));
        format_named(&self.template, &|name| all.get(name).copied())
    }

    /// The formatted prompt as a single user message.
    pub fn format_messages(&self, vars: &[(&str, &str)]) -> Result<Vec<ChatMessage>> {
        Ok(vec![ChatMessage::user(self.format(vars)?)])
    }
}

/// The partial variables, then `vars` over them, each name of `vars`
/// through `map_name` (a template's variable mappings).
fn filled_vars<'a>(
    partial: &'a BTreeMap<String, String>,
    vars: &[(&'a str, &'a str)],
    map_name: impl Fn(&'a str) -> &'a str,
) -> BTreeMap<&'a str, &'a str> {
    let mut all: BTreeMap<&str, &str> = partial
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for (k, v) in vars {
        all.insert(map_name(k), v);
    }
    all
}

impl From<&str> for PromptTemplate {
    fn from(s: &str) -> Self {
        PromptTemplate::new(s)
    }
}

/// A template made of chat messages, each a template of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatPromptTemplate {
    /// `(role, template)` pairs.
    pub message_templates: Vec<(MessageRole, String)>,
    /// Variables already filled.
    pub kwargs: BTreeMap<String, String>,
    /// What this prompt is for.
    pub prompt_type: PromptType,
}

impl ChatPromptTemplate {
    /// A chat template from `(role, template)` pairs.
    pub fn from_messages(messages: Vec<(MessageRole, String)>, prompt_type: PromptType) -> Self {
        Self {
            message_templates: messages,
            kwargs: BTreeMap::new(),
            prompt_type,
        }
    }

    /// Every variable of every message, in order of appearance.
    pub fn template_vars(&self) -> Vec<String> {
        let mut vars: Vec<String> = Vec::new();
        for (_, t) in &self.message_templates {
            for v in template_vars(t) {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
        }
        vars
    }

    /// A copy with some variables filled in.
    pub fn partial_format(&self, vars: &[(&str, &str)]) -> Self {
        let mut out = self.clone();
        for (k, v) in vars {
            out.kwargs.insert(k.to_string(), v.to_string());
        }
        out
    }

    /// Formats every message; a message's unknown variables are an error.
    pub fn format_messages(&self, vars: &[(&str, &str)]) -> Result<Vec<ChatMessage>> {
        let all = filled_vars(&self.kwargs, vars, |k| k);
        self.message_templates
            .iter()
            .map(|(role, t)| {
                let content = format_named(t, &|name| all.get(name).copied())?;
                Ok(ChatMessage::new(*role, content))
            })
            .collect()
    }

    /// The messages joined as LlamaIndex's `messages_to_prompt` does
    /// (`role: content` lines, then `assistant: `).
    pub fn format(&self, vars: &[(&str, &str)]) -> Result<String> {
        let messages = self.format_messages(vars)?;
        Ok(crate::llms::messages_to_prompt(&messages))
    }
}

/// A default template with an optional chat form, chosen by whether the LLM
/// is a chat model (LlamaIndex `SelectorPromptTemplate` with `is_chat_model`).
#[derive(Clone, Debug, PartialEq)]
pub struct SelectorPromptTemplate {
    /// Used for completion models, and when no LLM is known.
    pub default_template: Box<BasePromptTemplate>,
    /// Used for chat models.
    pub chat_template: Option<Box<BasePromptTemplate>>,
}

/// Any prompt template.
#[derive(Clone, Debug, PartialEq)]
pub enum BasePromptTemplate {
    /// A text template.
    Text(PromptTemplate),
    /// A chat template.
    Chat(ChatPromptTemplate),
    /// A choice between a text and a chat template.
    Selector(SelectorPromptTemplate),
}

impl From<PromptTemplate> for BasePromptTemplate {
    fn from(t: PromptTemplate) -> Self {
        BasePromptTemplate::Text(t)
    }
}

impl From<ChatPromptTemplate> for BasePromptTemplate {
    fn from(t: ChatPromptTemplate) -> Self {
        BasePromptTemplate::Chat(t)
    }
}

impl From<&str> for BasePromptTemplate {
    fn from(t: &str) -> Self {
        BasePromptTemplate::Text(PromptTemplate::new(t))
    }
}

impl BasePromptTemplate {
    /// The concrete template for an LLM that is (or is not) a chat model.
    pub fn select(&self, is_chat_model: bool) -> &BasePromptTemplate {
        match self {
            BasePromptTemplate::Selector(s) => match (&s.chat_template, is_chat_model) {
                (Some(chat), true) => chat.select(true),
                _ => s.default_template.select(is_chat_model),
            },
            other => other,
        }
    }

    /// What the prompt is for.
    pub fn prompt_type(&self) -> PromptType {
        match self {
            BasePromptTemplate::Text(t) => t.prompt_type,
            BasePromptTemplate::Chat(t) => t.prompt_type,
            BasePromptTemplate::Selector(s) => s.default_template.prompt_type(),
        }
    }

    /// The variables still to be filled.
    pub fn template_vars(&self) -> Vec<String> {
        match self {
            BasePromptTemplate::Text(t) => t.template_vars(),
            BasePromptTemplate::Chat(t) => t.template_vars(),
            BasePromptTemplate::Selector(s) => s.default_template.template_vars(),
        }
    }

    /// The variables already filled.
    pub fn kwargs(&self) -> &BTreeMap<String, String> {
        match self {
            BasePromptTemplate::Text(t) => &t.kwargs,
            BasePromptTemplate::Chat(t) => &t.kwargs,
            BasePromptTemplate::Selector(s) => s.default_template.kwargs(),
        }
    }

    /// A copy with some variables filled in (in every alternative).
    pub fn partial_format(&self, vars: &[(&str, &str)]) -> Self {
        match self {
            BasePromptTemplate::Text(t) => BasePromptTemplate::Text(t.partial_format(vars)),
            BasePromptTemplate::Chat(t) => BasePromptTemplate::Chat(t.partial_format(vars)),
            BasePromptTemplate::Selector(s) => {
                BasePromptTemplate::Selector(SelectorPromptTemplate {
                    default_template: Box::new(s.default_template.partial_format(vars)),
                    chat_template: s
                        .chat_template
                        .as_ref()
                        .map(|c| Box::new(c.partial_format(vars))),
                })
            }
        }
    }

    /// The prompt as text (a selector formats its default template).
    pub fn format(&self, vars: &[(&str, &str)]) -> Result<String> {
        match self {
            BasePromptTemplate::Text(t) => t.format(vars),
            BasePromptTemplate::Chat(t) => t.format(vars),
            BasePromptTemplate::Selector(s) => s.default_template.format(vars),
        }
    }

    /// The prompt as chat messages (a selector formats its default template).
    pub fn format_messages(&self, vars: &[(&str, &str)]) -> Result<Vec<ChatMessage>> {
        match self {
            BasePromptTemplate::Text(t) => t.format_messages(vars),
            BasePromptTemplate::Chat(t) => t.format_messages(vars),
            BasePromptTemplate::Selector(s) => s.default_template.format_messages(vars),
        }
    }

    /// The prompt with every unfilled variable set to `""` (LlamaIndex
    /// `get_empty_prompt_txt`): what the template costs before any context.
    pub fn empty_prompt_text(&self) -> String {
        let vars = self.unfilled_vars();
        self.format(&empty_values(&vars)).unwrap_or_default()
    }

    /// Like [`empty_prompt_text`](Self::empty_prompt_text), as messages.
    pub fn empty_prompt_messages(&self) -> Vec<ChatMessage> {
        let vars = self.unfilled_vars();
        self.format_messages(&empty_values(&vars))
            .unwrap_or_default()
    }

    /// The template's variables no partial fills.
    fn unfilled_vars(&self) -> Vec<String> {
        let mut vars = self.template_vars();
        vars.retain(|v| !self.kwargs().contains_key(v));
        vars
    }

    /// Checks that the template has each of `required` variables, so a user's
    /// replacement prompt that lacks `{context_str}` fails at once, not at query time.
    pub fn require_vars(&self, required: &[&str]) -> Result<()> {
        let vars = self.template_vars();
        let filled = self.kwargs();
        for r in required {
            if !vars.iter().any(|v| v == r) && !filled.contains_key(*r) {
                return Err(Error::InvalidInput(format!(
                    "prompt template lacks the variable `{{{r}}}`"
                )));
            }
        }
        Ok(())
    }
}

/// Each variable set to `""`.
fn empty_values(vars: &[String]) -> Vec<(&str, &str)> {
    vars.iter().map(|v| (v.as_str(), "")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_then_full_format() {
        let t = PromptTemplate::new("Q: {query_str}\nC: {context_str}");
        let p = t.partial_format(&[("query_str", "why?")]);
        assert_eq!(
            p.format(&[("context_str", "because")]).ok().as_deref(),
            Some("Q: why?\nC: because")
        );
        assert!(
            t.format(&[("query_str", "x")])
                .is_err_and(|e| e.to_string().contains("context_str"))
        );
        let base: BasePromptTemplate = p.into();
        assert_eq!(base.empty_prompt_text(), "Q: why?\nC: ");
    }

    #[test]
    fn var_mappings_rename_caller_vars() {
        let mut t = PromptTemplate::new("{my_context}");
        t.template_var_mappings
            .insert("context_str".into(), "my_context".into());
        assert_eq!(t.format(&[("context_str", "x")]).ok().as_deref(), Some("x"));
    }

    #[test]
    fn selector_picks_chat_form_for_chat_models() {
        let sel = BasePromptTemplate::Selector(SelectorPromptTemplate {
            default_template: Box::new("text {a}".into()),
            chat_template: Some(Box::new(BasePromptTemplate::Chat(
                ChatPromptTemplate::from_messages(
                    vec![
                        (MessageRole::System, "sys".into()),
                        (MessageRole::User, "chat {a}".into()),
                    ],
                    PromptType::Custom,
                ),
            ))),
        });
        assert!(matches!(sel.select(false), BasePromptTemplate::Text(_)));
        let chat = sel
            .select(true)
            .format_messages(&[("a", "1")])
            .unwrap_or_default();
        assert_eq!(chat.len(), 2);
        assert_eq!(chat[1].content, "chat 1");
        assert!(sel.require_vars(&["a"]).is_ok());
        assert!(sel.require_vars(&["context_str"]).is_err());
    }
}
