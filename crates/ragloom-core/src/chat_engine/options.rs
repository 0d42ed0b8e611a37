//! What chat engine builders share (LlamaIndex's `from_defaults` arguments):
//! a memory or the history a default one starts from, a system prompt or
//! prefix messages, and postprocessors for retrieved nodes.

use super::utils::default_memory;
use crate::error::{Error, Result};
use crate::llms::{ChatMessage, Llm};
use crate::memory::BaseMemory;
use crate::postprocessor::NodePostprocessor;
use std::sync::Arc;

/// The options chat engine builders share; each engine takes the ones it uses.
#[derive(Clone, Debug, Default)]
pub struct ChatEngineOptions {
    /// The memory; `None`: a `ChatMemoryBuffer` of the LLM's context window
    /// minus 256 tokens, holding `chat_history`.
    pub memory: Option<Arc<dyn BaseMemory>>,
    /// The conversation so far, for the default memory (ignored when a
    /// memory is given, as in LlamaIndex).
    pub chat_history: Vec<ChatMessage>,
    /// A system prompt (the context engines put it after the retrieved context).
    pub system_prompt: Option<String>,
    /// Messages sent before the history on every turn, instead of a system prompt.
    pub prefix_messages: Option<Vec<ChatMessage>>,
    /// Postprocessors for retrieved nodes, run in order.
    pub node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

impl ChatEngineOptions {
    /// The memory given, else the default one over `llm` holding the history.
    pub(crate) fn take_memory(&mut self, llm: &dyn Llm) -> Result<Arc<dyn BaseMemory>> {
        match self.memory.take() {
            Some(memory) => Ok(memory),
            None => default_memory(llm, std::mem::take(&mut self.chat_history)),
        }
    }

    /// The prefix messages: the system prompt as one message in the LLM's
    /// system role, or the messages given; both at once is an error.
    pub(crate) fn take_prefix_messages(&mut self, llm: &dyn Llm) -> Result<Vec<ChatMessage>> {
        match (self.system_prompt.take(), self.prefix_messages.take()) {
            (Some(_), Some(_)) => Err(Error::InvalidInput(
                "give a chat engine either `system_prompt` or `prefix_messages`, not both"
                    .to_owned(),
            )),
            (Some(prompt), None) => Ok(vec![ChatMessage::new(llm.metadata().system_role, prompt)]),
            (None, Some(messages)) => Ok(messages),
            (None, None) => Ok(Vec::new()),
        }
    }
}

/// Setters for the [`ChatEngineOptions`] a builder (with an `options` field) takes.
macro_rules! chat_engine_option_setters {
    ($($option:ident),+ $(,)?) => {
        $( chat_engine_option_setters!(@ $option); )+
    };
    (@memory) => {
        /// The memory (default: a `ChatMemoryBuffer` of the LLM's context
        /// window minus 256 tokens, holding `chat_history`).
        pub fn memory(mut self, memory: std::sync::Arc<dyn $crate::memory::BaseMemory>) -> Self {
            self.options.memory = Some(memory);
            self
        }
    };
    (@chat_history) => {
        /// The conversation so far, for the default memory (ignored when a
        /// memory is given, as in LlamaIndex).
        pub fn chat_history(mut self, chat_history: Vec<$crate::llms::ChatMessage>) -> Self {
            self.options.chat_history = chat_history;
            self
        }
    };
    (@system_prompt) => {
        /// A system prompt (the context engines put it after the retrieved context).
        pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
            self.options.system_prompt = Some(system_prompt.into());
            self
        }
    };
    (@prefix_messages) => {
        /// Messages sent before the history on every turn, instead of a
        /// system prompt (the context engine appends a leading system
        /// message among them to the context).
        pub fn prefix_messages(mut self, prefix_messages: Vec<$crate::llms::ChatMessage>) -> Self {
            self.options.prefix_messages = Some(prefix_messages);
            self
        }
    };
    (@node_postprocessor) => {
        $crate::postprocessor::node_postprocessor_setter!();
    };
}
pub(crate) use chat_engine_option_setters;
