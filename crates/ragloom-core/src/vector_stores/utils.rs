//! The node payload every external vector store keeps beside a vector:
//! LlamaIndex's `node_to_metadata_dict` and `metadata_dict_to_node` (`vector_stores/utils.py`).
//!
//! The payload is the node's metadata plus `_node_content` (the whole node as
//! a JSON string, embedding dropped), `_node_type` (its class name) and the
//! source document's id three times (`document_id`, `doc_id`, `ref_doc_id`,
//! `"None"` when there is none), so metadata filters can reach it. Stores that
//! keep rows in LlamaIndex's layout (pgvector, Qdrant, ...) write and read it
//! with these two functions, so Python and ragloom read each other's rows.

use crate::error::{Error, Result};
use crate::schema::{Metadata, Node};
use crate::utils::to_python_json_string_unescaped;
use serde_json::Value;

/// The payload key holding the node as a JSON string.
pub const NODE_CONTENT_KEY: &str = "_node_content";
/// The payload key holding the node's class name.
pub const NODE_TYPE_KEY: &str = "_node_type";

/// Checks that every node has a finite, non-empty embedding of one size, and
/// of `dim` when the store already holds vectors of that size; the error names the node.
pub fn check_embeddings(nodes: &[Node], dim: Option<usize>) -> Result<()> {
    let mut dim = dim;
    for node in nodes {
        let embedding = node
            .embedding
            .as_ref()
            .ok_or_else(|| Error::InvalidInput(format!("node `{}` has no embedding", node.id_)))?;
        if embedding.is_empty() {
            return Err(Error::InvalidInput(format!(
                "node `{}` has an empty embedding",
                node.id_
            )));
        }
        if embedding.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "node `{}` has a non-finite value in its embedding",
                node.id_
            )));
        }
        match dim {
            Some(d) if d != embedding.len() => {
                return Err(Error::InvalidInput(format!(
                    "node `{}` has an embedding of {} dimensions, the store holds {d}",
                    node.id_,
                    embedding.len()
                )));
            }
            _ => dim = Some(embedding.len()),
        }
    }
    Ok(())
}

/// The node's metadata plus LlamaIndex's payload keys, as
/// `node_to_metadata_dict(node, remove_text, flat_metadata=...)` returns it:
/// same keys, same order (keys the node's metadata already has are
/// overwritten where they stand), and `_node_content` exactly the string
/// Python's `json.dumps(..., ensure_ascii=False)` writes.
///
/// `remove_text` empties the text inside `_node_content` (stores that keep
/// the text in a column of its own set it). `flat_metadata` rejects metadata
/// values other than strings, numbers, booleans and null, as Python does,
/// with an [`Error::InvalidInput`] naming the node and the key.
pub fn node_to_metadata_dict(
    node: &Node,
    remove_text: bool,
    flat_metadata: bool,
) -> Result<Metadata> {
    if flat_metadata {
        validate_flat(node)?;
    }
    let mut metadata = node.metadata.clone();
    metadata.insert(
        NODE_CONTENT_KEY.into(),
        Value::String(node_content(node, remove_text)?),
    );
    insert_type_and_doc_ids(&mut metadata, node);
    Ok(metadata)
}

/// [`node_to_metadata_dict`] without `_node_content` (what LlamaIndex's
/// `SimpleVectorStore` keeps: it pops that key), skipping the serialisation:
/// the metadata a vector store's filters see, the source document's ids included.
pub fn metadata_dict_without_content(node: &Node) -> Metadata {
    let mut metadata = node.metadata.clone();
    // Python inserts the key and pops it again, so a user key of that name goes too.
    metadata.shift_remove(NODE_CONTENT_KEY);
    insert_type_and_doc_ids(&mut metadata, node);
    metadata
}

fn insert_type_and_doc_ids(metadata: &mut Metadata, node: &Node) {
    metadata.insert(
        NODE_TYPE_KEY.into(),
        Value::String(node.class_name().to_string()),
    );
    // Python writes `node.ref_doc_id or "None"`: an empty id counts as none.
    let ref_doc_id = match node.ref_doc_id() {
        Some(id) if !id.is_empty() => id,
        _ => "None",
    };
    for key in ["document_id", "doc_id", "ref_doc_id"] {
        metadata.insert(key.into(), Value::String(ref_doc_id.to_string()));
    }
}

fn validate_flat(node: &Node) -> Result<()> {
    for (key, value) in &node.metadata {
        if matches!(value, Value::Array(_) | Value::Object(_)) {
            return Err(Error::InvalidInput(format!(
                "node `{}`: value for metadata `{key}` must be one of (str, int, float, None)",
                node.id_
            )));
        }
    }
    Ok(())
}

/// The node's dict with the embedding dropped (and the text too if asked),
/// as one JSON string.
fn node_content(node: &Node, remove_text: bool) -> Result<String> {
    let mut dict = node.to_llama_dict();
    if remove_text {
        if let Some(text) = dict.get_mut("text") {
            *text = Value::String(String::new());
        }
        dict.shift_remove("text_resource");
    }
    dict.insert("embedding".into(), Value::Null);
    to_python_json_string_unescaped(&Value::Object(dict))
}

/// The node a payload describes (LlamaIndex `metadata_dict_to_node`): parsed
/// from `_node_content`, with `text` (when given) as its text.
///
/// As in Python, `_node_type` decides the kind, not the content's own
/// `class_name`: `"IndexNode"` reads an index node, anything else a text
/// node (so a stored `Document` comes back as a `TextNode`, and
/// `"Node"`/`"ImageNode"`, which ragloom does not model, as text nodes).
/// A payload without `_node_content`, or whose content does not parse, is an
/// [`Error::InvalidInput`]; stores then fall back to a bare text node as
/// LlamaIndex's do.
pub fn metadata_dict_to_node(metadata: &Metadata, text: Option<&str>) -> Result<Node> {
    let content = match metadata.get(NODE_CONTENT_KEY) {
        None | Some(Value::Null) => {
            return Err(Error::InvalidInput(
                "node content not found in metadata dict (no `_node_content`)".into(),
            ));
        }
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(Error::InvalidInput(format!(
                "`_node_content` is not a JSON string: {other}"
            )));
        }
    };
    let mut dict: serde_json::Map<String, Value> = serde_json::from_str(content)
        .map_err(|e| Error::invalid("`_node_content` is not a JSON object", e))?;
    let is_index = metadata.get(NODE_TYPE_KEY).and_then(Value::as_str) == Some("IndexNode");
    if is_index {
        if !dict.get("index_id").is_some_and(Value::is_string) {
            return Err(Error::InvalidInput(format!(
                "`_node_content` of index node `{}` has no `index_id`",
                dict.get("id_").and_then(Value::as_str).unwrap_or_default()
            )));
        }
        dict.insert("class_name".into(), Value::String("IndexNode".into()));
    } else {
        // A text node built from another class's dict keeps only its own
        // fields; Python's model ignores the rest (a document's resources).
        for key in [
            "text_resource",
            "image_resource",
            "audio_resource",
            "video_resource",
            "index_id",
            "obj",
        ] {
            dict.shift_remove(key);
        }
        dict.insert("class_name".into(), Value::String("TextNode".into()));
    }
    let mut node = Node::from_llama_dict(&dict, None)
        .map_err(|e| Error::invalid("`_node_content` is not a node", e))?;
    if let Some(text) = text {
        node.text = text.to_string();
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{NodeRelationship, RelatedNodeInfo};
    use serde_json::json;

    #[test]
    fn payload_round_trips_a_text_node() {
        let node = Node::text_node("héllo")
            .with_id("n1")
            .with_metadata("k", json!([1, "ü"]))
            .with_relationship(NodeRelationship::Source, RelatedNodeInfo::new("d1"))
            .with_embedding(vec![1.0, 2.0]);
        let md = node_to_metadata_dict(&node, true, false).unwrap_or_default();
        assert_eq!(md["ref_doc_id"], json!("d1"));
        assert_eq!(md["_node_type"], json!("TextNode"));
        let content = md["_node_content"].as_str().unwrap_or_default();
        assert!(
            content.contains(r#""metadata": {"k": [1, "ü"]}"#),
            "{content}"
        );
        assert!(content.contains(r#""text": """#), "{content}");
        let back = metadata_dict_to_node(&md, Some("héllo")).unwrap_or_default();
        assert_eq!(
            back,
            Node {
                embedding: None,
                ..node
            }
        );
    }

    #[test]
    fn flat_metadata_rejects_lists_naming_the_node() {
        let node = Node::text_node("x")
            .with_id("n9")
            .with_metadata("tags", json!(["a"]));
        let err = node_to_metadata_dict(&node, false, true).map(|_| ());
        assert!(
            matches!(&err, Err(Error::InvalidInput(m)) if m.contains("n9") && m.contains("tags")),
            "{err:?}"
        );
        assert!(node_to_metadata_dict(&node, false, false).is_ok());
    }

    #[test]
    fn payload_without_content_is_an_error() {
        let md = json!({"author": "x"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(matches!(
            metadata_dict_to_node(&md, None),
            Err(Error::InvalidInput(_))
        ));
        let md = json!({"_node_content": "{not json"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(metadata_dict_to_node(&md, None).is_err());
    }

    #[test]
    fn without_content_matches_the_full_payload_minus_content() {
        let node = Node::text_node("x")
            .with_metadata("_node_content", "user value")
            .with_metadata("a", 1);
        let mut full = node_to_metadata_dict(&node, true, false).unwrap_or_default();
        full.shift_remove(NODE_CONTENT_KEY);
        let slim = metadata_dict_without_content(&node);
        assert_eq!(
            serde_json::to_string(&slim).unwrap_or_default(),
            serde_json::to_string(&full).unwrap_or_default()
        );
    }
}
