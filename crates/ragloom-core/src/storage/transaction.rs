//! Transactions over a storage context: writes that land together or not at
//! all, for stores that can make them so (the embedded SQLite store, PostgreSQL).

use super::storage_context::StorageContext;
use crate::error::Result;
use async_trait::async_trait;
use std::fmt;

/// A store that can make several writes atomic. Attached to a
/// [`StorageContext`] with [`StorageContext::with_transactions`].
#[async_trait]
pub trait TransactionalStore: Send + Sync + fmt::Debug {
    /// Starts a transaction. Until it ends, readers of the store keep seeing
    /// the last commit; a second transaction waits for this one.
    async fn begin(&self) -> Result<Box<dyn StoreTransaction>>;
}

/// An open transaction of a [`TransactionalStore`]. Dropping it without
/// [`commit`](Self::commit) rolls it back.
#[async_trait]
pub trait StoreTransaction: Send + Sync + fmt::Debug {
    /// The stores as this transaction sees them: what is written through them
    /// is part of it, and what is read includes what it wrote.
    fn storage_context(&self) -> StorageContext;
    /// Makes every write of the transaction visible at once.
    async fn commit(self: Box<Self>) -> Result<()>;
    /// Discards every write of the transaction.
    async fn rollback(self: Box<Self>) -> Result<()>;
}

/// A transaction on a [`StorageContext`] (see [`StorageContext::transaction`]).
///
/// On a context without a transactional store (the in-memory stores) it is a
/// pass-through: writes through [`storage_context`](Self::storage_context)
/// apply at once and [`commit`](Self::commit) does nothing; [`is_atomic`](Self::is_atomic) says which.
#[derive(Debug)]
pub struct StorageTransaction {
    inner: Option<Box<dyn StoreTransaction>>,
    context: StorageContext,
}

impl StorageTransaction {
    pub(crate) fn new(inner: Option<Box<dyn StoreTransaction>>, context: StorageContext) -> Self {
        let context = match &inner {
            Some(tx) => tx.storage_context(),
            None => context,
        };
        Self { inner, context }
    }

    /// The stores to write through; they see the transaction's own writes.
    pub fn storage_context(&self) -> &StorageContext {
        &self.context
    }

    /// Whether the writes land together (a transactional store) or one by one.
    pub fn is_atomic(&self) -> bool {
        self.inner.is_some()
    }

    /// Makes every write visible at once.
    pub async fn commit(mut self) -> Result<()> {
        match self.inner.take() {
            Some(tx) => tx.commit().await,
            None => Ok(()),
        }
    }

    /// Discards every write (on a transactional store; a pass-through has
    /// applied them already).
    pub async fn rollback(mut self) -> Result<()> {
        match self.inner.take() {
            Some(tx) => tx.rollback().await,
            None => Ok(()),
        }
    }
}
