//! Answering: retrieve with BM25 (and vectors, when the index has them),
//! then either generate an answer with the LLM or show the best passages.

use crate::backend::{Build, Index};
use crate::error::CliError;
use crate::out;
use crate::source::Source;
use crate::ui::Ui;
use futures::StreamExt;
use ragloom::indices::VectorStoreIndex;
use ragloom::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom::retrievers::{FusionMode, QueryFusionRetriever, Retriever};
use ragloom::vector_stores::{MetadataFilters, VectorStoreQueryMode};
use ragloom::{Llm, NodeWithScore, ProviderSpec, QueryBundle};
use ragloom_server::passage::{self, LineIndex, Passage};
use serde::Serialize;
use std::sync::Arc;

/// The retrievers of one opened build: keyword search, fused with dense
/// search when the index was embedded with the configured model.
#[derive(Debug)]
pub struct Retrievers {
    build: Build,
    dense: Option<VectorStoreIndex>,
    /// `bm25`, `fulltext`, `sparse` or `hybrid`.
    pub retrieval: &'static str,
}

impl Retrievers {
    /// The retrievers of `build` (its manifest says how it was embedded).
    pub async fn open(
        build: Build,
        embedded_with: &ragloom::EmbedSpec,
        spec: &ProviderSpec,
        ui: &Ui,
    ) -> Result<Self, CliError> {
        let mut this = Self {
            retrieval: build.keyword_kind(),
            build,
            dense: None,
        };
        if *embedded_with == ragloom::EmbedSpec::None {
            return Ok(this);
        }
        if *embedded_with != spec.embed {
            ui.warn(&format!(
                "the index was embedded with {} but {} is configured: using keyword retrieval only (ingest again to re-embed)",
                embedded_with.label(),
                spec.embed.label()
            ));
            return Ok(this);
        }
        if let Some(embed) = spec.embed.build()? {
            this.dense = Some(this.build.vector_index(embed).await?);
            this.retrieval = "hybrid";
        }
        Ok(this)
    }

    /// A retriever of the `top_k` best nodes matching `filters`.
    pub fn retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> ragloom::Result<Arc<dyn Retriever>> {
        let keyword = self.build.keyword_retriever(top_k, filters.clone())?;
        let Some(index) = &self.dense else {
            return Ok(keyword);
        };
        let mut dense = index.as_retriever().similarity_top_k(top_k);
        if let Some(f) = filters {
            dense = dense.filters(f);
        }
        if self.build.fuses_hybrid() {
            return Ok(Arc::new(
                dense.vector_store_query_mode(VectorStoreQueryMode::Hybrid),
            ));
        }
        Ok(Arc::new(
            QueryFusionRetriever::builder(vec![Arc::new(dense), keyword])
                .mode(FusionMode::ReciprocalRank)
                .num_queries(1)
                .similarity_top_k(top_k)
                .build()?,
        ))
    }

    /// Keyword retrieval alone, of the `top_k` best nodes.
    pub fn keyword(&self, top_k: usize) -> ragloom::Result<Arc<dyn Retriever>> {
        self.build.keyword_retriever(top_k, None)
    }

    /// Dense retrieval alone, when the index has vectors of the configured model.
    pub fn vector(&self, top_k: usize) -> Option<Arc<dyn Retriever>> {
        self.dense.as_ref().map(|index| {
            Arc::new(index.as_retriever().similarity_top_k(top_k)) as Arc<dyn Retriever>
        })
    }

    /// The build read.
    pub fn build(&self) -> &Build {
        &self.build
    }
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
        index: &Index,
        spec: &ProviderSpec,
        top_k: usize,
        ui: &Ui,
    ) -> Result<Self, CliError> {
        let nothing = || {
            CliError::no_input(
                format!("nothing is ingested for {}", source.key),
                format!("run `ragloom ingest {}` first", source.key),
            )
        };
        let build = index.open_live(false, false).await?.ok_or_else(nothing)?;
        let manifest = build.manifest()?.ok_or_else(nothing)?;
        if manifest.last_ingest.nodes_total == 0 {
            return Err(CliError::no_input(
                format!("the index of {} holds no text", source.key),
                "add readable files to the folder and ingest it again",
            ));
        }
        let retrievers = Retrievers::open(build, &manifest.settings.embed, spec, ui).await?;
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
