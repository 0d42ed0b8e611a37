//! The file's `embedding_cache` table as an [`EmbeddingCacheStore`], for
//! core's `CachedEmbedding`: vectors by key, each batch committed at once.

use crate::SqliteStore;
use crate::db::Scope;
use crate::vector_store::{from_blob, to_blob};
use async_trait::async_trait;
use ragloom_core::embeddings::EmbeddingCacheStore;
use ragloom_core::error::Result;
use rusqlite::{OptionalExtension, params};

/// Each batch is committed on its own, so call `CachedEmbedding` outside an
/// open transaction of this store (embed first, then write the index in one
/// transaction), or keep the cache in a file of its own: inside one the cache
/// is only read.
#[async_trait]
impl EmbeddingCacheStore for SqliteStore {
    async fn get_vectors(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<f32>>>> {
        let db = &self.db;
        db.read(&Scope::Committed, |c| {
            let mut stmt = c
                .prepare_cached("SELECT embedding FROM embedding_cache WHERE key = ?1")
                .map_err(|e| db.err("reading the embedding cache", e))?;
            keys.iter()
                .map(|k| {
                    stmt.query_row(params![k], |r| r.get::<_, Vec<u8>>(0))
                        .optional()
                        .map(|b| b.map(|b| from_blob(&b)))
                        .map_err(|e| db.err("reading the embedding cache", e))
                })
                .collect()
        })
    }

    async fn put_vectors(&self, keys: &[&Vec<u8>], vectors: &[Vec<f32>]) -> Result<()> {
        let db = &self.db;
        if db.in_tx.load(std::sync::atomic::Ordering::SeqCst) {
            // The store is being written in one transaction: the cache waits for the next run.
            return Ok(());
        }
        db.write(&Scope::Committed, |c| {
            let mut stmt = c
                .prepare_cached(
                    "INSERT OR REPLACE INTO embedding_cache (key, embedding) VALUES (?1, ?2)",
                )
                .map_err(|e| db.err("writing the embedding cache", e))?;
            for (k, v) in keys.iter().zip(vectors) {
                stmt.execute(params![k, to_blob(v)])
                    .map_err(|e| db.err("writing the embedding cache", e))?;
            }
            Ok(())
        })
    }
}
