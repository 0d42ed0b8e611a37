//! `PromptHelper`: how much context fits in an LLM's window once the prompt
//! and the reserved output are counted, and packing or truncating chunks to fit.

use crate::error::{Error, Result};
use crate::llms::{ChatMessage, LlmMetadata};
use crate::node_parser::{TextSplitter, TokenTextSplitter};
use crate::prompts::BasePromptTemplate;
use crate::tokenizer::{Tokenizer, default_tokenizer};
use std::sync::Arc;

/// Tokens kept free around each chunk for formatting.
pub const DEFAULT_PADDING: usize = 5;
/// Overlap between repacked chunks, as a share of their size.
pub const DEFAULT_CHUNK_OVERLAP_RATIO: f64 = 0.1;

/// Packs text chunks into an LLM's context window (LlamaIndex `PromptHelper`).
#[derive(Clone, Debug)]
pub struct PromptHelper {
    /// The LLM's context window in tokens.
    pub context_window: usize,
    /// Tokens reserved for the answer.
    pub num_output: usize,
    /// Overlap between repacked chunks, as a share of their size.
    pub chunk_overlap_ratio: f64,
    /// An upper bound on chunk size, if any.
    pub chunk_size_limit: Option<usize>,
    /// Separator the repacking splitter splits on.
    pub separator: String,
    tokenizer: Arc<dyn Tokenizer>,
}

impl Default for PromptHelper {
    fn default() -> Self {
        Self::new(
            crate::llms::DEFAULT_CONTEXT_WINDOW,
            crate::llms::DEFAULT_NUM_OUTPUTS as usize,
        )
    }
}

impl PromptHelper {
    /// A helper for a window of `context_window` tokens reserving `num_output`.
    pub fn new(context_window: usize, num_output: usize) -> Self {
        Self {
            context_window,
            num_output,
            chunk_overlap_ratio: DEFAULT_CHUNK_OVERLAP_RATIO,
            chunk_size_limit: None,
            separator: " ".into(),
            tokenizer: default_tokenizer(),
        }
    }

    /// A helper sized from an LLM's metadata.
    /// A `num_output` of -1 (unknown) reserves LlamaIndex's default 256 tokens.
    pub fn from_llm_metadata(metadata: &LlmMetadata) -> Self {
        let num_output = usize::try_from(metadata.num_output)
            .unwrap_or(crate::llms::DEFAULT_NUM_OUTPUTS as usize);
        Self::new(metadata.context_window, num_output)
    }

    /// Uses `tokenizer` to count tokens.
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Caps chunk size.
    pub fn with_chunk_size_limit(mut self, limit: usize) -> Self {
        self.chunk_size_limit = Some(limit);
        self
    }

    /// The tokenizer in use.
    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        &self.tokenizer
    }

    fn messages_tokens(&self, messages: &[ChatMessage]) -> usize {
        messages
            .iter()
            .map(|m| self.tokenizer.count(m.role.as_str()) + self.tokenizer.count(&m.content))
            .sum()
    }

    /// Tokens the prompt costs with its unfilled variables empty, in the form
    /// (`is_chat_model`) the LLM will receive it.
    pub fn prompt_tokens(&self, prompt: &BasePromptTemplate, is_chat_model: bool) -> usize {
        match prompt.select(is_chat_model) {
            p @ BasePromptTemplate::Chat(_) => self.messages_tokens(&p.empty_prompt_messages()),
            p => self.tokenizer.count(&p.empty_prompt_text()),
        }
    }

    /// The chunk size that lets `num_chunks` chunks fit beside `prompt`.
    pub fn available_chunk_size(
        &self,
        prompt: &BasePromptTemplate,
        num_chunks: usize,
        padding: usize,
        is_chat_model: bool,
    ) -> Result<usize> {
        let prompt_tokens = self.prompt_tokens(prompt, is_chat_model);
        let available = self.context_window as i64 - prompt_tokens as i64 - self.num_output as i64;
        if available < 0 {
            return Err(Error::InvalidInput(format!(
                "calculated available context size {available} was not non-negative: the prompt \
                 ({prompt_tokens} tokens) and the reserved output ({} tokens) exceed the context \
                 window ({} tokens)",
                self.num_output, self.context_window
            )));
        }
        let mut size = available / num_chunks.max(1) as i64 - padding as i64;
        if let Some(limit) = self.chunk_size_limit {
            size = size.min(limit as i64);
        }
        if size <= 0 {
            return Err(Error::InvalidInput(format!(
                "chunk size {size} is not positive"
            )));
        }
        Ok(size as usize)
    }

    /// The splitter that packs text into chunks of the available size.
    pub fn text_splitter_given_prompt(
        &self,
        prompt: &BasePromptTemplate,
        num_chunks: usize,
        padding: usize,
        is_chat_model: bool,
    ) -> Result<TokenTextSplitter> {
        let chunk_size = self.available_chunk_size(prompt, num_chunks, padding, is_chat_model)?;
        let overlap = (self.chunk_overlap_ratio * chunk_size as f64) as usize;
        TokenTextSplitter::new()
            .chunk_size(chunk_size)
            .chunk_overlap(overlap)
            .separator(&self.separator)
            .tokenizer(self.tokenizer.clone())
            .build()
    }

    /// Joins the chunks with blank lines and re-splits them so each piece
    /// fills the window beside `prompt` (LlamaIndex `repack`).
    pub fn repack(
        &self,
        prompt: &BasePromptTemplate,
        chunks: &[String],
        is_chat_model: bool,
    ) -> Result<Vec<String>> {
        self.repack_with_padding(prompt, chunks, DEFAULT_PADDING, is_chat_model)
    }

    /// [`repack`](Self::repack) keeping `padding` tokens free beside each
    /// piece; refine-style synthesizers reserve 500 so the answer being
    /// refined has room to grow (LlamaIndex's `response_padding_size`).
    pub fn repack_with_padding(
        &self,
        prompt: &BasePromptTemplate,
        chunks: &[String],
        padding: usize,
        is_chat_model: bool,
    ) -> Result<Vec<String>> {
        let splitter = self.text_splitter_given_prompt(prompt, 1, padding, is_chat_model)?;
        let combined = chunks
            .iter()
            .map(|c| crate::schema::py_strip(c))
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        splitter.split_text(&combined)
    }

    /// Cuts each chunk so all of them fit beside `prompt` in one call
    /// (LlamaIndex `truncate`).
    pub fn truncate(
        &self,
        prompt: &BasePromptTemplate,
        chunks: &[String],
        is_chat_model: bool,
    ) -> Result<Vec<String>> {
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let splitter =
            self.text_splitter_given_prompt(prompt, chunks.len(), DEFAULT_PADDING, is_chat_model)?;
        chunks
            .iter()
            .map(|c| {
                Ok(splitter
                    .split_text(c)?
                    .into_iter()
                    .next()
                    .unwrap_or_default())
            })
            .collect()
    }
}
