//! The one answer path of a program that serves an index: retrieve, then
//! generate with the LLM, or (with no LLM) answer with the passages themselves.
//!
//! The command line, the server's OpenAI, REST and MCP routes and
//! `ragloom eval` render the same [`Answer`].

use super::passage::{self, LineIndex, Passage};
use super::{QueryEngine, RetrieverQueryEngine};
use crate::error::Result;
use crate::llms::Llm;
use crate::retrievers::{Retriever, keyword_query};
use crate::schema::{NodeWithScore, QueryBundle};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// What a passages-only answer says first.
pub const NO_LLM_NOTE: &str = "no LLM configured — most relevant passages";

/// An answer to one question.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Answer {
    /// The question.
    pub question: String,
    /// The generated answer; `None` when no LLM is configured.
    pub answer: Option<String>,
    /// `llm` or `passages`.
    pub mode: &'static str,
    /// How the passages were found: `bm25`, `fulltext`, `sparse`, `vector`, `hybrid`.
    pub retrieval: String,
    /// The passages the answer draws on, best first.
    pub sources: Vec<Passage>,
}

/// An answer as it streams: text deltas (the generated answer, or the
/// passages as text), and the passages it draws on.
pub struct AnswerStream {
    /// Text deltas; their concatenation is the answer.
    pub deltas: BoxStream<'static, Result<String>>,
    /// The passages, best first.
    pub sources: Vec<Passage>,
    /// `llm` or `passages`.
    pub mode: &'static str,
}

impl fmt::Debug for AnswerStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnswerStream")
            .field("sources", &self.sources.len())
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// Turns a stored `file_path` into the path shown.
pub type DisplayPath = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Answers questions from one retriever, with an LLM or without.
#[derive(Clone)]
pub struct Answerer {
    retriever: Arc<dyn Retriever>,
    llm: Option<Arc<dyn Llm>>,
    retrieval: String,
    display: DisplayPath,
    lines: Arc<LineIndex>,
}

impl fmt::Debug for Answerer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Answerer")
            .field("retrieval", &self.retrieval)
            .field("llm", &self.llm.is_some())
            .finish_non_exhaustive()
    }
}

impl Answerer {
    /// Answers from `retriever` (its kind, e.g. `hybrid`, in `retrieval`),
    /// generating with `llm` when there is one.
    pub fn new(
        retriever: Arc<dyn Retriever>,
        llm: Option<Arc<dyn Llm>>,
        retrieval: impl Into<String>,
    ) -> Self {
        Self {
            retriever,
            llm,
            retrieval: retrieval.into(),
            display: Arc::new(str::to_string),
            lines: Arc::new(LineIndex::new()),
        }
    }

    /// How passages show their file (e.g. relative to the ingested folder).
    pub fn display_path(mut self, display: DisplayPath) -> Self {
        self.display = display;
        self
    }

    /// Shares a cache of files' line starts (a server keeps one for all requests).
    pub fn line_index(mut self, lines: Arc<LineIndex>) -> Self {
        self.lines = lines;
        self
    }

    /// The LLM, if answers are generated.
    pub fn llm(&self) -> Option<&Arc<dyn Llm>> {
        self.llm.as_ref()
    }

    /// How passages are found.
    pub fn retrieval(&self) -> &str {
        &self.retrieval
    }

    /// The retriever.
    pub fn retriever(&self) -> &Arc<dyn Retriever> {
        &self.retriever
    }

    /// Passages for `nodes` retrieved for `question`: file, page or line,
    /// score, and the excerpt that matches the question best.
    pub fn passages(&self, question: &str, nodes: &[NodeWithScore]) -> Vec<Passage> {
        self.passages_for(&keyword_query(question), nodes)
    }

    /// [`passages`](Self::passages) for a query whose keyword terms are
    /// already read (as [`keyword_query`] reads them).
    pub fn passages_for(&self, query: &QueryBundle, nodes: &[NodeWithScore]) -> Vec<Passage> {
        passage::passages(query, nodes, &*self.display, &self.lines)
    }

    fn engine(&self, llm: &Arc<dyn Llm>) -> Result<RetrieverQueryEngine> {
        RetrieverQueryEngine::builder(self.retriever.clone())
            .llm(llm.clone())
            .build()
    }

    /// Answers `question` whole.
    pub async fn answer(&self, question: &str) -> Result<Answer> {
        // Tokenized once: for keyword retrieval and for the excerpts.
        let query = keyword_query(question);
        let Some(llm) = &self.llm else {
            let nodes = self.retriever.retrieve(&query).await?;
            return Ok(self.passages_answer(&query, &nodes));
        };
        let r = self.engine(llm)?.query(&query).await?;
        Ok(Answer {
            question: question.to_string(),
            answer: Some(r.response.unwrap_or_default().trim().to_string()),
            mode: "llm",
            retrieval: self.retrieval.clone(),
            sources: self.passages_for(&query, &r.source_nodes),
        })
    }

    /// Answers `question` as a stream of text; with no LLM, one delta: the
    /// passages as text ([`passages_text`]).
    pub async fn stream(&self, question: &str) -> Result<AnswerStream> {
        let query = keyword_query(question);
        let Some(llm) = &self.llm else {
            let nodes = self.retriever.retrieve(&query).await?;
            let sources = self.passages_for(&query, &nodes);
            let text = passages_text(&sources);
            return Ok(AnswerStream {
                deltas: futures::stream::once(async move { Ok(text) }).boxed(),
                sources,
                mode: "passages",
            });
        };
        let r = self.engine(llm)?.stream_query(&query).await?;
        Ok(AnswerStream {
            sources: self.passages_for(&query, &r.source_nodes),
            deltas: r.response_gen,
            mode: "llm",
        })
    }

    fn passages_answer(&self, query: &QueryBundle, nodes: &[NodeWithScore]) -> Answer {
        Answer {
            question: query.query_str.clone(),
            answer: None,
            mode: "passages",
            retrieval: self.retrieval.clone(),
            sources: self.passages_for(query, nodes),
        }
    }
}

/// Passages as text, each labelled `[n] file:line (score s)`, followed by
/// its excerpt or, with `whole`, its whole text.
pub fn labelled(sources: &[Passage], whole: bool) -> String {
    sources
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let body = if whole { &p.text } else { &p.excerpt };
            format!("[{}] {}{}\n{body}", i + 1, passage::location(p), score(p))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// ` (score 0.123)`, or nothing without a score.
pub fn score(p: &Passage) -> String {
    p.score
        .map(|s| format!(" (score {s:.3})"))
        .unwrap_or_default()
}

/// The answer text when there is no LLM: [`NO_LLM_NOTE`], then the passages, labelled.
pub fn passages_text(sources: &[Passage]) -> String {
    if sources.is_empty() {
        return "No passage of the index matches the question.".to_string();
    }
    format!("{NO_LLM_NOTE}:\n\n{}", labelled(sources, false))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llms::MockLlm;
    use crate::schema::Node;
    use async_trait::async_trait;

    #[derive(Debug)]
    struct Fixed;

    #[async_trait]
    impl Retriever for Fixed {
        async fn retrieve(&self, _query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
            let mut node = Node::text_node("The heron waits. The boat was repainted in July.");
            node.metadata
                .insert("file_path".into(), "/docs/notes/boat.txt".into());
            Ok(vec![NodeWithScore {
                node,
                score: Some(1.5),
            }])
        }
    }

    #[tokio::test]
    async fn passages_without_an_llm_and_a_generated_answer_with_one() {
        let shown: DisplayPath = Arc::new(|p: &str| p.trim_start_matches("/docs/").to_string());
        let plain = Answerer::new(Arc::new(Fixed), None, "bm25").display_path(shown.clone());
        let a = plain.answer("When was the boat repainted?").await.unwrap();
        assert_eq!((a.mode, a.answer.as_deref()), ("passages", None));
        assert_eq!(a.sources[0].file, "notes/boat.txt");
        assert_eq!(a.sources[0].excerpt, "The boat was repainted in July.");
        let mut s = plain.stream("When was the boat repainted?").await.unwrap();
        let text = s.deltas.next().await.unwrap().unwrap();
        assert!(text.starts_with(NO_LLM_NOTE), "{text}");
        assert!(text.contains("[1] notes/boat.txt (score 1.500)"), "{text}");

        let llm: Arc<dyn Llm> = Arc::new(MockLlm::new());
        let with = Answerer::new(Arc::new(Fixed), Some(llm), "bm25").display_path(shown);
        let a = with.answer("When was the boat repainted?").await.unwrap();
        assert_eq!(a.mode, "llm");
        assert!(a.answer.is_some());
        assert_eq!(a.sources.len(), 1);
        let s = with.stream("When?").await.unwrap();
        let text: Vec<String> = s.deltas.map(|d| d.unwrap()).collect().await;
        assert!(!text.concat().is_empty());
    }
}
