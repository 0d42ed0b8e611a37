//! Durable indexes in PostgreSQL: a build is three tables in LlamaIndex's
//! layouts, named `rl_<source hash>_<settings fingerprint>` — `data_<name>`
//! (PGVectorStore, with full text), `data_<name>_docstore` and
//! `data_<name>_indexstore`. The table `data_ragloom_indexes` says which
//! build is live for each source; it is updated in the sync's own
//! transaction, so a build becomes live whole. Writers of a source take an
//! advisory lock, so one on another machine waits too.

use crate::{
    KvTableName, PostgresEmbeddingCache, PostgresKv, PostgresStore, PostgresTransaction,
    WriterLock, drop_index, index_names,
};
use async_trait::async_trait;
use ragloom_core::durable::{
    BuildRequest, BuildTransaction, DynKv, IndexBuild, IndexDir, IndexError, IndexLocation,
    SimpleStores, StoreInfo, WriterGuard, build_prefix, check_manifest_source, copy_collections,
    drop_builds, embedded_vectors, live_entry, live_if_named, own_build_name,
};
use ragloom_core::embeddings::{Embedding, EmbeddingCacheStore};
use ragloom_core::error::{Error, Result};
use ragloom_core::indices::VectorStoreIndex;
use ragloom_core::retrievers::Retriever;
use ragloom_core::schema::Node;
use ragloom_core::storage::StorageContext;
use ragloom_core::storage::docstore::DocStore;
use ragloom_core::storage::kvstore::{KvBackend, KvValue};
use ragloom_core::vector_stores::{MetadataFilters, VectorStore, VectorStoreQueryMode};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

/// The registry's table and its one collection.
const REGISTRY_TABLE: &str = "ragloom_indexes";
const REGISTRY: &str = "ragloom/indexes";

/// Durable indexes in a PostgreSQL schema (with pgvector).
#[derive(Clone)]
pub struct PostgresLocation {
    url: String,
    schema: String,
}

impl std::fmt::Debug for PostgresLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password.
        f.write_str(&self.label())
    }
}

impl PostgresLocation {
    /// The schema `schema` of the server at `url`.
    pub fn new(url: impl Into<String>, schema: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            schema: schema.into(),
        }
    }

    fn registry_name(&self) -> KvTableName {
        KvTableName {
            schema: self.schema.clone(),
            table: REGISTRY_TABLE.into(),
            use_jsonb: false,
        }
    }

    /// This source's registry entry: its live build's name and vectors' length.
    fn read_entry(registry: &PostgresKv, key: &str) -> Result<Option<(String, usize)>> {
        registry.read(|t| {
            t.get(key, REGISTRY)?
                .map(|v| {
                    let entry = serde_json::Value::Object(v.into_owned());
                    live_entry(&entry, &format!("the registry entry of {key}"))
                })
                .transpose()
        })
    }

    /// The build `name`; with `setup`, its missing tables are created (for
    /// writers), else a missing one is `Error::NotFound`.
    async fn store(&self, name: &str, embed_dim: usize, setup: bool) -> Result<PostgresStore> {
        PostgresStore::builder(&self.url)
            .schema(&self.schema)
            .name(name)
            .embed_dim(embed_dim.max(1))
            .hybrid_search(true)
            .allow_missing_embeddings(true)
            .perform_setup(setup)
            .build()
            .await
    }

    fn build(&self, store: PostgresStore, embed_dim: usize, key: &str) -> PostgresBuild {
        PostgresBuild {
            store,
            embed_dim,
            location: self.clone(),
            key: key.to_string(),
        }
    }

    async fn drop_others(&self, key: &str, keep: Option<&str>) -> Result<Vec<(String, String)>> {
        let names = index_names(&self.url, &self.schema, &build_prefix(key)).await?;
        Ok(drop_builds(names, keep, |name| async move {
            drop_index(&self.url, &self.schema, &name).await
        })
        .await)
    }
}

#[async_trait]
impl IndexLocation for PostgresLocation {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn label(&self) -> String {
        let schema = &self.schema;
        match ragloom_common_postgres::connect_options(&self.url) {
            Ok(o) => format!(
                "postgres://{}@{}:{}/{} (schema {schema})",
                o.get_username(),
                o.get_host(),
                o.get_port(),
                o.get_database().unwrap_or(o.get_username())
            ),
            Err(_) => format!("postgres://... (schema {schema})"),
        }
    }

    async fn lock_writer(
        &self,
        _dir: &IndexDir,
        key: &str,
        no_wait: bool,
        on_wait: &(dyn Fn() + Send + Sync),
    ) -> Result<WriterGuard> {
        let name = format!("ragloom-source:{}:{key}", self.schema);
        let acquire = WriterLock::acquire(&self.url, &name, !no_wait);
        tokio::pin!(acquire);
        let taken = tokio::select! {
            r = &mut acquire => r,
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                on_wait();
                acquire.await
            }
        }?;
        let lock = taken.ok_or(IndexError::WriterBusy)?;
        // The registry exists before any sync's transaction: creating it
        // inside one would hold the schema's creation lock until its commit.
        PostgresKv::connect(&self.url, self.registry_name()).await?;
        Ok(WriterGuard::new(lock))
    }

    async fn open_live(
        &self,
        _dir: &IndexDir,
        key: &str,
        _no_wait: bool,
        rebuild_missing: bool,
    ) -> Result<Option<Arc<dyn IndexBuild>>> {
        // Readers create nothing.
        let Some(registry) = PostgresKv::open_existing(&self.url, self.registry_name()).await?
        else {
            return Ok(None);
        };
        let Some((name, dim)) = Self::read_entry(&registry, key)? else {
            return Ok(None);
        };
        let store = match self.store(&name, dim, false).await {
            Ok(s) => s,
            // Tables dropped under the registry: a sync rebuilds them.
            Err(Error::NotFound(_)) if rebuild_missing => return Ok(None),
            Err(Error::NotFound(what)) => {
                return Err(IndexError::Damaged {
                    what: format!("the index of {key} is damaged: {what}"),
                }
                .into());
            }
            Err(e) => return Err(e),
        };
        let build = self.build(store, dim, key);
        check_manifest_source(
            &*build.kv(),
            key,
            &format!("the tables of {name}"),
            "; use another ?schema= for one of the two",
        )?;
        Ok(Some(Arc::new(build)))
    }

    async fn open_build(
        &self,
        _dir: &IndexDir,
        key: &str,
        live: Option<Arc<dyn IndexBuild>>,
        request: BuildRequest<'_>,
    ) -> Result<Arc<dyn IndexBuild>> {
        let name = request.build_name(key);
        if let Some(live) = live_if_named::<PostgresBuild>(live, &name) {
            return Ok(live);
        }
        let dim = request.dim().await?;
        Ok(Arc::new(self.build(
            self.store(&name, dim, true).await?,
            dim,
            key,
        )))
    }

    async fn collect_garbage(
        &self,
        _dir: &IndexDir,
        key: &str,
        keep: Option<&dyn IndexBuild>,
    ) -> Result<Vec<(String, String)>> {
        let keep = own_build_name::<PostgresBuild>(keep);
        self.drop_others(key, keep.as_deref()).await
    }

    async fn clear(&self, _dir: &IndexDir, key: &str) -> Result<Vec<(String, String)>> {
        if let Some(registry) = PostgresKv::open_existing(&self.url, self.registry_name()).await? {
            registry.write(|t| t.delete(key, REGISTRY).map(|_| ()))?;
        }
        // The schema's shared embedding cache stays.
        self.drop_others(key, None).await
    }

    async fn embedding_cache(
        &self,
        _dir: &IndexDir,
    ) -> Result<Option<Arc<dyn EmbeddingCacheStore>>> {
        // A table of the schema, shared by every source and machine using it.
        Ok(Some(Arc::new(
            PostgresEmbeddingCache::connect(&self.url, &self.schema).await?,
        )))
    }
}

/// One PostgreSQL build.
#[derive(Clone, Debug)]
pub struct PostgresBuild {
    store: PostgresStore,
    embed_dim: usize,
    location: PostgresLocation,
    key: String,
}

impl PostgresBuild {
    /// The build's store.
    pub fn store(&self) -> &PostgresStore {
        &self.store
    }
}

#[async_trait]
impl IndexBuild for PostgresBuild {
    fn name(&self) -> String {
        self.store.name().to_string()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        self.store.kv()
    }

    fn docstore(&self) -> Arc<dyn DocStore> {
        self.store.docstore()
    }

    fn keyword_kind(&self) -> &'static str {
        "fulltext"
    }

    fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> Result<Arc<dyn Retriever>> {
        let vectors: Arc<dyn VectorStore> = self.store.vector_store();
        ragloom_core::durable::store_keyword_retriever(
            vectors,
            VectorStoreQueryMode::TextSearch,
            top_k,
            filters,
        )
    }

    async fn vector_index(&self, embed: Arc<dyn Embedding>) -> Result<VectorStoreIndex> {
        VectorStoreIndex::from_vector_store(self.store.vector_store(), embed)
    }

    async fn info(&self, _dir: &IndexDir) -> Result<StoreInfo> {
        Ok(StoreInfo {
            kind: "postgres",
            path: format!(
                "{} tables {}.data_{name}, data_{name}_docstore, data_{name}_indexstore",
                self.location.label(),
                self.store.docstore_table().schema,
                name = self.store.name()
            ),
            size_bytes: self.store.size_bytes().await?,
            points: None,
            vector_index: None,
        })
    }

    async fn to_simple(
        &self,
        doc_collections: &[String],
        index_collections: &[String],
    ) -> Result<SimpleStores> {
        let index_kv = self.store.index_store();
        let nodes = self
            .store
            .vector_store()
            .get_nodes_filtered(None, None)
            .await?;
        Ok((
            copy_collections(&*self.store.kv(), doc_collections)?,
            copy_collections(&**index_kv.kvstore(), index_collections)?,
            embedded_vectors(nodes).await?,
        ))
    }

    async fn begin(
        &self,
        _on_wait: &(dyn Fn() + Send + Sync),
    ) -> Result<Box<dyn BuildTransaction>> {
        // The writer lock taken before did the waiting.
        Ok(Box::new(PostgresBuildTransaction {
            tx: self.store.begin().await?,
            build: self.clone(),
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A sync's transaction on a PostgreSQL build.
#[derive(Debug)]
struct PostgresBuildTransaction {
    tx: PostgresTransaction,
    build: PostgresBuild,
}

#[async_trait]
impl BuildTransaction for PostgresBuildTransaction {
    fn storage_context(&self) -> StorageContext {
        self.tx.storage_context().clone()
    }

    fn kv(&self) -> Arc<dyn DynKv> {
        self.tx.kv()
    }

    fn text_rows(&self) -> bool {
        // Full text reads the vector table.
        true
    }

    fn check_document(&self, document: &Node) -> std::result::Result<(), String> {
        // PostgreSQL's text and JSON types cannot hold U+0000.
        let in_metadata =
            || serde_json::to_string(&document.metadata).is_ok_and(|m| m.contains("\\u0000"));
        if document.text.contains('\0') || in_metadata() {
            Err("it holds a NUL character, which PostgreSQL cannot store".into())
        } else {
            Ok(())
        }
    }

    async fn commit(self: Box<Self>) -> Result<()> {
        let this = *self;
        let mut entry = KvValue::new();
        entry.insert("name".into(), this.tx.store().name().into());
        entry.insert("embed_dim".into(), this.build.embed_dim.into());
        let registry = this
            .tx
            .kv_table(this.build.location.registry_name())
            .await?;
        registry.write(|t| t.put(&this.build.key, entry, REGISTRY))?;
        // The build it replaces stays until the next sync of the source
        // drops it, so queries reading it now finish.
        this.tx.commit().await
    }
}
