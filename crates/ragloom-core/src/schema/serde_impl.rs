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

/// The JSON type of `v`, for errors.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Typed reads of a dict's fields, as pydantic validates LlamaIndex's
/// models: a missing field (or `null`, as ragloom has always read it) takes
/// the model's default, a field of another type is an error naming it,
/// never a silent default that would lose what the file holds.
struct Fields<'a> {
    dict: &'a Map<String, Value>,
    /// What the errors say the field belongs to (`node \`n1\``).
    owner: String,
}

impl<'a> Fields<'a> {
    fn wrong(&self, key: &str, v: &Value, expected: &str) -> String {
        format!(
            "{}: field `{key}` is {}, expected {expected}",
            self.owner,
            type_name(v)
        )
    }

    fn value(&self, key: &str) -> Option<&'a Value> {
        self.dict.get(key).filter(|v| !v.is_null())
    }

    fn str(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, v, "a string")),
        }
    }

    fn string(&self, key: &str) -> Result<Option<String>, String> {
        Ok(self.str(key)?.map(str::to_string))
    }

    fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, String> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o)),
            Some(v) => Err(self.wrong(key, v, "an object")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        match self.value(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|x| match x {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(format!(
                        "{}: field `{key}` holds {}, expected only strings",
                        self.owner,
                        type_name(other)
                    )),
                })
                .collect(),
            Some(v) => Err(self.wrong(key, v, "a list of strings")),
        }
    }

    /// A character offset: a non-negative integer (pydantic's lax `int`
    /// also takes a float without a fraction, as `5.0`).
    fn index(&self, key: &str) -> Result<Option<usize>, String> {
        let Some(v) = self.value(key) else {
            return Ok(None);
        };
        let n = v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..9.0e15).contains(f))
                .map(|f| f as u64)
        });
        match n.and_then(|n| usize::try_from(n).ok()) {
            Some(n) => Ok(Some(n)),
            None => Err(self.wrong(key, v, "a non-negative integer")),
        }
    }
}

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

    /// Reads a relationship of the node `owner` names (`node \`n1\``).
    fn from_value(v: &Value, owner: &str) -> Result<Self, String> {
        let Value::Object(obj) = v else {
            return Err(format!(
                "{owner}: field `relationships` holds {}, expected objects",
                type_name(v)
            ));
        };
        let f = Fields {
            dict: obj,
            owner: format!("{owner}, field `relationships`"),
        };
        let node_id = f
            .string("node_id")?
            .ok_or_else(|| format!("{owner}: relationship without node_id"))?;
        let node_type = match f.value("node_type") {
            None => None,
            Some(Value::String(s)) => Some(ObjectType::from_code(s)),
            Some(Value::Number(n)) => Some(ObjectType::from_code(&n.to_string())),
            Some(v) => return Err(f.wrong("node_type", v, "a string")),
        };
        Ok(RelatedNodeInfo {
            node_id,
            node_type,
            metadata: f.object("metadata")?.cloned().unwrap_or_default(),
            hash: f.string("hash")?,
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
        let mut f = Fields {
            dict,
            owner: "node".to_string(),
        };
        let id_ = match f.str("id_")? {
            Some(id) => id.to_string(),
            None => f.string("doc_id")?.ok_or("node without `id_`")?,
        };
        f.owner = format!("node `{id_}`");
        let class = f.str("class_name")?;
        let kind = match (class, type_code) {
            (Some("Document"), _) | (None, Some("4")) => NodeKind::Document,
            (Some("IndexNode"), _) | (None, Some("3")) => NodeKind::Index {
                // Required by LlamaIndex's `IndexNode`: no default to fall back to.
                index_id: f
                    .string("index_id")?
                    .ok_or_else(|| format!("{}: index node without `index_id`", f.owner))?,
                obj: f.value("obj").cloned(),
            },
            (Some("TextNode") | Some("Node") | Some("ImageNode"), _) | (None, _) => NodeKind::Text,
            (Some(other), _) => {
                // A class ragloom does not know: read it as text if it has text.
                if dict.contains_key("text") || dict.contains_key("text_resource") {
                    NodeKind::Text
                } else {
                    return Err(format!("{}: unknown node class `{other}`", f.owner));
                }
            }
        };
        let text_resource = f.object("text_resource")?;
        let resource = text_resource.map(|tr| Fields {
            dict: tr,
            owner: format!("{}'s text_resource", f.owner),
        });
        let text = match resource.as_ref().map(|r| r.string("text")).transpose()? {
            Some(Some(text)) => text,
            _ => f.string("text")?.unwrap_or_default(),
        };
        let embedding = match f.value("embedding") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|x| {
                        x.as_f64().map(|v| v as f32).ok_or_else(|| {
                            format!(
                                "{}: field `embedding` holds {}, expected only numbers",
                                f.owner,
                                type_name(x)
                            )
                        })
                    })
                    .collect::<Result<Vec<f32>, _>>()?,
            ),
            Some(v) => return Err(f.wrong("embedding", v, "a list of numbers")),
        };
        let metadata: Metadata = match f.object("metadata")? {
            Some(m) => m.clone(),
            None => f.object("extra_info")?.cloned().unwrap_or_default(),
        };
        let mut relationships = std::collections::BTreeMap::new();
        if let Some(rels) = f.object("relationships")? {
            for (code, v) in rels {
                // A relationship kind of a later LlamaIndex is left out, as before.
                let Some(rel) = NodeRelationship::from_code(code) else {
                    continue;
                };
                let related = match v {
                    Value::Array(list) => RelatedNodeType::Many(
                        list.iter()
                            .map(|i| RelatedNodeInfo::from_value(i, &f.owner))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => RelatedNodeType::One(RelatedNodeInfo::from_value(other, &f.owner)?),
                };
                relationships.insert(rel, related);
            }
        }
        let defaults = Node::default();
        let is_doc = matches!(kind, NodeKind::Document);
        let mimetype = if is_doc {
            resource
                .as_ref()
                .map(|r| r.string("mimetype"))
                .transpose()?
                .flatten()
        } else {
            f.string("mimetype")?.or(defaults.mimetype.clone())
        };
        let mut extra = Map::new();
        for (k, v) in dict {
            if !KNOWN.contains(&k.as_str()) {
                extra.insert(k.clone(), v.clone());
            }
        }
        if let Some(tr) = text_resource {
            extra.insert("text_resource".into(), Value::Object(tr.clone()));
        }
        let metadata_separator = match f.string("metadata_separator")? {
            Some(s) => s,
            None => f
                .string("metadata_seperator")?
                .unwrap_or(defaults.metadata_separator),
        };
        Ok(Node {
            kind,
            text,
            embedding,
            metadata,
            excluded_embed_metadata_keys: f.strings("excluded_embed_metadata_keys")?,
            excluded_llm_metadata_keys: f.strings("excluded_llm_metadata_keys")?,
            relationships,
            metadata_template: f
                .string("metadata_template")?
                .unwrap_or(defaults.metadata_template),
            metadata_separator,
            text_template: f.string("text_template")?.unwrap_or(defaults.text_template),
            mimetype,
            start_char_idx: f.index("start_char_idx")?,
            end_char_idx: f.index("end_char_idx")?,
            extra,
            id_,
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

    /// A field of the wrong type is an error naming the node and the field,
    /// never a default (the `text` became "" before); a missing or null
    /// field takes the model's default.
    #[test]
    fn wrong_types_are_errors_naming_node_and_field() {
        for (field, value) in [
            ("text", json!(42)),
            ("metadata", json!("x")),
            ("excluded_llm_metadata_keys", json!([1])),
            ("excluded_embed_metadata_keys", json!("a")),
            ("start_char_idx", json!(-1)),
            ("end_char_idx", json!("5")),
            ("embedding", json!("0.5")),
            ("embedding", json!([0.5, "x"])),
            ("metadata_template", json!({})),
            ("metadata_separator", json!(1)),
            ("text_template", json!(false)),
            ("mimetype", json!(1)),
            ("class_name", json!(1)),
            ("relationships", json!([])),
            ("relationships", json!({"1": {"node_id": 7}})),
            ("relationships", json!({"1": {"node_id": "d", "hash": 1}})),
            ("relationships", json!({"1": "d"})),
        ] {
            let mut v: Value = serde_json::from_str(PY_NODE).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert(field.into(), value.clone());
            }
            let err = serde_json::from_value::<Node>(v)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| panic!("{field} = {value} was accepted"));
            assert!(err.contains("`n1`") && err.contains(field), "{err}");
        }
        let mut v: Value = serde_json::from_str(PY_DOC).unwrap_or_default();
        if let Some(tr) = v.get_mut("text_resource").and_then(Value::as_object_mut) {
            tr.insert("text".into(), json!(["h"]));
        }
        let err = serde_json::from_value::<Node>(v)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("doc1") && e.contains("text")));
        let idx = serde_json::from_str::<Node>(r#"{"id_": "i", "class_name": "IndexNode"}"#);
        assert!(idx.is_err_and(|e| e.to_string().contains("index_id")));

        let node: Node = serde_json::from_str(
            r#"{"id_": "n", "text": "t", "metadata": null, "start_char_idx": 3.0}"#,
        )
        .unwrap_or_default();
        assert_eq!(node.id_, "n");
        assert_eq!(node.start_char_idx, Some(3));
        assert_eq!(node.metadata_template, Node::default().metadata_template);
        assert!(node.metadata.is_empty());
    }

    #[test]
    fn missing_id_is_an_error() {
        let err = serde_json::from_str::<Node>(r#"{"text": "x"}"#);
        assert!(err.is_err_and(|e| e.to_string().contains("id_")));
    }
}
