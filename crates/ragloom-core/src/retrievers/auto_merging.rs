//! `AutoMergingRetriever`: retrieves small chunks, then replaces them by their
//! parent chunk when enough of its children were retrieved, and fills gaps between neighbours.

use super::Retriever;
use crate::error::{Error, Result};
use crate::schema::{MetadataMode, Node, NodeWithScore, QueryBundle};
use crate::storage::StorageContext;
use async_trait::async_trait;
use indexmap::{IndexMap, IndexSet};
use std::sync::Arc;

/// LlamaIndex's default `simple_ratio_thresh`.
pub const DEFAULT_SIMPLE_RATIO_THRESH: f32 = 0.5;

/// Merging stops after this many rounds even if it still changes something,
/// so that a malformed hierarchy (a cycle of parents) cannot loop forever.
const MAX_MERGE_ROUNDS: usize = 64;

/// Retrieves leaf chunks with an inner retriever, then repeatedly (LlamaIndex
/// `AutoMergingRetriever`):
/// 1. fills in a chunk between two retrieved neighbours (`Next` of one is the
///    `Previous` of the other), scored with their mean;
/// 2. replaces the retrieved children of a parent by the parent when their
///    share of its children is above `simple_ratio_thresh`, scored with their mean.
///
/// Parents and fill-ins are read from the storage context's docstore, so the
/// whole hierarchy (e.g. from [`crate::node_parser::HierarchicalNodeParser`])
/// must be stored there while only the leaves are indexed.
#[derive(Clone, Debug)]
pub struct AutoMergingRetriever {
    vector_retriever: Arc<dyn Retriever>,
    storage_context: StorageContext,
    simple_ratio_thresh: f32,
    verbose: bool,
}

impl AutoMergingRetriever {
    /// Merges the results of `vector_retriever` using nodes from `storage_context`.
    pub fn new(vector_retriever: Arc<dyn Retriever>, storage_context: StorageContext) -> Self {
        Self {
            vector_retriever,
            storage_context,
            simple_ratio_thresh: DEFAULT_SIMPLE_RATIO_THRESH,
            verbose: false,
        }
    }

    /// The share of a parent's children that must be retrieved to merge (default 0.5, exclusive).
    pub fn simple_ratio_thresh(mut self, thresh: f32) -> Self {
        self.simple_ratio_thresh = thresh;
        self
    }

    /// Print each merge and fill-in.
    pub fn verbose(mut self, yes: bool) -> Self {
        self.verbose = yes;
        self
    }

    fn log(&self, info: &str) {
        tracing::info!("{info}");
        if self.verbose {
            println!("{info}");
        }
    }

    async fn get_parents_and_merge(
        &self,
        nodes: Vec<NodeWithScore>,
    ) -> Result<(Vec<NodeWithScore>, bool)> {
        let docstore = &self.storage_context.docstore;
        let mut parents: IndexMap<String, Node> = IndexMap::new();
        let mut children_of: IndexMap<String, Vec<usize>> = IndexMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let Some(parent) = n.node.parent_node() else {
                continue;
            };
            let pid = parent.node_id.clone();
            if !parents.contains_key(&pid) {
                let p = docstore.get_node(&pid).await.map_err(|e| {
                    Error::NotFound(format!(
                        "parent `{pid}` of node `{}` in the docstore ({e})",
                        n.node.id_
                    ))
                })?;
                parents.insert(pid.clone(), p);
            }
            children_of.entry(pid).or_default().push(i);
        }
        let mut to_delete: IndexSet<String> = IndexSet::new();
        let mut to_add: IndexMap<String, NodeWithScore> = IndexMap::new();
        for (pid, parent) in parents {
            let num_children = parent.child_nodes().map_or(1, |c| c.len().max(1));
            let cur: &[usize] = children_of.get(&pid).map_or(&[], Vec::as_slice);
            let ratio = cur.len() as f32 / num_children as f32;
            if ratio > self.simple_ratio_thresh {
                to_delete.extend(cur.iter().map(|&i| nodes[i].node.id_.clone()));
                let text: String = parent
                    .get_content(MetadataMode::None)
                    .chars()
                    .take(100)
                    .collect();
                self.log(&format!(
                    "> Merging {} nodes into parent node.\n> Parent node id: {pid}.\n> Parent node text: {text}\n",
                    cur.len()
                ));
                let sum: f64 = cur.iter().map(|&i| f64::from(nodes[i].get_score())).sum();
                let avg = sum / cur.len() as f64;
                to_add.insert(pid, NodeWithScore::new(parent, Some(avg as f32)));
            }
        }
        let changed = !to_delete.is_empty();
        let mut out: Vec<NodeWithScore> = nodes
            .into_iter()
            .filter(|n| !to_delete.contains(&n.node.id_))
            .collect();
        out.extend(to_add.into_values());
        Ok((out, changed))
    }

    async fn fill_in_nodes(&self, nodes: Vec<NodeWithScore>) -> Result<(Vec<NodeWithScore>, bool)> {
        let docstore = &self.storage_context.docstore;
        let mut out = Vec::with_capacity(nodes.len());
        let mut changed = false;
        for (i, n) in nodes.iter().enumerate() {
            out.push(n.clone());
            let Some(following) = nodes.get(i + 1) else {
                continue;
            };
            let Some(next) = n.node.next_node() else {
                continue;
            };
            if following.node.prev_node() == Some(next) {
                changed = true;
                let middle = docstore.get_node(&next.node_id).await?;
                let text: String = middle
                    .get_content(MetadataMode::None)
                    .chars()
                    .take(100)
                    .collect();
                self.log(&format!(
                    "> Filling in node. Node id: {}> Node text: {text}\n",
                    next.node_id
                ));
                let avg = (f64::from(n.get_score()) + f64::from(following.get_score())) / 2.0;
                out.push(NodeWithScore::new(middle, Some(avg as f32)));
            }
        }
        Ok((out, changed))
    }

    async fn try_merging(&self, nodes: Vec<NodeWithScore>) -> Result<(Vec<NodeWithScore>, bool)> {
        let (nodes, filled) = self.fill_in_nodes(nodes).await?;
        let (nodes, merged) = self.get_parents_and_merge(nodes).await?;
        Ok((nodes, filled || merged))
    }
}

#[async_trait]
impl Retriever for AutoMergingRetriever {
    async fn retrieve(&self, query: &QueryBundle) -> Result<Vec<NodeWithScore>> {
        let initial = self.vector_retriever.retrieve(query).await?;
        let (mut cur, mut changed) = self.try_merging(initial).await?;
        let mut rounds = 1;
        while changed && rounds < MAX_MERGE_ROUNDS {
            (cur, changed) = self.try_merging(cur).await?;
            rounds += 1;
        }
        // Stable, like Python's list.sort(reverse=True).
        cur.sort_by(|a, b| b.get_score().total_cmp(&a.get_score()));
        Ok(cur)
    }
}
