//! What query engine builders share (LlamaIndex's `from_args` arguments):
//! an LLM or a synthesizer, the response mode, and node postprocessors.

use crate::error::{Error, Result};
use crate::llms::Llm;
use crate::postprocessor::NodePostprocessor;
use crate::prompts::PromptDictType;
use crate::response_synthesizers::{ResponseMode, Synthesizer, get_response_synthesizer};
use std::sync::Arc;

/// The options query engine builders share; each engine takes what it uses.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueryEngineOptions {
    pub(crate) llm: Option<Arc<dyn Llm>>,
    pub(crate) synthesizer: Option<Arc<dyn Synthesizer>>,
    pub(crate) response_mode: ResponseMode,
    pub(crate) node_postprocessors: Vec<Arc<dyn NodePostprocessor>>,
}

impl QueryEngineOptions {
    /// The synthesizer given (as it is), else one of the response mode over
    /// the LLM with `prompts` set on it; neither is an error naming `engine`.
    pub(crate) fn take_synthesizer(
        &mut self,
        engine: &str,
        prompts: PromptDictType,
    ) -> Result<Arc<dyn Synthesizer>> {
        if let Some(synthesizer) = self.synthesizer.take() {
            return Ok(synthesizer);
        }
        let Some(llm) = self.llm.take() else {
            return Err(Error::InvalidInput(format!(
                "{engine} needs an LLM or a synthesizer"
            )));
        };
        let mut synthesizer = get_response_synthesizer(llm, self.response_mode)?;
        if !prompts.is_empty() {
            Arc::get_mut(&mut synthesizer)
                .ok_or_else(|| Error::Other("a new synthesizer is unexpectedly shared".to_owned()))?
                .update_prompts(&prompts)?;
        }
        Ok(synthesizer)
    }
}

/// The setters of [`QueryEngineOptions`] for a builder with an `options`
/// field; the argument names the synthesizer's setter (LlamaIndex calls it
/// `response_synthesizer` on some engines).
macro_rules! query_engine_option_setters {
    ($synthesizer:ident) => {
        /// The LLM the default synthesizer uses.
        pub fn llm(mut self, llm: std::sync::Arc<dyn $crate::llms::Llm>) -> Self {
            self.options.llm = Some(llm);
            self
        }

        /// A synthesizer to use as it is, instead of one built from `llm`
        /// and `response_mode` (an engine's own prompts, such as the
        /// citation ones, are not set on it).
        pub fn $synthesizer(
            mut self,
            synthesizer: std::sync::Arc<dyn $crate::response_synthesizers::Synthesizer>,
        ) -> Self {
            self.options.synthesizer = Some(synthesizer);
            self
        }

        /// The response mode of the default synthesizer (default `Compact`).
        pub fn response_mode(mut self, mode: $crate::response_synthesizers::ResponseMode) -> Self {
            self.options.response_mode = mode;
            self
        }

        $crate::postprocessor::node_postprocessor_setter!();
    };
}
pub(crate) use query_engine_option_setters;
