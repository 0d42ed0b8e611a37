//! The data model: [`Node`] (documents, text chunks and index references),
//! relationships, metadata rendering and hashing, scores, queries and responses.

mod node;
mod pyrepr;
mod response;
mod serde_impl;

pub use node::{
    DEFAULT_METADATA_TMPL, DEFAULT_TEXT_NODE_TMPL, Document, IndexNode, Metadata, MetadataMode,
    Node, NodeKind, NodeRelationship, ObjectType, RelatedNodeInfo, RelatedNodeType, TextNode,
};
pub use pyrepr::{float_repr, is_py_space, py_repr, py_str, py_strip};
pub use response::{NodeWithScore, QueryBundle, Response, StreamingResponse};
