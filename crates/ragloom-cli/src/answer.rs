//! Answering: retrieve with BM25 (and vectors, when the index has them),
//! then either generate an answer with the LLM or show the best passages.

use crate::error::CliError;
use crate::out;
use crate::ui::Ui;
use futures::StreamExt;
use ragloom::durable::{DurableIndex, IndexRetrievers, LiveIndex, Source};
use ragloom::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom::retrievers::Retriever;
use ragloom::{Llm, NodeWithScore, ProviderSpec, QueryBundle};
use ragloom_server::passage::{self, LineIndex, Passage};
use serde::Serialize;
use std::sync::Arc;

/// The retrievers of an opened index, with dense search when the
/// configured model is the one it was embedded with (else a warning).
pub async fn retrievers(
    live: &LiveIndex,
    spec: &ProviderSpec,
    ui: &Ui,
) -> Result<IndexRetrievers, CliError> {
    let retrievers = live.retrievers(spec.embed.embed_model()?.as_ref()).await?;
    if retrievers.other_model {
        ui.warn(&format!(
            "the index was embedded with {} but {} is configured: using keyword retrieval only (ingest again to re-embed)",
            crate::ingest::model_label(&live.manifest().settings.embed),
            spec.embed.label()
        ));
    }
    Ok(retrievers)
}

/// An opened index, ready to answer.
#[derive(Debug)]
pub struct Engine {
    pub source: Source,
    pub retriever: Arc<dyn Retriever>,
    pub retrieval: &'static str,
    pub llm: Option<Arc<dyn Llm>>,
    lines: LineIndex,
}

/// An answer, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Answer {
    pub question: String,
    /// The generated answer; `null` when no LLM is configured.
    pub answer: Option<String>,
    /// `llm` or `passages`.
    pub mode: &'static str,
    /// `bm25` (the embedded store's keyword index), `fulltext`
    /// (PostgreSQL's), `sparse` (Qdrant's) or `hybrid` (either fused with vectors).
    pub retrieval: &'static str,
    pub sources: Vec<Passage>,
}

impl Engine {
    /// Opens the index of `source` with the configured providers. Nothing
    /// is loaded but what the retrievers read per query.
    pub async fn open(
        source: Source,
        index: &DurableIndex,
        spec: &ProviderSpec,
        top_k: usize,
        ui: &Ui,
    ) -> Result<Self, CliError> {
        let live = index.open().await?;
        if live.manifest().last_ingest.nodes_total == 0 {
            return Err(CliError::no_input(
                format!("the index of {} holds no text", source.key),
                "add readable files to the folder and ingest it again",
            ));
        }
        let retrievers = retrievers(&live, spec, ui).await?;
        let retriever = retrievers.retriever(top_k, None)?;
        let retrieval = retrievers.retrieval;
        let llm = spec.llm.build()?;
        ui.detail(&format!(
            "retrieval: {retrieval}; llm: {}",
            spec.llm.label()
        ));
        Ok(Self {
            source,
            retriever,
            retrieval,
            llm,
            lines: LineIndex::new(),
        })
    }

    /// Answers `question`; in text mode the answer streams to stdout as it arrives.
    pub async fn answer(&self, question: &str, ui: &Ui) -> Result<Answer, CliError> {
        let query = QueryBundle::new(question);
        let Some(llm) = &self.llm else {
            let nodes = self.retriever.retrieve(&query).await?;
            let answer = Answer {
                question: question.to_string(),
                answer: None,
                mode: "passages",
                retrieval: self.retrieval,
                sources: self.passages(question, &nodes),
            };
            if !ui.json {
                print_passages(&answer)?;
            }
            return Ok(answer);
        };
        let engine = RetrieverQueryEngine::builder(self.retriever.clone())
            .llm(llm.clone())
            .build()?;
        let (text, nodes) = if ui.json {
            let r = engine.query(&query).await?;
            (r.response.unwrap_or_default(), r.source_nodes)
        } else {
            let mut r = engine.stream_query(&query).await?;
            let mut text = String::new();
            while let Some(delta) = r.response_gen.next().await {
                let delta = delta?;
                // A closed pipe returns here, dropping the stream: generation stops.
                out::write(&delta)?;
                text.push_str(&delta);
            }
            out::line("")?;
            (text, r.source_nodes)
        };
        let answer = Answer {
            question: question.to_string(),
            answer: Some(text.trim().to_string()),
            mode: "llm",
            retrieval: self.retrieval,
            sources: self.passages(question, &nodes),
        };
        if !ui.json {
            print_sources(&answer.sources)?;
        }
        Ok(answer)
    }

    /// Passages for `nodes` retrieved for `question`, with file, page or
    /// line, score, and the excerpt that matches the question best.
    pub fn passages(&self, question: &str, nodes: &[NodeWithScore]) -> Vec<Passage> {
        passage::passages(
            question,
            nodes,
            &|p| self.source.display_path(p),
            &self.lines,
        )
    }
}

use passage::location;

fn score(p: &Passage) -> String {
    p.score
        .map(|s| format!(" (score {s:.3})"))
        .unwrap_or_default()
}

/// Prints the passages of an answer made without an LLM.
pub fn print_passages(answer: &Answer) -> Result<(), CliError> {
    out::line("no LLM configured — most relevant passages:\n")?;
    for (i, p) in answer.sources.iter().enumerate() {
        out::line(format!("[{}] {}{}", i + 1, location(p), score(p)))?;
        for line in textwrap(&p.excerpt, 96) {
            out::line(format!("    {line}"))?;
        }
        out::line("")?;
    }
    Ok(())
}

/// Prints the sources of a generated answer.
pub fn print_sources(sources: &[Passage]) -> Result<(), CliError> {
    if sources.is_empty() {
        return Ok(());
    }
    out::line("\nSources:")?;
    for (i, p) in sources.iter().enumerate() {
        out::line(format!("  [{}] {}{}", i + 1, location(p), score(p)))?;
    }
    Ok(())
}

/// Splits `text` (whitespace collapsed) into lines of at most `width` characters.
fn textwrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words() {
        let l = textwrap("aaa bbb ccc", 7);
        assert_eq!(l, vec!["aaa bbb", "ccc"]);
    }
}
