//! Question–node pairs for retrieval evaluation (`EmbeddingQAFinetuneDataset`
//! and `generate_qa_embedding_pairs`, as llama-index-finetuning 0.4.2 has them).

use indexmap::IndexMap;
use ragloom_core::error::{Error, Result};
use ragloom_core::llms::Llm;
use ragloom_core::prompts::PromptTemplate;
use ragloom_core::schema::{MetadataMode, Node, py_strip};
use ragloom_core::utils::{read_json_file, write_atomic};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Queries, the texts they are asked of, and which texts answer each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingQAFinetuneDataset {
    /// Query id → query.
    pub queries: IndexMap<String, String>,
    /// Node id → text.
    pub corpus: IndexMap<String, String>,
    /// Query id → ids of the nodes that answer it.
    pub relevant_docs: IndexMap<String, Vec<String>>,
    /// The corpus's kind (`text`).
    #[serde(default = "text_mode")]
    pub mode: String,
}

fn text_mode() -> String {
    "text".into()
}

impl EmbeddingQAFinetuneDataset {
    /// Each query with the ids that answer it.
    pub fn query_docid_pairs(&self) -> Vec<(&str, &[String])> {
        self.queries
            .iter()
            .map(|(id, q)| {
                let ids = self.relevant_docs.get(id).map(Vec::as_slice).unwrap_or(&[]);
                (q.as_str(), ids)
            })
            .collect()
    }

    /// Writes the dataset as JSON (atomically).
    pub fn save_json(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| {
            serde_json::to_writer_pretty(w, self).map_err(std::io::Error::other)
        })
    }

    /// Reads a dataset written by [`save_json`](Self::save_json) or by Python.
    pub fn from_json(path: &Path) -> Result<Self> {
        read_json_file(path)
    }
}

/// llama-index-finetuning's question prompt (`{context_str}`, `{num_questions_per_chunk}`).
pub const DEFAULT_QA_GENERATE_PROMPT_TMPL: &str = "Context information is below.\n\n---------------------\n{context_str}\n---------------------\n\nGiven the context information and no prior knowledge.\ngenerate only questions based on the below query.\n\nYou are a Teacher/ Professor. Your task is to setup {num_questions_per_chunk} questions for an upcoming quiz/examination. The questions should be diverse in nature across the document. Restrict the questions to the context information provided.\"\n";

/// What to do with a node whose questions could not be generated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Skip the node and go on (the default).
    #[default]
    Continue,
    /// Stop with the error.
    Fail,
}

/// Options of [`generate_qa_embedding_pairs`], with LlamaIndex's defaults.
#[derive(Clone, Debug)]
pub struct QaGenerationOptions {
    /// The prompt asking for questions about a node.
    pub qa_generate_prompt_tmpl: String,
    /// Questions per node (default 2).
    pub num_questions_per_chunk: usize,
    /// Tries per node.
    pub retry_limit: usize,
    /// What a node whose tries all failed does: skip it (default) or stop.
    pub on_failure: OnFailure,
    /// Saves to `output_path` after this many nodes.
    pub save_every: usize,
    /// Where the dataset is saved as it grows, and resumed from: a file
    /// already there is read and its nodes are not asked again. `None` keeps
    /// it in memory (LlamaIndex always writes `qa_finetune_dataset.json`).
    pub output_path: Option<PathBuf>,
    /// Shows a progress bar (default off).
    pub show_progress: bool,
}

impl Default for QaGenerationOptions {
    fn default() -> Self {
        Self {
            qa_generate_prompt_tmpl: DEFAULT_QA_GENERATE_PROMPT_TMPL.into(),
            num_questions_per_chunk: 2,
            retry_limit: 3,
            on_failure: OnFailure::Continue,
            save_every: 500,
            output_path: None,
            show_progress: false,
        }
    }
}

static LEADING_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+[).\s]").expect("valid regex"));

/// The questions of a model's reply: one per line, a leading `1.`, `2)` or
/// `3 ` removed, blank lines dropped (LlamaIndex's parsing).
pub fn parse_questions(reply: &str) -> Vec<String> {
    py_strip(reply)
        .split('\n')
        .map(|line| py_strip(&LEADING_NUMBER.replace(line, "")).to_owned())
        .filter(|q| !q.is_empty())
        .collect()
}

/// Asks `llm` for questions about each node; each question's relevant doc is
/// its node. Nodes are taken in order, a node id given twice once, in its
/// first place with its last text (LlamaIndex `generate_qa_embedding_pairs`).
pub async fn generate_qa_embedding_pairs(
    nodes: &[Node],
    llm: &dyn Llm,
    options: &QaGenerationOptions,
) -> Result<EmbeddingQAFinetuneDataset> {
    let mut dataset = match &options.output_path {
        Some(path) if path.exists() => EmbeddingQAFinetuneDataset::from_json(path)?,
        _ => EmbeddingQAFinetuneDataset {
            mode: text_mode(),
            ..Default::default()
        },
    };
    let template = PromptTemplate::new(options.qa_generate_prompt_tmpl.clone());
    let mut texts: IndexMap<&str, String> = IndexMap::new();
    for node in nodes {
        texts.insert(node.node_id(), node.get_content(MetadataMode::None));
    }
    let start = dataset.corpus.len().min(texts.len());
    let bar = progress(options.show_progress, texts.len(), start);
    let per_chunk = options.num_questions_per_chunk.to_string();
    let mut done = start;
    for (node_id, text) in texts.into_iter().skip(start) {
        bar.inc(1);
        let prompt = template.format(&[
            ("context_str", &text),
            ("num_questions_per_chunk", &per_chunk),
        ])?;
        let mut last_error = None;
        let mut reply = None;
        for _ in 0..options.retry_limit {
            match llm.complete(&prompt, false).await {
                Ok(r) => {
                    reply = Some(r.text);
                    break;
                }
                Err(e) => {
                    tracing::warn!(node = node_id, error = %e, "question generation failed");
                    last_error = Some(e);
                }
            }
        }
        let Some(reply) = reply else {
            match options.on_failure {
                OnFailure::Fail => {
                    // Python's message, the last error kept as the cause.
                    let what = format!("Failed to query LLM after {} retries", options.retry_limit);
                    return Err(match last_error {
                        Some(e) => Error::failed(what, e),
                        None => Error::Other(what),
                    });
                }
                OnFailure::Continue => continue,
            }
        };
        let mut questions = parse_questions(&reply);
        questions.truncate(options.num_questions_per_chunk);
        if questions.len() < options.num_questions_per_chunk {
            tracing::warn!(
                node = node_id,
                "Fewer questions generated ({}) than requested ({}).",
                questions.len(),
                options.num_questions_per_chunk
            );
        }
        for q in questions {
            let id = uuid::Uuid::new_v4().to_string();
            dataset.queries.insert(id.clone(), q);
            dataset.relevant_docs.insert(id, vec![node_id.to_owned()]);
        }
        dataset.corpus.insert(node_id.to_owned(), text);
        done += 1;
        if let Some(path) = &options.output_path {
            if done % options.save_every.max(1) == 0 {
                dataset.save_json(path)?;
            }
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &options.output_path {
        dataset.save_json(path)?;
    }
    Ok(dataset)
}

pub(crate) fn progress(show: bool, len: usize, start: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_position(start as u64);
    bar
}
