//! What a program that keeps several indexes on one server needs beside
//! them: a writer's lock held across transactions, listing and dropping indexes.

use crate::kv::quote_ident;
use ragloom_common_postgres::{PROVIDER, PgSession, connect_options};
use ragloom_core::{Error, Result};

fn pg(what: &str, e: sqlx::Error) -> Error {
    Error::provider(PROVIDER, format!("{what}: {e}"), e)
}

/// A PostgreSQL advisory lock held by a connection of its own until
/// [`release`](Self::release) or drop (or the process dies: the server frees
/// it with the connection). For a writer whose work spans several
/// transactions: take it before reading what to write.
#[derive(Debug)]
pub struct WriterLock {
    session: PgSession,
}

/// The `bigint` key of the advisory lock named `name`.
pub fn lock_key(name: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(name.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

impl WriterLock {
    /// Takes the lock named `name` on the server at `url`: waits for another
    /// holder, or with `wait` off returns `None` at once if there is one.
    pub async fn acquire(url: &str, name: &str, wait: bool) -> Result<Option<Self>> {
        let session = PgSession::connect(&connect_options(url)?).await?;
        let key = lock_key(name);
        let taken: bool = session
            .run(move |conn| {
                Box::pin(async move {
                    let sql = if wait {
                        "SELECT pg_advisory_lock($1) IS NOT NULL"
                    } else {
                        "SELECT pg_try_advisory_lock($1)"
                    };
                    sqlx::query_scalar(sql)
                        .bind(key)
                        .fetch_one(&mut *conn)
                        .await
                        .map_err(|e| pg("taking the write lock", e))
                })
            })
            .await?;
        Ok(taken.then_some(Self { session }))
    }

    /// Releases the lock (closing its connection).
    pub async fn release(self) -> Result<()> {
        self.session.end(false).await
    }
}

/// The names of the indexes in `schema` whose name starts with `prefix`
/// (those with a docstore table `data_<name>_docstore`), sorted.
pub async fn index_names(url: &str, schema: &str, prefix: &str) -> Result<Vec<String>> {
    let session = PgSession::connect(&connect_options(url)?).await?;
    let (schema, prefix) = (schema.to_string(), prefix.to_string());
    let tables: Vec<String> = session
        .run(move |conn| {
            Box::pin(async move {
                // pg_class, not information_schema: it lists tables whatever
                // the role's rights on them.
                sqlx::query_scalar(
                    "SELECT c.relname::text FROM pg_class c \
                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') \
                     AND starts_with(c.relname, $2) AND right(c.relname, 9) = '_docstore' \
                     ORDER BY 1",
                )
                .bind(schema)
                .bind(format!("data_{prefix}"))
                .fetch_all(&mut *conn)
                .await
                .map_err(|e| pg("listing indexes", e))
            })
        })
        .await?;
    Ok(tables
        .iter()
        .filter_map(|t| t.strip_prefix("data_")?.strip_suffix("_docstore"))
        .map(str::to_string)
        .collect())
}

/// Drops the tables of the index `name` in `schema` (vectors, docstore,
/// index store), in one transaction; missing ones are no error.
pub async fn drop_index(url: &str, schema: &str, name: &str) -> Result<()> {
    let tables: Vec<String> = ["", "_docstore", "_indexstore"]
        .iter()
        .map(|suffix| {
            format!(
                "{}.{}",
                quote_ident(schema),
                quote_ident(&format!("data_{name}{suffix}"))
            )
        })
        .collect();
    drop_tables(&connect_options(url)?, tables).await
}

/// Drops `tables` (qualified, quoted) in one transaction.
pub(crate) async fn drop_tables(
    options: &sqlx::postgres::PgConnectOptions,
    tables: Vec<String>,
) -> Result<()> {
    let session = PgSession::begin(options).await?;
    session
        .run(move |conn| {
            Box::pin(async move {
                // A reader still on the tables would make DROP wait (and every
                // reader after it): give up instead, to try again later.
                sqlx::query("SET LOCAL lock_timeout = '5s'")
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| pg("setting a lock timeout", e))?;
                for t in tables {
                    sqlx::query(&format!("DROP TABLE IF EXISTS {t}"))
                        .execute(&mut *conn)
                        .await
                        .map_err(|e| pg(&format!("dropping {t}"), e))?;
                }
                Ok(())
            })
        })
        .await?;
    session.end(true).await
}
