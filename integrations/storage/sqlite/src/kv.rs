//! LlamaIndex's key-value collections in the `kv` table, so the docstore and
//! index store keep exactly the semantics (and JSON) of their in-memory twins.

use crate::db::{Db, Scope};
use ragloom_core::error::{Error, Result};
use ragloom_core::storage::kvstore::{KvBackend, KvCollection, KvTable, KvValue};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::borrow::Cow;
use std::io::Read;
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

/// Values longer than this are stored compressed (as a BLOB; shorter ones
/// as TEXT): a node's JSON, with its metadata repeated in its relationships,
/// halves, and the file holds the text about once.
const COMPRESS_FROM: usize = 512;

/// How a zstd frame begins. Raw deflate never begins so (its first block
/// would be a stored block whose length check fails), so files from before
/// schema 4, whose BLOBs are raw deflate, read as they are.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// zstd's fastest regular level. On the benchmark corpus's node JSON (88 MB)
/// it gives 43.1 MB in 0.65 s, compressing and decompressing, where deflate
/// at level 6 gave 44.6 MB in 1.33 s to compress alone: compressing was a
/// sixth of an ingest's CPU.
const ZSTD_LEVEL: i32 = 1;

/// A value as stored ([`encode_value`] of its JSON).
pub(crate) fn encode_json(value: &KvValue) -> Result<SqlValue> {
    Ok(encode_value(serde_json::to_string(value)?))
}

/// A value as stored: TEXT as it is, or a BLOB holding one zstd frame.
pub(crate) fn encode_value(text: String) -> SqlValue {
    if text.len() < COMPRESS_FROM {
        return SqlValue::Text(text);
    }
    match COMPRESSOR.with(|c| compress(&mut c.borrow_mut(), text.as_bytes())) {
        Ok(bytes) => SqlValue::Blob(bytes),
        Err(_) => SqlValue::Text(text),
    }
}

thread_local! {
    /// A compression context per thread, made once: making one per value
    /// (allocating and clearing its tables) was a tenth of compressing.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

thread_local! {
    /// A decompression context per thread, for the same reason.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Values larger than this are decoded as a stream, never sized up front
/// from a frame header (which a damaged value could make huge).
const MAX_SIZED_VALUE: u64 = 64 << 20;

fn decompress(
    kept: &mut Option<zstd::bulk::Decompressor<'static>>,
    frame: &[u8],
) -> std::io::Result<Vec<u8>> {
    // One frame only: a value of several frames streams, as it always did.
    let one_frame = zstd::zstd_safe::find_frame_compressed_size(frame).ok() == Some(frame.len());
    let size = match one_frame {
        true => zstd::zstd_safe::get_frame_content_size(frame)
            .ok()
            .flatten(),
        false => None,
    };
    match size.filter(|&n| n <= MAX_SIZED_VALUE) {
        Some(n) => {
            let d = match kept {
                Some(d) => d,
                None => kept.insert(zstd::bulk::Decompressor::new()?),
            };
            d.decompress(frame, n as usize)
        }
        None => zstd::stream::decode_all(frame),
    }
}

fn compress(
    kept: &mut Option<zstd::bulk::Compressor<'static>>,
    bytes: &[u8],
) -> std::io::Result<Vec<u8>> {
    let compressor = match kept {
        Some(c) => c,
        None => kept.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
    };
    compressor.compress(bytes)
}

/// A stored value's JSON text: TEXT, a zstd frame, or (schema 3 and
/// earlier) raw deflate.
pub(crate) fn decode_value(v: ValueRef<'_>) -> Result<String, String> {
    match v {
        ValueRef::Text(t) => String::from_utf8(t.to_vec()).map_err(|e| e.to_string()),
        ValueRef::Blob(b) if b.starts_with(&ZSTD_MAGIC) => {
            let bytes = DECOMPRESSOR
                .with(|d| decompress(&mut d.borrow_mut(), b))
                .map_err(|e| format!("cannot decompress a stored value: {e}"))?;
            String::from_utf8(bytes).map_err(|e| e.to_string())
        }
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
    pub(crate) fn insert(&self, key: &str, value: SqlValue, collection: &str) -> Result<()> {
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
            .map(|(key, val)| Ok((key, encode_json(&val)?)))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn long_json() -> String {
        let text = "Alice was beginning to get very tired of sitting by her sister. ".repeat(40);
        serde_json::json!({ "text": text, "n": 1 }).to_string()
    }

    #[test]
    fn long_values_are_zstd_frames_and_short_ones_text() {
        let json = long_json();
        match encode_value(json.clone()) {
            SqlValue::Blob(b) => {
                assert!(b.starts_with(&ZSTD_MAGIC));
                assert!(b.len() < json.len() / 4, "{} of {}", b.len(), json.len());
                assert_eq!(decode_value(ValueRef::Blob(&b)).unwrap(), json);
            }
            other => panic!("not compressed: {other:?}"),
        }
        let short = r#"{"a":1}"#.to_string();
        assert_eq!(encode_value(short.clone()), SqlValue::Text(short));
    }

    /// The thread's kept context compresses each value on its own: the
    /// same frame as a context made for it alone, whatever came before.
    #[test]
    fn a_kept_context_writes_the_frame_a_new_one_would() {
        let json = long_json();
        let other = serde_json::json!({ "text": "Down the rabbit hole. ".repeat(90) }).to_string();
        let alone = zstd::bulk::compress(json.as_bytes(), ZSTD_LEVEL).unwrap();
        for value in [json.clone(), other.clone(), json.clone()] {
            let SqlValue::Blob(b) = encode_value(value.clone()) else {
                panic!("not compressed");
            };
            assert_eq!(decode_value(ValueRef::Blob(&b)).unwrap(), value);
            if value == json {
                assert_eq!(b, alone);
            }
        }
    }

    /// A value of several frames, or of a frame without its size, decodes
    /// whole (streamed); a frame claiming more than it holds is an error.
    #[test]
    fn several_frames_and_unsized_frames_decode_and_a_lying_one_fails() {
        let (a, b) = (long_json(), r#"{"tail":"and the rest"}"#.to_string());
        let mut two = zstd::bulk::compress(a.as_bytes(), ZSTD_LEVEL).unwrap();
        two.extend(zstd::bulk::compress(b.as_bytes(), ZSTD_LEVEL).unwrap());
        assert_eq!(decode_value(ValueRef::Blob(&two)).unwrap(), a.clone() + &b);
        let mut unsized_frame = Vec::new();
        let mut enc = zstd::stream::write::Encoder::new(&mut unsized_frame, 3).unwrap();
        enc.include_contentsize(false).unwrap();
        enc.write_all(a.as_bytes()).unwrap();
        enc.finish().unwrap();
        assert_eq!(decode_value(ValueRef::Blob(&unsized_frame)).unwrap(), a);
        let mut cut = zstd::bulk::compress(a.as_bytes(), ZSTD_LEVEL).unwrap();
        cut.truncate(cut.len() / 2);
        assert!(decode_value(ValueRef::Blob(&cut)).is_err());
    }

    /// Files written before schema 4 hold raw deflate: they read unchanged.
    #[test]
    fn deflated_values_of_older_files_still_read() {
        let json = long_json();
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        z.write_all(json.as_bytes()).unwrap();
        let deflated = z.finish().unwrap();
        assert!(!deflated.starts_with(&ZSTD_MAGIC));
        assert_eq!(decode_value(ValueRef::Blob(&deflated)).unwrap(), json);
    }

    #[test]
    fn damaged_values_are_errors() {
        let mut frame = ZSTD_MAGIC.to_vec();
        frame.extend_from_slice(b"not a frame");
        assert!(decode_value(ValueRef::Blob(&frame)).is_err());
        assert!(decode_value(ValueRef::Blob(b"\xff\xfe garbage")).is_err());
        assert!(decode_value(ValueRef::Integer(3)).is_err());
    }
}
