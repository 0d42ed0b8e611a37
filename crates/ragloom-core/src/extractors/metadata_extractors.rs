//! The four LLM metadata extractors of LlamaIndex: document titles, keywords,
//! questions an excerpt answers, and section summaries (with neighbours').

use super::{ExtractorConfig, MetadataExtractor, is_text_node, process_nodes, run_jobs};
use crate::error::{Error, Result};
use crate::llms::{Llm, predict};
use crate::prompts::{BasePromptTemplate, PromptTemplate};
use crate::schema::{Metadata, Node, py_strip};
use crate::transform::TransformComponent;
use async_trait::async_trait;
use indexmap::IndexMap;
use serde_json::{Value, json};
use std::sync::Arc;

/// Asks for a title from one node's text.
pub const DEFAULT_TITLE_NODE_TEMPLATE: &str = "Context: {context_str}. Give a title that summarizes all of the unique entities, titles or themes found in the context. Title: ";
/// Asks for a document title from the nodes' candidate titles.
pub const DEFAULT_TITLE_COMBINE_TEMPLATE: &str = "{context_str}. Based on the above candidate titles and content, what is the comprehensive title for this document? Title: ";
/// Asks for `{keywords}` keywords.
pub const DEFAULT_KEYWORD_EXTRACT_TEMPLATE: &str = "{context_str}. Give {keywords} unique keywords for this document. Format as comma separated. Keywords: ";
/// Asks for `{num_questions}` questions the context answers.
pub const DEFAULT_QUESTION_GEN_TMPL: &str = "Here is the context:\n{context_str}\n\nGiven the contextual information, generate {num_questions} questions this context can provide specific answers to which are unlikely to be found elsewhere.\n\nHigher-level summaries of surrounding context may be provided as well. Try using these summaries to generate better questions that this context can answer.\n\n";
/// Asks for a summary of a section.
pub const DEFAULT_SUMMARY_EXTRACT_TEMPLATE: &str = "Here is the content of the section:\n{context_str}\n\nSummarize the key topics and entities of the section. \nSummary: ";

async fn ask(llm: &dyn Llm, template: &str, vars: &[(&str, &str)]) -> Result<String> {
    let prompt = BasePromptTemplate::from(PromptTemplate::new(template));
    predict(llm, &prompt, vars).await
}

/// Asks `template` about one text node (its content as `{context_str}`,
/// beside `count`) and keeps the stripped reply under `key`; any other kind
/// of node gets no metadata, as in Python.
async fn ask_about_node(
    llm: &dyn Llm,
    template: &str,
    count: (&str, usize),
    key: &str,
    node: &Node,
    config: &ExtractorConfig,
) -> Result<Metadata> {
    let mut m = Metadata::new();
    if !is_text_node(node) {
        return Ok(m);
    }
    let context = node.get_content(config.metadata_mode);
    let n = count.1.to_string();
    let reply = ask(llm, template, &[(count.0, &n), ("context_str", &context)]).await?;
    m.insert(key.into(), Value::String(py_strip(&reply).to_string()));
    Ok(m)
}

/// `MetadataExtractor` for an extractor that asks about each node on its
/// own (its `one(&self, node)`), concurrently.
macro_rules! per_node_extractor {
    ($ty:ident) => {
        #[async_trait]
        impl MetadataExtractor for $ty {
            fn config(&self) -> &ExtractorConfig {
                &self.config
            }

            async fn extract(&self, nodes: &[Node]) -> Result<Vec<Metadata>> {
                let jobs = nodes.iter().map(|n| self.one(n)).collect();
                run_jobs(jobs, self.config.show_progress, self.config.num_workers).await
            }
        }
    };
}

/// Builder methods every extractor shares, and its `TransformComponent` impl.
macro_rules! extractor_common {
    ($ty:ident, $class:literal) => {
        impl $ty {
            /// Sets how many LLM calls run at once (LlamaIndex `num_workers`, default 4).
            pub fn num_workers(mut self, n: usize) -> Self {
                self.config.num_workers = n.max(1);
                self
            }

            /// Shows a progress bar over LLM calls.
            pub fn show_progress(mut self, show: bool) -> Self {
                self.config.show_progress = show;
                self
            }

            /// Replaces the shared extractor settings.
            pub fn with_config(mut self, config: ExtractorConfig) -> Self {
                self.config = config;
                self
            }
        }

        #[async_trait]
        impl TransformComponent for $ty {
            fn class_name(&self) -> &'static str {
                $class
            }

            fn settings(&self) -> Value {
                let mut s = self.own_settings();
                if let Value::Object(m) = &mut s {
                    m.insert("llm".into(), json!(self.llm.metadata().model_name));
                    m.insert("config".into(), self.config.settings());
                    m.insert("class_name".into(), json!($class));
                }
                s
            }

            async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>> {
                process_nodes(self, nodes).await
            }
        }
    };
}

/// Document-level title (LlamaIndex `TitleExtractor`): asks for a title of
/// each of the first `nodes` nodes of every document, then for one title
/// combining them; every node gets it as `document_title` (unstripped, as in Python).
#[derive(Clone, Debug)]
pub struct TitleExtractor {
    llm: Arc<dyn Llm>,
    nodes: usize,
    node_template: String,
    combine_template: String,
    config: ExtractorConfig,
}

impl TitleExtractor {
    /// Python's defaults: 5 nodes per document, the default templates.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            nodes: 5,
            node_template: DEFAULT_TITLE_NODE_TEMPLATE.into(),
            combine_template: DEFAULT_TITLE_COMBINE_TEMPLATE.into(),
            config: ExtractorConfig::default(),
        }
    }

    /// How many nodes from the front of each document give candidate
    /// titles; 0 is an [`Error::InvalidInput`].
    pub fn nodes(mut self, nodes: usize) -> Result<Self> {
        if nodes < 1 {
            return Err(Error::InvalidInput(
                "TitleExtractor: nodes must be >= 1".into(),
            ));
        }
        self.nodes = nodes;
        Ok(self)
    }

    /// The prompt asking for one node's title (`{context_str}`).
    pub fn node_template(mut self, t: impl Into<String>) -> Self {
        self.node_template = t.into();
        self
    }

    /// The prompt combining candidate titles (`{context_str}`).
    pub fn combine_template(mut self, t: impl Into<String>) -> Self {
        self.combine_template = t.into();
        self
    }

    fn own_settings(&self) -> Value {
        json!({"nodes": self.nodes, "node_template": self.node_template, "combine_template": self.combine_template})
    }

    async fn title_of(&self, nodes: &[&Node]) -> Result<String> {
        // Candidates one after another, as Python awaits them in a loop.
        let mut candidates = Vec::with_capacity(nodes.len());
        for node in nodes {
            candidates.push(
                ask(
                    self.llm.as_ref(),
                    &self.node_template,
                    &[("context_str", &node.text)],
                )
                .await?,
            );
        }
        let combined = candidates.join(", ");
        ask(
            self.llm.as_ref(),
            &self.combine_template,
            &[("context_str", &combined)],
        )
        .await
    }
}

extractor_common!(TitleExtractor, "TitleExtractor");

#[async_trait]
impl MetadataExtractor for TitleExtractor {
    fn config(&self) -> &ExtractorConfig {
        &self.config
    }

    async fn extract(&self, nodes: &[Node]) -> Result<Vec<Metadata>> {
        let mut by_doc: IndexMap<Option<&str>, Vec<&Node>> = IndexMap::new();
        for node in nodes {
            let group = by_doc.entry(node.ref_doc_id()).or_default();
            if group.len() < self.nodes {
                group.push(node);
            }
        }
        // Python runs documents with run_jobs' default number of workers.
        let jobs = by_doc.values().map(|group| self.title_of(group)).collect();
        let titles = run_jobs(jobs, self.config.show_progress, super::DEFAULT_NUM_WORKERS).await?;
        let titles: IndexMap<Option<&str>, String> = by_doc.keys().copied().zip(titles).collect();
        Ok(nodes
            .iter()
            .map(|n| {
                let mut m = Metadata::new();
                if let Some(t) = titles.get(&n.ref_doc_id()) {
                    m.insert("document_title".into(), Value::String(t.clone()));
                }
                m
            })
            .collect())
    }
}

/// Node-level keywords (LlamaIndex `KeywordExtractor`), as `excerpt_keywords`.
#[derive(Clone, Debug)]
pub struct KeywordExtractor {
    llm: Arc<dyn Llm>,
    keywords: usize,
    prompt_template: String,
    config: ExtractorConfig,
}

impl KeywordExtractor {
    /// Python's defaults: 5 keywords, the default prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            keywords: 5,
            prompt_template: DEFAULT_KEYWORD_EXTRACT_TEMPLATE.into(),
            config: ExtractorConfig::default(),
        }
    }

    /// How many keywords to ask for; 0 is an [`Error::InvalidInput`].
    pub fn keywords(mut self, keywords: usize) -> Result<Self> {
        if keywords < 1 {
            return Err(Error::InvalidInput(
                "KeywordExtractor: keywords must be >= 1".into(),
            ));
        }
        self.keywords = keywords;
        Ok(self)
    }

    /// The prompt (`{context_str}`, `{keywords}`).
    pub fn prompt_template(mut self, t: impl Into<String>) -> Self {
        self.prompt_template = t.into();
        self
    }

    fn own_settings(&self) -> Value {
        json!({"keywords": self.keywords, "prompt_template": self.prompt_template})
    }

    async fn one(&self, node: &Node) -> Result<Metadata> {
        ask_about_node(
            self.llm.as_ref(),
            &self.prompt_template,
            ("keywords", self.keywords),
            "excerpt_keywords",
            node,
            &self.config,
        )
        .await
    }
}

extractor_common!(KeywordExtractor, "KeywordExtractor");
per_node_extractor!(KeywordExtractor);

/// Questions a node answers (LlamaIndex `QuestionsAnsweredExtractor`), as
/// `questions_this_excerpt_can_answer`.
#[derive(Clone, Debug)]
pub struct QuestionsAnsweredExtractor {
    llm: Arc<dyn Llm>,
    questions: usize,
    prompt_template: String,
    config: ExtractorConfig,
}

impl QuestionsAnsweredExtractor {
    /// Python's defaults: 5 questions, the default prompt.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            questions: 5,
            prompt_template: DEFAULT_QUESTION_GEN_TMPL.into(),
            config: ExtractorConfig::default(),
        }
    }

    /// How many questions to ask for; 0 is an [`Error::InvalidInput`].
    pub fn questions(mut self, questions: usize) -> Result<Self> {
        if questions < 1 {
            return Err(Error::InvalidInput(
                "QuestionsAnsweredExtractor: questions must be >= 1".into(),
            ));
        }
        self.questions = questions;
        Ok(self)
    }

    /// The prompt (`{context_str}`, `{num_questions}`).
    pub fn prompt_template(mut self, t: impl Into<String>) -> Self {
        self.prompt_template = t.into();
        self
    }

    fn own_settings(&self) -> Value {
        json!({"questions": self.questions, "prompt_template": self.prompt_template})
    }

    async fn one(&self, node: &Node) -> Result<Metadata> {
        ask_about_node(
            self.llm.as_ref(),
            &self.prompt_template,
            ("num_questions", self.questions),
            "questions_this_excerpt_can_answer",
            node,
            &self.config,
        )
        .await
    }
}

extractor_common!(QuestionsAnsweredExtractor, "QuestionsAnsweredExtractor");
per_node_extractor!(QuestionsAnsweredExtractor);

/// Section summaries (LlamaIndex `SummaryExtractor`): each node's own
/// (`section_summary`), and its neighbours' in the list
/// (`prev_section_summary`, `next_section_summary`), as chosen.
#[derive(Clone, Debug)]
pub struct SummaryExtractor {
    llm: Arc<dyn Llm>,
    self_summary: bool,
    prev_summary: bool,
    next_summary: bool,
    prompt_template: String,
    config: ExtractorConfig,
}

impl SummaryExtractor {
    /// Python's default: the node's own summary only.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            self_summary: true,
            prev_summary: false,
            next_summary: false,
            prompt_template: DEFAULT_SUMMARY_EXTRACT_TEMPLATE.into(),
            config: ExtractorConfig::default(),
        }
    }

    /// Which summaries to store, from `"self"`, `"prev"`, `"next"`; anything
    /// else is an [`Error::InvalidInput`] naming it.
    pub fn summaries(mut self, summaries: &[&str]) -> Result<Self> {
        if let Some(bad) = summaries
            .iter()
            .find(|s| !["self", "prev", "next"].contains(*s))
        {
            return Err(Error::InvalidInput(format!(
                "SummaryExtractor: summaries must be one of ['self', 'prev', 'next'], got `{bad}`"
            )));
        }
        self.self_summary = summaries.contains(&"self");
        self.prev_summary = summaries.contains(&"prev");
        self.next_summary = summaries.contains(&"next");
        Ok(self)
    }

    /// The prompt (`{context_str}`).
    pub fn prompt_template(mut self, t: impl Into<String>) -> Self {
        self.prompt_template = t.into();
        self
    }

    fn own_settings(&self) -> Value {
        json!({
            "summaries": [self.self_summary, self.prev_summary, self.next_summary],
            "prompt_template": self.prompt_template,
        })
    }

    async fn summary(&self, node: &Node) -> Result<String> {
        let context = node.get_content(self.config.metadata_mode);
        let reply = ask(
            self.llm.as_ref(),
            &self.prompt_template,
            &[("context_str", &context)],
        )
        .await?;
        Ok(py_strip(&reply).to_string())
    }
}

extractor_common!(SummaryExtractor, "SummaryExtractor");

#[async_trait]
impl MetadataExtractor for SummaryExtractor {
    fn config(&self) -> &ExtractorConfig {
        &self.config
    }

    async fn extract(&self, nodes: &[Node]) -> Result<Vec<Metadata>> {
        if let Some(doc) = nodes.iter().find(|n| !is_text_node(n)) {
            return Err(Error::InvalidInput(format!(
                "SummaryExtractor takes text nodes only; {} is a document",
                doc.id_
            )));
        }
        let jobs = nodes.iter().map(|n| self.summary(n)).collect();
        let summaries = run_jobs(jobs, self.config.show_progress, self.config.num_workers).await?;
        let last = nodes.len().saturating_sub(1);
        Ok((0..nodes.len())
            .map(|i| {
                let mut m = Metadata::new();
                if i > 0 && self.prev_summary && !summaries[i - 1].is_empty() {
                    m.insert(
                        "prev_section_summary".into(),
                        Value::String(summaries[i - 1].clone()),
                    );
                }
                if i < last && self.next_summary && !summaries[i + 1].is_empty() {
                    m.insert(
                        "next_section_summary".into(),
                        Value::String(summaries[i + 1].clone()),
                    );
                }
                if self.self_summary && !summaries[i].is_empty() {
                    m.insert(
                        "section_summary".into(),
                        Value::String(summaries[i].clone()),
                    );
                }
                m
            })
            .collect())
    }
}
