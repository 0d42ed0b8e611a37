//! Storage: the key-value store, the document store and the index store, in
//! LlamaIndex's on-disk format (`docstore.json`, `index_store.json`), gathered in a `StorageContext`.

pub mod docstore;
pub mod graph_store;
pub mod index_store;
pub mod kvstore;
pub mod storage_context;
pub mod transaction;

pub use docstore::{DocStore, KvDocumentStore, RefDocInfo, SimpleDocumentStore};
pub use graph_store::SimpleGraphStore;
pub use index_store::{IndexStore, KvIndexStore, SimpleIndexStore};
pub use kvstore::{KvBackend, KvTable, SimpleKVStore};
pub use storage_context::StorageContext;
pub use transaction::{StorageTransaction, StoreTransaction, TransactionalStore};

/// Key of a stored object's payload (LlamaIndex `DATA_KEY`).
pub const DATA_KEY: &str = "__data__";
/// Key of a stored object's type code (LlamaIndex `TYPE_KEY`).
pub const TYPE_KEY: &str = "__type__";
