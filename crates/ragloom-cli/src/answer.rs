//! Answering: retrieve with BM25 (and vectors, when the index has them),
//! then either generate an answer with the LLM or show the best passages.

use crate::error::CliError;
use crate::out;
use crate::ui::Ui;
use futures::StreamExt;
use ragloom::ProviderSpec;
use ragloom::durable::{DurableIndex, FusionChoice, IndexRetrievers, LiveIndex, Source};
use ragloom::query_engine::answer::{Answer, Answerer, NO_LLM_NOTE, score};
use ragloom::query_engine::passage::Passage;
use std::sync::Arc;

/// What the front-ends retrieve with: the providers, hybrid fusion, top k.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retrieval<'a> {
    pub spec: &'a ProviderSpec,
    pub fusion: FusionChoice,
    pub top_k: usize,
}

/// The retrievers of an opened index, with dense search when the
/// configured model is the one it was embedded with (else a warning),
/// fused as configured.
pub(crate) async fn retrievers(
    live: &LiveIndex,
    spec: &ProviderSpec,
    fusion: FusionChoice,
    ui: &Ui,
) -> Result<IndexRetrievers, CliError> {
    // The model is built (a local one loads its weights) only when the
    // index holds vectors of it: a keyword-only index, or one embedded with
    // another model, never calls it.
    let configured = serde_json::to_value(&spec.embed).map_err(ragloom::Error::from)?;
    let model = if live.manifest().settings.embed == configured {
        spec.embed.embed_model()?
    } else {
        None
    };
    let retrievers = live.retrievers(model.as_ref()).await?;
    if retrievers.other_model {
        ui.warn(&format!(
            "the index was embedded with {} but {} is configured: using keyword retrieval only (ingest again to re-embed)",
            crate::ingest::model_label(&live.manifest().settings.embed),
            spec.embed.label()
        ));
    }
    Ok(retrievers.with_fusion(fusion))
}

/// An opened index, ready to answer through the library's [`Answerer`].
#[derive(Debug)]
pub(crate) struct Engine {
    pub source: Source,
    pub answerer: Answerer,
}

impl Engine {
    /// Opens the index of `source` with the configured providers. Nothing
    /// is loaded but what the retrievers read per query.
    pub(crate) async fn open(
        source: Source,
        index: &DurableIndex,
        retrieval: &Retrieval<'_>,
        ui: &Ui,
    ) -> Result<Self, CliError> {
        let (spec, top_k) = (retrieval.spec, retrieval.top_k);
        let live = index.open().await?;
        if live.manifest().last_ingest.nodes_total == 0 {
            return Err(CliError::no_input(
                format!("the index of {} holds no text", source.key),
                "add readable files to the folder and ingest it again",
            ));
        }
        let retrievers = retrievers(&live, spec, retrieval.fusion, ui).await?;
        let retriever = retrievers.retriever(top_k, None)?;
        ui.detail(&format!(
            "retrieval: {}; llm: {}",
            retrievers.retrieval,
            spec.llm.label()
        ));
        let shown = source.clone();
        let answerer = Answerer::new(retriever, spec.llm.build()?, retrievers.retrieval)
            .display_path(Arc::new(move |p| shown.display_path(p)));
        Ok(Self { source, answerer })
    }

    /// Answers `question`; in text mode the answer streams to stdout as it arrives.
    pub(crate) async fn answer(&self, question: &str, ui: &Ui) -> Result<Answer, CliError> {
        if ui.json || self.answerer.llm().is_none() {
            let answer = self.answerer.answer(question).await?;
            if !ui.json {
                print_passages(&answer)?;
            }
            return Ok(answer);
        }
        let mut r = self.answerer.stream(question).await?;
        let mut text = String::new();
        while let Some(delta) = r.deltas.next().await {
            let delta = delta?;
            // A closed pipe returns here, dropping the stream: generation stops.
            out::write(&delta)?;
            text.push_str(&delta);
        }
        out::line("")?;
        print_sources(&r.sources)?;
        Ok(Answer {
            question: question.to_string(),
            answer: Some(text.trim().to_string()),
            mode: r.mode,
            retrieval: self.answerer.retrieval().to_string(),
            sources: r.sources,
        })
    }
}

use ragloom::query_engine::passage::location;

/// Prints the passages of an answer made without an LLM.
pub(crate) fn print_passages(answer: &Answer) -> Result<(), CliError> {
    out::line(format!("{NO_LLM_NOTE}:\n"))?;
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
pub(crate) fn print_sources(sources: &[Passage]) -> Result<(), CliError> {
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
