//! The store's file, `default__vector_store.json`: written as Python's
//! `json.dump` writes it, digit for digit, and read straight into the columns.

use super::SimpleVectorStore;
use super::data::Data;
use crate::error::Result;
use crate::schema::float_repr;
use crate::utils::write_python_json;
use rayon::prelude::*;
use serde::Deserializer;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter};
use std::fmt;
use std::io::Write;

/// Rows formatted by one thread at a time when persisting.
pub(super) const PERSIST_PIECE_ROWS: usize = 256;
/// Rows formatted before being written: bounds the memory a persist takes
/// (about 8 KB per row of 384 floats).
pub(super) const PERSIST_ROUND_ROWS: usize = 4096;

impl SimpleVectorStore {
    pub(super) fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let data = self.read();
        out.write_all(b"{\"embedding_dict\": {")?;
        // Formatting the floats is most of the work: rows are formatted in
        // pieces across threads, a bounded round at a time, and written in order.
        let n = data.len();
        let mut start = 0;
        while start < n {
            let end = n.min(start + PERSIST_ROUND_ROWS);
            let pieces: Vec<Vec<u8>> = (start..end)
                .step_by(PERSIST_PIECE_ROWS)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|first| {
                    let mut piece = Vec::new();
                    for r in first..end.min(first + PERSIST_PIECE_ROWS) {
                        write_row(&data, r, &mut piece)?;
                    }
                    Ok(piece)
                })
                .collect::<std::io::Result<_>>()?;
            for piece in pieces {
                out.write_all(&piece)?;
            }
            start = end;
        }
        out.write_all(b"}, \"text_id_to_ref_doc_id\": {")?;
        let mut first = true;
        for (r, ref_doc_id) in data.ref_doc_ids.iter().enumerate() {
            if let Some(ref_doc_id) = ref_doc_id {
                if !std::mem::take(&mut first) {
                    out.write_all(b", ")?;
                }
                write_python_json(out, &data.ids[r])?;
                out.write_all(b": ")?;
                write_python_json(out, ref_doc_id)?;
            }
        }
        out.write_all(b"}, \"metadata_dict\": {")?;
        let mut first = true;
        for (r, metadata) in data.metadata.iter().enumerate() {
            if let Some(metadata) = metadata {
                if !std::mem::take(&mut first) {
                    out.write_all(b", ")?;
                }
                write_python_json(out, &data.ids[r])?;
                out.write_all(b": ")?;
                write_python_json(out, metadata)?;
            }
        }
        out.write_all(b"}}")
    }
}

/// Appends row `r` of `embedding_dict`: `"id": [v, v, ...]`, after `", "`
/// unless it is the first row.
pub(super) fn write_row(data: &Data, r: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    if r > 0 {
        out.extend_from_slice(b", ");
    }
    write_python_json(out, &data.ids[r])?;
    out.extend_from_slice(b": [");
    let span = r * data.dim..(r + 1) * data.dim;
    match &data.wide {
        Some(wide) => {
            for (i, v) in wide[span].iter().enumerate() {
                push_float(out, i, *v);
            }
        }
        None => {
            for (i, v) in data.vectors[span].iter().enumerate() {
                push_float(out, i, f64::from(*v));
            }
        }
    }
    out.push(b']');
    Ok(())
}

/// Appends `v` as Python's `repr(float)` writes it, after `", "` unless it is
/// the first value of its list.
///
/// The shortest round-trip digits (Ryū, through serde_json's formatter) are
/// what Python prints too; the two only lay them out differently for
/// exponents outside `-4..16` (`1e-05`, `1e+16`) and at `-5` (`0.00001`),
/// which take the slower general path.
pub(super) fn push_float(out: &mut Vec<u8>, i: usize, v: f64) {
    if i > 0 {
        out.extend_from_slice(b", ");
    }
    let start = out.len();
    if v.is_finite() && CompactFormatter.write_f64(out, v).is_ok() {
        let written = &out[start..];
        let digits = written.strip_prefix(b"-").unwrap_or(written);
        // An exponent is at most `e-324`: only the last five bytes can hold the `e`.
        let tail = &digits[digits.len().saturating_sub(5)..];
        if !tail.contains(&b'e') && !digits.starts_with(b"0.0000") {
            return;
        }
    }
    out.truncate(start);
    out.extend_from_slice(float_repr(v).as_bytes());
}

/// Reads a whole `vector_store.json` straight into [`Data`], the vectors
/// into the contiguous buffers without an intermediate JSON tree.
pub(super) struct FileSeed;

impl<'de> DeserializeSeed<'de> for FileSeed {
    type Value = Data;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Data, D::Error> {
        deserializer.deserialize_map(FileVisitor)
    }
}

struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = Data;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a SimpleVectorStore object with `embedding_dict`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
        let mut data = Data::default();
        let mut refs: Option<serde_json::Map<String, Value>> = None;
        let mut metadata: Option<serde_json::Map<String, Value>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "embedding_dict" => map.next_value_seed(EmbeddingDictSeed(&mut data))?,
                "text_id_to_ref_doc_id" => refs = map.next_value()?,
                "metadata_dict" => metadata = map.next_value()?,
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        // Entries for ids without an embedding cannot be queried; they are dropped.
        for (id, value) in refs.unwrap_or_default() {
            let Some(&r) = data.rows.get(&id) else {
                continue;
            };
            data.ref_doc_ids[r] = match value {
                Value::String(s) => Some(s),
                Value::Null => None,
                other => {
                    return Err(de::Error::custom(format!(
                        "text_id_to_ref_doc_id of `{id}` is not a string: {other}"
                    )));
                }
            };
        }
        for (id, value) in metadata.unwrap_or_default() {
            let Some(&r) = data.rows.get(&id) else {
                continue;
            };
            data.metadata[r] = match value {
                Value::Object(m) => Some(m),
                Value::Null => None,
                other => {
                    return Err(de::Error::custom(format!(
                        "metadata_dict of `{id}` is not an object: {other}"
                    )));
                }
            };
        }
        Ok(data)
    }
}

struct EmbeddingDictSeed<'a>(&'a mut Data);

impl<'de> DeserializeSeed<'de> for EmbeddingDictSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EmbeddingDictSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`embedding_dict`: an object of node id to list of numbers")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let data = self.0;
        let mut row: Vec<f64> = Vec::new();
        while let Some(id) = map.next_key::<String>()? {
            row.clear();
            map.next_value_seed(RowSeed(&mut row))
                .map_err(|e| de::Error::custom(format!("embedding of `{id}`: {e}")))?;
            if row.is_empty() {
                return Err(de::Error::custom(format!("embedding of `{id}` is empty")));
            }
            if data.len() > 0 && row.len() != data.dim {
                return Err(de::Error::custom(format!(
                    "embedding of `{id}` has {} values, the others have {}",
                    row.len(),
                    data.dim
                )));
            }
            data.upsert(&id, row.iter().copied(), None, None);
        }
        Ok(())
    }
}

/// One embedding: a list of numbers, appended to a reused buffer.
struct RowSeed<'a>(&'a mut Vec<f64>);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of numbers")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<f64>()? {
            self.0.push(v);
        }
        Ok(())
    }
}
