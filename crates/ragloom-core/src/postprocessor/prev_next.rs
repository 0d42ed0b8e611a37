//! `PrevNextNodePostprocessor`: adds the chunks before and/or after each
//! retrieved node, fetched from a docstore, and orders them as in the document.

use super::NodePostprocessor;
use crate::error::{Error, Result};
use crate::schema::{NodeWithScore, QueryBundle};
use crate::storage::docstore::DocStore;
use async_trait::async_trait;
use indexmap::IndexMap;
use std::str::FromStr;
use std::sync::Arc;

/// Which neighbours [`PrevNextNodePostprocessor`] fetches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrevNextMode {
    /// The following chunks (LlamaIndex `"next"`, the default).
    #[default]
    Next,
    /// The preceding chunks (`"previous"`).
    Previous,
    /// Both (`"both"`).
    Both,
}

impl FromStr for PrevNextMode {
    type Err = Error;

    /// LlamaIndex's mode names: `next`, `previous`, `both`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "next" => Ok(Self::Next),
            "previous" => Ok(Self::Previous),
            "both" => Ok(Self::Both),
            other => Err(Error::InvalidInput(format!(
                "invalid mode `{other}`: expected next, previous or both"
            ))),
        }
    }
}

/// Fetches neighbours of retrieved nodes from `docstore` through their
/// `Next`/`Previous` relationships (LlamaIndex `PrevNextNodePostprocessor`).
///
/// Output order is Python's: nodes are collected in an insertion-ordered
/// map (a node fetched as a neighbour keeps its place but takes the value
/// written last: a neighbour is unscored, a retrieved node keeps its score),
/// then each is inserted before the first collected node whose `Previous`
/// it is, or after the first whose `Next` it is, or else appended. A
/// neighbour missing from the docstore is an error naming it, as in Python.
#[derive(Clone, Debug)]
pub struct PrevNextNodePostprocessor {
    /// Where neighbours are looked up.
    pub docstore: Arc<dyn DocStore>,
    /// How many neighbours to fetch in each direction (default 1).
    pub num_nodes: usize,
    /// Which direction(s) (default [`PrevNextMode::Next`]).
    pub mode: PrevNextMode,
}

impl PrevNextNodePostprocessor {
    /// One following node per retrieved node, as LlamaIndex's defaults.
    pub fn new(docstore: Arc<dyn DocStore>) -> Self {
        Self {
            docstore,
            num_nodes: 1,
            mode: PrevNextMode::Next,
        }
    }

    /// Sets `num_nodes`.
    pub fn num_nodes(mut self, num_nodes: usize) -> Self {
        self.num_nodes = num_nodes;
        self
    }

    /// Sets `mode`.
    pub fn mode(mut self, mode: PrevNextMode) -> Self {
        self.mode = mode;
        self
    }
}

/// `node` and up to `num_nodes` nodes following it in `docstore`, in chain
/// order, the fetched ones unscored (LlamaIndex `get_forward_nodes`).
pub async fn get_forward_nodes(
    node: &NodeWithScore,
    num_nodes: usize,
    docstore: &dyn DocStore,
) -> Result<IndexMap<String, NodeWithScore>> {
    walk(node, num_nodes, docstore, true).await
}

/// `node` and up to `num_nodes` nodes preceding it in `docstore`, nearest
/// first (LlamaIndex `get_backward_nodes`).
pub async fn get_backward_nodes(
    node: &NodeWithScore,
    num_nodes: usize,
    docstore: &dyn DocStore,
) -> Result<IndexMap<String, NodeWithScore>> {
    walk(node, num_nodes, docstore, false).await
}

async fn walk(
    start: &NodeWithScore,
    num_nodes: usize,
    docstore: &dyn DocStore,
    forward: bool,
) -> Result<IndexMap<String, NodeWithScore>> {
    let mut nodes = IndexMap::new();
    nodes.insert(start.node.id_.clone(), start.clone());
    let mut current = start.node.clone();
    for _ in 0..num_nodes {
        let related = if forward {
            current.next_node()
        } else {
            current.prev_node()
        };
        let Some(info) = related else { break };
        let next = docstore
            .get_node(&info.node_id)
            .await
            .map_err(|e| match e {
                Error::NotFound(msg) => Error::NotFound(format!(
                    "{msg} (the {} node of node {})",
                    if forward { "next" } else { "previous" },
                    current.id_
                )),
                other => other,
            })?;
        nodes.insert(next.id_.clone(), NodeWithScore::new(next.clone(), None));
        current = next;
    }
    Ok(nodes)
}

/// Python's `dict.update`: existing keys keep their place, take the new value.
fn update(all: &mut IndexMap<String, NodeWithScore>, more: IndexMap<String, NodeWithScore>) {
    for (k, v) in more {
        all.insert(k, v);
    }
}

#[async_trait]
impl NodePostprocessor for PrevNextNodePostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        _query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        let store = self.docstore.as_ref();
        let mut all: IndexMap<String, NodeWithScore> = IndexMap::new();
        for n in &nodes {
            all.insert(n.node.id_.clone(), n.clone());
            if matches!(self.mode, PrevNextMode::Next | PrevNextMode::Both) {
                update(&mut all, get_forward_nodes(n, self.num_nodes, store).await?);
            }
            if matches!(self.mode, PrevNextMode::Previous | PrevNextMode::Both) {
                update(
                    &mut all,
                    get_backward_nodes(n, self.num_nodes, store).await?,
                );
            }
        }
        let mut sorted: Vec<NodeWithScore> = Vec::with_capacity(all.len());
        for (id, node) in all {
            let slot = sorted.iter().enumerate().find_map(|(i, cand)| {
                if cand.node.prev_node().is_some_and(|p| p.node_id == id) {
                    Some(i)
                } else if cand.node.next_node().is_some_and(|p| p.node_id == id) {
                    Some(i + 1)
                } else {
                    None
                }
            });
            match slot {
                Some(i) => sorted.insert(i, node),
                None => sorted.push(node),
            }
        }
        Ok(sorted)
    }
}

/// LlamaIndex's `DEFAULT_INFER_PREV_NEXT_TMPL` (`{context_str}`, `{query_str}`), verbatim.
pub const DEFAULT_INFER_PREV_NEXT_TMPL: &str = "The current context information is provided. \n\
A question is also provided. \n\
You are a retrieval agent deciding whether to search the \
document store for additional prior context or future context. \n\
Given the context and question, return PREVIOUS or NEXT or NONE. \n\
Examples: \n\n\
Context: Describes the author's experience at Y Combinator.\
Question: What did the author do after his time at Y Combinator? \n\
Answer: NEXT \n\n\
Context: Describes the author's experience at Y Combinator.\
Question: What did the author do before his time at Y Combinator? \n\
Answer: PREVIOUS \n\n\
Context: Describe the author's experience at Y Combinator.\
Question: What did the author do at Y Combinator? \n\
Answer: NONE \n\n\
Context: {context_str}\n\
Question: {query_str}\n\
Answer: ";

/// LlamaIndex's `DEFAULT_REFINE_INFER_PREV_NEXT_TMPL` (`{context_msg}`,
/// `{query_str}`, `{existing_answer}`), verbatim.
pub const DEFAULT_REFINE_INFER_PREV_NEXT_TMPL: &str = "The current context information is provided. \n\
A question is also provided. \n\
An existing answer is also provided.\n\
You are a retrieval agent deciding whether to search the \
document store for additional prior context or future context. \n\
Given the context, question, and previous answer, \
return PREVIOUS or NEXT or NONE.\n\
Examples: \n\n\
Context: {context_msg}\n\
Question: {query_str}\n\
Existing Answer: {existing_answer}\n\
Answer: ";

/// Like [`PrevNextNodePostprocessor`], but an LLM decides for each node
/// whether to fetch the previous nodes, the next ones or none (LlamaIndex
/// `AutoPrevNextNodePostprocessor`).
///
/// For each node the LLM answers `infer_prev_next_tmpl` (through a
/// synthesizer in `response_mode`, so long nodes are refined with
/// `refine_prev_next_tmpl`); an answer containing "previous", else "next",
/// else "none" (any case) decides, anything else is an
/// [`Error::OutputParse`] quoting it. As in Python, the result is sorted by
/// node id, and a query is required.
#[derive(Clone, Debug)]
pub struct AutoPrevNextNodePostprocessor {
    /// Where neighbours are looked up.
    pub docstore: Arc<dyn DocStore>,
    llm: Arc<dyn crate::llms::Llm>,
    /// How many neighbours to fetch (default 1).
    pub num_nodes: usize,
    /// The inference prompt (default [`DEFAULT_INFER_PREV_NEXT_TMPL`]).
    pub infer_prev_next_tmpl: String,
    /// The refine prompt (default [`DEFAULT_REFINE_INFER_PREV_NEXT_TMPL`]).
    pub refine_prev_next_tmpl: String,
    /// The synthesizer mode asking the LLM (default `Compact`).
    pub response_mode: crate::response_synthesizers::ResponseMode,
}

impl AutoPrevNextNodePostprocessor {
    /// LlamaIndex's defaults, asking `llm`.
    pub fn new(docstore: Arc<dyn DocStore>, llm: Arc<dyn crate::llms::Llm>) -> Self {
        Self {
            docstore,
            llm,
            num_nodes: 1,
            infer_prev_next_tmpl: DEFAULT_INFER_PREV_NEXT_TMPL.to_string(),
            refine_prev_next_tmpl: DEFAULT_REFINE_INFER_PREV_NEXT_TMPL.to_string(),
            response_mode: crate::response_synthesizers::ResponseMode::Compact,
        }
    }

    /// Sets `num_nodes`.
    pub fn num_nodes(mut self, num_nodes: usize) -> Self {
        self.num_nodes = num_nodes;
        self
    }

    /// Replaces the inference prompt (`{context_str}`, `{query_str}`).
    pub fn infer_prev_next_tmpl(mut self, tmpl: impl Into<String>) -> Self {
        self.infer_prev_next_tmpl = tmpl.into();
        self
    }

    /// Replaces the refine prompt.
    pub fn refine_prev_next_tmpl(mut self, tmpl: impl Into<String>) -> Self {
        self.refine_prev_next_tmpl = tmpl.into();
        self
    }

    /// Sets the synthesizer mode.
    pub fn response_mode(mut self, mode: crate::response_synthesizers::ResponseMode) -> Self {
        self.response_mode = mode;
        self
    }
}

/// Python's `_parse_prediction`: which direction an LLM answer names.
fn parse_prediction(raw: &str) -> Result<Option<PrevNextMode>> {
    let pred = raw.trim().to_lowercase();
    if pred.contains("previous") {
        Ok(Some(PrevNextMode::Previous))
    } else if pred.contains("next") {
        Ok(Some(PrevNextMode::Next))
    } else if pred.contains("none") {
        Ok(None)
    } else {
        Err(Error::OutputParse(format!(
            "AutoPrevNextNodePostprocessor: expected PREVIOUS, NEXT or NONE, got {raw:?}"
        )))
    }
}

#[async_trait]
impl NodePostprocessor for AutoPrevNextNodePostprocessor {
    async fn postprocess_nodes(
        &self,
        nodes: Vec<NodeWithScore>,
        query: Option<&QueryBundle>,
    ) -> Result<Vec<NodeWithScore>> {
        use crate::prompts::PromptTemplate;
        use crate::response_synthesizers::ResponseSynthesizerBuilder;
        use crate::schema::MetadataMode;

        let query = query.ok_or_else(|| {
            Error::InvalidInput("AutoPrevNextNodePostprocessor needs the query".into())
        })?;
        let synthesizer = ResponseSynthesizerBuilder::new(self.llm.clone())
            .response_mode(self.response_mode)
            .text_qa_template(PromptTemplate::new(self.infer_prev_next_tmpl.as_str()))
            .refine_template(PromptTemplate::new(self.refine_prev_next_tmpl.as_str()))
            .build()?;
        let store = self.docstore.as_ref();
        let mut all: IndexMap<String, NodeWithScore> = IndexMap::new();
        for n in &nodes {
            all.insert(n.node.id_.clone(), n.clone());
            let chunk = [n.node.get_content(MetadataMode::None)];
            let raw = synthesizer.get_response(&query.query_str, &chunk).await?;
            match parse_prediction(&raw)? {
                Some(PrevNextMode::Next) => {
                    update(&mut all, get_forward_nodes(n, self.num_nodes, store).await?)
                }
                Some(_) => update(
                    &mut all,
                    get_backward_nodes(n, self.num_nodes, store).await?,
                ),
                None => {}
            }
        }
        let mut out: Vec<NodeWithScore> = all.into_values().collect();
        out.sort_by(|a, b| a.node.id_.cmp(&b.node.id_));
        Ok(out)
    }
}
