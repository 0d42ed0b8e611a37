//! Document store: nodes by id, their hashes, and which nodes came from each
//! source document (LlamaIndex `KVDocumentStore` / `SimpleDocumentStore`, `docstore.json`).

use super::kvstore::{KvBackend, KvTable, KvValue, SimpleKVStore, simple_kv_store_constructors};
use super::{DATA_KEY, TYPE_KEY};
use crate::error::{Error, Result};
use crate::schema::{Metadata, Node, NodeRelationship, RelatedNodeInfo, RelatedNodeType, py_str};
use crate::utils::run_blocking;
use async_trait::async_trait;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// File name of a persisted document store inside a persist directory.
pub const DEFAULT_PERSIST_FNAME: &str = "docstore.json";
/// Namespace prefixed to the document store's collections.
pub const DEFAULT_NAMESPACE: &str = "docstore";
/// Suffix of the collection holding the nodes themselves.
pub const DEFAULT_COLLECTION_DATA_SUFFIX: &str = "/data";
/// Suffix of the collection mapping each source document to its nodes.
pub const DEFAULT_REF_DOC_COLLECTION_SUFFIX: &str = "/ref_doc_info";
/// Suffix of the collection holding each node's hash and source document id.
pub const DEFAULT_METADATA_COLLECTION_SUFFIX: &str = "/metadata";

/// Stores nodes (and documents) by id. Shared as `Arc<dyn DocStore>`.
///
/// Semantics are LlamaIndex's `BaseDocumentStore`; where Python has a
/// `raise_error` flag, the trait raises ([`SimpleDocumentStore`] has
/// `try_` variants that do not).
#[async_trait]
pub trait DocStore: Send + Sync + std::fmt::Debug {
    /// Every stored node, in insertion order.
    async fn docs(&self) -> Result<Vec<Node>>;

    /// Stores `nodes`, their hashes, and their ids under their source
    /// documents. With `allow_update` false a node whose id is already stored
    /// is an error naming it (and nothing is written). With `store_text`
    /// false only the hash and source-document bookkeeping are written, not
    /// the node itself.
    async fn add_documents(
        &self,
        nodes: &[Node],
        allow_update: bool,
        store_text: bool,
    ) -> Result<()>;

    /// The node stored under `doc_id`, if any.
    async fn get_document(&self, doc_id: &str) -> Result<Option<Node>>;

    /// The node stored under `node_id`; [`Error::NotFound`] naming it if absent.
    async fn get_node(&self, node_id: &str) -> Result<Node>;

    /// The nodes stored under `node_ids`, in that order; the first absent one
    /// is an [`Error::NotFound`].
    async fn get_nodes(&self, node_ids: &[String]) -> Result<Vec<Node>> {
        let mut nodes = Vec::with_capacity(node_ids.len());
        for id in node_ids {
            nodes.push(self.get_node(id).await?);
        }
        Ok(nodes)
    }

    /// Whether a node is stored under `doc_id`.
    async fn document_exists(&self, doc_id: &str) -> Result<bool>;

    /// Deletes the node `doc_id`, its hash, and its entry in its source
    /// document's info (which goes, with the source document itself, when it
    /// loses its last node). [`Error::NotFound`] if no node was stored under
    /// `doc_id` — after that bookkeeping was cleaned, as in Python.
    async fn delete_document(&self, doc_id: &str) -> Result<()>;

    /// Deletes every node of the source document `ref_doc_id` and its info;
    /// [`Error::NotFound`] if there is no info for it.
    async fn delete_ref_doc(&self, ref_doc_id: &str) -> Result<()>;

    /// The node ids and metadata recorded for the source document `ref_doc_id`.
    async fn get_ref_doc_info(&self, ref_doc_id: &str) -> Result<Option<RefDocInfo>>;

    /// The info of every source document, by id.
    async fn get_all_ref_doc_info(&self) -> Result<BTreeMap<String, RefDocInfo>>;

    /// Records `hash` for `doc_id`, replacing its metadata entry (as Python does).
    async fn set_document_hash(&self, doc_id: &str, hash: &str) -> Result<()>;

    /// The hash recorded for `doc_id`, if any.
    async fn get_document_hash(&self, doc_id: &str) -> Result<Option<String>>;

    /// Every recorded hash mapped to its document id (hash → doc id, as Python;
    /// when two documents share a hash the later one wins).
    async fn get_all_document_hashes(&self) -> Result<BTreeMap<String, String>>;

    /// Writes the store to `persist_path` if it is a local store; others do nothing.
    async fn persist(&self, persist_path: &Path) -> Result<()> {
        let _ = persist_path;
        Ok(())
    }
}

/// What the document store knows about one source document: the ids of the
/// nodes parsed from it and its metadata (LlamaIndex `RefDocInfo`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RefDocInfo {
    /// Ids of the stored nodes that came from the document.
    pub node_ids: Vec<String>,
    /// The document's metadata (that of its first stored node).
    pub metadata: Metadata,
}

impl RefDocInfo {
    /// As LlamaIndex's `to_dict()` writes it.
    pub fn to_dict(&self) -> KvValue {
        let mut m = Map::new();
        m.insert(
            "node_ids".into(),
            Value::Array(self.node_ids.iter().cloned().map(Value::String).collect()),
        );
        m.insert("metadata".into(), Value::Object(self.metadata.clone()));
        m
    }

    /// Reads the stored form, including the legacy `doc_ids` / `extra_info`
    /// spelling older LlamaIndex versions wrote.
    pub fn from_dict(d: &KvValue) -> std::result::Result<Self, String> {
        let (ids_key, meta_key) = if d.contains_key("doc_ids") {
            ("doc_ids", "extra_info")
        } else {
            ("node_ids", "metadata")
        };
        let node_ids = match d.get(ids_key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("`{ids_key}` holds a non-string"))
                })
                .collect::<std::result::Result<_, _>>()?,
            Some(_) => return Err(format!("`{ids_key}` is not a list")),
        };
        let metadata = match d.get(meta_key) {
            None | Some(Value::Null) => Metadata::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(format!("`{meta_key}` is not an object")),
        };
        Ok(Self { node_ids, metadata })
    }
}

/// A node in the document store's stored form: `{"__data__": to_dict(),
/// "__type__": type code}` (LlamaIndex `doc_to_json`).
pub fn doc_to_json(node: &Node) -> KvValue {
    let mut m = Map::new();
    m.insert(DATA_KEY.into(), Value::Object(node.to_llama_dict()));
    m.insert(
        TYPE_KEY.into(),
        Value::String(node.object_type().code().to_string()),
    );
    m
}

/// Reads a stored node (LlamaIndex `json_to_doc`): `__type__` decides the kind
/// (`"1"` text, `"3"` index, `"4"` document; image `"2"` and multimodal `"5"`
/// nodes are read as text nodes when they have text), and a payload with
/// `extra_info` is read in the legacy layout.
pub fn json_to_doc(doc_dict: &KvValue) -> std::result::Result<Node, String> {
    let doc_type = match doc_dict.get(TYPE_KEY) {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(format!("`{TYPE_KEY}` is not a string")),
        None => return Err(format!("no `{TYPE_KEY}`")),
    };
    let data = match doc_dict.get(DATA_KEY) {
        Some(Value::Object(d)) => d,
        Some(_) => return Err(format!("`{DATA_KEY}` is not an object")),
        None => return Err(format!("no `{DATA_KEY}`")),
    };
    if data.contains_key("extra_info") {
        return legacy_json_to_doc(doc_type, data);
    }
    let expected_class = match doc_type {
        "1" => "TextNode",
        "3" => "IndexNode",
        "4" => "Document",
        "2" | "5" => {
            if !(data.contains_key("text") || data.contains_key("text_resource")) {
                return Err(format!(
                    "node of type `{doc_type}` (image / multimodal) has no text; ragloom cannot read it"
                ));
            }
            // Read as a text node; fields ragloom does not model stay in `extra`.
            let mut data = data.clone();
            data.remove("class_name");
            return Node::from_llama_dict(&data, None);
        }
        other => return Err(format!("unknown doc type `{other}`")),
    };
    // Python picks the class from `__type__` alone; only copy the payload
    // when its `class_name` disagrees (e.g. an ImageDocument stored as "4").
    match data.get("class_name").and_then(Value::as_str) {
        None => Node::from_llama_dict(data, Some(doc_type)),
        Some(c) if c == expected_class => Node::from_llama_dict(data, Some(doc_type)),
        Some(_) => {
            let mut data = data.clone();
            data.remove("class_name");
            Node::from_llama_dict(&data, Some(doc_type))
        }
    }
}

/// The layout of LlamaIndex before 0.6: `doc_id`, `extra_info`, and
/// relationships as bare ids.
fn legacy_json_to_doc(
    doc_type: &str,
    data: &Map<String, Value>,
) -> std::result::Result<Node, String> {
    // A field of another type is an error naming it, never a default that
    // would drop what the file holds; a missing one (or null) is the default.
    let value = |key: &str| data.get(key).filter(|v| !v.is_null());
    let string = |key: &str| -> std::result::Result<Option<&str>, String> {
        match value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("field `{key}` is not a string")),
        }
    };
    let object = |key: &str| -> std::result::Result<Option<&Map<String, Value>>, String> {
        match value(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(format!("field `{key}` is not an object")),
        }
    };
    let text = string("text")?.unwrap_or_default().to_string();
    let mut node = match doc_type {
        "4" => Node::document(text),
        "1" | "2" => Node::text_node(text),
        "3" => Node::index_node(text, string("index_id")?.unwrap_or_default()),
        other => return Err(format!("unknown doc type `{other}`")),
    };
    if let Some(id) = string("doc_id")? {
        node.id_ = id.to_string();
    }
    if let Some(m) = object("extra_info")? {
        node.metadata = m.clone();
    }
    if let Some(rels) = object("relationships")? {
        for (code, v) in rels {
            let rel = NodeRelationship::from_code(code)
                .ok_or_else(|| format!("unknown relationship `{code}`"))?;
            node.relationships
                .insert(rel, RelatedNodeType::One(RelatedNodeInfo::new(py_str(v))));
        }
    }
    if doc_type == "2" {
        if let Some(image) = data.get("image") {
            node.extra.insert("image".into(), image.clone());
        }
    }
    Ok(node)
}

/// LlamaIndex's `KVDocumentStore`: a [`DocStore`] over any key-value
/// backend ([`SimpleDocumentStore`] in memory, a database elsewhere), with
/// the collections `docstore/data` (nodes),
/// `docstore/metadata` (`doc_hash`, `ref_doc_id` per node) and
/// `docstore/ref_doc_info` (node ids and metadata per source document).
///
/// Nodes stay in the key-value store in their stored JSON form, so a node
/// loaded from a file and never rewritten is persisted back unchanged, fields
/// ragloom does not model included.
#[derive(Debug)]
pub struct KvDocumentStore<B: KvBackend = SimpleKVStore> {
    kvstore: Arc<B>,
    node_collection: String,
    ref_doc_collection: String,
    metadata_collection: String,
}

/// LlamaIndex's `SimpleDocumentStore`: the document store in memory,
/// persisted as `docstore.json`.
pub type SimpleDocumentStore = KvDocumentStore<SimpleKVStore>;

simple_kv_store_constructors!(
    SimpleDocumentStore,
    "docstore",
    "docstore.json",
    "stored node and source-document entry"
);

impl SimpleDocumentStore {
    fn validate(&self) -> std::result::Result<(), String> {
        // Reads without creating collections, so loading changes nothing.
        let guard = self.kvstore.lock_read();
        if let Some(nodes) = guard.data.get(&self.node_collection) {
            for (key, v) in nodes {
                json_to_doc(v)
                    .map_err(|m| format!("{} entry `{key}`: {m}", self.node_collection))?;
            }
        }
        if let Some(infos) = guard.data.get(&self.ref_doc_collection) {
            for (key, v) in infos {
                RefDocInfo::from_dict(v)
                    .map_err(|m| format!("{} entry `{key}`: {m}", self.ref_doc_collection))?;
            }
        }
        Ok(())
    }

    /// Every collection as stored (LlamaIndex `to_dict`).
    pub fn to_dict(&self) -> super::kvstore::KvData {
        self.kvstore.to_dict()
    }
}

impl<B: KvBackend> KvDocumentStore<B> {
    /// A store over `kvstore`, its collections prefixed with `namespace`
    /// (default `"docstore"`).
    pub fn from_backend(kvstore: Arc<B>, namespace: Option<&str>) -> Self {
        let ns = namespace.unwrap_or(DEFAULT_NAMESPACE);
        Self {
            kvstore,
            node_collection: format!("{ns}{DEFAULT_COLLECTION_DATA_SUFFIX}"),
            ref_doc_collection: format!("{ns}{DEFAULT_REF_DOC_COLLECTION_SUFFIX}"),
            metadata_collection: format!("{ns}{DEFAULT_METADATA_COLLECTION_SUFFIX}"),
        }
    }

    /// The collection the nodes are stored in (`<namespace>/data`).
    pub fn node_collection(&self) -> &str {
        &self.node_collection
    }

    /// The key-value store underneath.
    pub fn kvstore(&self) -> &Arc<B> {
        &self.kvstore
    }

    /// Like [`DocStore::delete_document`] with Python's `raise_error=False`:
    /// returns whether a node was stored under `doc_id` instead of failing.
    pub fn try_delete_document(&self, doc_id: &str) -> Result<bool> {
        self.kvstore.write(|c| self.delete_locked(c, doc_id))
    }

    /// Like [`DocStore::delete_ref_doc`] with Python's `raise_error=False`:
    /// returns whether `ref_doc_id` had info instead of failing.
    pub fn try_delete_ref_doc(&self, ref_doc_id: &str) -> Result<bool> {
        self.kvstore
            .write(|c| self.delete_ref_doc_locked(c, ref_doc_id))
    }

    /// Whether info is recorded for the source document `ref_doc_id`.
    pub fn ref_doc_exists(&self, ref_doc_id: &str) -> Result<bool> {
        Ok(self.ref_doc_info(ref_doc_id)?.is_some())
    }

    /// Records several hashes at once (doc id → hash).
    pub fn set_document_hashes(&self, doc_hashes: &BTreeMap<String, String>) -> Result<()> {
        if doc_hashes.is_empty() {
            // An empty batch leaves a missing collection missing, as in Python.
            return Ok(());
        }
        self.kvstore.write(|c| {
            for (id, hash) in doc_hashes {
                c.put(id, hash_entry(hash), &self.metadata_collection)?;
            }
            Ok(())
        })
    }

    fn decode(&self, key: &str, v: &KvValue) -> Result<Node> {
        json_to_doc(v).map_err(|m| {
            Error::InvalidInput(format!("{} entry `{key}`: {m}", self.node_collection))
        })
    }

    fn decode_ref_doc_info(&self, key: &str, v: &KvValue) -> Result<RefDocInfo> {
        RefDocInfo::from_dict(v).map_err(|m| {
            Error::InvalidInput(format!("{} entry `{key}`: {m}", self.ref_doc_collection))
        })
    }

    fn ref_doc_info(&self, ref_doc_id: &str) -> Result<Option<RefDocInfo>> {
        self.kvstore
            .read(|c| self.ref_doc_info_locked(c, ref_doc_id))
    }

    /// [`DocStore::get_ref_doc_info`] on a table the caller holds open, so a
    /// backend can read and write more in the same transaction.
    pub fn ref_doc_info_locked(
        &self,
        c: &mut dyn KvTable,
        ref_doc_id: &str,
    ) -> Result<Option<RefDocInfo>> {
        // Python treats an empty stored dict as no info at all.
        match c.get(ref_doc_id, &self.ref_doc_collection)? {
            Some(v) if !v.is_empty() => self.decode_ref_doc_info(ref_doc_id, &v).map(Some),
            _ => Ok(None),
        }
    }

    /// LlamaIndex `add_documents` on a table the caller holds open: every
    /// pair is prepared before anything is written, so a refused update writes nothing.
    pub fn add_locked(
        &self,
        c: &mut dyn KvTable,
        nodes: &[Node],
        allow_update: bool,
        store_text: bool,
    ) -> Result<()> {
        // Each node's JSON and hash are built in parallel before the
        // lookups, which need the table: they are most of a write.
        let prepared: Vec<(Option<KvValue>, String)> = {
            use rayon::prelude::*;
            nodes
                .par_iter()
                .map(|n| (store_text.then(|| doc_to_json(n)), n.hash()))
                .collect()
        };
        self.add_prepared_locked(c, nodes, prepared, allow_update, |c, pairs| {
            c.put_all(pairs, &self.node_collection)
        })
    }

    /// [`add_locked`](Self::add_locked) with each node's stored form (`None`
    /// without its text) and hash made beforehand, as a backend encodes
    /// them (off the connection, while an earlier batch writes): the
    /// lookups and writes that need the table, the nodes' own through `put_nodes`.
    pub fn add_prepared_locked<T>(
        &self,
        c: &mut dyn KvTable,
        nodes: &[Node],
        prepared: Vec<(Option<T>, String)>,
        allow_update: bool,
        put_nodes: impl FnOnce(&mut dyn KvTable, Vec<(String, T)>) -> Result<()>,
    ) -> Result<()> {
        if prepared.len() != nodes.len() {
            return Err(Error::InvalidInput(format!(
                "{} prepared entries for {} nodes",
                prepared.len(),
                nodes.len()
            )));
        }
        let mut node_pairs: Vec<(String, T)> = Vec::new();
        let mut metadata_pairs: Vec<(String, KvValue)> = Vec::new();
        // One prepared info per node, grouped by source document.
        let mut ref_doc_pairs: IndexMap<String, Vec<RefDocInfo>> = IndexMap::new();
        // Each source's info as the store held it before this batch, as in
        // Python; looked up once per source, not once per node.
        let mut stored_infos: HashMap<&str, RefDocInfo> = HashMap::new();
        for (node, (json, hash)) in nodes.iter().zip(prepared) {
            let node_id = node.node_id();
            if !allow_update && c.contains(node_id, &self.node_collection)? {
                return Err(Error::InvalidInput(format!(
                    "node_id {node_id} already exists; set allow_update to overwrite it"
                )));
            }
            let ref_doc_info = match node.source_node() {
                Some(source) => Some(match stored_infos.get(source.node_id.as_str()) {
                    Some(info) => info.clone(),
                    None => {
                        let info = self
                            .ref_doc_info_locked(c, &source.node_id)?
                            .unwrap_or_default();
                        stored_infos.insert(&source.node_id, info.clone());
                        info
                    }
                }),
                None => None,
            };
            if let Some(json) = json {
                node_pairs.push((node_id.to_string(), json));
            }
            let mut metadata = hash_entry(&hash);
            let ref_doc_id = node.ref_doc_id().filter(|id| !id.is_empty());
            if let (Some(mut info), Some(ref_doc_id)) = (ref_doc_info, ref_doc_id) {
                if !info.node_ids.iter().any(|id| id == node_id) {
                    info.node_ids.push(node_id.to_string());
                }
                if info.metadata.is_empty() {
                    info.metadata = node.metadata.clone();
                }
                metadata.insert("ref_doc_id".into(), Value::String(ref_doc_id.to_string()));
                ref_doc_pairs
                    .entry(ref_doc_id.to_string())
                    .or_default()
                    .push(info);
            }
            metadata_pairs.push((node_id.to_string(), metadata));
        }
        put_nodes(c, node_pairs)?;
        c.put_all(metadata_pairs, &self.metadata_collection)?;
        for (key, infos) in ref_doc_pairs {
            c.put(
                &key,
                merge_ref_doc_infos(infos).to_dict(),
                &self.ref_doc_collection,
            )?;
        }
        Ok(())
    }

    /// Drops `doc_id` from its source document's info; the source document
    /// goes entirely once its last node is gone.
    fn remove_from_ref_doc_node(&self, c: &mut dyn KvTable, doc_id: &str) -> Result<()> {
        let Some(ref_doc_id) = self.ref_doc_id_locked(c, doc_id)? else {
            return Ok(());
        };
        // An unreadable entry cannot be updated; it is left as it is.
        let Ok(Some(mut info)) = self.ref_doc_info_locked(c, &ref_doc_id) else {
            return Ok(());
        };
        if let Some(pos) = info.node_ids.iter().position(|id| id == doc_id) {
            info.node_ids.remove(pos);
        }
        if info.node_ids.is_empty() {
            c.delete(&ref_doc_id, &self.metadata_collection)?;
            c.delete(&ref_doc_id, &self.node_collection)?;
            c.delete(&ref_doc_id, &self.ref_doc_collection)?;
        } else {
            c.put(&ref_doc_id, info.to_dict(), &self.ref_doc_collection)?;
        }
        Ok(())
    }

    /// The source document recorded for the node `doc_id`, on a table the caller holds open.
    pub fn ref_doc_id_locked(&self, c: &mut dyn KvTable, doc_id: &str) -> Result<Option<String>> {
        Ok(c.get(doc_id, &self.metadata_collection)?.and_then(|m| {
            m.get("ref_doc_id")
                .and_then(Value::as_str)
                .map(str::to_string)
        }))
    }

    /// [`try_delete_document`](Self::try_delete_document) on a table the caller holds open.
    pub fn delete_locked(&self, c: &mut dyn KvTable, doc_id: &str) -> Result<bool> {
        self.remove_from_ref_doc_node(c, doc_id)?;
        let existed = c.delete(doc_id, &self.node_collection)?;
        c.delete(doc_id, &self.metadata_collection)?;
        Ok(existed)
    }

    /// [`try_delete_ref_doc`](Self::try_delete_ref_doc) on a table the caller holds open.
    pub fn delete_ref_doc_locked(&self, c: &mut dyn KvTable, ref_doc_id: &str) -> Result<bool> {
        let Some(info) = self.ref_doc_info_locked(c, ref_doc_id)? else {
            return Ok(false);
        };
        for node_id in &info.node_ids {
            self.delete_locked(c, node_id)?;
        }
        c.delete(ref_doc_id, &self.ref_doc_collection)?;
        c.delete(ref_doc_id, &self.metadata_collection)?;
        c.delete(ref_doc_id, &self.node_collection)?;
        Ok(true)
    }
}

fn hash_entry(hash: &str) -> KvValue {
    let mut m = Map::new();
    m.insert("doc_hash".into(), Value::String(hash.to_string()));
    m
}

/// Merges the infos prepared for one source document within a batch
/// (LlamaIndex `_merge_ref_doc_kv_pairs`): node ids in first-seen order,
/// metadata updated in turn so later nodes' keys win.
fn merge_ref_doc_infos(infos: Vec<RefDocInfo>) -> RefDocInfo {
    let mut merged = RefDocInfo::default();
    let mut seen: HashSet<String> = HashSet::new();
    for info in infos {
        // Ids already merged are skipped; repeats within one list are kept, as in Python.
        let fresh: Vec<String> = info
            .node_ids
            .into_iter()
            .filter(|id| !seen.contains(id))
            .collect();
        seen.extend(fresh.iter().cloned());
        merged.node_ids.extend(fresh);
        for (k, v) in info.metadata {
            merged.metadata.insert(k, v);
        }
    }
    merged
}

#[async_trait]
impl<B: KvBackend> DocStore for KvDocumentStore<B> {
    async fn docs(&self) -> Result<Vec<Node>> {
        self.kvstore.read(|c| {
            c.get_all(&self.node_collection)?
                .iter()
                .map(|(k, v)| self.decode(k, v))
                .collect()
        })
    }

    async fn add_documents(
        &self,
        nodes: &[Node],
        allow_update: bool,
        store_text: bool,
    ) -> Result<()> {
        self.kvstore
            .write(|c| self.add_locked(c, nodes, allow_update, store_text))
    }

    async fn get_document(&self, doc_id: &str) -> Result<Option<Node>> {
        self.kvstore.read(|c| {
            c.get(doc_id, &self.node_collection)?
                .map(|v| self.decode(doc_id, &v))
                .transpose()
        })
    }

    async fn get_node(&self, node_id: &str) -> Result<Node> {
        self.get_document(node_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("node {node_id} in the docstore")))
    }

    async fn document_exists(&self, doc_id: &str) -> Result<bool> {
        self.kvstore
            .read(|c| c.contains(doc_id, &self.node_collection))
    }

    async fn delete_document(&self, doc_id: &str) -> Result<()> {
        if self.try_delete_document(doc_id)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("doc_id {doc_id} in the docstore")))
        }
    }

    async fn delete_ref_doc(&self, ref_doc_id: &str) -> Result<()> {
        if self.try_delete_ref_doc(ref_doc_id)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "ref_doc_id {ref_doc_id} in the docstore"
            )))
        }
    }

    async fn get_ref_doc_info(&self, ref_doc_id: &str) -> Result<Option<RefDocInfo>> {
        self.ref_doc_info(ref_doc_id)
    }

    async fn get_all_ref_doc_info(&self) -> Result<BTreeMap<String, RefDocInfo>> {
        self.kvstore.read(|c| {
            c.get_all(&self.ref_doc_collection)?
                .iter()
                .map(|(k, v)| Ok((k.clone(), self.decode_ref_doc_info(k, v)?)))
                .collect()
        })
    }

    async fn set_document_hash(&self, doc_id: &str, hash: &str) -> Result<()> {
        self.kvstore
            .write(|c| c.put(doc_id, hash_entry(hash), &self.metadata_collection))
    }

    async fn get_document_hash(&self, doc_id: &str) -> Result<Option<String>> {
        self.kvstore.read(|c| {
            Ok(c.get(doc_id, &self.metadata_collection)?.and_then(|m| {
                m.get("doc_hash")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }))
        })
    }

    async fn get_all_document_hashes(&self) -> Result<BTreeMap<String, String>> {
        self.kvstore.read(|c| {
            Ok(c.get_all(&self.metadata_collection)?
                .iter()
                .filter_map(|(doc_id, m)| {
                    let hash = m.get("doc_hash").and_then(Value::as_str)?;
                    (!hash.is_empty()).then(|| (hash.to_string(), doc_id.clone()))
                })
                .collect())
        })
    }

    async fn persist(&self, persist_path: &Path) -> Result<()> {
        let kv = Arc::clone(&self.kvstore);
        let path = persist_path.to_path_buf();
        run_blocking(move || KvBackend::persist(&*kv, &path)).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> KvValue {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn merge_keeps_first_seen_order_and_later_metadata() {
        let a = RefDocInfo {
            node_ids: vec!["x".into(), "a".into()],
            metadata: obj(json!({"k": 1, "p": 1})),
        };
        let b = RefDocInfo {
            node_ids: vec!["x".into(), "b".into()],
            metadata: obj(json!({"p": 2, "q": 3})),
        };
        let m = merge_ref_doc_infos(vec![a, b]);
        assert_eq!(m.node_ids, ["x", "a", "b"]);
        assert_eq!(Value::Object(m.metadata), json!({"k": 1, "p": 2, "q": 3}));
    }

    #[test]
    fn ref_doc_info_reads_legacy_and_rejects_bad_shapes() {
        let legacy = RefDocInfo::from_dict(&obj(json!({"doc_ids": ["n"], "extra_info": {"a": 1}})));
        assert_eq!(legacy.unwrap().node_ids, ["n"]);
        assert!(RefDocInfo::from_dict(&obj(json!({"node_ids": "n"}))).is_err());
        assert!(RefDocInfo::from_dict(&obj(json!({"node_ids": [1]}))).is_err());
    }

    #[test]
    fn json_to_doc_follows_the_type_code() {
        let node = Node::document("body").with_id("d");
        let mut stored = doc_to_json(&node);
        assert_eq!(stored.get(TYPE_KEY), Some(&json!("4")));
        assert_eq!(
            json_to_doc(&stored).unwrap().to_llama_dict(),
            node.to_llama_dict()
        );
        // Python picks the class from `__type__`, not `class_name`.
        stored.insert(TYPE_KEY.into(), json!("1"));
        assert!(!json_to_doc(&stored).unwrap().is_document());
        stored.insert(TYPE_KEY.into(), json!("9"));
        assert!(json_to_doc(&stored).is_err_and(|e| e.contains('9')));
        stored.insert(TYPE_KEY.into(), json!("2"));
        assert_eq!(json_to_doc(&stored).unwrap().text, "body");
        let no_text = obj(json!({"__type__": "5", "__data__": {"id_": "m"}}));
        assert!(json_to_doc(&no_text).is_err());
    }
}
