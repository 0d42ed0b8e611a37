//! One node type for every kind LlamaIndex distinguishes (`TextNode`,
//! `Document`, `IndexNode`), with LlamaIndex's rendering and hash formulas.

use super::pyrepr::{py_repr_object, py_str, py_strip};
use crate::utils::{format_named, hex};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ops::Range;

/// String-keyed JSON metadata, insertion-ordered like a Python dict (the order
/// matters: it is the order metadata is rendered and hashed in).
pub type Metadata = serde_json::Map<String, Value>;

/// Default template for a metadata line: `{key}: {value}`.
pub const DEFAULT_METADATA_TMPL: &str = "{key}: {value}";
/// Default template joining metadata and content.
pub const DEFAULT_TEXT_NODE_TMPL: &str = "{metadata_str}\n\n{content}";

/// Which metadata keys a rendering includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MetadataMode {
    /// Every key.
    #[default]
    All,
    /// Keys not in `excluded_embed_metadata_keys`: the text that is embedded.
    Embed,
    /// Keys not in `excluded_llm_metadata_keys`: the text an LLM sees.
    Llm,
    /// No metadata, the bare text.
    None,
}

/// How two nodes relate. Serialised as LlamaIndex's codes `"1"`..`"5"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeRelationship {
    /// The document this node was parsed from.
    Source,
    /// The preceding chunk of the same document.
    Previous,
    /// The following chunk of the same document.
    Next,
    /// A larger node containing this one.
    Parent,
    /// Smaller nodes this one contains (a list).
    Child,
}

impl NodeRelationship {
    /// LlamaIndex's serialised code.
    pub fn code(self) -> &'static str {
        match self {
            Self::Source => "1",
            Self::Previous => "2",
            Self::Next => "3",
            Self::Parent => "4",
            Self::Child => "5",
        }
    }

    /// Parse LlamaIndex's code (or the enum name, as older files wrote it).
    pub fn from_code(code: &str) -> Option<Self> {
        Some(match code {
            "1" | "SOURCE" => Self::Source,
            "2" | "PREVIOUS" => Self::Previous,
            "3" | "NEXT" => Self::Next,
            "4" | "PARENT" => Self::Parent,
            "5" | "CHILD" => Self::Child,
            _ => return None,
        })
    }
}

/// The kind of object a node is, as LlamaIndex's `ObjectType` codes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ObjectType {
    /// `"1"`: a text chunk.
    Text,
    /// `"2"`: an image node.
    Image,
    /// `"3"`: a node referring to another index or object.
    Index,
    /// `"4"`: a source document.
    Document,
    /// `"5"`: a multimodal node.
    Multimodal,
    /// A code this version does not know, kept verbatim.
    Other(String),
}

impl ObjectType {
    /// LlamaIndex's serialised code.
    pub fn code(&self) -> &str {
        match self {
            Self::Text => "1",
            Self::Image => "2",
            Self::Index => "3",
            Self::Document => "4",
            Self::Multimodal => "5",
            Self::Other(s) => s,
        }
    }

    /// Parse a code; unknown codes are kept as [`ObjectType::Other`].
    pub fn from_code(code: &str) -> Self {
        match code {
            "1" | "TEXT" => Self::Text,
            "2" | "IMAGE" => Self::Image,
            "3" | "INDEX" => Self::Index,
            "4" | "DOCUMENT" => Self::Document,
            "5" | "MULTIMODAL" => Self::Multimodal,
            other => Self::Other(other.to_string()),
        }
    }
}

/// A reference to a related node: its id, type, metadata and hash at the time.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RelatedNodeInfo {
    /// The related node's id.
    pub node_id: String,
    /// The related node's type.
    pub node_type: Option<ObjectType>,
    /// The related node's metadata.
    pub metadata: Metadata,
    /// The related node's hash.
    pub hash: Option<String>,
}

impl RelatedNodeInfo {
    /// A reference to `node_id` with nothing else known.
    pub fn new(node_id: impl Into<String>) -> Self {
        Self {
            node_id: node_id.into(),
            ..Default::default()
        }
    }
}

/// One related node, or (for [`NodeRelationship::Child`]) a list of them.
#[derive(Clone, Debug, PartialEq)]
pub enum RelatedNodeType {
    /// A single related node.
    One(RelatedNodeInfo),
    /// Several related nodes.
    Many(Vec<RelatedNodeInfo>),
}

/// What kind of node a [`Node`] is; decides its hash formula and class name.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum NodeKind {
    /// A chunk of text (LlamaIndex `TextNode`).
    #[default]
    Text,
    /// A source document (LlamaIndex `Document`).
    Document,
    /// A node that stands for another index or object (LlamaIndex `IndexNode`).
    Index {
        /// The id of the object this node refers to.
        index_id: String,
        /// The serialised object, if one was stored with the node.
        obj: Option<Value>,
    },
}

/// A document, a text chunk or an index reference: LlamaIndex's `Document`,
/// `TextNode` and `IndexNode` behind one type, told apart by [`Node::kind`].
///
/// Character offsets (`start_char_idx`, `end_char_idx`) count Unicode scalar
/// values, as Python does; [`Node::byte_range`] converts them for slicing.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Unique id (a UUID v4 unless given).
    pub id_: String,
    /// Which kind of node this is.
    pub kind: NodeKind,
    /// The text content.
    pub text: String,
    /// The embedding, once computed.
    pub embedding: Option<Vec<f32>>,
    /// Metadata, rendered into embedded and LLM text unless excluded.
    pub metadata: Metadata,
    /// Metadata keys left out of the text that is embedded.
    pub excluded_embed_metadata_keys: Vec<String>,
    /// Metadata keys left out of the text an LLM sees.
    pub excluded_llm_metadata_keys: Vec<String>,
    /// Related nodes.
    pub relationships: BTreeMap<NodeRelationship, RelatedNodeType>,
    /// Template of one metadata line, with `{key}` and `{value}`.
    pub metadata_template: String,
    /// Separator between metadata lines.
    pub metadata_separator: String,
    /// Template joining `{metadata_str}` and `{content}`.
    pub text_template: String,
    /// MIME type of the text (`text/plain` for chunks, unset for documents).
    pub mimetype: Option<String>,
    /// Start of this chunk in its source document, in characters.
    pub start_char_idx: Option<usize>,
    /// End (exclusive) of this chunk in its source document, in characters.
    pub end_char_idx: Option<usize>,
    /// Fields from a LlamaIndex file that ragloom does not model, kept so that
    /// loading and persisting again loses nothing.
    pub extra: serde_json::Map<String, Value>,
}

/// A source document: a [`Node`] of kind [`NodeKind::Document`].
pub type Document = Node;
/// A chunk of text: a [`Node`] of kind [`NodeKind::Text`].
pub type TextNode = Node;
/// A reference to another index: a [`Node`] of kind [`NodeKind::Index`].
pub type IndexNode = Node;

impl Default for Node {
    fn default() -> Self {
        Node {
            id_: uuid::Uuid::new_v4().to_string(),
            kind: NodeKind::Text,
            text: String::new(),
            embedding: None,
            metadata: Metadata::new(),
            excluded_embed_metadata_keys: Vec::new(),
            excluded_llm_metadata_keys: Vec::new(),
            relationships: BTreeMap::new(),
            metadata_template: DEFAULT_METADATA_TMPL.to_string(),
            metadata_separator: "\n".to_string(),
            text_template: DEFAULT_TEXT_NODE_TMPL.to_string(),
            mimetype: Some("text/plain".to_string()),
            start_char_idx: None,
            end_char_idx: None,
            extra: serde_json::Map::new(),
        }
    }
}

impl Node {
    /// A text chunk (LlamaIndex `TextNode(text=...)`).
    pub fn text_node(text: impl Into<String>) -> Self {
        Node {
            text: text.into(),
            ..Default::default()
        }
    }

    /// A source document (LlamaIndex `Document(text=...)`).
    pub fn document(text: impl Into<String>) -> Self {
        Node {
            text: text.into(),
            kind: NodeKind::Document,
            mimetype: None,
            ..Default::default()
        }
    }

    /// A node standing for another index or object (LlamaIndex `IndexNode`).
    pub fn index_node(text: impl Into<String>, index_id: impl Into<String>) -> Self {
        Node {
            text: text.into(),
            kind: NodeKind::Index {
                index_id: index_id.into(),
                obj: None,
            },
            ..Default::default()
        }
    }

    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id_ = id.into();
        self
    }

    /// Adds one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Replaces the metadata.
    pub fn with_metadata_map(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the embedding.
    pub fn with_embedding(mut self, embedding: Vec<f32>) -> Self {
        self.embedding = Some(embedding);
        self
    }

    /// Adds a relationship.
    pub fn with_relationship(mut self, rel: NodeRelationship, info: RelatedNodeInfo) -> Self {
        self.relationships.insert(rel, RelatedNodeType::One(info));
        self
    }

    /// The node's id (LlamaIndex `node_id`).
    pub fn node_id(&self) -> &str {
        &self.id_
    }

    /// The document id (LlamaIndex `doc_id`, the same as the node id).
    pub fn doc_id(&self) -> &str {
        &self.id_
    }

    /// LlamaIndex's `ObjectType` of this node.
    pub fn object_type(&self) -> ObjectType {
        match self.kind {
            NodeKind::Text => ObjectType::Text,
            NodeKind::Document => ObjectType::Document,
            NodeKind::Index { .. } => ObjectType::Index,
        }
    }

    /// LlamaIndex's class name: `TextNode`, `Document` or `IndexNode`.
    pub fn class_name(&self) -> &'static str {
        match self.kind {
            NodeKind::Text => "TextNode",
            NodeKind::Document => "Document",
            NodeKind::Index { .. } => "IndexNode",
        }
    }

    /// Whether this is a source document.
    pub fn is_document(&self) -> bool {
        matches!(self.kind, NodeKind::Document)
    }

    /// The metadata rendered for `mode`, one `metadata_template` line per key.
    pub fn get_metadata_str(&self, mode: MetadataMode) -> String {
        let excluded: &[String] = match mode {
            MetadataMode::None => return String::new(),
            MetadataMode::All => &[],
            MetadataMode::Embed => &self.excluded_embed_metadata_keys,
            MetadataMode::Llm => &self.excluded_llm_metadata_keys,
        };
        let lines: Vec<String> = self
            .metadata
            .iter()
            .filter(|(k, _)| !excluded.iter().any(|e| e == *k))
            .map(|(k, v)| {
                let value = py_str(v);
                format_named(&self.metadata_template, &|name| match name {
                    "key" => Some(k.as_str()),
                    "value" => Some(value.as_str()),
                    _ => None,
                })
                .unwrap_or_else(|_| format!("{k}: {value}"))
            })
            .collect();
        lines.join(&self.metadata_separator)
    }

    /// The text with the metadata of `mode` prepended through `text_template`.
    pub fn get_content(&self, mode: MetadataMode) -> String {
        let metadata_str = self.get_metadata_str(mode);
        let metadata_str = py_strip(&metadata_str);
        if mode == MetadataMode::None || metadata_str.is_empty() {
            return self.text.clone();
        }
        let rendered = format_named(&self.text_template, &|name| match name {
            "content" => Some(self.text.as_str()),
            "metadata_str" => Some(metadata_str),
            _ => None,
        })
        .unwrap_or_else(|_| format!("{metadata_str}\n\n{}", self.text));
        py_strip(&rendered).to_string()
    }

    /// The bare text (LlamaIndex `get_text()`).
    pub fn get_text(&self) -> &str {
        &self.text
    }

    /// LlamaIndex's hash of this node: `sha256(text + str(metadata))` for
    /// chunks, `sha256(metadata_str + "-" + sha256(text))` for documents.
    pub fn hash(&self) -> String {
        match self.kind {
            NodeKind::Document => {
                // Python builds a document's text resource only from non-empty
                // text, so an empty document hashes its metadata alone.
                let mut identities = Vec::new();
                let metadata_str = self.get_metadata_str(MetadataMode::All);
                if !metadata_str.is_empty() {
                    identities.push(metadata_str);
                }
                if !self.text.is_empty() {
                    identities.push(sha256_hex(&self.text));
                }
                sha256_hex(&identities.join("-"))
            }
            _ => self.hash_after(&self.text_hashed()),
        }
    }

    /// A chunk's hash is the text followed by the metadata's repr: the
    /// text fed once serves every hash of it under changing metadata
    /// ([`hash_after`](Self::hash_after)), as a parser's neighbour links need.
    pub(crate) fn text_hashed(&self) -> Sha256 {
        Sha256::new().chain_update(self.text.as_bytes())
    }

    /// [`hash`](Self::hash) of a chunk from its [`text_hashed`](Self::text_hashed) state.
    pub(crate) fn hash_after(&self, text_hashed: &Sha256) -> String {
        hex(text_hashed
            .clone()
            .chain_update(py_repr_object(&self.metadata).as_bytes())
            .finalize()
            .as_slice())
    }

    /// This node as a [`RelatedNodeInfo`] (id, type, metadata, hash).
    pub fn as_related_node_info(&self) -> RelatedNodeInfo {
        self.related_node_info_with_hash(self.hash())
    }

    /// [`as_related_node_info`](Self::as_related_node_info) with the hash known.
    pub(crate) fn related_node_info_with_hash(&self, hash: String) -> RelatedNodeInfo {
        RelatedNodeInfo {
            node_id: self.id_.clone(),
            node_type: Some(self.object_type()),
            metadata: self.metadata.clone(),
            hash: Some(hash),
        }
    }

    fn related(&self, rel: NodeRelationship) -> Option<&RelatedNodeInfo> {
        match self.relationships.get(&rel) {
            Some(RelatedNodeType::One(info)) => Some(info),
            _ => None,
        }
    }

    /// The source document reference.
    pub fn source_node(&self) -> Option<&RelatedNodeInfo> {
        self.related(NodeRelationship::Source)
    }

    /// The previous chunk reference.
    pub fn prev_node(&self) -> Option<&RelatedNodeInfo> {
        self.related(NodeRelationship::Previous)
    }

    /// The next chunk reference.
    pub fn next_node(&self) -> Option<&RelatedNodeInfo> {
        self.related(NodeRelationship::Next)
    }

    /// The parent reference.
    pub fn parent_node(&self) -> Option<&RelatedNodeInfo> {
        self.related(NodeRelationship::Parent)
    }

    /// The child references.
    pub fn child_nodes(&self) -> Option<&[RelatedNodeInfo]> {
        match self.relationships.get(&NodeRelationship::Child) {
            Some(RelatedNodeType::Many(v)) => Some(v),
            _ => None,
        }
    }

    /// The id of the document this node came from (its `Source` relationship).
    pub fn ref_doc_id(&self) -> Option<&str> {
        self.source_node().map(|s| s.node_id.as_str())
    }

    /// The byte range in the source document's text that
    /// `start_char_idx..end_char_idx` denotes; `None` if the offsets are unset
    /// or beyond the end of `source_text`.
    pub fn byte_range(&self, source_text: &str) -> Option<Range<usize>> {
        let (start, end) = (self.start_char_idx?, self.end_char_idx?);
        char_range_to_bytes(source_text, start, end)
    }
}

/// Converts a character range of `text` to a byte range.
pub(crate) fn char_range_to_bytes(text: &str, start: usize, end: usize) -> Option<Range<usize>> {
    if start > end {
        return None;
    }
    let mut indices = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    let b_start = indices.nth(start)?;
    let b_end = if end == start {
        b_start
    } else {
        indices.nth(end - start - 1)?
    };
    Some(b_start..b_end)
}

pub(crate) fn sha256_hex(s: &str) -> String {
    hex(Sha256::digest(s.as_bytes()).as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample_metadata() -> Metadata {
        json!({"a": 1, "b": true, "c": null, "d": 1.0, "e": [1, "x"], "f": {"k": 2.5}})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    // Hashes recorded from llama-index-core 0.14.25.
    #[test]
    fn hashes_equal_python() {
        let d = Node::document("héllo wörld")
            .with_id("doc1")
            .with_metadata_map(sample_metadata());
        assert_eq!(
            d.hash(),
            "54060259bbf0ebd703a6a34b76016287bd9ccb7744619673578d4c0cd1c15073"
        );
        let n = Node::text_node("héllo").with_id("n1").with_metadata("a", 1);
        assert_eq!(
            n.hash(),
            "dd5305c667f44174787a8888221c37f35e5ecd6f906170ce39937d77ef3cc252"
        );
        let d1 =
            Node::document("Alpha beta gamma. Delta epsilon.").with_metadata("file_name", "a.txt");
        assert_eq!(
            d1.hash(),
            "ec70b7326a65cf048f4d71e83e50c9e90e5e132d75c01a5c0910fd047510a626"
        );
        assert_eq!(
            Node::document("").hash(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            Node::document("").with_metadata("a", 1).hash(),
            "16c3c6d78678d53d39ab2c7a5a7bc4596567b46a1a57000a2d707334f779b824"
        );
        let d2 = Node::document("Zeta eta theta.");
        assert_eq!(
            d2.hash(),
            "50f99d6f5f0f34742413200ea36b5ac3d39c5e1f9b45889ccd6b13aca59a869f"
        );
    }

    #[test]
    fn metadata_modes_render_the_right_keys() {
        let mut n = Node::text_node("body")
            .with_metadata("title", "T")
            .with_metadata("secret", "S")
            .with_metadata("page", 3);
        n.excluded_embed_metadata_keys = vec!["secret".into()];
        n.excluded_llm_metadata_keys = vec!["page".into(), "title".into()];
        assert_eq!(
            n.get_content(MetadataMode::All),
            "title: T\nsecret: S\npage: 3\n\nbody"
        );
        assert_eq!(
            n.get_content(MetadataMode::Embed),
            "title: T\npage: 3\n\nbody"
        );
        assert_eq!(n.get_content(MetadataMode::Llm), "secret: S\n\nbody");
        assert_eq!(n.get_content(MetadataMode::None), "body");
        let d = Node::document("héllo wörld").with_metadata_map(sample_metadata());
        assert_eq!(
            d.get_content(MetadataMode::All),
            "a: 1\nb: True\nc: None\nd: 1.0\ne: [1, 'x']\nf: {'k': 2.5}\n\nhéllo wörld"
        );
    }

    #[test]
    fn byte_range_follows_characters() {
        let text = "héllo wörld";
        let n = Node {
            start_char_idx: Some(6),
            end_char_idx: Some(11),
            ..Node::text_node("wörld")
        };
        let r = n.byte_range(text).unwrap_or(0..0);
        assert_eq!(&text[r], "wörld");
        let past = Node {
            start_char_idx: Some(6),
            end_char_idx: Some(12),
            ..Node::text_node("")
        };
        assert_eq!(past.byte_range(text), None);
    }
}
