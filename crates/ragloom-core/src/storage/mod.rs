//! Storage: the key-value store, the document store and the index store, in
//! LlamaIndex's on-disk format (`docstore.json`, `index_store.json`).

pub mod docstore;
pub mod index_store;
pub mod kvstore;

pub use docstore::{DocStore, RefDocInfo, SimpleDocumentStore};
pub use index_store::{IndexStore, SimpleIndexStore};
pub use kvstore::SimpleKVStore;

/// Key of a stored object's payload (LlamaIndex `DATA_KEY`).
pub const DATA_KEY: &str = "__data__";
/// Key of a stored object's type code (LlamaIndex `TYPE_KEY`).
pub const TYPE_KEY: &str = "__type__";
