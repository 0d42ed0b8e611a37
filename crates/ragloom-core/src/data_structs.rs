//! Index structs: what an index remembers about its nodes (LlamaIndex
//! `data_structs`), with the JSON shape and type names the index store persists.

use crate::error::{Error, Result};
use crate::utils::to_python_json_string;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

/// Type name of [`IndexDict`] (LlamaIndex `IndexStructType.VECTOR_STORE`).
pub const VECTOR_STORE_TYPE: &str = "vector_store";
/// Type name of [`IndexList`] (LlamaIndex `IndexStructType.LIST`).
pub const LIST_TYPE: &str = "list";

fn new_index_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The struct of a `VectorStoreIndex` (LlamaIndex `IndexDict`): which vector
/// store ids belong to the index and the node each stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDict {
    /// The index's id (a UUID v4 unless given).
    pub index_id: String,
    /// An optional text summary of the index.
    pub summary: Option<String>,
    /// Vector store id → node id, in insertion order.
    pub nodes_dict: IndexMap<String, String>,
    /// Node id → vector store ids (deprecated in LlamaIndex, kept for the format).
    pub doc_id_dict: IndexMap<String, Vec<String>>,
    /// Deprecated in LlamaIndex and empty in practice; kept for the format.
    pub embeddings_dict: IndexMap<String, Vec<f64>>,
}

impl Default for IndexDict {
    fn default() -> Self {
        Self {
            index_id: new_index_id(),
            summary: None,
            nodes_dict: IndexMap::new(),
            doc_id_dict: IndexMap::new(),
            embeddings_dict: IndexMap::new(),
        }
    }
}

impl IndexDict {
    /// An empty struct with a fresh id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `node_id` under the vector store id `text_id` (the node id when
    /// `None`); returns the vector store id.
    pub fn add_node(&mut self, node_id: &str, text_id: Option<&str>) -> String {
        let vector_id = text_id.unwrap_or(node_id).to_string();
        self.nodes_dict
            .insert(vector_id.clone(), node_id.to_string());
        vector_id
    }

    /// Forgets the vector store id `doc_id`; [`Error::NotFound`] if it is not
    /// there, as Python raises `KeyError`.
    pub fn delete(&mut self, doc_id: &str) -> Result<()> {
        // shift_remove keeps the remaining order, so the file matches Python's.
        self.nodes_dict
            .shift_remove(doc_id)
            .map(|_| ())
            .ok_or_else(|| Error::NotFound(format!("node {doc_id} in index {}", self.index_id)))
    }

    fn to_dict(&self) -> Value {
        json!({
            "index_id": self.index_id,
            "summary": self.summary,
            "nodes_dict": self.nodes_dict,
            "doc_id_dict": self.doc_id_dict,
            "embeddings_dict": self.embeddings_dict,
        })
    }

    fn from_dict(d: &Map<String, Value>) -> std::result::Result<Self, String> {
        let mut s = Self {
            index_id: index_id_field(d)?,
            summary: summary_field(d)?,
            ..Self::default()
        };
        for (k, v) in object_field(d, "nodes_dict")? {
            let node_id = v
                .as_str()
                .ok_or_else(|| format!("`nodes_dict` value of `{k}` is not a string"))?;
            s.nodes_dict.insert(k.clone(), node_id.to_string());
        }
        for (k, v) in object_field(d, "doc_id_dict")? {
            s.doc_id_dict
                .insert(k.clone(), string_list(v, "doc_id_dict", k)?);
        }
        for (k, v) in object_field(d, "embeddings_dict")? {
            let list = v
                .as_array()
                .ok_or_else(|| format!("`embeddings_dict` value of `{k}` is not a list"))?;
            let floats = list
                .iter()
                .map(|x| {
                    x.as_f64().ok_or_else(|| {
                        format!("`embeddings_dict` value of `{k}` holds a non-number")
                    })
                })
                .collect::<std::result::Result<Vec<f64>, String>>()?;
            s.embeddings_dict.insert(k.clone(), floats);
        }
        Ok(s)
    }
}

/// The struct of a `SummaryIndex` (LlamaIndex `IndexList`): its node ids in order.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexList {
    /// The index's id (a UUID v4 unless given).
    pub index_id: String,
    /// An optional text summary of the index.
    pub summary: Option<String>,
    /// The node ids, in the order they were added.
    pub nodes: Vec<String>,
}

impl Default for IndexList {
    fn default() -> Self {
        Self {
            index_id: new_index_id(),
            summary: None,
            nodes: Vec::new(),
        }
    }
}

impl IndexList {
    /// An empty list with a fresh id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `node_id`.
    pub fn add_node(&mut self, node_id: &str) {
        self.nodes.push(node_id.to_string());
    }

    fn to_dict(&self) -> Value {
        json!({"index_id": self.index_id, "summary": self.summary, "nodes": self.nodes})
    }

    fn from_dict(d: &Map<String, Value>) -> std::result::Result<Self, String> {
        let nodes = match d.get("nodes") {
            None => Vec::new(),
            Some(v) => string_list(v, "nodes", "")?,
        };
        Ok(Self {
            index_id: index_id_field(d)?,
            summary: summary_field(d)?,
            nodes,
        })
    }
}

/// An index struct as the index store holds it (LlamaIndex `IndexStruct` and
/// its subclasses, told apart by their type name).
#[derive(Clone, Debug, PartialEq)]
pub enum IndexStruct {
    /// `"vector_store"`: a `VectorStoreIndex`.
    IndexDict(IndexDict),
    /// `"list"`: a `SummaryIndex`.
    IndexList(IndexList),
    /// Any type ragloom does not model (tree, keyword table, knowledge graph,
    /// ...), its data kept verbatim so loading and persisting again loses nothing.
    Other {
        /// The LlamaIndex type name, e.g. `"keyword_table"`.
        type_name: String,
        /// The struct's fields as LlamaIndex wrote them.
        data: Value,
    },
}

impl IndexStruct {
    /// The index's id (the key it is stored under); empty if an unmodelled
    /// struct has none.
    pub fn index_id(&self) -> &str {
        match self {
            Self::IndexDict(s) => &s.index_id,
            Self::IndexList(s) => &s.index_id,
            Self::Other { data, .. } => data
                .get("index_id")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        }
    }

    /// LlamaIndex's type name (`IndexStructType`), the index store's `__type__`.
    pub fn type_name(&self) -> &str {
        match self {
            Self::IndexDict(_) => VECTOR_STORE_TYPE,
            Self::IndexList(_) => LIST_TYPE,
            Self::Other { type_name, .. } => type_name,
        }
    }

    /// The summary, if set.
    pub fn summary(&self) -> Option<&str> {
        match self {
            Self::IndexDict(s) => s.summary.as_deref(),
            Self::IndexList(s) => s.summary.as_deref(),
            Self::Other { data, .. } => data.get("summary").and_then(Value::as_str),
        }
    }

    /// The summary; an error naming the index when it is not set (LlamaIndex
    /// `get_summary`).
    pub fn get_summary(&self) -> Result<&str> {
        self.summary().ok_or_else(|| {
            Error::InvalidInput(format!(
                "summary field of index struct {} not set",
                self.index_id()
            ))
        })
    }

    /// The struct's fields as LlamaIndex's `to_dict()` writes them (same key order).
    pub fn to_dict(&self) -> Value {
        match self {
            Self::IndexDict(s) => s.to_dict(),
            Self::IndexList(s) => s.to_dict(),
            Self::Other { data, .. } => data.clone(),
        }
    }

    /// The struct's fields as the JSON text LlamaIndex's `to_json()` writes
    /// (Python `json.dumps` formatting), the index store's `__data__`.
    pub fn to_json(&self) -> Result<String> {
        to_python_json_string(&self.to_dict())
    }

    /// Reads a struct of type `type_name` from its fields. Unknown types
    /// become [`IndexStruct::Other`]; a known type with ill-typed fields is an
    /// error naming the field. Missing fields take LlamaIndex's defaults.
    pub fn from_dict(type_name: &str, data: &Value) -> Result<Self> {
        let parsed = match (type_name, data) {
            (VECTOR_STORE_TYPE, Value::Object(d)) => IndexDict::from_dict(d).map(Self::IndexDict),
            (LIST_TYPE, Value::Object(d)) => IndexList::from_dict(d).map(Self::IndexList),
            (VECTOR_STORE_TYPE | LIST_TYPE, _) => Err("fields are not a JSON object".to_string()),
            (other, data) => Ok(Self::Other {
                type_name: other.to_string(),
                data: data.clone(),
            }),
        };
        parsed.map_err(|e| Error::invalid(format!("index struct of type `{type_name}`"), e))
    }
}

impl From<IndexDict> for IndexStruct {
    fn from(s: IndexDict) -> Self {
        Self::IndexDict(s)
    }
}

impl From<IndexList> for IndexStruct {
    fn from(s: IndexList) -> Self {
        Self::IndexList(s)
    }
}

fn index_id_field(d: &Map<String, Value>) -> std::result::Result<String, String> {
    match d.get("index_id") {
        None => Ok(new_index_id()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err("`index_id` is not a string".into()),
    }
}

fn summary_field(d: &Map<String, Value>) -> std::result::Result<Option<String>, String> {
    match d.get("summary") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err("`summary` is not a string".into()),
    }
}

fn object_field<'a>(
    d: &'a Map<String, Value>,
    field: &str,
) -> std::result::Result<impl Iterator<Item = (&'a String, &'a Value)>, String> {
    match d.get(field) {
        None => Ok(None.into_iter().flatten()),
        Some(Value::Object(m)) => Ok(Some(m).into_iter().flatten()),
        Some(_) => Err(format!("`{field}` is not an object")),
    }
}

fn string_list(v: &Value, field: &str, key: &str) -> std::result::Result<Vec<String>, String> {
    let what = if key.is_empty() {
        format!("`{field}`")
    } else {
        format!("`{field}` value of `{key}`")
    };
    v.as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{what} holds a non-string"))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn index_dict_add_delete_and_json() {
        let mut s = IndexDict {
            index_id: "idx".into(),
            ..IndexDict::new()
        };
        assert_eq!(s.add_node("n1", None), "n1");
        assert_eq!(s.add_node("n2", Some("v2")), "v2");
        s.add_node("n3", None);
        s.delete("n1").unwrap();
        assert!(matches!(s.delete("n1"), Err(Error::NotFound(m)) if m.contains("n1")));
        let st = IndexStruct::from(s.clone());
        // Python: IndexDict(index_id="idx", nodes_dict={"v2": "n2", "n3": "n3"}).to_json()
        assert_eq!(
            st.to_json().unwrap(),
            r#"{"index_id": "idx", "summary": null, "nodes_dict": {"v2": "n2", "n3": "n3"}, "doc_id_dict": {}, "embeddings_dict": {}}"#
        );
        let back = IndexStruct::from_dict(VECTOR_STORE_TYPE, &st.to_dict()).unwrap();
        assert_eq!(back, st);
        assert!(
            st.get_summary()
                .is_err_and(|e| e.to_string().contains("idx"))
        );
    }

    #[test]
    fn index_list_and_defaults() {
        let mut l = IndexList::new();
        l.add_node("a");
        l.add_node("b");
        let st = IndexStruct::from(l.clone());
        assert_eq!(st.type_name(), "list");
        assert_eq!(st.index_id(), l.index_id);
        // Missing fields take the dataclass defaults: a fresh id, no nodes.
        let empty = IndexStruct::from_dict(LIST_TYPE, &json!({})).unwrap();
        assert_eq!(empty.index_id().len(), 36);
        assert!(
            matches!(empty, IndexStruct::IndexList(IndexList { ref nodes, .. }) if nodes.is_empty())
        );
    }

    #[test]
    fn bad_fields_name_the_field() {
        let err = IndexStruct::from_dict(VECTOR_STORE_TYPE, &json!({"nodes_dict": {"a": 1}}));
        assert!(err.is_err_and(|e| e.to_string().contains("nodes_dict")));
        let err = IndexStruct::from_dict(LIST_TYPE, &json!({"nodes": "x"}));
        assert!(err.is_err_and(|e| e.to_string().contains("nodes")));
    }

    #[test]
    fn unknown_types_are_kept_verbatim() {
        let data = json!({"index_id": "t", "summary": "s", "all_nodes": {"0": "a"}, "x": [1.5]});
        let st = IndexStruct::from_dict("tree", &data).unwrap();
        assert_eq!(st.type_name(), "tree");
        assert_eq!(st.index_id(), "t");
        assert_eq!(st.get_summary().unwrap(), "s");
        assert_eq!(st.to_dict(), data);
    }
}
