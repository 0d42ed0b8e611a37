//! Turning chunks of text back into nodes, as LlamaIndex's
//! `build_nodes_from_splits` and `NodeParser._postprocess_parsed_nodes` do.
//!
//! The second step finds each chunk in its document to set character
//! offsets, copies the document's metadata, and chains `Previous`/`Next`.

use super::{IdFunc, TextSplitter};
use crate::error::{Error, Result};
use crate::schema::{Metadata, MetadataMode, Node, NodeKind, NodeRelationship, RelatedNodeType};
use std::collections::{BTreeMap, HashMap};

/// LlamaIndex's `default_id_func`: a fresh UUID v4 per node.
pub fn default_id_func(_index: usize, _document: &Node) -> String {
    uuid::Uuid::new_v4().to_string()
}

/// One [`crate::schema::TextNode`] per split of `document`, as LlamaIndex's
/// `build_nodes_from_splits`: each inherits the document's embedding,
/// excluded metadata keys and templates, and points to `ref_doc` (the
/// document itself when `None`) as its `Source`. Metadata is left empty here;
/// [`postprocess_parsed_nodes`] copies it.
pub fn build_nodes_from_splits(
    text_splits: Vec<String>,
    document: &Node,
    ref_doc: Option<&Node>,
    id_func: Option<&IdFunc>,
) -> Vec<Node> {
    let source = ref_doc.unwrap_or(document).as_related_node_info();
    build_nodes_with_source(text_splits, document, &source, id_func)
}

/// [`build_nodes_from_splits`] with the `Source` reference already made:
/// making it hashes the whole document, so a parser that builds one node at
/// a time (a Markdown section) makes it once per document, not per node.
pub(crate) fn build_nodes_with_source(
    text_splits: Vec<String>,
    document: &Node,
    source: &crate::schema::RelatedNodeInfo,
    id_func: Option<&IdFunc>,
) -> Vec<Node> {
    text_splits
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let id_ = match id_func {
                Some(f) => f(i, document),
                None => default_id_func(i, document),
            };
            let mut relationships = BTreeMap::new();
            relationships.insert(
                NodeRelationship::Source,
                RelatedNodeType::One(source.clone()),
            );
            Node {
                id_,
                text,
                embedding: document.embedding.clone(),
                excluded_embed_metadata_keys: document.excluded_embed_metadata_keys.clone(),
                excluded_llm_metadata_keys: document.excluded_llm_metadata_keys.clone(),
                metadata_separator: document.metadata_separator.clone(),
                metadata_template: document.metadata_template.clone(),
                text_template: document.text_template.clone(),
                relationships,
                ..Node::default()
            }
        })
        .collect()
}

/// Python's `{**a, **b}`: `a`'s keys in order with `b`'s values winning, then
/// `b`'s other keys.
fn merged(a: &Metadata, b: &Metadata) -> Metadata {
    let mut out = a.clone();
    for (k, v) in b {
        out.insert(k.clone(), v.clone());
    }
    out
}

/// Character/byte position pairs of one document text, walked forward from
/// the last search so offsets cost O(distance) rather than O(text).
struct CharCursor<'a> {
    text: &'a str,
    byte: usize,
    chars: usize,
}

impl<'a> CharCursor<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            byte: 0,
            chars: 0,
        }
    }

    /// The byte offset of character `target`, or `None` past the end.
    fn byte_of(&mut self, target: usize) -> Option<usize> {
        if target < self.chars {
            *self = Self::new(self.text);
        }
        while self.chars < target {
            let c = self.text.get(self.byte..)?.chars().next()?;
            self.byte += c.len_utf8();
            self.chars += 1;
        }
        Some(self.byte)
    }

    /// The character offset of byte `target` (a char boundary).
    fn char_of(&mut self, target: usize) -> usize {
        if target < self.byte {
            *self = Self::new(self.text);
        }
        let counted = self
            .text
            .get(self.byte..target)
            .map_or(0, |s| s.chars().count());
        self.chars += counted;
        self.byte = target;
        self.chars
    }

    /// Python's `text.find(needle, start)` in characters.
    fn find(&mut self, needle: &str, start: usize) -> Option<usize> {
        let from = self.byte_of(start)?;
        let found = find_from(self.text.as_bytes(), needle.as_bytes(), from)?;
        Some(self.char_of(found))
    }
}

/// How much of a needle [`find_from`] searches for before comparing the rest.
const NEEDLE_PREFIX: usize = 64;
/// Places of the prefix [`find_from`] checks before it searches for the
/// whole needle instead.
const PREFIX_TRIES: usize = 16;

/// The first occurrence of `needle` in `haystack` at or after `from`: the
/// places its first bytes occur, in order, each checked for the rest. A
/// chunk is kilobytes long and usually found a few kilobytes on, where a
/// searcher for the whole chunk spent longer setting up than searching.
/// Text where the prefix recurs often (a repeated line) falls back to that
/// searcher, which stays linear where checking every place would not.
fn find_from(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let prefix = &needle[..needle.len().min(NEEDLE_PREFIX)];
    let finder = memchr::memmem::Finder::new(prefix);
    let mut at = from;
    for _ in 0..PREFIX_TRIES {
        let found = at + finder.find(haystack.get(at..)?)?;
        if haystack[found..].starts_with(needle) {
            return Some(found);
        }
        at = found + 1;
    }
    Some(at + memchr::memmem::find(haystack.get(at..)?, needle)?)
}

/// LlamaIndex's `NodeParser._postprocess_parsed_nodes`, in place: offsets
/// found by searching each chunk in its document from just after the
/// previous chunk's start (so overlapping chunks are found in order),
/// counted in characters; the document's metadata merged in when
/// `include_metadata`; `Previous`/`Next` between neighbours of the same
/// source when `include_prev_next_rel`.
///
/// As in Python, a `Next` reference is taken before its node is processed,
/// so it carries that node's metadata and hash from before the merge.
pub fn postprocess_parsed_nodes(
    nodes: &mut [Node],
    parent_docs: &HashMap<&str, &Node>,
    include_metadata: bool,
    include_prev_next_rel: bool,
) {
    let mut search_positions: HashMap<String, usize> = HashMap::new();
    let mut cursors: HashMap<String, CharCursor<'_>> = HashMap::new();
    // A chunk is linked as its neighbours' `Next` and then `Previous`, under
    // different metadata but the same text (left unchanged here): its text
    // is hashed once for both (two fifths of the hashing a parse did).
    let mut text_hashed: Vec<Option<sha2::Sha256>> = vec![None; nodes.len()];
    let mut related = |nodes: &[Node], j: usize| {
        let node = &nodes[j];
        if node.kind == NodeKind::Document {
            return node.as_related_node_info();
        }
        let state = text_hashed[j].get_or_insert_with(|| node.text_hashed());
        node.related_node_info_with_hash(node.hash_after(state))
    };
    for i in 0..nodes.len() {
        let parent_doc = parent_docs
            .get(nodes[i].ref_doc_id().unwrap_or(""))
            .copied();
        let parent_node = nodes[i].source_node().cloned();
        if let Some(doc) = parent_doc {
            let node = &mut nodes[i];
            if let Some(src) = doc.source_node() {
                node.relationships
                    .insert(NodeRelationship::Source, RelatedNodeType::One(src.clone()));
            }
            let doc_id = node.ref_doc_id().unwrap_or("").to_string();
            let search_start = search_positions.get(&doc_id).copied().unwrap_or(0);
            let cursor = cursors
                .entry(doc.id_.clone())
                .or_insert_with(|| CharCursor::new(&doc.text));
            if let Some(start) = cursor.find(&node.text, search_start) {
                node.start_char_idx = Some(start);
                node.end_char_idx = Some(start + node.text.chars().count());
                search_positions.insert(doc_id, start + 1);
            }
            if include_metadata {
                node.metadata = merged(&doc.metadata, &node.metadata);
            }
        }
        if let Some(parent) = parent_node {
            if include_metadata {
                let node = &mut nodes[i];
                let combined = merged(&parent.metadata, &node.metadata);
                for (k, v) in combined {
                    node.metadata.insert(k, v);
                }
            }
        }
        if include_prev_next_rel {
            let same_source = |a: &Node, b: &Node| match (a.source_node(), b.source_node()) {
                (Some(x), Some(y)) => x.node_id == y.node_id,
                _ => false,
            };
            if i > 0 && same_source(&nodes[i], &nodes[i - 1]) {
                let prev = related(nodes, i - 1);
                nodes[i]
                    .relationships
                    .insert(NodeRelationship::Previous, RelatedNodeType::One(prev));
            }
            if i + 1 < nodes.len() && same_source(&nodes[i], &nodes[i + 1]) {
                let next = related(nodes, i + 1);
                nodes[i]
                    .relationships
                    .insert(NodeRelationship::Next, RelatedNodeType::One(next));
            }
        }
    }
}

/// The metadata string a metadata-aware splitter reserves room for: the
/// longer (in characters) of the `Embed` and `Llm` renderings, the `Llm` one
/// on a tie (LlamaIndex `MetadataAwareTextSplitter._get_metadata_str`).
pub fn metadata_str_for_splitting(node: &Node) -> String {
    let embed = node.get_metadata_str(MetadataMode::Embed);
    let llm = node.get_metadata_str(MetadataMode::Llm);
    if embed.chars().count() > llm.chars().count() {
        embed
    } else {
        llm
    }
}

/// `MetadataAwareTextSplitter.get_nodes_from_documents`: splits each node's
/// text leaving room for its metadata, builds the chunks and post-processes
/// them. Errors name the node whose text could not be split.
pub fn parse_nodes_metadata_aware(
    splitter: &dyn TextSplitter,
    documents: &[Node],
    include_metadata: bool,
    include_prev_next_rel: bool,
    id_func: Option<&IdFunc>,
) -> Result<Vec<Node>> {
    let mut all = Vec::new();
    for doc in documents {
        let metadata_str = metadata_str_for_splitting(doc);
        let splits = splitter
            .split_text_metadata_aware(&doc.text, &metadata_str)
            .map_err(|e| with_node_id(e, &doc.id_))?;
        all.extend(build_nodes_from_splits(splits, doc, None, id_func));
    }
    // Later documents with the same id win, as in Python's dict comprehension.
    let parent_docs: HashMap<&str, &Node> = documents.iter().map(|d| (d.id_.as_str(), d)).collect();
    postprocess_parsed_nodes(
        &mut all,
        &parent_docs,
        include_metadata,
        include_prev_next_rel,
    );
    Ok(all)
}

pub(super) fn with_node_id(err: Error, id: &str) -> Error {
    match err {
        Error::InvalidInput(msg) => Error::InvalidInput(format!("node {id}: {msg}")),
        Error::Invalid { what, source } => Error::Invalid {
            what: format!("node {id}: {what}"),
            source,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_counts_characters() {
        let text = "héllo wörld, héllo";
        let mut c = CharCursor::new(text);
        assert_eq!(c.find("héllo", 0), Some(0));
        assert_eq!(c.find("héllo", 1), Some(13));
        assert_eq!(c.find("wörld", 2), Some(6));
        assert_eq!(c.find("x", 0), None);
        assert_eq!(c.find("", 18), Some(18));
        assert_eq!(c.find("", 19), None);
    }

    /// The prefix search finds what `str::find` finds, where the prefix
    /// occurs many times before the whole needle does.
    #[test]
    fn find_from_is_str_find() {
        // Long enough that the prefix recurs more often than it is checked.
        let unit = "ab".repeat(NEEDLE_PREFIX * PREFIX_TRIES);
        let text = format!("{unit}é{unit}x{unit}{unit}y é");
        for needle in [
            format!("{unit}y"),
            format!("{unit}x"),
            format!("é{unit}"),
            unit.clone(),
            "y é".into(),
            "é".into(),
            "zz".into(),
            String::new(),
        ] {
            let starts = (0..=text.len()).filter(|i| text.is_char_boundary(*i));
            for from in starts.step_by(7) {
                let want = text[from..].find(&needle).map(|i| i + from);
                assert_eq!(find_from(text.as_bytes(), needle.as_bytes(), from), want);
            }
        }
    }

    /// Neighbour links carry the hash `Node::hash` gives for the node as
    /// the link saw it: `Previous` the finished node, `Next` the node
    /// before its document's metadata was merged in.
    #[test]
    fn neighbour_links_carry_their_nodes_hashes() {
        let mut doc = Node::document("One sentence here. Another one there. A third one.");
        doc.metadata.insert("file".into(), "a.txt".into());
        let splits = vec![
            "One sentence here.".to_string(),
            "Another one there.".to_string(),
            "A third one.".to_string(),
        ];
        let mut nodes = build_nodes_from_splits(splits, &doc, None, None);
        let parents = HashMap::from([(doc.id_.as_str(), &doc)]);
        postprocess_parsed_nodes(&mut nodes, &parents, true, true);
        let link = |n: &Node, rel| match n.relationships.get(&rel) {
            Some(RelatedNodeType::One(info)) => info.clone(),
            _ => panic!("no {rel:?}"),
        };
        for i in 0..nodes.len() {
            if i > 0 {
                let prev = link(&nodes[i], NodeRelationship::Previous);
                assert_eq!(prev.hash, Some(nodes[i - 1].hash()));
            }
            if i + 1 < nodes.len() {
                let next = link(&nodes[i], NodeRelationship::Next);
                assert!(next.metadata.is_empty(), "taken before the merge");
                let mut before = nodes[i + 1].clone();
                before.metadata = next.metadata.clone();
                assert_eq!(next.hash, Some(before.hash()));
                assert_ne!(next.hash, Some(nodes[i + 1].hash()));
            }
        }
    }

    #[test]
    fn merge_keeps_python_dict_order() {
        let a: Metadata = serde_json::from_str(r#"{"x":1,"y":2}"#).unwrap_or_default();
        let b: Metadata = serde_json::from_str(r#"{"z":3,"x":9}"#).unwrap_or_default();
        let m = merged(&a, &b);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["x", "y", "z"]);
        assert_eq!(m["x"], 9);
    }
}
