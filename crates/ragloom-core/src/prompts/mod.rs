//! Prompt templates (text, chat, and selectors between them), LlamaIndex's
//! default prompts, `get_prompts`/`update_prompts`, and the `PromptHelper` that packs context.

mod base;
pub mod default_prompts;
mod mixin;

pub use base::{
    BasePromptTemplate, ChatPromptTemplate, PromptTemplate, PromptType, SelectorPromptTemplate,
};
pub use mixin::{PromptDictType, PromptMixin};
pub(crate) use mixin::{delegate_prompts, own_prompts};
