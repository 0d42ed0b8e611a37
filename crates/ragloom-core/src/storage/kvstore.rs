//! `SimpleKVStore`: LlamaIndex's in-memory key-value store (named collections of
//! key → JSON object), persisted as one JSON object byte-for-byte as Python writes it.

use crate::error::{Error, Result};
use crate::utils::{read_json_file, write_atomic, write_python_json};
use indexmap::IndexMap;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The collection used when none is named (LlamaIndex `DEFAULT_COLLECTION`).
pub const DEFAULT_COLLECTION: &str = "data";

/// One stored value: a JSON object, as LlamaIndex's key-value stores hold dicts.
pub type KvValue = serde_json::Map<String, Value>;
/// One collection: key → value, in insertion order (a Python dict's order).
pub type KvCollection = IndexMap<String, KvValue>;
/// Every collection by name, in creation order; the shape of the persisted file.
pub type KvData = IndexMap<String, KvCollection>;

/// The collections behind a [`SimpleKVStore`], with Python's semantics,
/// including that reading or deleting in a missing collection creates it empty
/// (it then appears in the persisted file, as it does in Python's).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Collections {
    pub(crate) data: KvData,
}

impl Collections {
    pub(crate) fn collection_mut(&mut self, collection: &str) -> &mut KvCollection {
        let index = match self.data.get_index_of(collection) {
            Some(index) => index,
            None => {
                self.data
                    .insert_full(collection.to_string(), KvCollection::new())
                    .0
            }
        };
        &mut self.data[index]
    }

    pub(crate) fn put(&mut self, key: &str, val: KvValue, collection: &str) {
        self.collection_mut(collection).insert(key.to_string(), val);
    }

    pub(crate) fn get(&mut self, key: &str, collection: &str) -> Option<&KvValue> {
        self.collection_mut(collection).get(key)
    }

    pub(crate) fn get_all(&mut self, collection: &str) -> &KvCollection {
        self.collection_mut(collection)
    }

    /// Removes `key`, keeping the order of the others as Python's `dict.pop` does.
    pub(crate) fn delete(&mut self, key: &str, collection: &str) -> bool {
        self.collection_mut(collection).shift_remove(key).is_some()
    }
}

/// The collections of a key-value store as one operation sees them
/// (LlamaIndex `BaseKVStore`), used inside [`KvBackend::read`] or
/// [`KvBackend::write`], so a docstore's several steps see one state.
pub trait KvTable {
    /// The value under `key` in `collection`, if any.
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>>;
    /// Whether `collection` holds `key`.
    fn contains(&mut self, key: &str, collection: &str) -> Result<bool> {
        Ok(self.get(key, collection)?.is_some())
    }
    /// Stores `val` under `key`; a key already there keeps its place in order.
    fn put(&mut self, key: &str, val: KvValue, collection: &str) -> Result<()>;
    /// Stores each pair in turn, as [`put`](Self::put) does; a database
    /// table may encode the values in parallel first.
    fn put_all(&mut self, pairs: Vec<(String, KvValue)>, collection: &str) -> Result<()> {
        for (key, val) in pairs {
            self.put(&key, val, collection)?;
        }
        Ok(())
    }
    /// Removes `key`; whether it was there.
    fn delete(&mut self, key: &str, collection: &str) -> Result<bool>;
    /// Every key and value of `collection`, in insertion order.
    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>>;
}

/// Where the document and index stores keep their collections: in memory
/// ([`SimpleKVStore`]) or in a database, with the same semantics either way.
pub trait KvBackend: Send + Sync + fmt::Debug + 'static {
    /// Runs `f` on one consistent view of the collections.
    fn read<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R>;
    /// Runs `f` so that its writes land together: under a lock, or in a
    /// transaction that commits when `f` succeeds and rolls back when it fails.
    fn write<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R>;
    /// Writes the collections to `persist_path` (an in-memory store); stores
    /// that keep their data elsewhere do nothing.
    fn persist(&self, persist_path: &Path) -> Result<()> {
        let _ = persist_path;
        Ok(())
    }
}

impl KvTable for Collections {
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>> {
        Ok(Collections::get(self, key, collection).map(Cow::Borrowed))
    }

    fn contains(&mut self, key: &str, collection: &str) -> Result<bool> {
        Ok(self.collection_mut(collection).contains_key(key))
    }

    fn put(&mut self, key: &str, val: KvValue, collection: &str) -> Result<()> {
        Collections::put(self, key, val, collection);
        Ok(())
    }

    fn delete(&mut self, key: &str, collection: &str) -> Result<bool> {
        Ok(Collections::delete(self, key, collection))
    }

    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>> {
        Ok(Cow::Borrowed(Collections::get_all(self, collection)))
    }
}

/// The collections under a read lock. A missing collection reads as empty
/// and is noted, so it can be created afterwards as Python's reads create it.
struct ReadView<'a> {
    data: &'a KvData,
    missing: Vec<String>,
}

impl ReadView<'_> {
    fn note_missing(&mut self, collection: &str) {
        if !self.data.contains_key(collection) && !self.missing.iter().any(|m| m == collection) {
            self.missing.push(collection.to_string());
        }
    }
}

impl KvTable for ReadView<'_> {
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>> {
        self.note_missing(collection);
        Ok(self
            .data
            .get(collection)
            .and_then(|c| c.get(key))
            .map(Cow::Borrowed))
    }

    fn contains(&mut self, key: &str, collection: &str) -> Result<bool> {
        self.note_missing(collection);
        Ok(self
            .data
            .get(collection)
            .is_some_and(|c| c.contains_key(key)))
    }

    fn put(&mut self, _key: &str, _val: KvValue, collection: &str) -> Result<()> {
        Err(Error::Other(format!(
            "a write to `{collection}` inside a read of the key-value store"
        )))
    }

    fn delete(&mut self, _key: &str, collection: &str) -> Result<bool> {
        Err(Error::Other(format!(
            "a delete in `{collection}` inside a read of the key-value store"
        )))
    }

    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>> {
        self.note_missing(collection);
        Ok(match self.data.get(collection) {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(KvCollection::new()),
        })
    }
}

impl KvBackend for SimpleKVStore {
    fn read<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        let (out, missing) = {
            let guard = self.lock_read();
            let mut view = ReadView {
                data: &guard.data,
                missing: Vec::new(),
            };
            let out = f(&mut view);
            (out, view.missing)
        };
        if !missing.is_empty() {
            let mut guard = self.lock_write();
            for collection in &missing {
                guard.collection_mut(collection);
            }
        }
        out
    }

    fn write<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        let mut guard = self.lock_write();
        f(&mut *guard)
    }

    fn persist(&self, persist_path: &Path) -> Result<()> {
        SimpleKVStore::persist(self, persist_path)
    }
}

/// LlamaIndex's `SimpleKVStore`: collections of key → JSON object held in
/// memory, shared as `Arc<SimpleKVStore>` (all methods take `&self`).
///
/// Persisted as `{collection: {key: value}}` with Python's `json.dumps`
/// formatting (`", "` / `": "` separators, non-ASCII escaped), so a file it
/// writes is byte-identical to the one LlamaIndex writes for the same content.
#[derive(Debug, Default)]
pub struct SimpleKVStore {
    inner: RwLock<Collections>,
}

impl SimpleKVStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding `data` (LlamaIndex `SimpleKVStore.from_dict`).
    pub fn from_data(data: KvData) -> Self {
        Self {
            inner: RwLock::new(Collections { data }),
        }
    }

    // A panic while the lock was held cannot leave a half-applied change the
    // next caller could trip over (every mutation is a single map operation or
    // a prepared batch), so a poisoned lock is simply taken over.
    pub(crate) fn lock_read(&self) -> RwLockReadGuard<'_, Collections> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn lock_write(&self) -> RwLockWriteGuard<'_, Collections> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores `val` under `key` in `collection`, replacing what was there.
    pub fn put(&self, key: &str, val: KvValue, collection: &str) {
        self.lock_write().put(key, val, collection);
    }

    /// Stores several pairs in `collection`. An empty batch leaves a missing
    /// collection missing, as in Python.
    pub fn put_all(&self, kv_pairs: Vec<(String, KvValue)>, collection: &str) {
        if kv_pairs.is_empty() {
            return;
        }
        let mut guard = self.lock_write();
        let coll = guard.collection_mut(collection);
        for (key, val) in kv_pairs {
            coll.insert(key, val);
        }
    }

    /// The value under `key` in `collection`, if any.
    pub fn get(&self, key: &str, collection: &str) -> Option<KvValue> {
        // Reading the in-memory collections cannot fail.
        KvBackend::read(self, |c| Ok(c.get(key, collection)?.map(Cow::into_owned)))
            .ok()
            .flatten()
    }

    /// A copy of every key and value in `collection`.
    pub fn get_all(&self, collection: &str) -> KvCollection {
        KvBackend::read(self, |c| Ok(c.get_all(collection)?.into_owned())).unwrap_or_default()
    }

    /// Removes `key` from `collection`; whether it was there.
    pub fn delete(&self, key: &str, collection: &str) -> bool {
        self.lock_write().delete(key, collection)
    }

    /// A copy of every collection (LlamaIndex `to_dict`).
    pub fn to_dict(&self) -> KvData {
        self.lock_read().data.clone()
    }

    /// Writes the store to `w` as Python's `json.dumps` would.
    pub fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        write_python_json(w, &self.lock_read().data)
    }

    /// Writes the store to `persist_path` atomically (temporary file, then
    /// rename), streaming the JSON; the parent directory is created if needed.
    pub fn persist(&self, persist_path: &Path) -> Result<()> {
        tracing::debug!(path = %persist_path.display(), "persisting SimpleKVStore");
        write_atomic(persist_path, |w| self.write_json(w))
    }

    /// Loads a store persisted by [`SimpleKVStore::persist`] or by Python.
    /// A missing file is an [`Error::Io`], invalid JSON or a shape other than
    /// `{collection: {key: object}}` an [`Error::CorruptFile`]; both name the file.
    pub fn from_persist_path(persist_path: &Path) -> Result<Self> {
        tracing::debug!(path = %persist_path.display(), "loading SimpleKVStore");
        let data: KvData = read_json_file(persist_path)?;
        Ok(Self::from_data(data))
    }
}

/// The constructors of a store kept in a [`SimpleKVStore`] and persisted as
/// one JSON file (`SimpleDocumentStore`, `SimpleIndexStore`): `new`,
/// `from_kvstore`, `from_persist_dir` and `from_persist_path`, the last
/// checking every entry with the type's `validate` (an error text naming the
/// entry, reported as [`Error::CorruptFile`]).
macro_rules! simple_kv_store_constructors {
    ($store:ty, $namespace:literal, $file:literal, $what:literal) => {
        impl Default for $store {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $store {
            /// An empty store.
            pub fn new() -> Self {
                Self::from_kvstore(
                    std::sync::Arc::new($crate::storage::kvstore::SimpleKVStore::new()),
                    None,
                )
            }

            #[doc = concat!("A store over `kvstore`, its collections prefixed with `namespace` (default `\"", $namespace, "\"`).")]
            pub fn from_kvstore(
                kvstore: std::sync::Arc<$crate::storage::kvstore::SimpleKVStore>,
                namespace: Option<&str>,
            ) -> Self {
                Self::from_backend(kvstore, namespace)
            }

            #[doc = concat!("Loads `", $file, "` from `persist_dir`.")]
            pub fn from_persist_dir(persist_dir: &std::path::Path) -> $crate::Result<Self> {
                // The module's `DEFAULT_PERSIST_FNAME`, which `$file` spells.
                Self::from_persist_path(&persist_dir.join(DEFAULT_PERSIST_FNAME))
            }

            #[doc = concat!("Loads a store persisted by ragloom or LlamaIndex. Every ", $what, " is checked: a missing file is an [`Error::Io`](crate::Error::Io), anything unreadable an [`Error::CorruptFile`](crate::Error::CorruptFile) naming the file and entry.")]
            pub fn from_persist_path(persist_path: &std::path::Path) -> $crate::Result<Self> {
                let kv = $crate::storage::kvstore::SimpleKVStore::from_persist_path(persist_path)?;
                let store = Self::from_kvstore(std::sync::Arc::new(kv), None);
                store
                    .validate()
                    .map_err(|m| $crate::Error::corrupt(persist_path, m))?;
                Ok(store)
            }
        }
    };
}
pub(crate) use simple_kv_store_constructors;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::utils::to_python_json_string;
    use serde_json::json;

    fn obj(v: Value) -> KvValue {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn put_get_delete_get_all() {
        let kv = SimpleKVStore::new();
        kv.put("a", obj(json!({"x": 1})), "c1");
        kv.put("b", obj(json!({"x": 2})), "c1");
        kv.put("a", obj(json!({"x": 3})), DEFAULT_COLLECTION);
        assert_eq!(kv.get("a", "c1"), Some(obj(json!({"x": 1}))));
        assert_eq!(kv.get("a", DEFAULT_COLLECTION), Some(obj(json!({"x": 3}))));
        assert_eq!(kv.get("zz", "c1"), None);
        assert!(kv.delete("a", "c1"));
        assert!(!kv.delete("a", "c1"));
        let all = kv.get_all("c1");
        assert_eq!(all.keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn reads_create_missing_collections_like_python() {
        // Python's `_get_collection_mapping` creates the collection on any
        // access, so it shows up (empty) in the persisted file.
        let kv = SimpleKVStore::new();
        assert_eq!(kv.get("k", "first"), None);
        kv.put_all(Vec::new(), "never");
        assert!(!kv.delete("k", "second"));
        assert_eq!(
            to_python_json_string(&kv.to_dict()).unwrap(),
            r#"{"first": {}, "second": {}}"#
        );
    }

    #[test]
    fn delete_keeps_insertion_order() {
        let kv = SimpleKVStore::new();
        for k in ["a", "b", "c", "d"] {
            kv.put(k, KvValue::new(), "c");
        }
        kv.delete("b", "c");
        assert_eq!(kv.get_all("c").keys().collect::<Vec<_>>(), ["a", "c", "d"]);
    }

    #[test]
    fn python_json_format() {
        // Outputs of Python 3.11 `json.dumps` for the same values.
        let v = json!({"a": [1, 2.5, 1e-05, 1e16, 0.1, -0.0, 3.0], "é😀\u{7f}": "q\"\\\n\t\u{1}/",
                       "n": null, "t": true, "o": {}, "l": []});
        assert_eq!(
            to_python_json_string(&v).unwrap(),
            r#"{"a": [1, 2.5, 1e-05, 1e+16, 0.1, -0.0, 3.0], "\u00e9\ud83d\ude00\u007f": "q\"\\\n\t\u0001/", "n": null, "t": true, "o": {}, "l": []}"#
        );
    }
}
