//! `HierarchicalNodeParser`: splits documents into a hierarchy of chunks
//! (2048, 512, 128 tokens by default) linked parent ↔ child, for auto-merging retrieval.

use super::{NodeParser, SentenceSplitter};
use crate::error::{Error, Result};
use crate::schema::{Node, NodeRelationship, RelatedNodeType};
use crate::transform::TransformComponent;
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// LlamaIndex's default chunk sizes, top level first.
pub const DEFAULT_HIERARCHY_CHUNK_SIZES: [usize; 3] = [2048, 512, 128];

/// Splits each document with one node parser per level and returns every
/// level's nodes in one flat list: all top-level chunks of a document, then
/// all second-level chunks, and so on (LlamaIndex `HierarchicalNodeParser`).
///
/// A chunk of level `n + 1` is cut from a chunk of level `n`: it gets a
/// `Parent` relationship to it, and the parent a `Child` list. Top-level
/// chunks have no parent. Offsets of a lower-level chunk count from the
/// start of its parent's text, as in LlamaIndex.
#[derive(Clone, Debug)]
pub struct HierarchicalNodeParser {
    chunk_sizes: Option<Vec<usize>>,
    node_parser_ids: Vec<String>,
    node_parser_map: HashMap<String, Arc<dyn NodeParser>>,
}

impl Default for HierarchicalNodeParser {
    fn default() -> Self {
        Self::from_defaults()
    }
}

impl HierarchicalNodeParser {
    /// Sentence splitters of 2048, 512 and 128 tokens, overlap 20.
    pub fn from_defaults() -> Self {
        let sizes = DEFAULT_HIERARCHY_CHUNK_SIZES.to_vec();
        let ids: Vec<String> = sizes.iter().map(|s| format!("chunk_size_{s}")).collect();
        let map = sizes
            .iter()
            .zip(&ids)
            .map(|(&size, id)| {
                let splitter = SentenceSplitter::new().chunk_size(size).chunk_overlap(20);
                (id.clone(), Arc::new(splitter) as Arc<dyn NodeParser>)
            })
            .collect();
        Self {
            chunk_sizes: Some(sizes),
            node_parser_ids: ids,
            node_parser_map: map,
        }
    }

    /// One sentence splitter per chunk size (top level first), with
    /// `chunk_overlap`; an error if a size cannot hold the overlap.
    pub fn from_chunk_sizes(chunk_sizes: &[usize], chunk_overlap: usize) -> Result<Self> {
        if chunk_sizes.is_empty() {
            return Err(Error::InvalidInput(
                "HierarchicalNodeParser: chunk_sizes is empty".into(),
            ));
        }
        let mut ids = Vec::new();
        let mut map: HashMap<String, Arc<dyn NodeParser>> = HashMap::new();
        for &size in chunk_sizes {
            let id = format!("chunk_size_{size}");
            let splitter = SentenceSplitter::new()
                .chunk_size(size)
                .chunk_overlap(chunk_overlap)
                .build()?;
            map.insert(id.clone(), Arc::new(splitter));
            ids.push(id);
        }
        Ok(Self {
            chunk_sizes: Some(chunk_sizes.to_vec()),
            node_parser_ids: ids,
            node_parser_map: map,
        })
    }

    /// Any node parsers, one per level: `node_parser_ids` in level order,
    /// each a key of `node_parser_map`.
    pub fn from_node_parsers(
        node_parser_ids: Vec<String>,
        node_parser_map: HashMap<String, Arc<dyn NodeParser>>,
    ) -> Result<Self> {
        if node_parser_ids.is_empty() {
            return Err(Error::InvalidInput(
                "HierarchicalNodeParser: node_parser_ids is empty".into(),
            ));
        }
        if let Some(missing) = node_parser_ids
            .iter()
            .find(|id| !node_parser_map.contains_key(*id))
        {
            return Err(Error::InvalidInput(format!(
                "HierarchicalNodeParser: node parser id `{missing}` is not in node_parser_map"
            )));
        }
        Ok(Self {
            chunk_sizes: None,
            node_parser_ids,
            node_parser_map,
        })
    }

    /// The chunk sizes, when built from sizes.
    pub fn chunk_sizes(&self) -> Option<&[usize]> {
        self.chunk_sizes.as_deref()
    }

    fn parser(&self, level: usize) -> Result<&Arc<dyn NodeParser>> {
        self.node_parser_ids
            .get(level)
            .and_then(|id| self.node_parser_map.get(id))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Level {level} is greater than number of text splitters ({}).",
                    self.node_parser_ids.len()
                ))
            })
    }

    fn nodes_of_document(&self, doc: &Node) -> Result<Vec<Node>> {
        let mut all = Vec::new();
        let mut parents = vec![doc.clone()];
        for level in 0..self.node_parser_ids.len() {
            let parser = self.parser(level)?;
            let mut children_all = Vec::new();
            for parent in parents.iter_mut() {
                let mut children = parser.get_nodes_from_documents(std::slice::from_ref(parent))?;
                // The documents themselves are not part of the hierarchy.
                if level > 0 {
                    for child in children.iter_mut() {
                        add_parent_child_relationship(parent, child);
                    }
                }
                children_all.extend(children);
            }
            if level > 0 {
                all.append(&mut parents);
            }
            parents = children_all;
        }
        all.append(&mut parents);
        Ok(all)
    }
}

fn add_parent_child_relationship(parent: &mut Node, child: &mut Node) {
    let info = child.as_related_node_info();
    match parent.relationships.get_mut(&NodeRelationship::Child) {
        Some(RelatedNodeType::Many(list)) => list.push(info),
        _ => {
            parent
                .relationships
                .insert(NodeRelationship::Child, RelatedNodeType::Many(vec![info]));
        }
    }
    child.relationships.insert(
        NodeRelationship::Parent,
        RelatedNodeType::One(parent.as_related_node_info()),
    );
}

impl NodeParser for HierarchicalNodeParser {
    fn get_nodes_from_documents(&self, documents: &[Node]) -> Result<Vec<Node>> {
        let mut all = Vec::new();
        for doc in documents {
            all.extend(self.nodes_of_document(doc)?);
        }
        Ok(all)
    }
}

#[async_trait]
impl TransformComponent for HierarchicalNodeParser {
    fn class_name(&self) -> &'static str {
        "HierarchicalNodeParser"
    }

    /// The ids and, as ingestion caches need settings that tell different
    /// parsers apart, each level's parser configuration (its `Debug` form).
    fn settings(&self) -> Value {
        let parsers: Vec<String> = self
            .node_parser_ids
            .iter()
            .map(|id| format!("{:?}", self.node_parser_map.get(id)))
            .collect();
        json!({
            "chunk_sizes": self.chunk_sizes,
            "node_parser_ids": self.node_parser_ids,
            "node_parsers": parsers,
            "class_name": "HierarchicalNodeParser",
        })
    }

    async fn transform(&self, nodes: Vec<Node>) -> Result<Vec<Node>> {
        self.get_nodes_from_documents(&nodes)
    }
}

/// The nodes without children (LlamaIndex `get_leaf_nodes`): what to embed.
pub fn get_leaf_nodes(nodes: &[Node]) -> Vec<Node> {
    nodes
        .iter()
        .filter(|n| !n.relationships.contains_key(&NodeRelationship::Child))
        .cloned()
        .collect()
}

/// The nodes without a parent (LlamaIndex `get_root_nodes`).
pub fn get_root_nodes(nodes: &[Node]) -> Vec<Node> {
    nodes
        .iter()
        .filter(|n| !n.relationships.contains_key(&NodeRelationship::Parent))
        .cloned()
        .collect()
}

/// The children of `nodes` found in `all_nodes`, in `all_nodes`' order
/// (LlamaIndex `get_child_nodes`).
pub fn get_child_nodes(nodes: &[Node], all_nodes: &[Node]) -> Vec<Node> {
    let ids: HashSet<&str> = nodes
        .iter()
        .flat_map(|n| n.child_nodes().unwrap_or_default())
        .map(|r| r.node_id.as_str())
        .collect();
    all_nodes
        .iter()
        .filter(|n| ids.contains(n.id_.as_str()))
        .cloned()
        .collect()
}

/// The nodes `depth` levels below the roots of `nodes` (LlamaIndex
/// `get_deeper_nodes`; depth 0 is the roots). An error when there are no roots.
pub fn get_deeper_nodes(nodes: &[Node], depth: usize) -> Result<Vec<Node>> {
    let mut deeper = get_root_nodes(nodes);
    if deeper.is_empty() {
        return Err(Error::InvalidInput(
            "There is no root nodes in given nodes!".into(),
        ));
    }
    for _ in 0..depth {
        deeper = get_child_nodes(&deeper, nodes);
    }
    Ok(deeper)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn levels_link_parents_and_children() {
        let text = "One sentence here. ".repeat(120);
        let doc = Node::document(text).with_id("doc");
        let p = HierarchicalNodeParser::from_chunk_sizes(&[256, 64], 10).unwrap();
        let nodes = p.get_nodes_from_documents(&[doc]).unwrap();
        let roots = get_root_nodes(&nodes);
        let leaves = get_leaf_nodes(&nodes);
        assert!(roots.len() > 1 && leaves.len() > roots.len());
        assert_eq!(roots.len() + leaves.len(), nodes.len());
        // Roots come first, and every leaf's parent is a root listing it as a child.
        assert!(
            nodes[..roots.len()]
                .iter()
                .all(|n| n.parent_node().is_none())
        );
        for leaf in &leaves {
            let parent_id = &leaf.parent_node().unwrap().node_id;
            let parent = roots.iter().find(|r| &r.id_ == parent_id).unwrap();
            assert!(
                parent
                    .child_nodes()
                    .unwrap()
                    .iter()
                    .any(|c| c.node_id == leaf.id_)
            );
            assert_eq!(leaf.ref_doc_id(), Some("doc"));
        }
        assert_eq!(get_deeper_nodes(&nodes, 1).unwrap().len(), leaves.len());
        let other = HierarchicalNodeParser::from_chunk_sizes(&[256, 64], 20).unwrap();
        assert_ne!(
            p.settings(),
            other.settings(),
            "overlap must change the cache key"
        );
        assert!(get_deeper_nodes(&leaves, 0).is_err());
        assert!(HierarchicalNodeParser::from_chunk_sizes(&[], 0).is_err());
        assert!(
            HierarchicalNodeParser::from_node_parsers(vec!["x".into()], HashMap::new()).is_err()
        );
    }
}
