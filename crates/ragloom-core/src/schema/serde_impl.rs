//! LlamaIndex's JSON shape of nodes (`to_dict` / `from_dict`, with
//! `class_name`), so docstores and vector-store payloads interoperate with Python.

use super::node::{
    Metadata, Node, NodeKind, NodeRelationship, ObjectType, RelatedNodeInfo, RelatedNodeType,
};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

/// Keys of a node dict that [`Node`] models; everything else goes to `extra`.
const KNOWN: &[&str] = &[
    "id_",
    "embedding",
    "metadata",
    "extra_info",
    "excluded_embed_metadata_keys",
    "excluded_llm_metadata_keys",
    "relationships",
    "metadata_template",
    "metadata_separator",
    "metadata_seperator",
    "text",
    "mimetype",
    "start_char_idx",
    "end_char_idx",
    "text_template",
    "class_name",
    "index_id",
    "obj",
    "text_resource",
    "doc_id",
];

impl RelatedNodeInfo {
    fn to_value(&self) -> Value {
        json!({
            "node_id": self.node_id,
            "node_type": self.node_type.as_ref().map(|t| t.code().to_string()),
            "metadata": self.metadata,
            "hash": self.hash,
            "class_name": "RelatedNodeInfo",
        })
    }

    fn from_value(v: &Value) -> Result<Self, String> {
        let obj = v.as_object().ok_or("relationship is not an object")?;
        let node_id = obj
            .get("node_id")
            .and_then(Value::as_str)
            .ok_or("relationship without node_id")?
            .to_string();
        let node_type = match obj.get("node_type") {
            Some(Value::String(s)) => Some(ObjectType::from_code(s)),
            Some(Value::Number(n)) => Some(ObjectType::from_code(&n.to_string())),
            _ => None,
        };
        Ok(RelatedNodeInfo {
            node_id,
            node_type,
            metadata: obj
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            hash: obj.get("hash").and_then(Value::as_str).map(str::to_string),
        })
    }
}

impl Node {
    /// This node as LlamaIndex's `to_dict()` writes it (keys in the same order).
    pub fn to_llama_dict(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("id_".into(), json!(self.id_));
        m.insert("embedding".into(), json!(self.embedding));
        m.insert("metadata".into(), Value::Object(self.metadata.clone()));
        m.insert(
            "excluded_embed_metadata_keys".into(),
            json!(self.excluded_embed_metadata_keys),
        );
        m.insert(
            "excluded_llm_metadata_keys".into(),
            json!(self.excluded_llm_metadata_keys),
        );
        let mut rels = Map::new();
        for (rel, info) in &self.relationships {
            let v = match info {
                RelatedNodeType::One(i) => i.to_value(),
                RelatedNodeType::Many(list) => {
                    Value::Array(list.iter().map(RelatedNodeInfo::to_value).collect())
                }
            };
            rels.insert(rel.code().to_string(), v);
        }
        m.insert("relationships".into(), Value::Object(rels));
        m.insert("metadata_template".into(), json!(self.metadata_template));
        m.insert("metadata_separator".into(), json!(self.metadata_separator));
        match &self.kind {
            NodeKind::Document => {
                let mut tr = match self.extra.get("text_resource") {
                    Some(Value::Object(o)) => o.clone(),
                    _ => json!({"embeddings": null, "text": null, "path": null, "url": null,
                                "mimetype": null})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                };
                tr.insert("text".into(), json!(self.text));
                tr.insert("mimetype".into(), json!(self.mimetype));
                // Python leaves an empty document without a text resource.
                let keep = !self.text.is_empty() || self.extra.contains_key("text_resource");
                m.insert(
                    "text_resource".into(),
                    if keep { Value::Object(tr) } else { Value::Null },
                );
                for key in ["image_resource", "audio_resource", "video_resource"] {
                    m.insert(
                        key.into(),
                        self.extra.get(key).cloned().unwrap_or(Value::Null),
                    );
                }
                self.insert_extra(&mut m);
                m.insert("text_template".into(), json!(self.text_template));
                m.insert("class_name".into(), json!("Document"));
                m.insert("text".into(), json!(self.text));
            }
            kind => {
                m.insert("text".into(), json!(self.text));
                m.insert(
                    "mimetype".into(),
                    json!(self.mimetype.as_deref().unwrap_or("text/plain")),
                );
                m.insert("start_char_idx".into(), json!(self.start_char_idx));
                m.insert("end_char_idx".into(), json!(self.end_char_idx));
                self.insert_extra(&mut m);
                m.insert("text_template".into(), json!(self.text_template));
                if let NodeKind::Index { index_id, obj } = kind {
                    m.insert("index_id".into(), json!(index_id));
                    m.insert("obj".into(), obj.clone().unwrap_or(Value::Null));
                }
                m.insert("class_name".into(), json!(self.class_name()));
            }
        }
        m
    }

    fn insert_extra(&self, m: &mut Map<String, Value>) {
        for (k, v) in &self.extra {
            if !m.contains_key(k) && k != "text_resource" {
                m.insert(k.clone(), v.clone());
            }
        }
    }

    /// Reads a node from LlamaIndex's dict. `type_code` is the docstore's
    /// `__type__` (`"1"` text, `"3"` index, `"4"` document), used when the dict
    /// has no `class_name`.
    pub fn from_llama_dict(
        dict: &Map<String, Value>,
        type_code: Option<&str>,
    ) -> Result<Node, String> {
        let class = dict.get("class_name").and_then(Value::as_str);
        let kind = match (class, type_code) {
            (Some("Document"), _) | (None, Some("4")) => NodeKind::Document,
            (Some("IndexNode"), _) | (None, Some("3")) => NodeKind::Index {
                index_id: dict
                    .get("index_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                obj: dict.get("obj").filter(|v| !v.is_null()).cloned(),
            },
            (Some("TextNode") | Some("Node") | Some("ImageNode"), _) | (None, _) => NodeKind::Text,
            (Some(other), _) => {
                // A class ragloom does not know: read it as text if it has text.
                if dict.contains_key("text") || dict.contains_key("text_resource") {
                    NodeKind::Text
                } else {
                    return Err(format!("unknown node class `{other}`"));
                }
            }
        };
        let str_field = |k: &str| dict.get(k).and_then(Value::as_str).map(str::to_string);
        let id_ = str_field("id_")
            .or_else(|| str_field("doc_id"))
            .ok_or("node without `id_`")?;
        let text_resource = dict.get("text_resource").and_then(Value::as_object);
        let text = text_resource
            .and_then(|tr| tr.get("text"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| str_field("text"))
            .unwrap_or_default();
        let embedding = match dict.get("embedding") {
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|x| {
                        x.as_f64()
                            .map(|f| f as f32)
                            .ok_or("embedding holds a non-number")
                    })
                    .collect::<Result<Vec<f32>, _>>()?,
            ),
            _ => None,
        };
        let metadata: Metadata = dict
            .get("metadata")
            .or_else(|| dict.get("extra_info"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let strings = |k: &str| -> Vec<String> {
            dict.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut relationships = std::collections::BTreeMap::new();
        if let Some(Value::Object(rels)) = dict.get("relationships") {
            for (code, v) in rels {
                let Some(rel) = NodeRelationship::from_code(code) else {
                    continue;
                };
                let related = match v {
                    Value::Array(list) => RelatedNodeType::Many(
                        list.iter()
                            .map(RelatedNodeInfo::from_value)
                            .collect::<Result<_, _>>()?,
                    ),
                    other => RelatedNodeType::One(RelatedNodeInfo::from_value(other)?),
                };
                relationships.insert(rel, related);
            }
        }
        let defaults = Node::default();
        let is_doc = matches!(kind, NodeKind::Document);
        let mimetype = if is_doc {
            text_resource
                .and_then(|tr| tr.get("mimetype"))
                .and_then(Value::as_str)
                .map(str::to_string)
        } else {
            str_field("mimetype").or(defaults.mimetype.clone())
        };
        let index = |k: &str| dict.get(k).and_then(Value::as_u64).map(|v| v as usize);
        let mut extra = Map::new();
        for (k, v) in dict {
            if !KNOWN.contains(&k.as_str()) {
                extra.insert(k.clone(), v.clone());
            }
        }
        if let Some(tr) = text_resource {
            extra.insert("text_resource".into(), Value::Object(tr.clone()));
        }
        Ok(Node {
            id_,
            kind,
            text,
            embedding,
            metadata,
            excluded_embed_metadata_keys: strings("excluded_embed_metadata_keys"),
            excluded_llm_metadata_keys: strings("excluded_llm_metadata_keys"),
            relationships,
            metadata_template: str_field("metadata_template").unwrap_or(defaults.metadata_template),
            metadata_separator: str_field("metadata_separator")
                .or_else(|| str_field("metadata_seperator"))
                .unwrap_or(defaults.metadata_separator),
            text_template: str_field("text_template").unwrap_or(defaults.text_template),
            mimetype,
            start_char_idx: index("start_char_idx"),
            end_char_idx: index("end_char_idx"),
            extra,
        })
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_llama_dict().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        Node::from_llama_dict(&map, None).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::MetadataMode;

    // Dicts written by llama-index-core 0.14.25 (`to_dict()`).
    const PY_DOC: &str = r#"{"id_": "doc1", "embedding": null, "metadata": {"a": 1, "b": true, "c": null, "d": 1.0, "e": [1, "x"], "f": {"k": 2.5}}, "excluded_embed_metadata_keys": [], "excluded_llm_metadata_keys": [], "relationships": {}, "metadata_template": "{key}: {value}", "metadata_separator": "\n", "text_resource": {"embeddings": null, "text": "h\u00e9llo w\u00f6rld", "path": null, "url": null, "mimetype": null}, "image_resource": null, "audio_resource": null, "video_resource": null, "text_template": "{metadata_str}\n\n{content}", "class_name": "Document", "text": "h\u00e9llo w\u00f6rld"}"#;
    const PY_NODE: &str = r#"{"id_": "n1", "embedding": null, "metadata": {"a": 1}, "excluded_embed_metadata_keys": [], "excluded_llm_metadata_keys": [], "relationships": {"1": {"node_id": "doc1", "node_type": "4", "metadata": {"a": 1, "b": true, "c": null, "d": 1.0, "e": [1, "x"], "f": {"k": 2.5}}, "hash": "54060259bbf0ebd703a6a34b76016287bd9ccb7744619673578d4c0cd1c15073", "class_name": "RelatedNodeInfo"}}, "metadata_template": "{key}: {value}", "metadata_separator": "\n", "text": "h\u00e9llo", "mimetype": "text/plain", "start_char_idx": 0, "end_char_idx": 5, "text_template": "{metadata_str}\n\n{content}", "class_name": "TextNode"}"#;
    const PY_INDEX: &str = r#"{"id_": "i1", "embedding": null, "metadata": {}, "excluded_embed_metadata_keys": [], "excluded_llm_metadata_keys": [], "relationships": {}, "metadata_template": "{key}: {value}", "metadata_separator": "\n", "text": "x", "mimetype": "text/plain", "start_char_idx": null, "end_char_idx": null, "text_template": "{metadata_str}\n\n{content}", "index_id": "other", "obj": null, "class_name": "IndexNode"}"#;

    #[test]
    fn python_dicts_round_trip_exactly() {
        for src in [PY_DOC, PY_NODE, PY_INDEX] {
            let want: Value = serde_json::from_str(src).unwrap_or_default();
            let node: Node = serde_json::from_str(src).unwrap_or_else(|e| panic!("{e}: {src}"));
            let got = serde_json::to_value(&node).unwrap_or_default();
            assert_eq!(got, want);
            // Same key order too, so files diff cleanly against Python's.
            let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
            assert_eq!(keys(&got), keys(&want));
        }
    }

    #[test]
    fn parsed_nodes_keep_their_meaning() {
        let doc: Node = serde_json::from_str(PY_DOC).unwrap_or_default();
        assert!(doc.is_document());
        assert_eq!(doc.text, "héllo wörld");
        assert_eq!(
            doc.hash(),
            "54060259bbf0ebd703a6a34b76016287bd9ccb7744619673578d4c0cd1c15073"
        );
        let node: Node = serde_json::from_str(PY_NODE).unwrap_or_default();
        assert_eq!(node.ref_doc_id(), Some("doc1"));
        assert_eq!(
            node.source_node().and_then(|s| s.hash.clone()),
            Some(doc.hash())
        );
        assert_eq!(node.get_content(MetadataMode::Embed), "a: 1\n\nhéllo");
        let idx: Node = serde_json::from_str(PY_INDEX).unwrap_or_default();
        assert!(matches!(idx.kind, NodeKind::Index { ref index_id, .. } if index_id == "other"));
    }

    #[test]
    fn unknown_fields_are_kept() {
        let mut v: Value = serde_json::from_str(PY_NODE).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("future_field".into(), json!({"x": 1}));
        }
        let node: Node = serde_json::from_value(v.clone()).unwrap_or_default();
        assert_eq!(serde_json::to_value(&node).unwrap_or_default(), v);
    }

    #[test]
    fn missing_id_is_an_error() {
        let err = serde_json::from_str::<Node>(r#"{"text": "x"}"#);
        assert!(err.is_err_and(|e| e.to_string().contains("id_")));
    }
}
