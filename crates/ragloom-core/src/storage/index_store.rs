//! Index store: the index structs of every index sharing a storage context
//! (LlamaIndex `KVIndexStore` / `SimpleIndexStore`), persisted as `index_store.json`.

use super::kvstore::{KvBackend, KvValue, SimpleKVStore, simple_kv_store_constructors};
use super::{DATA_KEY, TYPE_KEY};
use crate::data_structs::IndexStruct;
use crate::error::{Error, Result};
use crate::utils::run_blocking;
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;

/// File name of a persisted index store inside a persist directory.
pub const DEFAULT_PERSIST_FNAME: &str = "index_store.json";
/// Namespace prefixed to the index store's collection.
pub const DEFAULT_NAMESPACE: &str = "index_store";
/// Suffix of the collection holding the index structs.
pub const DEFAULT_COLLECTION_SUFFIX: &str = "/data";

/// Stores index structs by index id. Shared as `Arc<dyn IndexStore>`.
#[async_trait]
pub trait IndexStore: Send + Sync + std::fmt::Debug {
    /// Every stored index struct, in insertion order.
    async fn index_structs(&self) -> Result<Vec<IndexStruct>>;

    /// Stores `s` under its index id, replacing what was there.
    async fn add_index_struct(&self, s: IndexStruct) -> Result<()>;

    /// Deletes the struct stored under `key`; a missing key is not an error
    /// (as in Python).
    async fn delete_index_struct(&self, key: &str) -> Result<()>;

    /// The struct stored under `struct_id`, or with `None` the only struct
    /// stored; with `None` and zero or several structs it is an error (Python
    /// asserts there is exactly one).
    async fn get_index_struct(&self, struct_id: Option<&str>) -> Result<Option<IndexStruct>>;

    /// Writes the store to `persist_path` if it is a local store; others do nothing.
    async fn persist(&self, persist_path: &Path) -> Result<()> {
        let _ = persist_path;
        Ok(())
    }
}

/// An index struct in the index store's stored form: `{"__type__": type name,
/// "__data__": JSON text of its fields}` (LlamaIndex `index_struct_to_json`).
pub fn index_struct_to_json(index_struct: &IndexStruct) -> Result<KvValue> {
    let mut m = Map::new();
    m.insert(
        TYPE_KEY.into(),
        Value::String(index_struct.type_name().into()),
    );
    m.insert(DATA_KEY.into(), Value::String(index_struct.to_json()?));
    Ok(m)
}

/// Reads a stored index struct (LlamaIndex `json_to_index_struct`).
/// `__data__` is JSON text as Python writes it; an already-parsed object is
/// accepted too, as Python falls back to `from_dict` for one.
pub fn json_to_index_struct(struct_dict: &KvValue) -> std::result::Result<IndexStruct, String> {
    let type_name = match struct_dict.get(TYPE_KEY) {
        Some(Value::String(s)) => s,
        Some(_) => return Err(format!("`{TYPE_KEY}` is not a string")),
        None => return Err(format!("no `{TYPE_KEY}`")),
    };
    let parsed;
    let data = match struct_dict.get(DATA_KEY) {
        Some(Value::String(text)) => {
            // JSON inside JSON: its escapes (lone surrogates of node ids
            // made from names that are not UTF-8) are only seen now.
            let text = crate::utils::replace_lone_surrogates(text.as_bytes());
            parsed = serde_json::from_slice::<Value>(&text)
                .map_err(|e| format!("`{DATA_KEY}` is not valid JSON: {e}"))?;
            &parsed
        }
        Some(v @ Value::Object(_)) => v,
        Some(_) => return Err(format!("`{DATA_KEY}` is neither JSON text nor an object")),
        None => return Err(format!("no `{DATA_KEY}`")),
    };
    IndexStruct::from_dict(type_name, data).map_err(|e| e.to_string())
}

/// LlamaIndex's `KVIndexStore`: an [`IndexStore`] over any key-value backend
/// ([`SimpleIndexStore`] in memory), in the collection `index_store/data`.
///
/// Structs stay in the key-value store in their stored form, so one loaded
/// from a file and not replaced is persisted back byte for byte.
#[derive(Debug)]
pub struct KvIndexStore<B: KvBackend = SimpleKVStore> {
    kvstore: Arc<B>,
    collection: String,
}

/// LlamaIndex's `SimpleIndexStore`: the index store in memory, persisted as `index_store.json`.
pub type SimpleIndexStore = KvIndexStore<SimpleKVStore>;

simple_kv_store_constructors!(
    SimpleIndexStore,
    "index_store",
    "index_store.json",
    "struct"
);

impl SimpleIndexStore {
    fn validate(&self) -> std::result::Result<(), String> {
        // Reads without creating collections, so loading changes nothing.
        let guard = self.kvstore.lock_read();
        if let Some(structs) = guard.data.get(&self.collection) {
            for (key, v) in structs {
                json_to_index_struct(v)
                    .map_err(|m| format!("{} entry `{key}`: {m}", self.collection))?;
            }
        }
        Ok(())
    }
}

impl<B: KvBackend> KvIndexStore<B> {
    /// A store over `kvstore`, its collection prefixed with `namespace`
    /// (default `"index_store"`).
    pub fn from_backend(kvstore: Arc<B>, namespace: Option<&str>) -> Self {
        let ns = namespace.unwrap_or(DEFAULT_NAMESPACE);
        Self {
            kvstore,
            collection: format!("{ns}{DEFAULT_COLLECTION_SUFFIX}"),
        }
    }

    /// The key-value store underneath.
    pub fn kvstore(&self) -> &Arc<B> {
        &self.kvstore
    }

    fn decode(&self, key: &str, v: &KvValue) -> Result<IndexStruct> {
        json_to_index_struct(v)
            .map_err(|m| Error::InvalidInput(format!("{} entry `{key}`: {m}", self.collection)))
    }
}

#[async_trait]
impl<B: KvBackend> IndexStore for KvIndexStore<B> {
    async fn index_structs(&self) -> Result<Vec<IndexStruct>> {
        self.kvstore.read(|c| {
            c.get_all(&self.collection)?
                .iter()
                .map(|(k, v)| self.decode(k, v))
                .collect()
        })
    }

    async fn add_index_struct(&self, s: IndexStruct) -> Result<()> {
        let data = index_struct_to_json(&s)?;
        self.kvstore
            .write(|c| c.put(s.index_id(), data, &self.collection))
    }

    async fn delete_index_struct(&self, key: &str) -> Result<()> {
        self.kvstore
            .write(|c| c.delete(key, &self.collection).map(|_| ()))
    }

    async fn get_index_struct(&self, struct_id: Option<&str>) -> Result<Option<IndexStruct>> {
        match struct_id {
            Some(id) => self.kvstore.read(|c| {
                c.get(id, &self.collection)?
                    .map(|v| self.decode(id, &v))
                    .transpose()
            }),
            None => {
                let mut structs = self.index_structs().await?;
                if structs.len() != 1 {
                    return Err(Error::InvalidInput(format!(
                        "get_index_struct without an id needs exactly one index struct \
                         in the index store, found {}; pass the index id",
                        structs.len()
                    )));
                }
                Ok(structs.pop())
            }
        }
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
    use crate::data_structs::{IndexDict, IndexList};
    use serde_json::json;

    #[tokio::test]
    async fn add_get_delete() {
        let store = SimpleIndexStore::new();
        assert!(store.get_index_struct(None).await.is_err());
        let mut d = IndexDict::new();
        d.add_node("n1", None);
        let id = d.index_id.clone();
        store.add_index_struct(d.clone().into()).await.unwrap();
        assert_eq!(
            store.get_index_struct(None).await.unwrap(),
            Some(d.clone().into())
        );
        assert_eq!(
            store.get_index_struct(Some(&id)).await.unwrap(),
            Some(d.into())
        );
        assert_eq!(store.get_index_struct(Some("nope")).await.unwrap(), None);
        store
            .add_index_struct(IndexList::new().into())
            .await
            .unwrap();
        let err = store.get_index_struct(None).await;
        assert!(err.is_err_and(|e| e.to_string().contains("found 2")));
        store.delete_index_struct(&id).await.unwrap();
        store.delete_index_struct(&id).await.unwrap();
        assert_eq!(store.index_structs().await.unwrap().len(), 1);
    }

    #[test]
    fn stored_form_is_json_text_and_objects_are_accepted() {
        let mut l = IndexList::new();
        l.add_node("é");
        let st = IndexStruct::from(l);
        let stored = index_struct_to_json(&st).unwrap();
        let text = stored.get(DATA_KEY).and_then(Value::as_str).unwrap();
        assert!(text.contains(r#""nodes": ["\u00e9"]"#), "{text}");
        assert_eq!(json_to_index_struct(&stored).unwrap(), st);
        let mut as_object = stored.clone();
        as_object.insert(DATA_KEY.into(), st.to_dict());
        assert_eq!(json_to_index_struct(&as_object).unwrap(), st);
        as_object.insert(DATA_KEY.into(), json!(3));
        assert!(json_to_index_struct(&as_object).is_err_and(|e| e.contains(DATA_KEY)));
        as_object.insert(DATA_KEY.into(), json!("{not json"));
        assert!(json_to_index_struct(&as_object).is_err_and(|e| e.contains("valid JSON")));
    }
}
