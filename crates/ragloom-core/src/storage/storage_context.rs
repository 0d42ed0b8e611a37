//! `StorageContext`: the docstore, index store, vector stores and graph store
//! of an index, persisted to and loaded from one folder in LlamaIndex's layout.

use super::docstore::{DocStore, SimpleDocumentStore};
use super::graph_store::{GRAPH_STORE_FNAME, SimpleGraphStore};
use super::index_store::{IndexStore, SimpleIndexStore};
use super::transaction::{StorageTransaction, TransactionalStore};
use crate::error::{Error, Result};
pub use crate::vector_stores::{DEFAULT_PERSIST_DIR, DEFAULT_VECTOR_STORE, NAMESPACE_SEP};
use crate::vector_stores::{DEFAULT_PERSIST_FNAME, SimpleVectorStore, VectorStore};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The docstore file.
pub const DOCSTORE_FNAME: &str = "docstore.json";
/// The index store file.
pub const INDEX_STORE_FNAME: &str = "index_store.json";
/// Suffix of vector store files (`{namespace}__vector_store.json`).
pub const VECTOR_STORE_FNAME: &str = DEFAULT_PERSIST_FNAME;
/// Namespace of the image vector store.
pub const IMAGE_VECTOR_STORE: &str = "image";

/// Where an index keeps its nodes, structure and vectors.
#[derive(Clone, Debug)]
pub struct StorageContext {
    /// Nodes and documents by id.
    pub docstore: Arc<dyn DocStore>,
    /// Index structures by index id.
    pub index_store: Arc<dyn IndexStore>,
    /// Vector stores by namespace (`default`, `image`, ...).
    pub vector_stores: BTreeMap<String, Arc<dyn VectorStore>>,
    /// The graph store.
    pub graph_store: Arc<SimpleGraphStore>,
    /// What makes [`transaction`](Self::transaction) atomic, when the stores
    /// can (see [`with_transactions`](Self::with_transactions)).
    pub transactions: Option<Arc<dyn TransactionalStore>>,
}

impl Default for StorageContext {
    fn default() -> Self {
        Self::from_defaults()
    }
}

impl StorageContext {
    /// In-memory simple stores, as LlamaIndex's `StorageContext.from_defaults()`.
    pub fn from_defaults() -> Self {
        let mut vector_stores: BTreeMap<String, Arc<dyn VectorStore>> = BTreeMap::new();
        vector_stores.insert(
            DEFAULT_VECTOR_STORE.into(),
            Arc::new(SimpleVectorStore::new()),
        );
        vector_stores.insert(
            IMAGE_VECTOR_STORE.into(),
            Arc::new(SimpleVectorStore::new()),
        );
        Self {
            docstore: Arc::new(SimpleDocumentStore::new()),
            index_store: Arc::new(SimpleIndexStore::new()),
            vector_stores,
            graph_store: Arc::new(SimpleGraphStore::default()),
            transactions: None,
        }
    }

    /// This context with `transactions` making its
    /// [`transaction`](Self::transaction)s atomic; the stores must be the ones
    /// `transactions` writes through (a store crate's `storage_context()` sets both).
    pub fn with_transactions(mut self, transactions: Arc<dyn TransactionalStore>) -> Self {
        self.transactions = Some(transactions);
        self
    }

    /// Starts a transaction: write through its
    /// [`storage_context`](StorageTransaction::storage_context), then
    /// [`commit`](StorageTransaction::commit). With a transactional store
    /// (the embedded SQLite store) the writes land together or not at all,
    /// and readers of this context see none of them until the commit; with
    /// the in-memory stores they apply as they are made.
    pub async fn transaction(&self) -> Result<StorageTransaction> {
        let inner = match &self.transactions {
            Some(t) => Some(t.begin().await?),
            None => None,
        };
        Ok(StorageTransaction::new(inner, self.clone()))
    }

    /// Default stores, with `vector_store` as the text vector store.
    pub fn with_vector_store(vector_store: Arc<dyn VectorStore>) -> Self {
        let mut sc = Self::from_defaults();
        sc.vector_stores
            .insert(DEFAULT_VECTOR_STORE.into(), vector_store);
        sc
    }

    /// The text vector store.
    pub fn vector_store(&self) -> Result<Arc<dyn VectorStore>> {
        self.vector_stores
            .get(DEFAULT_VECTOR_STORE)
            .cloned()
            .ok_or_else(|| {
                Error::NotFound("the storage context has no `default` vector store".into())
            })
    }

    /// Writes every store under `persist_dir` in LlamaIndex's file layout
    /// (`docstore.json`, `index_store.json`, `graph_store.json`,
    /// `{namespace}__vector_store.json`), each file atomically. The simple
    /// stores write on Tokio's blocking pool, so the docstore and the vector
    /// store are written at the same time.
    pub async fn persist(&self, persist_dir: impl AsRef<Path>) -> Result<()> {
        let dir = persist_dir.as_ref();
        tracing::info!(dir = %dir.display(), "persisting storage context");
        std::fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
        let docstore_path = dir.join(DOCSTORE_FNAME);
        let index_store_path = dir.join(INDEX_STORE_FNAME);
        let vector_paths: Vec<_> = self
            .vector_stores
            .iter()
            .map(|(namespace, store)| {
                let path = dir.join(format!("{namespace}{NAMESPACE_SEP}{VECTOR_STORE_FNAME}"));
                (store, path)
            })
            .collect();
        // The docstore first: its future hands the work to another thread
        // at once, and the vector stores are written meanwhile.
        let docstore = self.docstore.persist(&docstore_path);
        let vectors = futures::future::try_join_all(
            vector_paths.iter().map(|(store, path)| store.persist(path)),
        );
        futures::future::try_join(docstore, vectors).await?;
        self.index_store.persist(&index_store_path).await?;
        self.graph_store.persist(&dir.join(GRAPH_STORE_FNAME))?;
        Ok(())
    }

    /// Loads the stores LlamaIndex (or ragloom) persisted under `persist_dir`.
    /// A missing or corrupt file is an error naming it; a missing graph store
    /// is an empty one.
    pub async fn from_persist_dir(persist_dir: impl AsRef<Path>) -> Result<Self> {
        Self::load(persist_dir.as_ref(), None).await
    }

    /// Like [`from_persist_dir`](Self::from_persist_dir), with an external
    /// vector store (Qdrant, pgvector, ...) in place of a persisted simple one.
    pub async fn from_persist_dir_with_vector_store(
        persist_dir: impl AsRef<Path>,
        vector_store: Arc<dyn VectorStore>,
    ) -> Result<Self> {
        Self::load(persist_dir.as_ref(), Some(vector_store)).await
    }

    async fn load(dir: &Path, vector_store: Option<Arc<dyn VectorStore>>) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::io(
                "opening storage directory",
                dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
            ));
        }
        // The docstore and the vector stores are the big files: read them on
        // two threads.
        let docstore_path = dir.join(DOCSTORE_FNAME);
        let (docstore, vector_stores) = std::thread::scope(|scope| {
            let docstore = scope.spawn(|| SimpleDocumentStore::from_persist_path(&docstore_path));
            let vector_stores = Self::load_vector_stores(dir, vector_store.is_some());
            let docstore = docstore.join().unwrap_or_else(|_| {
                Err(Error::Other(format!(
                    "loading {} panicked",
                    docstore_path.display()
                )))
            });
            (docstore, vector_stores)
        });
        let (docstore, mut vector_stores) = (docstore?, vector_stores?);
        let index_store = SimpleIndexStore::from_persist_path(&dir.join(INDEX_STORE_FNAME))?;
        let graph_path = dir.join(GRAPH_STORE_FNAME);
        let graph_store = if graph_path.exists() {
            SimpleGraphStore::from_persist_path(&graph_path)?
        } else {
            SimpleGraphStore::default()
        };
        match vector_store {
            Some(vs) => {
                vector_stores.insert(DEFAULT_VECTOR_STORE.into(), vs);
            }
            None if !vector_stores.contains_key(DEFAULT_VECTOR_STORE) => {
                let path = dir.join(format!(
                    "{DEFAULT_VECTOR_STORE}{NAMESPACE_SEP}{VECTOR_STORE_FNAME}"
                ));
                return Err(Error::io(
                    "reading",
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no default vector store was persisted here",
                    ),
                ));
            }
            None => {}
        }
        Ok(Self {
            docstore: Arc::new(docstore),
            index_store: Arc::new(index_store),
            vector_stores,
            graph_store: Arc::new(graph_store),
            transactions: None,
        })
    }

    /// The simple vector stores persisted in `dir`, by namespace; the default
    /// one is skipped when `external_default` (another store replaces it).
    fn load_vector_stores(
        dir: &Path,
        external_default: bool,
    ) -> Result<BTreeMap<String, Arc<dyn VectorStore>>> {
        let mut vector_stores: BTreeMap<String, Arc<dyn VectorStore>> = BTreeMap::new();
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io("listing", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("listing", dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(VECTOR_STORE_FNAME) || name.starts_with('.') {
                continue;
            }
            // Older LlamaIndex wrote a bare `vector_store.json` for the default store.
            let namespace = match name.split_once(NAMESPACE_SEP) {
                Some((ns, _)) => ns.to_string(),
                None => DEFAULT_VECTOR_STORE.to_string(),
            };
            if namespace == DEFAULT_VECTOR_STORE && external_default {
                continue;
            }
            vector_stores.insert(
                namespace,
                Arc::new(SimpleVectorStore::from_persist_path(entry.path())?),
            );
        }
        Ok(vector_stores)
    }
}
