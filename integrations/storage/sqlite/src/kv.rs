//! LlamaIndex's key-value collections in the `kv` table, so the docstore and
//! index store keep exactly the semantics (and JSON) of their in-memory twins.

use crate::db::{Db, Scope};
use ragloom_core::error::{Error, Result};
use ragloom_core::storage::kvstore::{KvBackend, KvCollection, KvTable, KvValue};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::Arc;

/// The file's `kv` table (LlamaIndex's key-value collections) seen from the
/// last commit or from an open transaction: the backend of
/// [`SqliteDocumentStore`](crate::SqliteDocumentStore) and [`SqliteIndexStore`](crate::SqliteIndexStore).
#[derive(Clone, Debug)]
pub struct SqliteKv {
    pub(crate) db: Arc<Db>,
    pub(crate) scope: Scope,
}

impl KvBackend for SqliteKv {
    fn read<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        self.db
            .read(&self.scope, |conn| f(&mut Table { conn, db: &self.db }))
    }

    fn write<R>(&self, f: impl FnOnce(&mut dyn KvTable) -> Result<R>) -> Result<R> {
        self.db
            .write(&self.scope, |conn| f(&mut Table { conn, db: &self.db }))
    }
}

/// Values longer than this are stored deflated (as a BLOB; shorter ones as
/// TEXT): a node's JSON, with its metadata repeated in its relationships,
/// halves, and the file holds the text about once.
const COMPRESS_FROM: usize = 512;

/// A value as stored: TEXT as it is, or a BLOB of raw deflate.
pub(crate) fn encode_value(text: String) -> SqlValue {
    if text.len() < COMPRESS_FROM {
        return SqlValue::Text(text);
    }
    let mut z = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(text.len() / 2),
        flate2::Compression::new(6),
    );
    match z.write_all(text.as_bytes()).and_then(|()| z.finish()) {
        Ok(bytes) => SqlValue::Blob(bytes),
        Err(_) => SqlValue::Text(text),
    }
}

/// A stored value's JSON text.
pub(crate) fn decode_value(v: ValueRef<'_>) -> Result<String, String> {
    match v {
        ValueRef::Text(t) => String::from_utf8(t.to_vec()).map_err(|e| e.to_string()),
        ValueRef::Blob(b) => {
            let mut out = String::with_capacity(b.len() * 2);
            flate2::read::DeflateDecoder::new(b)
                .read_to_string(&mut out)
                .map_err(|e| format!("cannot inflate a stored value: {e}"))?;
            Ok(out)
        }
        _ => Err("a stored value is neither text nor a blob".into()),
    }
}

impl Table<'_> {
    fn insert(&self, key: &str, value: SqlValue, collection: &str) -> Result<()> {
        // An update keeps the row (and so the key's place in order), as a Python dict does.
        self.conn
            .prepare_cached(
                "INSERT INTO kv (collection, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (collection, key) DO UPDATE SET value = excluded.value",
            )
            .and_then(|mut s| s.execute(params![collection, key, value]))
            .map_err(|e| self.db.err("writing", e))?;
        Ok(())
    }
}

/// The `kv` table on a connection already inside the right transaction.
pub(crate) struct Table<'c> {
    pub(crate) conn: &'c Connection,
    pub(crate) db: &'c Db,
}

impl Table<'_> {
    fn decode(&self, collection: &str, key: &str, text: &str) -> Result<KvValue> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(Error::corrupt(
                &self.db.path,
                format!("collection `{collection}` key `{key}`: not a JSON object"),
            )),
        }
    }
}

impl KvTable for Table<'_> {
    fn get(&mut self, key: &str, collection: &str) -> Result<Option<Cow<'_, KvValue>>> {
        let text: Option<Result<String, String>> = self
            .conn
            .prepare_cached("SELECT value FROM kv WHERE collection = ?1 AND key = ?2")
            .and_then(|mut s| {
                s.query_row(params![collection, key], |r| {
                    Ok(decode_value(r.get_ref(0)?))
                })
                .optional()
            })
            .map_err(|e| self.db.err("reading", e))?;
        text.map(|t| {
            let t =
                t.map_err(|m| Error::corrupt(&self.db.path, format!("{collection} `{key}`: {m}")))?;
            self.decode(collection, key, &t).map(Cow::Owned)
        })
        .transpose()
    }

    fn contains(&mut self, key: &str, collection: &str) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM kv WHERE collection = ?1 AND key = ?2")
            .and_then(|mut s| s.exists(params![collection, key]))
            .map_err(|e| self.db.err("reading", e))
    }

    fn put(&mut self, key: &str, val: KvValue, collection: &str) -> Result<()> {
        let text = encode_value(serde_json::to_string(&val)?);
        self.insert(key, text, collection)
    }

    fn put_all(&mut self, pairs: Vec<(String, KvValue)>, collection: &str) -> Result<()> {
        use rayon::prelude::*;
        // Writing JSON and deflating it is most of the cost; only the
        // inserts need the connection.
        let encoded: Vec<(String, SqlValue)> = pairs
            .into_par_iter()
            .map(|(key, val)| Ok((key, encode_value(serde_json::to_string(&val)?))))
            .collect::<Result<_>>()?;
        for (key, text) in encoded {
            self.insert(&key, text, collection)?;
        }
        Ok(())
    }

    fn delete(&mut self, key: &str, collection: &str) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM kv WHERE collection = ?1 AND key = ?2")
            .and_then(|mut s| s.execute(params![collection, key]))
            .map_err(|e| self.db.err("deleting", e))?;
        Ok(n > 0)
    }

    fn get_all(&mut self, collection: &str) -> Result<Cow<'_, KvCollection>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM kv WHERE collection = ?1 ORDER BY rowid")
            .map_err(|e| self.db.err("reading", e))?;
        let rows = stmt
            .query_map(params![collection], |r| {
                Ok((r.get::<_, String>(0)?, decode_value(r.get_ref(1)?)))
            })
            .map_err(|e| self.db.err("reading", e))?;
        let mut out = KvCollection::new();
        for row in rows {
            let (key, text) = row.map_err(|e| self.db.err("reading", e))?;
            let text = text
                .map_err(|m| Error::corrupt(&self.db.path, format!("{collection} `{key}`: {m}")))?;
            let value = self.decode(collection, &key, &text)?;
            out.insert(key, value);
        }
        Ok(Cow::Owned(out))
    }
}
