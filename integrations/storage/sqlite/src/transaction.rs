//! One ingest, one transaction: `BEGIN IMMEDIATE` on the writer (other
//! processes' writers wait), every write through the transaction's stores, then `COMMIT`.

use crate::db::{Db, Scope, TxState};
use crate::{SqliteDocumentStore, SqliteKv, SqliteStore};
use async_trait::async_trait;
use ragloom_core::error::{Error, Result};
use ragloom_core::storage::{StorageContext, StoreTransaction, TransactionalStore};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

impl SqliteStore {
    /// Starts a transaction, waiting for this process's other transaction
    /// and for other processes' writers (up to [`crate::SqliteOptions::busy_timeout`]).
    /// The same as [`StorageContext::transaction`] on this store's context,
    /// typed, so a program can also reach the transaction's [`SqliteKv`].
    pub async fn begin(&self) -> Result<SqliteTransaction> {
        // One transaction at a time in this process; other processes wait in SQLite.
        let permit = Arc::clone(&self.db.turn).lock_owned().await;
        let db = Arc::clone(&self.db);
        tokio::task::spawn_blocking(move || db.begin_on_writer())
            .await
            .map_err(|e| Error::failed("starting a transaction", e))??;
        self.db.in_tx.store(true, Ordering::SeqCst);
        let state = Arc::new(TxState {
            ended: AtomicBool::new(false),
            permit: Mutex::new(Some(permit)),
        });
        let scope = Scope::Tx(Arc::clone(&state));
        let mut context = self.context_for(scope.clone());
        // The context's docstore, also kept typed for `prepare`.
        let docstore = Arc::new(SqliteDocumentStore::new(Arc::clone(&self.db), scope));
        context.docstore = docstore.clone();
        Ok(SqliteTransaction {
            db: Arc::clone(&self.db),
            state,
            context,
            docstore,
        })
    }
}

#[async_trait]
impl TransactionalStore for SqliteStore {
    async fn begin(&self) -> Result<Box<dyn StoreTransaction>> {
        Ok(Box::new(SqliteStore::begin(self).await?))
    }
}

/// An open transaction on a [`SqliteStore`]; rolled back if dropped uncommitted.
#[derive(Debug)]
pub struct SqliteTransaction {
    db: Arc<Db>,
    state: Arc<TxState>,
    context: StorageContext,
    docstore: Arc<SqliteDocumentStore>,
}

impl SqliteTransaction {
    /// The stores of this transaction: their reads see its writes.
    pub fn storage_context(&self) -> &StorageContext {
        &self.context
    }

    /// The document store of this transaction, typed (the context's own):
    /// for [`SqliteDocumentStore::prepare`] and its writes.
    pub fn docstore(&self) -> &Arc<SqliteDocumentStore> {
        &self.docstore
    }

    /// The file's key-value collections inside this transaction, for state a
    /// program keeps beside the index (it commits with the rest).
    pub fn kv(&self) -> Arc<SqliteKv> {
        Arc::new(SqliteKv {
            db: Arc::clone(&self.db),
            scope: Scope::Tx(Arc::clone(&self.state)),
        })
    }

    /// Merges the keyword index's segments (one per batch of added nodes)
    /// into one list per term and drops deleted nodes' postings, where
    /// there are deleted nodes or more than a few segments: call it at the
    /// end of a long ingest, so queries read a few rows per term at most.
    pub fn merge_keyword_index(&self) -> Result<()> {
        let scope = Scope::Tx(Arc::clone(&self.state));
        self.db
            .write(&scope, |c| crate::keyword::merge_all(&self.db.path, c))
    }

    /// Makes every write of the transaction durable at once, then brings
    /// the vector index up to it when due (see
    /// [`crate::SqliteStore::update_vector_index`]).
    pub async fn commit(self) -> Result<()> {
        self.finish(true)?;
        crate::ann::after_commit(&self.db).await;
        Ok(())
    }

    /// Drops every write of the transaction.
    pub async fn rollback(self) -> Result<()> {
        self.finish(false)
    }

    fn finish(&self, commit: bool) -> Result<()> {
        if self.state.ended.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let out = self.db.end_on_writer(commit);
        self.db.in_tx.store(false, Ordering::SeqCst);
        // Let the next transaction of this process start.
        self.state
            .permit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        out
    }
}

#[async_trait]
impl StoreTransaction for SqliteTransaction {
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

impl Drop for SqliteTransaction {
    fn drop(&mut self) {
        // Dropped without commit (an error, a cancelled task): nothing of it is kept.
        if let Err(e) = self.finish(false) {
            tracing::warn!(error = %e, "rolling back a dropped transaction");
        }
    }
}
