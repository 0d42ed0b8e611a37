//! Metadata extractors: transformations asking an LLM for a title, keywords,
//! questions or summaries of each node and storing the answers in its metadata.
//!
//! Prompts, metadata keys and the node template rewrite are LlamaIndex's
//! (`extractors/metadata_extractors.py`, `extractors/interface.py`).

mod metadata_extractors;

pub use metadata_extractors::{
    DEFAULT_KEYWORD_EXTRACT_TEMPLATE, DEFAULT_QUESTION_GEN_TMPL, DEFAULT_SUMMARY_EXTRACT_TEMPLATE,
    DEFAULT_TITLE_COMBINE_TEMPLATE, DEFAULT_TITLE_NODE_TEMPLATE, KeywordExtractor,
    QuestionsAnsweredExtractor, SummaryExtractor, TitleExtractor,
};

use crate::error::Result;
use crate::schema::{Metadata, MetadataMode, Node, NodeKind};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::future::Future;

/// LlamaIndex's `DEFAULT_NODE_TEXT_TEMPLATE`: how an extractor makes a node
/// show its metadata once it has added some.
pub const DEFAULT_NODE_TEXT_TEMPLATE: &str =
    "[Excerpt from document]\n{metadata_str}\nExcerpt:\n-----\n{content}\n-----\n";

/// LlamaIndex's `DEFAULT_NUM_WORKERS` for concurrent LLM calls.
pub const DEFAULT_NUM_WORKERS: usize = 4;

/// The settings every extractor has (LlamaIndex `BaseExtractor`'s fields).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractorConfig {
    /// Show a progress bar over LLM calls (Python's default is `true`; ragloom's `false`).
    pub show_progress: bool,
    /// Which metadata a node shows the LLM (default `All`).
    pub metadata_mode: MetadataMode,
    /// The text template set on every text node after extraction.
    pub node_text_template: String,
    /// Leave nodes' text templates alone.
    pub disable_template_rewrite: bool,
    /// How many LLM calls run at once (default 4).
    pub num_workers: usize,
    /// Metadata keys to add to every node's `excluded_embed_metadata_keys`.
    pub excluded_embed_metadata_keys: Option<Vec<String>>,
    /// Metadata keys to add to every node's `excluded_llm_metadata_keys`.
    pub excluded_llm_metadata_keys: Option<Vec<String>>,
}

impl Default for ExtractorConfig {
    fn default() -> Self {
        Self {
            show_progress: false,
            metadata_mode: MetadataMode::All,
            node_text_template: DEFAULT_NODE_TEXT_TEMPLATE.to_string(),
            disable_template_rewrite: false,
            num_workers: DEFAULT_NUM_WORKERS,
            excluded_embed_metadata_keys: None,
            excluded_llm_metadata_keys: None,
        }
    }
}

impl ExtractorConfig {
    /// The parts of the config that change an extractor's output, for cache keys.
    pub fn settings(&self) -> Value {
        json!({
            "metadata_mode": format!("{:?}", self.metadata_mode),
            "node_text_template": self.node_text_template,
            "disable_template_rewrite": self.disable_template_rewrite,
            "excluded_embed_metadata_keys": self.excluded_embed_metadata_keys,
            "excluded_llm_metadata_keys": self.excluded_llm_metadata_keys,
        })
    }
}

/// Something that computes metadata for nodes (LlamaIndex `BaseExtractor`).
///
/// Every extractor in this module is also a [`crate::TransformComponent`]
/// through [`process_nodes`]; a custom extractor implements this trait and
/// calls [`process_nodes`] from its own `transform`.
#[async_trait]
pub trait MetadataExtractor: Send + Sync + std::fmt::Debug {
    /// The shared settings.
    fn config(&self) -> &ExtractorConfig;

    /// One metadata map per node, in order, to be merged into the nodes.
    async fn extract(&self, nodes: &[Node]) -> Result<Vec<Metadata>>;
}

/// Whether a node is a text node in Python's sense (`TextNode` or its
/// subclass `IndexNode`; a `Document` is not one).
pub(crate) fn is_text_node(node: &Node) -> bool {
    !matches!(node.kind, NodeKind::Document)
}

/// LlamaIndex `BaseExtractor.aprocess_nodes`: extracts, merges each map into
/// its node's metadata, extends the excluded keys, and sets text nodes'
/// template to `node_text_template` (unless disabled).
pub async fn process_nodes(
    extractor: &dyn MetadataExtractor,
    mut nodes: Vec<Node>,
) -> Result<Vec<Node>> {
    let metadata_list = extractor.extract(&nodes).await?;
    let config = extractor.config();
    for (node, metadata) in nodes.iter_mut().zip(metadata_list) {
        for (k, v) in metadata {
            node.metadata.insert(k, v);
        }
        if let Some(keys) = &config.excluded_embed_metadata_keys {
            node.excluded_embed_metadata_keys
                .extend(keys.iter().cloned());
        }
        if let Some(keys) = &config.excluded_llm_metadata_keys {
            node.excluded_llm_metadata_keys.extend(keys.iter().cloned());
        }
        if !config.disable_template_rewrite && is_text_node(node) {
            node.text_template.clone_from(&config.node_text_template);
        }
    }
    Ok(nodes)
}

/// Runs `jobs` with at most `workers` at once, results in job order, with
/// an optional progress bar (LlamaIndex `run_jobs`). After a failure no
/// further job starts; the first failure in job order is returned.
pub(crate) async fn run_jobs<T, F>(
    jobs: Vec<F>,
    show_progress: bool,
    workers: usize,
) -> Result<Vec<T>>
where
    F: Future<Output = Result<T>>,
{
    let bar = show_progress.then(|| indicatif::ProgressBar::new(jobs.len() as u64));
    let results = crate::utils::run_in_order(jobs, workers, |out| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        out.is_ok()
    })
    .await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    results.into_iter().collect()
}
