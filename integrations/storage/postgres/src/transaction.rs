//! `PostgresTransaction`: one connection in one transaction, under the
//! writer's advisory lock, shared by the index's three stores.

use crate::PostgresStore;
use crate::kv::{KvTableName, PostgresKv};
use async_trait::async_trait;
use ragloom_common_postgres::PgSession;
use ragloom_core::Result;
use ragloom_core::storage::{StorageContext, StoreTransaction};
use std::sync::Arc;

/// An open transaction on a [`PostgresStore`]; rolled back if dropped uncommitted.
#[derive(Debug)]
pub struct PostgresTransaction {
    store: PostgresStore,
    session: PgSession,
    context: StorageContext,
}

impl PostgresTransaction {
    pub(crate) fn new(store: PostgresStore, session: PgSession) -> Self {
        let vectors = store.inner.vectors.in_session(session.clone());
        let context = store.context_in(&session, vectors);
        Self {
            store,
            session,
            context,
        }
    }

    /// The stores of this transaction: their reads see its writes.
    pub fn storage_context(&self) -> &StorageContext {
        &self.context
    }

    /// The docstore table's key-value collections inside this transaction,
    /// for state a program keeps beside the index (it commits with the rest).
    pub fn kv(&self) -> Arc<PostgresKv> {
        Arc::new(PostgresKv::new(
            self.session.clone(),
            self.store.inner.docstore.clone(),
        ))
    }

    /// A key-value table of LlamaIndex's layout, written inside this
    /// transaction (created first, on its own, if missing).
    pub async fn kv_table(&self, name: KvTableName) -> Result<PostgresKv> {
        // Created (if missing) outside this transaction: created inside, the
        // creation lock would be held until it ends, stalling every creator.
        self.store.kv_table(name.clone()).await?;
        Ok(PostgresKv::new(self.session.clone(), name))
    }

    /// The store this transaction writes.
    pub fn store(&self) -> &PostgresStore {
        &self.store
    }

    /// Makes every write of the transaction visible at once.
    pub async fn commit(self) -> Result<()> {
        self.session.end(true).await
    }

    /// Drops every write of the transaction.
    pub async fn rollback(self) -> Result<()> {
        self.session.end(false).await
    }
}

#[async_trait]
impl StoreTransaction for PostgresTransaction {
    fn storage_context(&self) -> StorageContext {
        self.context.clone()
    }

    async fn commit(self: Box<Self>) -> Result<()> {
        (*self).commit().await
    }

    async fn rollback(self: Box<Self>) -> Result<()> {
        (*self).rollback().await
    }
}

impl Drop for PostgresTransaction {
    fn drop(&mut self) {
        // Dropped without commit (an error, a cancelled task): nothing of it is kept.
        self.session.abandon();
    }
}
