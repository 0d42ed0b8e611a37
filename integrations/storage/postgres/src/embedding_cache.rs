//! `PostgresEmbeddingCache`: core's embedding cache in a table of the server,
//! so every machine ingesting into it shares the vectors already made.

use crate::kv::{create_if_missing, quote_ident};
use async_trait::async_trait;
use ragloom_common_postgres::{PROVIDER, PgSession, connect_options};
use ragloom_core::embeddings::EmbeddingCacheStore;
use ragloom_core::{Error, Result};
use std::collections::HashMap;

/// Vectors by key in `<schema>.ragloom_embedding_cache` (`key bytea` primary
/// key, `embedding bytea`: little-endian `f32`s), each batch committed on its
/// own connection at once, outside any ingest's transaction. Use it with
/// `CachedEmbedding`. LlamaIndex has no such table; nothing else reads it.
#[derive(Clone, Debug)]
pub struct PostgresEmbeddingCache {
    session: PgSession,
    table: String,
}

fn pg(what: &str, e: sqlx::Error) -> Error {
    Error::provider(PROVIDER, format!("{what}: {e}"), e)
}

impl PostgresEmbeddingCache {
    /// The cache in `schema` on the server at `url`, created if missing.
    pub async fn connect(url: &str, schema: &str) -> Result<Self> {
        let session = PgSession::connect(&connect_options(url)?).await?;
        let table = format!(
            "{}.{}",
            quote_ident(schema),
            quote_ident("ragloom_embedding_cache")
        );
        let statements = vec![
            format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(schema)),
            format!(
                "CREATE TABLE IF NOT EXISTS {table} \
                 (key BYTEA PRIMARY KEY, embedding BYTEA NOT NULL)"
            ),
        ];
        let t = table.clone();
        session
            .run(move |conn| {
                Box::pin(async move {
                    create_if_missing(conn, &t, "the embedding cache", statements).await
                })
            })
            .await?;
        Ok(Self { session, table })
    }
}

#[async_trait]
impl EmbeddingCacheStore for PostgresEmbeddingCache {
    async fn get_vectors(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<f32>>>> {
        let sql = format!(
            "SELECT key, embedding FROM {} WHERE key = ANY($1::bytea[])",
            self.table
        );
        let wanted = keys.to_vec();
        let rows: Vec<(Vec<u8>, Vec<u8>)> = self
            .session
            .run(move |conn| {
                Box::pin(async move {
                    sqlx::query_as(&sql)
                        .bind(wanted)
                        .fetch_all(&mut *conn)
                        .await
                        .map_err(|e| pg("reading the embedding cache", e))
                })
            })
            .await?;
        let found: HashMap<Vec<u8>, Vec<u8>> = rows.into_iter().collect();
        Ok(keys
            .iter()
            .map(|k| {
                found.get(k).map(|bytes| {
                    bytes
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect()
                })
            })
            .collect())
    }

    async fn put_vectors(&self, keys: &[&Vec<u8>], vectors: &[Vec<f32>]) -> Result<()> {
        let sql = format!(
            "INSERT INTO {} (key, embedding) SELECT * FROM UNNEST($1::bytea[], $2::bytea[]) \
             ON CONFLICT (key) DO NOTHING",
            self.table
        );
        // In key order: two machines inserting overlapping batches then take
        // the rows' locks in the same order and cannot deadlock.
        let mut rows: Vec<(Vec<u8>, Vec<u8>)> = keys
            .iter()
            .zip(vectors)
            .map(|(k, v)| (k.to_vec(), v.iter().flat_map(|x| x.to_le_bytes()).collect()))
            .collect();
        rows.sort();
        rows.dedup_by(|a, b| a.0 == b.0);
        let (keys, blobs): (Vec<Vec<u8>>, Vec<Vec<u8>>) = rows.into_iter().unzip();
        self.session
            .run(move |conn| {
                Box::pin(async move {
                    sqlx::query(&sql)
                        .bind(keys)
                        .bind(blobs)
                        .execute(&mut *conn)
                        .await
                        .map(|_| ())
                        .map_err(|e| pg("writing the embedding cache", e))
                })
            })
            .await
    }
}
