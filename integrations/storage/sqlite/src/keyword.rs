//! The keyword index: each node's BM25 term counts and length, kept beside the
//! docstore in the same transaction, and scored at query time as `BM25Retriever` scores.
//!
//! Postings are written once per batch of added nodes, as one segment per
//! term (`bm25_postings`), so an ingest writes each term's list once, not once
//! per node. A deleted node leaves a tombstone its postings are skipped by;
//! when segments or tombstones pile up, the postings are merged again.
//! Weights depend on every node (`N`, `avgdl`, `df`), so only raw counts are
//! stored and the weight is computed per query, with the same `f32`/`f64`
//! steps as the in-memory retriever, which makes the scores equal to its.

use ragloom_core::error::{Error, Result};
use ragloom_core::retrievers::{Bm25Tokenizer, TermBatch};
use ragloom_core::schema::{MetadataMode, Node};
use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::Path;

/// Segments of one size level that are merged into one: a posting is
/// rewritten about log16 of the index's size times, and a term's list is
/// read from at most 15 segments per level. (8 made the 50 MB benchmark
/// ingest merge its 4 MB batches once mid-way, about 15% of its time.)
const MERGE_FACTOR: usize = 16;
/// Segments beyond which everything is merged into one (only segments of
/// very different sizes in turn, which the levels never gather, get there).
const MAX_SEGMENTS: usize = 64;
/// Terms a merge writes between deletions of the rows it has read.
const RELEASE_EVERY_TERMS: usize = 1_024;
/// Segments an ingest may leave unmerged at its end. Merging the 13 of the
/// 50 MB benchmark corpus took a twentieth of its ingest and left the file
/// 6% larger (89.0 MB unmerged, 94.9 MB merged: the pages a merge frees stay
/// in the file); unmerged, a query reads a few more rows per term.
const SETTLED_SEGMENTS: usize = 16;

/// A batch of nodes' terms, counted before the write so tokenizing holds no lock.
#[derive(Debug)]
pub(crate) struct Counted {
    node_ids: Vec<String>,
    terms: TermBatch,
}

/// Counts the terms of `nodes` (their text with embed-mode metadata, as the
/// retriever reads it), on every core.
pub(crate) fn count_terms(tokenizer: &Bm25Tokenizer, nodes: &[Node]) -> Counted {
    let texts: Vec<String> = nodes
        .par_iter()
        .map(|node| node.get_content(MetadataMode::Embed))
        .collect();
    Counted {
        node_ids: nodes.iter().map(|n| n.id_.clone()).collect(),
        terms: tokenizer.count_batch(&texts),
    }
}

/// A counter kept in the file's `meta` table (0 when absent or unreadable).
pub(crate) fn meta_i64(conn: &Connection, key: &str) -> rusqlite::Result<i64> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
        r.get::<_, String>(0)
    })
    .optional()
    .map(|v| v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Sets a counter of the `meta` table.
pub(crate) fn set_meta(conn: &Connection, key: &str, value: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        params![key, value.to_string()],
    )
    .map(|_| ())
}

/// How many nodes are indexed and their total length in terms.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) docs: i64,
    pub(crate) total_len: i64,
}

fn stats(conn: &Connection) -> rusqlite::Result<Stats> {
    Ok(Stats {
        docs: meta_i64(conn, "bm25_docs")?,
        total_len: meta_i64(conn, "bm25_total_len")?,
    })
}

fn set_stats(conn: &Connection, s: Stats) -> rusqlite::Result<()> {
    set_meta(conn, "bm25_docs", s.docs)?;
    set_meta(conn, "bm25_total_len", s.total_len)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// One posting: the node's row, the term's count in it and the node's length.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Posting {
    row: i64,
    tf: u32,
    len: u32,
}

/// Postings in ascending row order as varints: row delta, count, length.
fn encode(postings: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(postings.len() * 4);
    let mut last = 0i64;
    for p in postings {
        put_varint(&mut out, (p.row - last) as u64);
        put_varint(&mut out, u64::from(p.tf));
        put_varint(&mut out, u64::from(p.len));
        last = p.row;
    }
    out
}

/// The postings of one encoded list, decoded as they are read; `None` items
/// mark a damaged list.
struct PostingIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    row: i64,
}

impl<'a> PostingIter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            row: 0,
        }
    }
}

impl Iterator for PostingIter<'_> {
    type Item = Option<Posting>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let mut one = || -> Option<Posting> {
            self.row += i64::try_from(get_varint(self.bytes, &mut self.pos)?).ok()?;
            let tf = u32::try_from(get_varint(self.bytes, &mut self.pos)?).ok()?;
            let len = u32::try_from(get_varint(self.bytes, &mut self.pos)?).ok()?;
            Some(Posting {
                row: self.row,
                tf,
                len,
            })
        };
        let p = one();
        if p.is_none() {
            // Damaged: stop after reporting it once.
            self.pos = self.bytes.len();
        }
        Some(p)
    }
}

/// Appends the postings of `bytes` to `out`; `None` if the list is damaged.
fn decode(bytes: &[u8], out: &mut Vec<Posting>) -> Option<()> {
    for p in PostingIter::new(bytes) {
        out.push(p?);
    }
    Some(())
}

/// Removes the nodes `ids` from the index (a no-op for ids it does not hold).
pub(crate) fn remove(path: &Path, conn: &Connection, ids: &[String]) -> Result<()> {
    if remove_rows(path, conn, ids)? {
        maybe_merge(path, conn)?;
    }
    Ok(())
}

/// Removes the nodes `ids`, leaving tombstones and not merging; whether any was held.
fn remove_rows(path: &Path, conn: &Connection, ids: &[String]) -> Result<bool> {
    let err = |e| sql_err(path, "updating the keyword index", e);
    let mut s = stats(conn).map_err(err)?;
    let mut removed = false;
    {
        let mut find = conn
            .prepare_cached("SELECT row, length FROM bm25_docs WHERE node_id = ?1")
            .map_err(err)?;
        let mut delete = conn
            .prepare_cached("DELETE FROM bm25_docs WHERE row = ?1")
            .map_err(err)?;
        let mut tomb = conn
            .prepare_cached("INSERT OR IGNORE INTO bm25_deleted (row) VALUES (?1)")
            .map_err(err)?;
        for id in ids {
            let found: Option<(i64, i64)> = find
                .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(err)?;
            if let Some((row, len)) = found {
                delete.execute(params![row]).map_err(err)?;
                tomb.execute(params![row]).map_err(err)?;
                s.docs -= 1;
                s.total_len -= len;
                removed = true;
            }
        }
    }
    if removed {
        set_stats(conn, s).map_err(err)?;
    }
    Ok(removed)
}

/// Adds counted nodes (replacing any already indexed under the same ids) as one new segment.
pub(crate) fn add(path: &Path, conn: &Connection, counted: &Counted) -> Result<()> {
    if counted.node_ids.is_empty() {
        return Ok(());
    }
    let err = |e| sql_err(path, "updating the keyword index", e);
    let lengths = &counted.terms.lengths;
    let mut s = stats(conn).map_err(err)?;
    let mut rows = Vec::with_capacity(counted.node_ids.len());
    {
        let mut insert = conn
            .prepare_cached("INSERT INTO bm25_docs (node_id, length) VALUES (?1, ?2)")
            .map_err(err)?;
        for (node_id, &length) in counted.node_ids.iter().zip(lengths) {
            let values = params![node_id, i64::from(length)];
            // Nodes are mostly new: an id already indexed shows as a
            // conflict, and only then is its old entry removed (one lookup
            // per node was a third of this function's time). Its tombstone
            // is in place before this batch's postings are written, and the
            // merge, if one is due, runs once at the end.
            match insert.execute(values) {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    set_stats(conn, s).map_err(err)?;
                    remove_rows(path, conn, std::slice::from_ref(node_id))?;
                    s = stats(conn).map_err(err)?;
                    insert.execute(values).map_err(err)?;
                }
                other => {
                    other.map_err(err)?;
                }
            }
            rows.push(conn.last_insert_rowid());
            s.docs += 1;
            s.total_len += i64::from(length);
        }
    }
    let segment = next_segment(conn).map_err(err)?;
    let terms = &counted.terms.postings;
    if !terms.is_empty() {
        let mut put = conn
            .prepare_cached(
                "INSERT INTO bm25_postings (term, segment, postings) VALUES (?1, ?2, ?3)",
            )
            .map_err(err)?;
        // The table's key is segment, then term, and terms come sorted: the
        // rows are appended at the table's end, not spread over its pages
        // (with the term first, each batch rewrote most of the table's pages
        // at 1 GB); rows grow with the text index, so each list is in row order.
        let mut postings = Vec::new();
        for (term, list) in terms {
            postings.clear();
            postings.extend(list.iter().map(|&(i, tf)| Posting {
                row: rows[i as usize],
                tf,
                len: lengths[i as usize],
            }));
            put.execute(params![term, segment, encode(&postings)])
                .map_err(err)?;
        }
        put_segment(path, conn, segment, rows.len() as i64)?;
    }
    set_stats(conn, s).map_err(err)?;
    maybe_merge(path, conn)
}

/// Keeps the segments few at any size: whenever [`MERGE_FACTOR`] segments
/// share a size level, they become one segment of the next level, so a
/// posting is rewritten once per level (log of the index's size), however
/// small the writes. Everything is merged, and the tombstones forgotten,
/// when tombstones reach a quarter of the nodes or (segments of very
/// different sizes in turn) more than [`MAX_SEGMENTS`] pile up.
fn maybe_merge(path: &Path, conn: &Connection) -> Result<()> {
    let err = |e| sql_err(path, "merging the keyword index", e);
    let docs = stats(conn).map_err(err)?.docs;
    let mut segments = list_segments(conn).map_err(err)?;
    let tombstones = tombstone_count(conn).map_err(err)?;
    if segments.len() > MAX_SEGMENTS || (tombstones > 0 && tombstones * 4 >= docs.max(1)) {
        return merge_everything(path, conn);
    }
    while let Some(level) = crowded_level(&segments) {
        let ids: Vec<i64> = segments
            .iter()
            .filter(|s| size_level(s.docs) == level)
            .map(|s| s.id)
            .collect();
        merge(path, conn, &ids, false)?;
        segments = list_segments(conn).map_err(err)?;
    }
    Ok(())
}

/// Merges every segment into one and forgets the tombstones, unless there
/// are no tombstones and at most [`SETTLED_SEGMENTS`] segments: queries then
/// read a few rows per term, and the file holds no deleted postings.
pub(crate) fn merge_all(path: &Path, conn: &Connection) -> Result<()> {
    let err = |e| sql_err(path, "merging the keyword index", e);
    let segments = list_segments(conn).map_err(err)?.len();
    if segments <= SETTLED_SEGMENTS && tombstone_count(conn).map_err(err)? == 0 {
        return Ok(());
    }
    merge_everything(path, conn)
}

fn merge_everything(path: &Path, conn: &Connection) -> Result<()> {
    let err = |e| sql_err(path, "merging the keyword index", e);
    let ids: Vec<i64> = list_segments(conn)
        .map_err(err)?
        .iter()
        .map(|s| s.id)
        .collect();
    merge(path, conn, &ids, true)
}

/// A segment: the postings one write (or one merge) added, and how many
/// nodes it was written for (its size, for the merge policy).
struct Segment {
    id: i64,
    docs: i64,
}

fn list_segments(conn: &Connection) -> rusqlite::Result<Vec<Segment>> {
    conn.prepare_cached("SELECT segment, docs FROM bm25_segments ORDER BY segment")?
        .query_map([], |r| {
            Ok(Segment {
                id: r.get(0)?,
                docs: r.get(1)?,
            })
        })?
        .collect()
}

fn tombstone_count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(*) FROM bm25_deleted", [], |r| r.get(0))
}

/// A size's level: 0 below [`MERGE_FACTOR`] nodes, 1 below its square, and so on.
fn size_level(docs: i64) -> u32 {
    let factor = MERGE_FACTOR as i64;
    let (mut d, mut level) = (docs.max(1), 0);
    while d >= factor {
        d /= factor;
        level += 1;
    }
    level
}

/// The lowest level holding [`MERGE_FACTOR`] segments or more.
fn crowded_level(segments: &[Segment]) -> Option<u32> {
    let mut count: BTreeMap<u32, usize> = BTreeMap::new();
    for s in segments {
        *count.entry(size_level(s.docs)).or_default() += 1;
    }
    count
        .into_iter()
        .find(|&(_, n)| n >= MERGE_FACTOR)
        .map(|(level, _)| level)
}

/// Merges the segments `ids` into one new segment, dropping deleted
/// nodes' postings; with `forget_tombstones`, `ids` are all the segments
/// and the tombstones go too. Each segment's rows are contiguous and in
/// term order (the table's key is segment, then term), so the merge reads
/// them as sorted streams side by side and appends the merged rows at the
/// table's end: no page of a segment it leaves is touched.
fn merge(path: &Path, conn: &Connection, ids: &[i64], forget_tombstones: bool) -> Result<()> {
    let err = |e| sql_err(path, "merging the keyword index", e);
    // All or nothing, even inside a caller's transaction that commits after
    // an error: half a merge would count the postings it had copied twice.
    conn.execute_batch("SAVEPOINT bm25_merge").map_err(err)?;
    let out = merge_unguarded(path, conn, ids, forget_tombstones);
    let end = if out.is_ok() {
        "RELEASE bm25_merge"
    } else {
        "ROLLBACK TO bm25_merge; RELEASE bm25_merge"
    };
    conn.execute_batch(end).map_err(err)?;
    out
}

fn merge_unguarded(
    path: &Path,
    conn: &Connection,
    ids: &[i64],
    forget_tombstones: bool,
) -> Result<()> {
    let err = |e| sql_err(path, "merging the keyword index", e);
    if ids.is_empty() {
        if forget_tombstones {
            // Nodes with no terms leave tombstones and no segment.
            conn.execute("DELETE FROM bm25_deleted", []).map_err(err)?;
        }
        return Ok(());
    }
    // Segment ids are integers from the file's own table, so they are
    // written into the statements as they are.
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut docs: i64 = conn
        .query_row(
            &format!("SELECT COALESCE(SUM(docs), 0) FROM bm25_segments WHERE segment IN ({list})"),
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    let into = next_segment(conn).map_err(err)?;
    let deleted = deleted_rows(conn).map_err(err)?;
    let mut put = conn
        .prepare_cached("INSERT INTO bm25_postings (term, segment, postings) VALUES (?1, ?2, ?3)")
        .map_err(err)?;
    let mut statements = ids
        .iter()
        .map(|_| {
            conn.prepare(
                "SELECT term, postings FROM bm25_postings WHERE segment = ?1 ORDER BY term",
            )
        })
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(err)?;
    let mut streams = Vec::with_capacity(ids.len());
    for (statement, id) in statements.iter_mut().zip(ids) {
        streams.push(statement.query(params![id]).map_err(err)?);
    }
    // Each stream's current postings; the heap holds its term, ordered by
    // term, then by stream (segments in the order given).
    let mut heads: Vec<Vec<u8>> = vec![Vec::new(); streams.len()];
    let mut heap: BinaryHeap<Reverse<(String, usize)>> = BinaryHeap::new();
    for (i, rows) in streams.iter_mut().enumerate() {
        if let Some((term, blob)) = next_row(rows).map_err(err)? {
            heads[i] = blob;
            heap.push(Reverse((term, i)));
        }
    }
    let mut release = conn
        .prepare_cached("DELETE FROM bm25_postings WHERE segment = ?1 AND term <= ?2")
        .map_err(err)?;
    let mut merged = Vec::new();
    let mut written = false;
    let mut merged_terms = 0usize;
    let mut same = Vec::new();
    while let Some(Reverse((term, first))) = heap.pop() {
        // Every stream at this term, in the order of the segments given.
        same.clear();
        same.push(first);
        while heap.peek().is_some_and(|r| r.0.0 == term) {
            if let Some(Reverse((_, i))) = heap.pop() {
                same.push(i);
            }
        }
        same.sort_unstable();
        merged.clear();
        for &i in &same {
            decode(&heads[i], &mut merged).ok_or_else(|| corrupt(path, &term))?;
            if let Some((next, blob)) = next_row(&mut streams[i]).map_err(err)? {
                heads[i] = blob;
                heap.push(Reverse((next, i)));
            }
        }
        merged.retain(|p| !deleted.contains(&p.row));
        // The segments' lists may interleave (a level's segments need not
        // be neighbours); the encoding stores ascending rows.
        if !merged.is_sorted_by_key(|p| p.row) {
            merged.sort_unstable_by_key(|p| p.row);
        }
        if !merged.is_empty() {
            put.execute(params![term, into, encode(&merged)])
                .map_err(err)?;
            written = true;
        }
        merged_terms += 1;
        if merged_terms % RELEASE_EVERY_TERMS == 0 {
            // Rows already read go now, so the merged rows reuse their
            // pages: deleted only at the end, a 1 GB index's last merge
            // left a quarter of the file free.
            for id in ids {
                release.execute(params![id, term]).map_err(err)?;
            }
        }
    }
    drop(streams);
    drop(statements);
    drop(release);
    conn.execute(
        &format!("DELETE FROM bm25_postings WHERE segment IN ({list})"),
        [],
    )
    .map_err(err)?;
    conn.execute(
        &format!("DELETE FROM bm25_segments WHERE segment IN ({list})"),
        [],
    )
    .map_err(err)?;
    if forget_tombstones {
        conn.execute("DELETE FROM bm25_deleted", []).map_err(err)?;
        docs = stats(conn).map_err(err)?.docs;
    }
    if written {
        put_segment(path, conn, into, docs)?;
    }
    Ok(())
}

/// A stream's next `(term, postings)` row.
fn next_row(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<Option<(String, Vec<u8>)>> {
    match rows.next()? {
        Some(row) => Ok(Some((row.get(0)?, row.get(1)?))),
        None => Ok(None),
    }
}

/// The id a new segment gets: after every recorded one and every one
/// holding postings (the postings' key starts with the segment, so both
/// maxima are one step down a B-tree).
fn next_segment(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT MAX(COALESCE((SELECT MAX(segment) FROM bm25_segments), -1),
                    COALESCE((SELECT MAX(segment) FROM bm25_postings), -1)) + 1",
        [],
        |r| r.get(0),
    )
}

/// Records a segment and its size, for the merge policy.
fn put_segment(path: &Path, conn: &Connection, id: i64, docs: i64) -> Result<()> {
    conn.prepare_cached("INSERT INTO bm25_segments (segment, docs) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![id, docs]))
        .map_err(|e| sql_err(path, "updating the keyword index", e))?;
    Ok(())
}

/// Gives the segments of a file from before segment records (schema 3 and
/// 4) their records, and merges them into one.
pub(crate) fn adopt_segments(conn: &Connection) -> std::result::Result<(), String> {
    let path = Path::new(conn.path().unwrap_or_default());
    let ids: Vec<i64> = conn
        .prepare("SELECT DISTINCT segment FROM bm25_postings ORDER BY segment")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| e.to_string())?;
    for &id in &ids {
        put_segment(path, conn, id, 0).map_err(|e| e.to_string())?;
    }
    match merge(path, conn, &ids, true) {
        // A damaged list fails the queries that read it, as before; it
        // must not keep the file, its nodes and vectors, from opening.
        Err(Error::CorruptFile { .. }) => Ok(()),
        other => other.map_err(|e| e.to_string()),
    }
}

fn corrupt(path: &Path, term: &str) -> Error {
    Error::corrupt(
        path,
        format!("keyword index: the postings of `{term}` are damaged"),
    )
}

fn sql_err(path: &Path, what: &str, e: rusqlite::Error) -> Error {
    Error::Provider {
        provider: "sqlite".into(),
        message: format!("{}: {what}: {e}", path.display()),
        source: Some(Box::new(e)),
    }
}

/// Indexes every node already in the docstore's default collection (a file
/// from before the keyword index), a chunk at a time.
pub(crate) fn index_stored_nodes(conn: &Connection) -> std::result::Result<(), String> {
    const CHUNK: i64 = 2_000;
    let tokenizer = Bm25Tokenizer::new();
    let path = Path::new(conn.path().unwrap_or_default());
    let mut after = 0i64;
    loop {
        let rows: Vec<(i64, String, String)> = conn
            .prepare(
                "SELECT rowid, key, value FROM kv WHERE collection = 'docstore/data' AND rowid > ?1
                 ORDER BY rowid LIMIT ?2",
            )
            .and_then(|mut s| {
                s.query_map(params![after, CHUNK], |r| {
                    let text = crate::kv::decode_value(r.get_ref(2)?).unwrap_or_default();
                    Ok((r.get(0)?, r.get(1)?, text))
                })?
                .collect()
            })
            .map_err(|e| e.to_string())?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.0;
        let nodes = rows
            .iter()
            .map(|(_, key, text)| match serde_json::from_str(text) {
                Ok(serde_json::Value::Object(map)) => {
                    ragloom_core::storage::docstore::json_to_doc(&map)
                        .map_err(|m| format!("docstore node `{key}`: {m}"))
                }
                _ => Err(format!("docstore node `{key}`: not a JSON object")),
            })
            .collect::<std::result::Result<Vec<Node>, String>>()?;
        add(path, conn, &count_terms(&tokenizer, &nodes)).map_err(|e| e.to_string())?;
    }
}

fn deleted_rows(conn: &Connection) -> rusqlite::Result<HashSet<i64>> {
    conn.prepare_cached("SELECT row FROM bm25_deleted")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// BM25's parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub(crate) k1: f64,
    pub(crate) b: f64,
}

/// The nodes holding a term of `tokens` (a repeated term counts again, as in
/// the in-memory retriever) with their scores, best first, ties by the order
/// nodes were added; at most `top_k`. Returns `(node id, score)`.
pub(crate) fn search(
    path: &Path,
    conn: &Connection,
    tokens: &[String],
    params: Params,
    top_k: usize,
) -> Result<Vec<(String, f32)>> {
    let err = |e| sql_err(path, "reading the keyword index", e);
    let s = stats(conn).map_err(err)?;
    if s.docs == 0 || tokens.is_empty() || top_k == 0 {
        return Ok(Vec::new());
    }
    // No more hits than documents (a filtered search asks for all of them).
    let top_k = top_k.min(usize::try_from(s.docs).unwrap_or(usize::MAX));
    let n_docs = s.docs as f64;
    let avg_len = s.total_len as f64 / n_docs;
    let deleted = deleted_rows(conn).map_err(err)?;
    let mut read = conn
        .prepare_cached("SELECT postings FROM bm25_postings WHERE term = ?1 ORDER BY segment")
        .map_err(err)?;
    // Each term's live postings are decoded once from SQLite's buffer into
    // one reused list, and scores go to a dense array by row when rows are
    // dense: memory stays near one list's size, whatever the size of the index.
    let max_row: i64 = conn
        .query_row("SELECT COALESCE(MAX(row), 0) FROM bm25_docs", [], |r| {
            r.get(0)
        })
        .map_err(err)?;
    let mut acc = Accumulator::new(max_row, s.docs);
    let mut list: Vec<Posting> = Vec::new();
    let mut listed: Option<&str> = None;
    for token in tokens {
        if listed != Some(token.as_str()) {
            list.clear();
            let mut rows = read.query(params![token]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let blob = row.get_ref(0).map_err(err)?;
                let bytes = blob.as_blob().map_err(|e| err(e.into()))?;
                for p in PostingIter::new(bytes) {
                    let Some(p) = p else {
                        return Err(corrupt(path, token));
                    };
                    if deleted.is_empty() || !deleted.contains(&p.row) {
                        list.push(p);
                    }
                }
            }
            listed = Some(token.as_str());
        }
        if list.is_empty() {
            continue;
        }
        let df = list.len() as f64;
        let idf = (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln() as f32;
        for p in &list {
            let tf = f64::from(p.tf as f32);
            let dl = f64::from(p.len);
            let tfc = tf / (params.k1 * ((1.0 - params.b) + params.b * dl / avg_len) + tf);
            acc.add(p.row, (f64::from(idf) * tfc) as f32);
        }
    }
    let scored = acc.top_k(top_k);
    let mut id_of = conn
        .prepare_cached("SELECT node_id FROM bm25_docs WHERE row = ?1")
        .map_err(err)?;
    scored
        .into_iter()
        .map(|(row, score)| {
            let id: String = id_of.query_row(params![row], |r| r.get(0)).map_err(err)?;
            Ok((id, score))
        })
        .collect()
}

/// Scores by row: a dense array when rows are dense (the usual case: rows
/// only grow, and a merge does not renumber them), else a map.
enum Accumulator {
    Dense(Vec<f32>),
    Sparse(HashMap<i64, f32>),
}

impl Accumulator {
    fn new(max_row: i64, docs: i64) -> Self {
        if max_row <= docs.saturating_mul(4).saturating_add(4096) {
            Self::Dense(vec![0.0; usize::try_from(max_row + 1).unwrap_or(0)])
        } else {
            Self::Sparse(HashMap::new())
        }
    }

    fn add(&mut self, row: i64, w: f32) {
        match self {
            Self::Dense(v) => {
                if let Some(slot) = usize::try_from(row).ok().and_then(|r| v.get_mut(r)) {
                    *slot += w;
                }
            }
            Self::Sparse(m) => *m.entry(row).or_insert(0.0) += w,
        }
    }

    /// The `k` best positive scores, best first (ties: the earlier row), kept
    /// in a heap of `k` entries rather than a list of every scored row.
    fn top_k(self, k: usize) -> Vec<(i64, f32)> {
        let mut heap: BinaryHeap<Reverse<Ranked>> = BinaryHeap::with_capacity(k + 1);
        let mut offer = |row: i64, score: f32| {
            if score <= 0.0 {
                return;
            }
            let r = Ranked(score, Reverse(row));
            if heap.len() < k {
                heap.push(Reverse(r));
            } else if heap.peek().is_some_and(|Reverse(worst)| r > *worst) {
                heap.pop();
                heap.push(Reverse(r));
            }
        };
        match self {
            Self::Dense(v) => {
                for (row, score) in v.into_iter().enumerate() {
                    offer(row as i64, score);
                }
            }
            Self::Sparse(m) => {
                for (row, score) in m {
                    offer(row, score);
                }
            }
        }
        let mut out: Vec<Ranked> = heap.into_iter().map(|Reverse(r)| r).collect();
        out.sort_by(|a, b| b.cmp(a));
        out.into_iter()
            .map(|Ranked(s, Reverse(row))| (row, s))
            .collect()
    }
}

/// A scored row ordered best-first: higher score, then the earlier row.
#[derive(PartialEq)]
struct Ranked(f32, Reverse<i64>);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sizes(docs: &[i64]) -> Vec<Segment> {
        docs.iter()
            .enumerate()
            .map(|(i, &docs)| Segment { id: i as i64, docs })
            .collect()
    }

    #[test]
    fn segments_are_gathered_by_size_level() {
        assert_eq!(
            [0, 1, 15, 16, 255, 256, 4095, 4096].map(size_level),
            [0, 0, 0, 1, 1, 2, 2, 3]
        );
        assert_eq!(crowded_level(&sizes(&[1; 15])), None);
        assert_eq!(crowded_level(&sizes(&[1; 16])), Some(0));
        // The lowest crowded level first, whatever the order of the sizes.
        let mut mixed = [1; 32];
        mixed.iter_mut().step_by(2).for_each(|d| *d = 17);
        assert_eq!(crowded_level(&sizes(&mixed)), Some(0));
        mixed[1] = 16;
        assert_eq!(crowded_level(&sizes(&mixed)), Some(1));
        assert_eq!(crowded_level(&sizes(&[5000, 17, 1, 300, 3])), None);
    }

    #[test]
    fn postings_round_trip() {
        let p = vec![
            Posting {
                row: 3,
                tf: 1,
                len: 10,
            },
            Posting {
                row: 300,
                tf: 70_000,
                len: 1,
            },
            Posting {
                row: 1 << 40,
                tf: 2,
                len: u32::MAX,
            },
        ];
        let mut out = Vec::new();
        decode(&encode(&p), &mut out).unwrap();
        assert_eq!(out, p);
        // A truncated blob is refused, not read past its end.
        let bytes = encode(&p);
        assert!(decode(&bytes[..bytes.len() - 1], &mut Vec::new()).is_none());
    }
}
