//! `PostgresStore`: the three stores of one index on one server, and how to
//! open a transaction across them.

use crate::kv::{KvTableName, PostgresKv, create_table, quote_ident, require_table};
use crate::transaction::PostgresTransaction;
use crate::{PostgresDocumentStore, PostgresIndexStore};
use async_trait::async_trait;
use ragloom_common_postgres::{PROVIDER, PgSession};
use ragloom_core::storage::docstore::KvDocumentStore;
use ragloom_core::storage::index_store::KvIndexStore;
use ragloom_core::storage::{StorageContext, StoreTransaction, TransactionalStore};
use ragloom_core::vector_stores::DEFAULT_VECTOR_STORE;
use ragloom_core::{Error, Result};
use ragloom_vector_stores_postgres::PGVectorStore;
use std::fmt;
use std::sync::Arc;

/// The longest index name (see [`PostgresStoreBuilder::name`]).
pub const MAX_NAME: usize = 45;

/// Configures a [`PostgresStore`]: made by [`PostgresStore::builder`].
#[derive(Debug, Clone)]
pub struct PostgresStoreBuilder {
    url: String,
    schema: String,
    name: String,
    embed_dim: usize,
    hybrid_search: bool,
    text_search_config: String,
    allow_missing_embeddings: bool,
    kv_jsonb: bool,
    perform_setup: bool,
}

impl PostgresStoreBuilder {
    ragloom_core::setters!(
        /// Creates the schema and tables that are missing (default on, as in
        /// LlamaIndex); off, a missing table is an `Error::NotFound` and nothing
        /// is created (for readers without the right to create).
        perform_setup => perform_setup: bool,
        /// The embedding length (default 1536).
        embed_dim => embed_dim: usize,
        /// The vector table gets PostgreSQL full text (`text_search_tsv`), for
        /// text and hybrid queries (default off, as in LlamaIndex).
        hybrid_search => hybrid_search: bool,
        /// The text search configuration (default `english`).
        text_search_config => text_search_config: impl Into<String>,
        /// Nodes without an embedding are stored (found by text search only).
        allow_missing_embeddings => allow_missing_embeddings: bool,
        /// The key-value tables' `value` is `jsonb` (default `json`, as in LlamaIndex).
        kv_jsonb => kv_jsonb: bool,
    );

    /// The schema of every table (default `public`).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into().to_lowercase();
        self
    }

    /// The index's name: the vector table is `data_<name>`, the docstore
    /// `data_<name>_docstore`, the index store `data_<name>_indexstore`
    /// (default `llamaindex`; letters, digits and `_`, at most [`MAX_NAME`]).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into().to_lowercase();
        self
    }

    /// Connects, and creates the schema and tables that are missing.
    pub async fn build(self) -> Result<PostgresStore> {
        // The longest name derived from it, `data_<name>_indexstore:...`, must
        // stay apart from the others within PostgreSQL's 63 bytes.
        if self.name.is_empty() || self.name.len() > MAX_NAME {
            return Err(Error::InvalidInput(format!(
                "the index name `{}` must be 1 to {MAX_NAME} characters",
                self.name
            )));
        }
        let vectors = PGVectorStore::from_url(self.url.clone())
            .schema_name(self.schema.clone())
            .table_name(self.name.clone())
            .embed_dim(self.embed_dim)
            .hybrid_search(self.hybrid_search)
            .text_search_config(self.text_search_config.clone())
            .allow_missing_embeddings(self.allow_missing_embeddings)
            .perform_setup(self.perform_setup)
            .build()?;
        let table = |suffix: &str| KvTableName {
            schema: self.schema.clone(),
            table: format!("{}_{suffix}", self.name),
            use_jsonb: self.kv_jsonb,
        };
        let docstore = table("docstore");
        let index_store = table("indexstore");
        let session = PgSession::connect(vectors.connect_options()).await?;
        let tables = vec![docstore.clone(), index_store.clone()];
        let setup = self.perform_setup;
        session
            .run(move |conn| {
                Box::pin(async move {
                    for t in &tables {
                        if setup {
                            create_table(conn, t).await?;
                        } else {
                            require_table(conn, t).await?;
                        }
                    }
                    Ok(())
                })
            })
            .await?;
        vectors.initialize().await?;
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                vectors,
                docstore,
                index_store,
                session,
                name: self.name,
            }),
        })
    }
}

/// One index on a PostgreSQL server: `PGVectorStore`'s table and LlamaIndex's
/// docstore and index store tables. Cloning shares it.
#[derive(Clone)]
pub struct PostgresStore {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) vectors: PGVectorStore,
    pub(crate) docstore: KvTableName,
    pub(crate) index_store: KvTableName,
    /// For reads and single writes outside a transaction.
    pub(crate) session: PgSession,
    pub(crate) name: String,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("vectors", &self.inner.vectors)
            .field("docstore", &self.inner.docstore.display())
            .field("index_store", &self.inner.index_store.display())
            .finish()
    }
}

impl PostgresStore {
    /// A store on the server at `url` (`postgres://user:password@host:port/db`).
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder {
            url: url.into(),
            schema: "public".into(),
            name: "llamaindex".into(),
            embed_dim: 1536,
            hybrid_search: false,
            text_search_config: "english".into(),
            allow_missing_embeddings: false,
            kv_jsonb: false,
            perform_setup: true,
        }
    }

    /// The index's name (the vector table without `data_`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The docstore's table.
    pub fn docstore_table(&self) -> &KvTableName {
        &self.inner.docstore
    }

    /// The index store's table.
    pub fn index_store_table(&self) -> &KvTableName {
        &self.inner.index_store
    }

    /// The vector store, reading the last commit.
    pub fn vector_store(&self) -> Arc<PGVectorStore> {
        Arc::new(self.inner.vectors.clone())
    }

    /// The document store, reading the last commit.
    pub fn docstore(&self) -> Arc<PostgresDocumentStore> {
        Arc::new(KvDocumentStore::from_backend(self.kv(), None))
    }

    /// The index store, reading the last commit.
    pub fn index_store(&self) -> Arc<PostgresIndexStore> {
        Arc::new(KvIndexStore::from_backend(
            Arc::new(PostgresKv::new(
                self.inner.session.clone(),
                self.inner.index_store.clone(),
            )),
            None,
        ))
    }

    /// The docstore table's key-value collections, outside any transaction
    /// (inside one use [`PostgresTransaction::kv`]): for state a program keeps
    /// beside the index, in collections of its own.
    pub fn kv(&self) -> Arc<PostgresKv> {
        Arc::new(PostgresKv::new(
            self.inner.session.clone(),
            self.inner.docstore.clone(),
        ))
    }

    /// A storage context over these tables, whose
    /// [`transaction`](StorageContext::transaction) is a PostgreSQL transaction.
    pub fn storage_context(&self) -> StorageContext {
        let context = self.context_in(&self.inner.session, self.inner.vectors.clone());
        let transactions: Arc<dyn TransactionalStore> = Arc::new(self.clone());
        context.with_transactions(transactions)
    }

    pub(crate) fn context_in(&self, session: &PgSession, vectors: PGVectorStore) -> StorageContext {
        let mut context = StorageContext::from_defaults();
        context.docstore = Arc::new(KvDocumentStore::from_backend(
            Arc::new(PostgresKv::new(
                session.clone(),
                self.inner.docstore.clone(),
            )),
            None,
        ));
        context.index_store = Arc::new(KvIndexStore::from_backend(
            Arc::new(PostgresKv::new(
                session.clone(),
                self.inner.index_store.clone(),
            )),
            None,
        ));
        context
            .vector_stores
            .insert(DEFAULT_VECTOR_STORE.to_string(), Arc::new(vectors));
        context
    }

    /// Starts a transaction, waiting while another writer of this store
    /// (in any process) holds its advisory lock.
    pub async fn begin(&self) -> Result<PostgresTransaction> {
        let key = format!(
            "ragloom-store:{}.{}",
            self.inner.docstore.schema, self.inner.name
        );
        self.begin_locked(&key, true).await
    }

    /// Starts a transaction holding the advisory lock named `lock` until it
    /// ends: with `wait`, waits for another holder; without, fails at once
    /// with an error saying another process is writing.
    pub async fn begin_locked(&self, lock: &str, wait: bool) -> Result<PostgresTransaction> {
        let session = PgSession::begin(self.inner.vectors.connect_options()).await?;
        let key = crate::admin::lock_key(lock);
        let taken: bool = session
            .run(move |conn| {
                Box::pin(async move {
                    let sql = if wait {
                        "SELECT pg_advisory_xact_lock($1) IS NOT NULL"
                    } else {
                        "SELECT pg_try_advisory_xact_lock($1)"
                    };
                    sqlx::query_scalar(sql)
                        .bind(key)
                        .fetch_one(&mut *conn)
                        .await
                        .map_err(|e| {
                            Error::provider(PROVIDER, format!("taking the write lock: {e}"), e)
                        })
                })
            })
            .await?;
        if !taken {
            session.abandon();
            return Err(Error::Other(format!(
                "another process is writing to this index (PostgreSQL advisory lock `{lock}`)"
            )));
        }
        Ok(PostgresTransaction::new(self.clone(), session))
    }

    /// Bytes the index's tables take on the server (with their indexes and TOAST).
    pub async fn size_bytes(&self) -> Result<u64> {
        let names = self.qualified_tables();
        self.fresh_session()
            .await?
            .run(move |conn| {
                Box::pin(async move {
                    let n: i64 = sqlx::query_scalar(
                        "SELECT COALESCE(sum(pg_total_relation_size(to_regclass(t))), 0)::bigint \
                         FROM unnest($1::text[]) AS t",
                    )
                    .bind(names)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(|e| {
                        Error::provider(PROVIDER, format!("reading table sizes: {e}"), e)
                    })?;
                    Ok(u64::try_from(n).unwrap_or(0))
                })
            })
            .await
    }

    pub(crate) fn qualified_tables(&self) -> Vec<String> {
        let v = &self.inner.vectors;
        vec![
            format!(
                "{}.{}",
                quote_ident(v.schema_name()),
                quote_ident(&format!("data_{}", v.table_name()))
            ),
            format!(
                "{}.{}",
                quote_ident(&self.inner.docstore.schema),
                quote_ident(&format!("data_{}", self.inner.docstore.table))
            ),
            format!(
                "{}.{}",
                quote_ident(&self.inner.index_store.schema),
                quote_ident(&format!("data_{}", self.inner.index_store.table))
            ),
        ]
    }

    /// Drops the index's three tables (everything it holds), in one transaction.
    pub async fn drop_tables(&self) -> Result<()> {
        crate::admin::drop_tables(
            self.inner.vectors.connect_options(),
            self.qualified_tables(),
        )
        .await
    }

    /// A key-value table of LlamaIndex's layout beside the index (created if
    /// missing), outside any transaction.
    pub async fn kv_table(&self, name: KvTableName) -> Result<PostgresKv> {
        let session = self.fresh_session().await?;
        let t = name.clone();
        session
            .run(move |conn| Box::pin(async move { create_table(conn, &t).await }))
            .await?;
        Ok(PostgresKv::new(session, name))
    }

    /// A connection of its own, for statements that must not run inside a
    /// key-value write of the shared one.
    async fn fresh_session(&self) -> Result<PgSession> {
        PgSession::connect(self.inner.vectors.connect_options()).await
    }
}

#[async_trait]
impl TransactionalStore for PostgresStore {
    async fn begin(&self) -> Result<Box<dyn StoreTransaction>> {
        Ok(Box::new(PostgresStore::begin(self).await?))
    }
}
