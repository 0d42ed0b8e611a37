//! `RecursiveRetriever`: follows `IndexNode` references from retrieved nodes
//! into other retrievers, query engines or stored nodes, as LlamaIndex does.

use super::QueryEngine;
use crate::error::{Error, Result};
use crate::retrievers::Retriever;
use crate::schema::{Node, NodeKind, NodeWithScore, QueryBundle};
use async_trait::async_trait;
use futures::future::BoxFuture;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// LlamaIndex's `DEFAULT_QUERY_RESPONSE_TMPL`.
pub(super) const DEFAULT_QUERY_RESPONSE_TMPL: &str = "Query: {query_str}\nResponse: {response}";

/// How deep references are followed before giving up (a guard against
/// reference cycles, which would recurse forever in Python).
pub(super) const MAX_RECURSION_DEPTH: usize = 32;

/// What an id can stand for.
enum Target<'a> {
    Node(&'a Node),
    Retriever(&'a Arc<dyn Retriever>),
    QueryEngine(&'a Arc<dyn QueryEngine>),
}

/// Nodes plus the extra sources gathered on the way.
type Retrieved = (Vec<NodeWithScore>, Vec<NodeWithScore>);

/// Retrieves with the root retriever and, for every retrieved `IndexNode`,
/// follows its `index_id` (LlamaIndex `RecursiveRetriever`):
/// into `node_dict` (the stored node, scored with the index node's score),
/// into `retriever_dict` (recursively), or into `query_engine_dict` (the
/// answer becomes a text node `Query: ...\nResponse: ...`, and the engine's
/// sources are additional nodes). Index nodes pointing at the same id are
/// followed once; results are de-duplicated by node id, first kept.
#[derive(Clone, Debug)]
pub struct RecursiveRetriever {
    root_id: String,
    retriever_dict: HashMap<String, Arc<dyn Retriever>>,
    query_engine_dict: HashMap<String, Arc<dyn QueryEngine>>,
    node_dict: HashMap<String, Node>,
    query_response_tmpl: String,
    verbose: bool,
}

impl RecursiveRetriever {
    /// A retriever starting at `retriever_dict[root_id]`; an error if the
    /// root is not there or an id is both a retriever and a query engine.
    pub fn new(
        root_id: impl Into<String>,
        retriever_dict: HashMap<String, Arc<dyn Retriever>>,
        query_engine_dict: HashMap<String, Arc<dyn QueryEngine>>,
        node_dict: HashMap<String, Node>,
    ) -> Result<Self> {
        let root_id = root_id.into();
        if !retriever_dict.contains_key(&root_id) {
            return Err(Error::InvalidInput(format!(
                "Root id {root_id} not in retriever_dict, it must be a retriever."
            )));
        }
        if let Some(id) = retriever_dict
            .keys()
            .find(|k| query_engine_dict.contains_key(*k))
        {
            return Err(Error::InvalidInput(format!(
                "Retriever and query engine ids must not overlap (`{id}` is both)."
            )));
        }
        Ok(Self {
            root_id,
            retriever_dict,
            query_engine_dict,
            node_dict,
            query_response_tmpl: DEFAULT_QUERY_RESPONSE_TMPL.to_string(),
            verbose: false,
        })
    }

    /// Replaces the template of query-engine answers (`{query_str}`, `{response}`).
    pub fn query_response_tmpl(mut self, tmpl: impl Into<String>) -> Self {
        self.query_response_tmpl = tmpl.into();
        self
    }

    /// Print each step.
    pub fn verbose(mut self, yes: bool) -> Self {
        self.verbose = yes;
        self
    }

    /// The retrieved nodes and the additional source nodes of query engines
    /// met on the way (LlamaIndex `retrieve_all`).
    pub async fn retrieve_all(&self, query: &QueryBundle) -> Result<Retrieved> {
        self.retrieve_rec(query, None, None, 0).await
    }

    fn target(&self, id: &str) -> Result<Target<'_>> {
        if let Some(n) = self.node_dict.get(id) {
            return Ok(Target::Node(n));
        }
        if let Some(r) = self.retriever_dict.get(id) {
            return Ok(Target::Retriever(r));
        }
        if let Some(q) = self.query_engine_dict.get(id) {
            return Ok(Target::QueryEngine(q));
        }
        Err(Error::NotFound(format!(
            "Query id {id} not found in either `retriever_dict` or `query_engine_dict`."
        )))
    }

    fn say(&self, text: &str) {
        tracing::debug!("{text}");
        if self.verbose {
            println!("{text}");
        }
    }

    fn retrieve_rec<'a>(
        &'a self,
        query: &'a QueryBundle,
        query_id: Option<&'a str>,
        cur_similarity: Option<f32>,
        depth: usize,
    ) -> BoxFuture<'a, Result<Retrieved>> {
        Box::pin(async move {
            if depth > MAX_RECURSION_DEPTH {
                return Err(Error::InvalidInput(format!(
                    "RecursiveRetriever: references nest deeper than {MAX_RECURSION_DEPTH} \
                     levels (a cycle?) at id `{}`",
                    query_id.unwrap_or(&self.root_id)
                )));
            }
            let id = query_id.unwrap_or(&self.root_id);
            self.say(&format!(
                "Retrieving with query id {id}: {}",
                query.query_str
            ));
            // Python's `cur_similarity or 1.0`: a missing or zero score becomes 1.0.
            let similarity = match cur_similarity {
                Some(s) if s != 0.0 => s,
                _ => 1.0,
            };
            match self.target(id)? {
                Target::Node(n) => Ok((
                    vec![NodeWithScore::new(n.clone(), Some(similarity))],
                    Vec::new(),
                )),
                Target::Retriever(r) => {
                    let nodes = r.retrieve(query).await?;
                    self.query_retrieved_nodes(query, nodes, depth).await
                }
                Target::QueryEngine(q) => {
                    let resp = q.query(query).await?;
                    let answer = resp.to_string();
                    self.say(&format!("Got response: {answer}"));
                    let text =
                        crate::utils::format_named(&self.query_response_tmpl, &|k| match k {
                            "query_str" => Some(query.query_str.as_str()),
                            "response" => Some(answer.as_str()),
                            _ => None,
                        })?;
                    Ok((
                        vec![NodeWithScore::new(Node::text_node(text), Some(similarity))],
                        resp.source_nodes,
                    ))
                }
            }
        })
    }

    async fn query_retrieved_nodes(
        &self,
        query: &QueryBundle,
        nodes: Vec<NodeWithScore>,
        depth: usize,
    ) -> Result<Retrieved> {
        let mut seen_targets: HashSet<String> = HashSet::new();
        let mut to_add = Vec::new();
        let mut additional = Vec::new();
        for n in nodes {
            match &n.node.kind {
                NodeKind::Index { index_id, .. } => {
                    if !seen_targets.insert(index_id.clone()) {
                        continue;
                    }
                    self.say(&format!("Retrieved node with id, entering: {index_id}"));
                    let (got, extra) = self
                        .retrieve_rec(query, Some(index_id), n.score, depth + 1)
                        .await?;
                    to_add.extend(got);
                    additional.extend(extra);
                }
                _ => {
                    self.say(&format!("Retrieving text node: {}", n.node.text));
                    to_add.push(n);
                }
            }
        }
        Ok((dedup(to_add), dedup(additional)))
    }
}

fn dedup(nodes: Vec<NodeWithScore>) -> Vec<NodeWithScore> {
    let mut seen = HashSet::new();
    nodes
        .into_iter()
        .filter(|n| seen.insert(n.node.id_.clone()))
        .collect()
}

#[async_trait]
impl Retriever for RecursiveRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        Ok(self.retrieve_all(query).await?.0)
    }
}
