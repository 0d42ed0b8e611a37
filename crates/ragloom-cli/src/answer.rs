//! Answering: retrieve with BM25 (and vectors, when the index has them),
//! then either generate an answer with the LLM or show the best passages.

use crate::backend::Index;
use crate::error::CliError;
use crate::out;
use crate::source::Source;
use crate::ui::Ui;
use futures::StreamExt;
use ragloom::node_parser::PunktSentenceTokenizer;
use ragloom::query_engine::{QueryEngine, RetrieverQueryEngine};
use ragloom::retrievers::Bm25Tokenizer;
use ragloom::retrievers::{FusionMode, QueryFusionRetriever, Retriever};
use ragloom::{Llm, NodeWithScore, ProviderSpec, QueryBundle};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// An opened index, ready to answer.
#[derive(Debug)]
pub struct Engine {
    pub source: Source,
    pub retriever: Arc<dyn Retriever>,
    pub retrieval: &'static str,
    pub llm: Option<Arc<dyn Llm>>,
}

/// One passage an answer draws on.
#[derive(Debug, Serialize)]
pub struct Passage {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub score: Option<f32>,
    pub node_id: String,
    /// The sentences of the node that match the question best (at most
    /// [`EXCERPT_CHARS`] characters); `line` is where they start.
    pub excerpt: String,
    /// The node's whole text.
    pub text: String,
}

/// The longest excerpt shown per passage, in characters.
pub const EXCERPT_CHARS: usize = 500;

/// An answer, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Answer {
    pub question: String,
    /// The generated answer; `null` when no LLM is configured.
    pub answer: Option<String>,
    /// `llm` or `passages`.
    pub mode: &'static str,
    /// `bm25` (the embedded store's keyword index), `fulltext`
    /// (PostgreSQL's) or `hybrid` (either fused with vectors).
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
        let (keyword, mut retrieval) = build.keyword_retriever(top_k)?;
        let mut retriever = keyword.clone();
        let built = &manifest.settings.embed;
        if *built != ragloom::EmbedSpec::None {
            if *built == spec.embed {
                if let Some(embed) = spec.embed.build()? {
                    retriever = match build.hybrid_retriever(embed.clone(), top_k)? {
                        Some(fused) => fused,
                        None => {
                            let dense = build.dense_retriever(embed, top_k).await?;
                            Arc::new(
                                QueryFusionRetriever::builder(vec![dense, keyword])
                                    .mode(FusionMode::ReciprocalRank)
                                    .num_queries(1)
                                    .similarity_top_k(top_k)
                                    .build()?,
                            )
                        }
                    };
                    retrieval = "hybrid";
                }
            } else {
                ui.warn(&format!(
                    "the index was embedded with {} but {} is configured: using keyword retrieval only (ingest again to re-embed)",
                    built.label(),
                    spec.embed.label()
                ));
            }
        }
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
        let tokenizer = Bm25Tokenizer::new();
        let terms: HashSet<String> = tokenizer.tokenize(question).into_iter().collect();
        let mut files: HashMap<String, Option<String>> = HashMap::new();
        nodes
            .iter()
            .map(|n| {
                let meta = &n.node.metadata;
                let path = meta
                    .get("file_path")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string();
                let page = meta.get("page_label").map(|v| match v.as_str() {
                    Some(s) => s.to_string(),
                    None => v.to_string(),
                });
                let text = n.node.get_text();
                let (excerpt_start, excerpt) =
                    best_excerpt(text, &terms, &tokenizer, EXCERPT_CHARS);
                let line = if page.is_none() {
                    n.node
                        .start_char_idx
                        .map(|s| s + excerpt_start)
                        .and_then(|start| {
                            let text = files
                                .entry(path.clone())
                                .or_insert_with(|| read_text(&path));
                            text.as_deref().map(|t| line_of(t, start))
                        })
                } else {
                    None
                };
                Passage {
                    file: self.source.display_path(&path),
                    page,
                    line,
                    score: n.score,
                    node_id: n.node.node_id().to_string(),
                    excerpt,
                    text: text.trim().to_string(),
                }
            })
            .collect()
    }
}

/// The run of consecutive sentences of `text`, at most `max_chars` long
/// (one sentence at least, cut if longer), holding the most distinct terms of
/// the question; the shortest, then the earliest, wins ties. Returns its character offset and text.
pub fn best_excerpt(
    text: &str,
    terms: &HashSet<String>,
    tokenizer: &Bm25Tokenizer,
    max_chars: usize,
) -> (usize, String) {
    let chars: Vec<char> = text.chars().collect();
    let spans = PunktSentenceTokenizer::new().span_tokenize(text);
    if spans.is_empty() {
        return (0, chars.iter().take(max_chars).collect());
    }
    let sentence_terms: Vec<HashSet<String>> = spans
        .iter()
        .map(|&(s, e)| {
            let sentence: String = chars[s..e].iter().collect();
            tokenizer
                .tokenize(&sentence)
                .into_iter()
                .filter(|t| terms.contains(t))
                .collect()
        })
        .collect();
    let mut best = (0usize, 0usize, 0usize); // (score, first, last)
    for first in 0..spans.len() {
        let mut found: HashSet<&String> = HashSet::new();
        for last in first..spans.len() {
            if last > first && spans[last].1 - spans[first].0 > max_chars {
                break;
            }
            found.extend(sentence_terms[last].iter());
            // More terms win; then fewer sentences (no leading filler).
            if found.len() > best.0 || (found.len() == best.0 && last - first < best.2 - best.1) {
                best = (found.len(), first, last);
            }
        }
    }
    let (_, first, last) = best;
    let (start, end) = (
        spans[first].0,
        spans[last].1.min(spans[first].0 + max_chars),
    );
    let mut excerpt: String = chars[start..end].iter().collect();
    if end < spans[last].1 {
        excerpt.push_str(" …");
    }
    (
        start,
        excerpt.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

/// A text file's content, for line numbers; `None` for files that are not text.
fn read_text(path: &str) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The 1-based line on which character `char_idx` of `text` lies.
pub fn line_of(text: &str, char_idx: usize) -> usize {
    1 + text.chars().take(char_idx).filter(|&c| c == '\n').count()
}

fn location(p: &Passage) -> String {
    match (&p.page, p.line) {
        (Some(page), _) => format!("{}, page {page}", p.file),
        (None, Some(line)) => format!("{}:{line}", p.file),
        _ => p.file.clone(),
    }
}

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
    fn lines_count_characters_not_bytes() {
        let t = "é\nb\nc";
        assert_eq!(line_of(t, 0), 1);
        assert_eq!(line_of(t, 2), 2);
        assert_eq!(line_of(t, 4), 3);
    }

    #[test]
    fn excerpts_pick_the_sentences_that_match() {
        let tok = Bm25Tokenizer::new();
        let terms: HashSet<String> = tok.tokenize("white rabbit watch").into_iter().collect();
        let text = "Alice sat by the river. Nothing happened for a while. \
            Then a White Rabbit ran by. It took a watch out of its pocket. The end came later.";
        let (start, excerpt) = best_excerpt(text, &terms, &tok, 80);
        assert!(
            excerpt.starts_with("Then a White Rabbit ran by."),
            "{excerpt}"
        );
        assert!(excerpt.contains("watch"), "{excerpt}");
        assert_eq!(text.chars().skip(start).take(4).collect::<String>(), "Then");
        // Without any matching term the first sentence is shown.
        let none: HashSet<String> = HashSet::new();
        assert_eq!(best_excerpt(text, &none, &tok, 80).0, 0);
    }

    #[test]
    fn wrapping_keeps_words() {
        let l = textwrap("aaa bbb ccc", 7);
        assert_eq!(l, vec!["aaa bbb", "ccc"]);
    }
}
