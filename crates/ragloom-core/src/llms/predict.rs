//! `predict` / `stream_predict`: format a prompt for an LLM in the form it
//! takes (messages for chat models, text otherwise) and return the reply text.

use crate::error::Result;
use crate::llms::Llm;
use crate::prompts::BasePromptTemplate;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::sync::Arc;
use tracing::Instrument;

/// Formats `prompt` with `vars` and returns the LLM's reply text
/// (LlamaIndex `LLM.predict`).
pub async fn predict(
    llm: &dyn Llm,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<String> {
    let md = llm.metadata();
    let prompt = prompt.select(md.is_chat_model);
    let span = tracing::info_span!("llm", model = %md.model_name, chat = md.is_chat_model,
        prompt_tokens = tracing::field::Empty, completion_tokens = tracing::field::Empty);
    async {
        if md.is_chat_model {
            let messages = prompt.format_messages(vars)?;
            let reply = llm.chat(&messages).await?;
            record_usage(reply.usage.as_ref());
            Ok(reply.message.content)
        } else {
            let text = prompt.format(vars)?;
            let reply = llm.complete(&text, true).await?;
            record_usage(reply.usage.as_ref());
            Ok(reply.text)
        }
    }
    .instrument(span)
    .await
}

fn record_usage(usage: Option<&crate::llms::TokenUsage>) {
    if let Some(u) = usage {
        let span = tracing::Span::current();
        span.record("prompt_tokens", u.prompt_tokens);
        span.record("completion_tokens", u.completion_tokens);
    }
}

/// Like [`predict`], returning the reply as a stream of text deltas.
pub async fn stream_predict(
    llm: Arc<dyn Llm>,
    prompt: &BasePromptTemplate,
    vars: &[(&str, &str)],
) -> Result<BoxStream<'static, Result<String>>> {
    let md = llm.metadata();
    let prompt = prompt.select(md.is_chat_model);
    if md.is_chat_model {
        let messages = prompt.format_messages(vars)?;
        let stream = llm.stream_chat(&messages).await?;
        Ok(stream
            .map(|r| r.map(|c| c.delta.unwrap_or_default()))
            .boxed())
    } else {
        let text = prompt.format(vars)?;
        let stream = llm.stream_complete(&text, true).await?;
        Ok(stream
            .map(|r| r.map(|c| c.delta.unwrap_or_default()))
            .boxed())
    }
}
