//! Answering, shared by the OpenAI, REST and MCP routes: retrieve, then
//! generate with the LLM (through the gate, tokens counted) or show passages.

use crate::error::ApiError;
use crate::index::IndexView;
use crate::passage::{self, Passage};
use crate::state::AppState;
use futures::StreamExt;
use futures::stream::BoxStream;
use ragloom::chat_engine::{
    ChatEngine, CondensePlusContextChatEngine, CondenseQuestionChatEngine, ContextChatEngine,
};
use ragloom::query_engine::answer::Answerer;
use ragloom::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom::retrievers::keyword_query;
use ragloom::vector_stores::MetadataFilters;
use ragloom::{ChatMessage, Llm, MessageRole, NodeWithScore, QueryBundle, TokenCountingHandler};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;

pub(crate) use ragloom::query_engine::answer::{Answer, labelled, passages_text};

/// How a chat turn uses the index (LlamaIndex's chat modes that retrieve).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChatModeArg {
    /// Condense the conversation into a question, retrieve, answer with the
    /// passages as context and the history (the default).
    #[default]
    CondensePlusContext,
    /// Retrieve for the last message, answer with the passages and the history.
    Context,
    /// Condense into a standalone question and answer it with the query engine.
    CondenseQuestion,
}

/// Token counts of one answer.
#[derive(Clone, Copy, Debug, Default, Serialize, ToSchema)]
pub(crate) struct Usage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub total_tokens: usize,
}

impl Usage {
    fn new(prompt: usize, completion: usize) -> Self {
        Self {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
        }
    }
}

/// A chat answer as it streams: text deltas, then sources and usage.
pub(crate) struct AnswerStream {
    pub deltas: BoxStream<'static, Result<String, ragloom::Error>>,
    pub sources: Vec<Passage>,
    pub tokens: TokenCount,
}

/// Counts an answer's tokens as it streams.
pub(crate) struct TokenCount(Counter);

enum Counter {
    Llm(TokenCountingHandler),
    /// No LLM: the question's tokens and the passages' text.
    Passages {
        prompt: usize,
        text: usize,
    },
}

impl TokenCount {
    /// Tokens so far (complete once the deltas have ended).
    pub(crate) fn usage(&self) -> Usage {
        match &self.0 {
            Counter::Llm(c) => {
                Usage::new(c.prompt_llm_token_count(), c.completion_llm_token_count())
            }
            Counter::Passages { prompt, text } => Usage::new(*prompt, *text),
        }
    }
}

fn count_tokens(text: &str) -> usize {
    ragloom::default_tokenizer().count(text)
}

/// The nodes for `query`, best first.
pub(crate) async fn retrieve(
    view: &IndexView,
    query: &QueryBundle,
    top_k: usize,
    filters: Option<MetadataFilters>,
) -> Result<Vec<NodeWithScore>, ApiError> {
    let retriever = view.retrievers.retriever(top_k, filters).await?;
    Ok(retriever.retrieve(query).await?)
}

/// Passages for `nodes`, paths as clients see them.
pub(crate) fn passages(
    state: &AppState,
    view: &IndexView,
    query: &QueryBundle,
    nodes: &[NodeWithScore],
) -> Vec<Passage> {
    passage::passages(query, nodes, &|p| view.display_path(p), &state.lines)
}

/// Answers one question (no history): the library's answer path, with the
/// LLM behind the server's gate and its tokens counted.
pub(crate) async fn query(
    state: &AppState,
    view: &IndexView,
    question: &str,
    top_k: usize,
    filters: Option<MetadataFilters>,
) -> Result<(Answer, Usage), ApiError> {
    let retriever = view.retrievers.retriever(top_k, filters).await?;
    let Some(llm) = &view.llm else {
        let answerer = answerer(state, view, retriever, None);
        return Ok((answerer.answer(question).await?, Usage::default()));
    };
    let _permit = state.gate.enter().await?;
    let counter = TokenCountingHandler::new();
    let answerer = answerer(state, view, retriever, Some(counter.wrap_llm(llm.clone())));
    let answer = answerer.answer(question).await?;
    let usage = Usage::new(
        counter.prompt_llm_token_count(),
        counter.completion_llm_token_count(),
    );
    state
        .metrics
        .tokens(usage.prompt_tokens, usage.completion_tokens);
    Ok((answer, usage))
}

/// The library's [`Answerer`] for one request: paths as clients see them,
/// the server's cache of line numbers.
fn answerer(
    state: &AppState,
    view: &IndexView,
    retriever: Arc<dyn ragloom::retrievers::Retriever>,
    llm: Option<Arc<dyn Llm>>,
) -> Answerer {
    let shown = view.clone();
    Answerer::new(retriever, llm, view.retrieval.clone())
        .display_path(Arc::new(move |p| shown.display_path(p)))
        .line_index(state.lines.clone())
}

/// Answers the last user message of `messages`, the earlier ones being the
/// conversation so far (system messages become the system prompt).
pub(crate) async fn chat(
    state: &AppState,
    view: &IndexView,
    messages: Vec<ChatMessage>,
    mode: ChatModeArg,
    top_k: usize,
) -> Result<AnswerStream, ApiError> {
    let mut system = Vec::new();
    let mut history = Vec::new();
    for m in messages {
        match m.role {
            MessageRole::System | MessageRole::Developer => system.push(m.content),
            _ => history.push(m),
        }
    }
    let question = match history.pop() {
        Some(m) if m.role == MessageRole::User && !m.content.trim().is_empty() => m.content,
        _ => {
            return Err(ApiError::bad_request(
                "the last message must be a non-empty user message: the question",
            )
            .param("messages"));
        }
    };
    let query = keyword_query(&question);
    let Some(llm) = &view.llm else {
        let nodes = retrieve(view, &query, top_k, None).await?;
        let sources = passages(state, view, &query, &nodes);
        let text = passages_text(&sources);
        let tokens = TokenCount(Counter::Passages {
            prompt: count_tokens(&question),
            text: count_tokens(&text),
        });
        return Ok(AnswerStream {
            deltas: futures::stream::once(async move { Ok(text) }).boxed(),
            sources,
            tokens,
        });
    };
    let permit = state.gate.enter().await?;
    let counter = TokenCountingHandler::new();
    let llm: Arc<dyn Llm> = counter.wrap_llm(llm.clone());
    let retriever = view.retrievers.retriever(top_k, None).await?;
    let system = system.join("\n");
    let engine: Box<dyn ChatEngine> = match mode {
        ChatModeArg::CondensePlusContext => {
            let mut b = CondensePlusContextChatEngine::builder(retriever, llm);
            if !system.is_empty() {
                b = b.system_prompt(system);
            }
            Box::new(b.build()?)
        }
        ChatModeArg::Context => {
            let mut b = ContextChatEngine::builder(retriever, llm);
            if !system.is_empty() {
                b = b.system_prompt(system);
            }
            Box::new(b.build()?)
        }
        ChatModeArg::CondenseQuestion => {
            let qe: Arc<dyn QueryEngine> = Arc::new(
                RetrieverQueryEngine::builder(retriever)
                    .llm(llm.clone())
                    .build()?,
            );
            Box::new(CondenseQuestionChatEngine::from_defaults(qe, llm)?)
        }
    };
    let r = engine
        .stream_chat_with_history(&question, Some(history))
        .await?;
    let sources = passages(state, view, &query, &r.source_nodes);
    // The permit travels with the stream: the LLM slot frees when the
    // answer ends or the client goes away.
    let deltas = r
        .response_gen
        .map(move |d| {
            let _held = &permit;
            d
        })
        .boxed();
    Ok(AnswerStream {
        deltas,
        sources,
        tokens: TokenCount(Counter::Llm(counter)),
    })
}
