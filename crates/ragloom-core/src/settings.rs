//! `Settings`: LlamaIndex's global defaults (LLM, embedding model, chunking,
//! tokenizer, context window) as a plain value built once and passed around.
//!
//! Python keeps these in a mutable global; ragloom has no global state, so a
//! program builds one `Settings` and hands it (or the parts it needs) to the
//! components it creates.

use crate::embeddings::Embedding;
use crate::error::{Error, Result};
use crate::indices::PromptHelper;
use crate::llms::{DEFAULT_CONTEXT_WINDOW, DEFAULT_NUM_OUTPUTS, Llm};
use crate::node_parser::{DEFAULT_CHUNK_SIZE, SENTENCE_CHUNK_OVERLAP, SentenceSplitter};
use crate::tokenizer::{Tokenizer, default_tokenizer};
use crate::transform::TransformComponent;
use std::sync::Arc;

/// The defaults LlamaIndex users set on `Settings`.
///
/// Defaults, as Python's: `chunk_size` 1024 and `chunk_overlap` 200 (those
/// of the default `SentenceSplitter`), `transformations` = `[node_parser]`,
/// the `cl100k_base` tokenizer, and `context_window` / `num_output` taken
/// from the LLM's metadata, else 3900 / 256. Python's default LLM and
/// embedding model are OpenAI's; core has no provider, so both are unset
/// here and [`Settings::llm`] / [`Settings::embed_model`] say so with an
/// error (choosing a provider from the environment belongs to the `ragloom` facade).
#[derive(Clone, Debug)]
pub struct Settings {
    /// The LLM, if one was given.
    pub llm: Option<Arc<dyn Llm>>,
    /// The embedding model, if one was given.
    pub embed_model: Option<Arc<dyn Embedding>>,
    /// Chunk size of the default node parser, in tokens.
    pub chunk_size: usize,
    /// Chunk overlap of the default node parser, in tokens.
    pub chunk_overlap: usize,
    /// A node parser replacing the default `SentenceSplitter`.
    pub node_parser: Option<Arc<dyn TransformComponent>>,
    /// Transformations replacing the default `[node_parser]`.
    pub transformations: Option<Vec<Arc<dyn TransformComponent>>>,
    /// Counts tokens (default `cl100k_base`).
    pub tokenizer: Arc<dyn Tokenizer>,
    /// Overrides the LLM's context window.
    pub context_window: Option<usize>,
    /// Overrides the tokens reserved for the LLM's output.
    pub num_output: Option<usize>,
}

impl Default for Settings {
    fn default() -> Self {
        Self::new()
    }
}

impl Settings {
    /// Python's defaults, with no LLM and no embedding model.
    pub fn new() -> Self {
        Self {
            llm: None,
            embed_model: None,
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_overlap: SENTENCE_CHUNK_OVERLAP,
            node_parser: None,
            transformations: None,
            tokenizer: default_tokenizer(),
            context_window: None,
            num_output: None,
        }
    }

    /// Sets the LLM.
    pub fn with_llm(mut self, llm: Arc<dyn Llm>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// Sets the embedding model.
    pub fn with_embed_model(mut self, embed_model: Arc<dyn Embedding>) -> Self {
        self.embed_model = Some(embed_model);
        self
    }

    /// Sets the default node parser's chunk size.
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }

    /// Sets the default node parser's chunk overlap.
    pub fn with_chunk_overlap(mut self, chunk_overlap: usize) -> Self {
        self.chunk_overlap = chunk_overlap;
        self
    }

    /// Replaces the default node parser.
    pub fn with_node_parser(mut self, node_parser: Arc<dyn TransformComponent>) -> Self {
        self.node_parser = Some(node_parser);
        self
    }

    /// Replaces the default transformations.
    pub fn with_transformations(
        mut self,
        transformations: Vec<Arc<dyn TransformComponent>>,
    ) -> Self {
        self.transformations = Some(transformations);
        self
    }

    /// Sets the tokenizer.
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Overrides the context window.
    pub fn with_context_window(mut self, context_window: usize) -> Self {
        self.context_window = Some(context_window);
        self
    }

    /// Overrides the output reservation.
    pub fn with_num_output(mut self, num_output: usize) -> Self {
        self.num_output = Some(num_output);
        self
    }

    /// The LLM; [`Error::InvalidInput`] when none was set.
    pub fn llm(&self) -> Result<Arc<dyn Llm>> {
        self.llm.clone().ok_or_else(|| {
            Error::InvalidInput("Settings.llm is not set (core has no default LLM)".into())
        })
    }

    /// The embedding model; [`Error::InvalidInput`] when none was set.
    pub fn embed_model(&self) -> Result<Arc<dyn Embedding>> {
        self.embed_model.clone().ok_or_else(|| {
            Error::InvalidInput(
                "Settings.embed_model is not set (core has no default embedding model)".into(),
            )
        })
    }

    /// The node parser: the one set, else a `SentenceSplitter` with
    /// `chunk_size` and `chunk_overlap`.
    pub fn node_parser(&self) -> Arc<dyn TransformComponent> {
        match &self.node_parser {
            Some(p) => p.clone(),
            None => Arc::new(
                SentenceSplitter::new()
                    .chunk_size(self.chunk_size)
                    .chunk_overlap(self.chunk_overlap)
                    .tokenizer(self.tokenizer.clone()),
            ),
        }
    }

    /// The transformations: the ones set, else `[node_parser]`.
    pub fn transformations(&self) -> Vec<Arc<dyn TransformComponent>> {
        match &self.transformations {
            Some(t) => t.clone(),
            None => vec![self.node_parser()],
        }
    }

    /// The context window: the override, else the LLM's, else 3900.
    pub fn context_window(&self) -> usize {
        self.context_window
            .or_else(|| self.llm.as_ref().map(|l| l.metadata().context_window))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// The output reservation: the override, else the LLM's (when known), else 256.
    pub fn num_output(&self) -> usize {
        let default = DEFAULT_NUM_OUTPUTS as usize;
        self.num_output.unwrap_or_else(|| match &self.llm {
            Some(l) => usize::try_from(l.metadata().num_output).unwrap_or(default),
            None => default,
        })
    }

    /// A prompt helper sized by [`context_window`](Self::context_window) and
    /// [`num_output`](Self::num_output), counting with the tokenizer.
    pub fn prompt_helper(&self) -> PromptHelper {
        PromptHelper::new(self.context_window(), self.num_output())
            .with_tokenizer(self.tokenizer.clone())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llms::MockLlm;

    #[test]
    fn defaults_are_pythons() {
        let s = Settings::new();
        assert_eq!((s.chunk_size, s.chunk_overlap), (1024, 200));
        assert_eq!((s.context_window(), s.num_output()), (3900, 256));
        let t = s.transformations();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].class_name(), "SentenceSplitter");
        assert_eq!(t[0].settings()["chunk_overlap"], 200);
        assert!(s.llm().is_err());
        assert!(s.embed_model().is_err());
    }

    #[test]
    fn overrides_win_over_the_llm() {
        let llm = Arc::new(MockLlm::new().context_window(8000).num_output(100));
        let s = Settings::new()
            .with_llm(llm)
            .with_chunk_size(256)
            .with_chunk_overlap(10);
        assert_eq!((s.context_window(), s.num_output()), (8000, 100));
        let s = s.with_context_window(1000).with_num_output(50);
        assert_eq!((s.context_window(), s.num_output()), (1000, 50));
        assert_eq!(s.node_parser().settings()["chunk_size"], 256);
    }
}
