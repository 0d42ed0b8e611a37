//! `NoText` (the nodes without an answer) and `ContextOnly` (the nodes' text
//! as the answer): the two modes that never call a model (LlamaIndex 0.14.25).

use super::{Synthesizer, one_delta};
use crate::error::Result;
use crate::prompts::own_prompts;
use async_trait::async_trait;
use futures::stream::BoxStream;

/// Retrieval only: the answer is empty (`""`, as LlamaIndex's `Response`
/// holds) and the nodes are the sources (LlamaIndex `NoText`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoText;

impl NoText {
    /// The no-text synthesizer.
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl Synthesizer for NoText {
    async fn get_response(&self, _query_str: &str, _text_chunks: &[String]) -> Result<String> {
        Ok(String::new())
    }

    /// No deltas at all: the answer is empty.
    async fn stream_response(
        &self,
        _query_str: &str,
        _text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        Ok(Box::pin(futures::stream::empty()))
    }
}

own_prompts!(NoText {});

/// The chunks joined by blank lines are the answer (LlamaIndex `ContextOnly`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ContextOnly;

impl ContextOnly {
    /// The context-only synthesizer.
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl Synthesizer for ContextOnly {
    async fn get_response(&self, _query_str: &str, text_chunks: &[String]) -> Result<String> {
        Ok(text_chunks.join("\n\n"))
    }

    async fn stream_response(
        &self,
        _query_str: &str,
        text_chunks: &[String],
    ) -> Result<BoxStream<'static, Result<String>>> {
        Ok(one_delta(text_chunks.join("\n\n")))
    }
}

own_prompts!(ContextOnly {});
