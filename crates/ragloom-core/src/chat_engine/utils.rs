//! What the chat engines share: the default memory, the context prompts and
//! their synthesizer, retrieval as a source, and streams that write the turn when they end.

use super::{AgentChatResponse, StreamingAgentChatResponse};
use crate::error::{Error, Result};
use crate::llms::{
    ChatMessage, ChatResponse, ChatResponseStream, DEFAULT_NUM_OUTPUTS, Llm, MessageRole,
    TokenUsage,
};
use crate::memory::{BaseMemory, ChatMemoryBuffer};
use crate::postprocessor::{NodePostprocessor, retrieve_and_postprocess};
use crate::prompts::{BasePromptTemplate, ChatPromptTemplate, PromptType};
use crate::response_synthesizers::{CompactAndRefine, Synthesizer};
use crate::retrievers::Retriever;
use crate::schema::{MetadataMode, NodeWithScore, QueryBundle, Response, py_strip};
use crate::tools::ToolOutput;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::sync::Arc;
use tracing::{Instrument, Span};

/// The memory an engine gets when given none: LlamaIndex 0.14.25's engines
/// allow the LLM's context window minus 256 tokens of history.
pub(crate) fn default_memory(
    llm: &dyn Llm,
    chat_history: Vec<ChatMessage>,
) -> Result<Arc<dyn BaseMemory>> {
    let window = llm.metadata().context_window;
    let reserved = DEFAULT_NUM_OUTPUTS.unsigned_abs() as usize;
    let limit = window.saturating_sub(reserved);
    if limit == 0 {
        return Err(Error::InvalidInput(format!(
            "the LLM's context window ({window} tokens) leaves no room for chat history once \
             {reserved} tokens are reserved for the answer; give the engine a memory explicitly"
        )));
    }
    Ok(Arc::new(
        ChatMemoryBuffer::builder()
            .token_limit(limit)
            .chat_history(chat_history)
            .build()?,
    ))
}

/// The span of one chat turn.
pub(crate) fn chat_span(engine: &'static str, message: &str, stream: bool) -> Span {
    tracing::info_span!(
        "chat",
        engine,
        stream,
        message = %message,
        condensed_question = tracing::field::Empty,
        nodes = tracing::field::Empty,
    )
}

/// The span of one LLM call made by an engine itself (not through a
/// synthesizer), with the token fields `predict` records.
pub(crate) fn llm_span(llm: &dyn Llm) -> Span {
    let md = llm.metadata();
    tracing::info_span!(
        "llm",
        model = %md.model_name,
        chat = md.is_chat_model,
        prompt_tokens = tracing::field::Empty,
        completion_tokens = tracing::field::Empty,
    )
}

/// Records the usage a provider reported on the current span.
pub(crate) fn record_usage(usage: Option<&TokenUsage>) {
    if let Some(u) = usage {
        let span = Span::current();
        span.record("prompt_tokens", u.prompt_tokens);
        span.record("completion_tokens", u.completion_tokens);
    }
}

/// An error unless `template` has each of `required` variables.
pub(crate) fn require_vars(template: &str, what: &str, required: &[&str]) -> Result<()> {
    let vars = crate::utils::template_vars(template);
    for r in required {
        if !vars.iter().any(|v| v == r) {
            return Err(Error::InvalidInput(format!(
                "the {what} lacks the variable `{{{r}}}`"
            )));
        }
    }
    Ok(())
}

/// Braces doubled, so text taken from a conversation passes through a
/// template unchanged. (LlamaIndex formats history messages as templates
/// too: a message containing `{query_str}` is filled in there.)
fn literal(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// LlamaIndex's `get_prefix_messages_with_context`: the context template
/// with the system prompt appended as the system message, the prefix
/// messages, the history, and the query as the user's message.
fn prefix_messages_with_context(
    context_template: &str,
    system_prompt: &str,
    prefix_messages: &[ChatMessage],
    chat_history: &[ChatMessage],
    system_role: MessageRole,
) -> ChatPromptTemplate {
    let mut messages = Vec::with_capacity(prefix_messages.len() + chat_history.len() + 2);
    messages.push((
        system_role,
        format!("{context_template}{}", literal(py_strip(system_prompt))),
    ));
    for m in prefix_messages.iter().chain(chat_history) {
        messages.push((m.role, literal(&m.content)));
    }
    messages.push((MessageRole::User, "{query_str}".to_owned()));
    ChatPromptTemplate::from_messages(messages, PromptType::Custom)
}

/// An engine's context prompt and refine prompt: the retrieved context goes
/// into the system message, then the history and the user's message.
#[derive(Clone, Debug)]
pub(crate) struct ContextPrompts {
    qa: String,
    refine: String,
}

impl ContextPrompts {
    /// `qa` (else `default_qa`) must have `{context_str}`, `refine` (else
    /// `default_refine`) `{context_msg}` and `{existing_answer}`; `name` is
    /// what the engine calls them ("context template", "context prompt").
    pub(crate) fn new(
        name: &str,
        qa: Option<String>,
        default_qa: &str,
        refine: Option<String>,
        default_refine: &str,
    ) -> Result<Self> {
        let qa = qa.unwrap_or_else(|| default_qa.to_owned());
        require_vars(&qa, name, &["context_str"])?;
        let refine = refine.unwrap_or_else(|| default_refine.to_owned());
        let refine_name = match name.split_once(' ') {
            Some((first, rest)) => format!("{first} refine {rest}"),
            None => format!("{name} refine"),
        };
        require_vars(&refine, &refine_name, &["context_msg", "existing_answer"])?;
        Ok(Self { qa, refine })
    }

    /// The synthesizer for one turn (LlamaIndex's chat-engine
    /// `get_response_synthesizer`): both prompts carry the system prompt,
    /// `prefix` and `chat_history`.
    pub(crate) fn synthesizer(
        &self,
        llm: Arc<dyn Llm>,
        system_prompt: &str,
        prefix: &[ChatMessage],
        chat_history: &[ChatMessage],
    ) -> CompactAndRefine {
        let system_role = llm.metadata().system_role;
        let qa = prefix_messages_with_context(
            &self.qa,
            system_prompt,
            prefix,
            chat_history,
            system_role,
        );
        let refine = prefix_messages_with_context(
            &self.refine,
            system_prompt,
            prefix,
            chat_history,
            system_role,
        );
        CompactAndRefine::new(llm)
            .with_text_qa_template(BasePromptTemplate::Chat(qa))
            .with_refine_template(BasePromptTemplate::Chat(refine))
    }
}

/// Answers `message` from `nodes` and writes the turn to `memory`.
pub(crate) async fn answer_turn(
    synthesizer: CompactAndRefine,
    memory: &dyn BaseMemory,
    message: &str,
    source: ToolOutput,
    nodes: Vec<NodeWithScore>,
) -> Result<AgentChatResponse> {
    let response = synthesizer
        .synthesize(&QueryBundle::new(message), nodes.clone(), Vec::new())
        .await?;
    finish_turn(memory, message, response.to_string(), source, nodes).await
}

/// Writes the turn (`message`, then the answer `text`) to `memory`: the
/// engine's reply, with the source it answered from.
pub(crate) async fn finish_turn(
    memory: &dyn BaseMemory,
    message: &str,
    text: String,
    source: ToolOutput,
    source_nodes: Vec<NodeWithScore>,
) -> Result<AgentChatResponse> {
    memory
        .put_messages(vec![
            ChatMessage::user(message),
            ChatMessage::assistant(text.clone()),
        ])
        .await?;
    Ok(AgentChatResponse {
        response: text,
        sources: vec![source],
        source_nodes,
        ..Default::default()
    })
}

/// Streams the answer to `message` from `nodes`; the turn is written to
/// `memory` when the stream ends.
pub(crate) async fn stream_turn(
    synthesizer: CompactAndRefine,
    memory: Arc<dyn BaseMemory>,
    message: &str,
    source: ToolOutput,
    nodes: Vec<NodeWithScore>,
) -> Result<StreamingAgentChatResponse> {
    let streaming = synthesizer
        .stream_synthesize(&QueryBundle::new(message), nodes.clone(), Vec::new())
        .await?;
    let deltas = write_turn_when_done(
        text_to_chat_stream(streaming.response_gen),
        memory,
        ChatMessage::user(message),
        tracing::Span::current(),
    );
    Ok(StreamingAgentChatResponse::new(deltas, vec![source], nodes))
}

/// Retrieves for `query` and runs the postprocessors in order.
pub(crate) async fn retrieve_context(
    retriever: &dyn Retriever,
    node_postprocessors: &[Arc<dyn NodePostprocessor>],
    query: &str,
) -> Result<Vec<NodeWithScore>> {
    retrieve_and_postprocess(retriever, node_postprocessors, &QueryBundle::new(query)).await
}

/// Nodes as JSON: LlamaIndex's node shape and the score.
fn nodes_json(nodes: &[NodeWithScore]) -> Value {
    Value::Array(
        nodes
            .iter()
            .map(|n| json!({"node": serde_json::to_value(&n.node).unwrap_or(Value::Null), "score": n.score}))
            .collect(),
    )
}

/// Nodes as readable text, in the spirit of LlamaIndex's `NodeWithScore.__str__`.
fn nodes_text(nodes: &[NodeWithScore]) -> String {
    const TRUNCATE_LENGTH: usize = 350;
    nodes
        .iter()
        .map(|n| {
            let text = n.node.get_content(MetadataMode::None);
            let text = py_strip(&text);
            let shown: String = if text.chars().count() > TRUNCATE_LENGTH {
                let mut s: String = text.chars().take(TRUNCATE_LENGTH - 3).collect();
                s.push_str("...");
                s
            } else {
                text.to_owned()
            };
            // Python's `f"{score: 0.3f}"`: a space where a minus sign would go.
            let score = match n.score {
                Some(s) if s < 0.0 => format!("{s:.3}"),
                Some(s) => format!(" {s:.3}"),
                None => "None".to_owned(),
            };
            format!("Node ID: {}\nText: {shown}\nScore: {score}\n", n.node.id_)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The retrieval as a source: tool `retriever`, input `{"message": query}`.
pub(crate) fn retriever_source(query: &str, nodes: &[NodeWithScore]) -> ToolOutput {
    ToolOutput::new(
        "retriever",
        nodes_text(nodes),
        json!({"message": query}),
        nodes_json(nodes),
    )
}

/// The query engine's answer as a source: tool `query_engine`, input
/// `{"query": question}`; a streamed answer has no content yet.
pub(crate) fn query_engine_source(question: &str, response: Option<&Response>) -> ToolOutput {
    let (content, raw_output) = match response {
        Some(r) => (
            r.to_string(),
            json!({
                "response": r.response,
                "source_nodes": nodes_json(&r.source_nodes),
                "metadata": r.metadata,
            }),
        ),
        None => (String::new(), Value::Null),
    };
    ToolOutput::new(
        "query_engine",
        content,
        json!({"query": question}),
        raw_output,
    )
}

/// A stream of text deltas as chat items (LlamaIndex `response_gen_from_query_engine`).
pub(crate) fn text_to_chat_stream(
    deltas: BoxStream<'static, Result<String>>,
) -> ChatResponseStream {
    deltas
        .map(|item| {
            item.map(|delta| ChatResponse {
                message: ChatMessage::assistant(""),
                delta: Some(delta),
                raw: None,
                usage: None,
            })
        })
        .boxed()
}

struct Turn {
    stream: ChatResponseStream,
    memory: Arc<dyn BaseMemory>,
    user_message: ChatMessage,
    text: String,
    last: Option<ChatMessage>,
    span: Span,
}

impl Turn {
    /// The next non-empty delta; at the end, the turn is written to memory.
    async fn step(mut self) -> Option<(Result<String>, Option<Turn>)> {
        loop {
            match self.stream.next().await {
                Some(Ok(item)) => {
                    let delta = item.delta.unwrap_or_default();
                    self.last = Some(item.message);
                    if delta.is_empty() {
                        continue;
                    }
                    self.text.push_str(&delta);
                    return Some((Ok(delta), Some(self)));
                }
                // The answer is incomplete: nothing of the turn is remembered.
                Some(Err(e)) => return Some((Err(e), None)),
                None => {
                    let mut turn = vec![self.user_message];
                    // As LlamaIndex: the answer is the last message with the
                    // whole text, stripped; a stream without items adds none.
                    if let Some(mut answer) = self.last {
                        answer.content = py_strip(&self.text).to_owned();
                        turn.push(answer);
                    }
                    return match self.memory.put_messages(turn).await {
                        Ok(()) => None,
                        Err(e) => Some((Err(e), None)),
                    };
                }
            }
        }
    }
}

/// The deltas of `stream`; when it ends, `user_message` and the answer are
/// written to `memory` together. Dropped before its end, it writes nothing.
pub(crate) fn write_turn_when_done(
    stream: ChatResponseStream,
    memory: Arc<dyn BaseMemory>,
    user_message: ChatMessage,
    span: Span,
) -> BoxStream<'static, Result<String>> {
    let turn = Turn {
        stream,
        memory,
        user_message,
        text: String::new(),
        last: None,
        span,
    };
    futures::stream::unfold(Some(turn), |turn| async move {
        let turn = turn?;
        let span = turn.span.clone();
        turn.step().instrument(span).await
    })
    .boxed()
}
