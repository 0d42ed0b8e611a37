//! The vector index beside a store's file: an HNSW graph (usearch) of the
//! vectors as of one logged change, read with the changes logged since, so it always answers for the reader's commit.
//!
//! ```text
//! index.sqlite                       rows (the truth), `vectors_log` (rowids touched, by
//!                                    triggers), meta `ann` = {file, seq, bytes, dims, ...}
//! index.sqlite-vectors-<seq>.usearch the graph of every row as of log entry <seq>
//! ```
//!
//! A reader uses the file its snapshot's `meta` names, leaves out the rows
//! logged after it and scores those rows exactly, then re-scores every
//! candidate from its stored `f32` row: scores equal an exact search's. The
//! file is written whole beside the old one, synced, renamed, and only then
//! named in a transaction, so a process killed at any moment leaves either
//! the old file named or the new one; a file that is missing, short or
//! unreadable is skipped and the query scans the rows instead.

use ragloom_core::error::{Error, Result};
use ragloom_core::vector_stores::ExactSearch;
use rusqlite::{Connection, OptionalExtension, params};
use rustc_hash::FxHashSet;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

mod maintain;
pub use maintain::VectorIndexUpdate;
pub(crate) use maintain::{after_commit, maintain};

/// Stores with fewer vectors than this are searched exactly (see [`set_ann_min_vectors`]).
pub(super) static MIN_VECTORS: AtomicUsize = AtomicUsize::new(DEFAULT_ANN_MIN_VECTORS);

/// Below this many vectors a store keeps no vector index: an exact scan of
/// 10,000 rows of 384 dimensions takes a few milliseconds.
pub const DEFAULT_ANN_MIN_VECTORS: usize = 10_000;

/// The size from which stores of this process keep a vector index, read when
/// a commit decides whether to build or update one. 0 or 1: always.
pub fn set_ann_min_vectors(vectors: usize) {
    MIN_VECTORS.store(vectors, Ordering::Relaxed);
}

/// Graph degree and breadths. Measured on 99,000 text vectors of 384
/// dimensions (2 cores): building with breadth 128 added 4,600 vectors/s,
/// 96 6,100/s, 64 10,700/s, at recall@10 (search breadth 128) 0.985, 0.977
/// and 0.961 against an exact search; 96 keeps recall above 0.95 with room
/// for larger stores. Candidates are re-scored exactly afterwards.
const CONNECTIVITY: usize = 16;
const EXPANSION_ADD: usize = 96;
/// The search breadth of views opened from now on (see [`set_ann_search_breadth`]).
static EXPANSION_SEARCH: AtomicUsize = AtomicUsize::new(DEFAULT_ANN_SEARCH_BREADTH);

/// How many graph nodes a query keeps in view while it walks (HNSW's `ef`):
/// wider finds more of the true nearest at more cost (docs/benchmarks.md,
/// "The vector index", has the trade-off measured at 100,000 and 1,000,000 vectors).
pub const DEFAULT_ANN_SEARCH_BREADTH: usize = 128;

/// The search breadth of vector index files this process opens from now
/// on (a store already open keeps the breadth of the file it mapped).
pub fn set_ann_search_breadth(ef: usize) {
    EXPANSION_SEARCH.store(ef.max(1), Ordering::Relaxed);
}

/// What `meta` says of the current vector index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AnnState {
    /// File name, beside the database.
    pub file: String,
    /// The last log entry the file holds.
    pub seq: i64,
    pub bytes: u64,
    pub dims: usize,
    /// Vectors in the graph, and those removed from it since it was built
    /// (they stay as waypoints until a rebuild).
    pub vectors: usize,
    pub removed: usize,
}

pub(super) const META_KEY: &str = "ann";

impl AnnState {
    pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Option<Self>> {
        let text: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![META_KEY],
                |r| r.get(0),
            )
            .optional()?;
        Ok(text.and_then(|t| Self::parse(&t)))
    }

    /// `None` for a value this build cannot use: the rows are then scanned.
    fn parse(text: &str) -> Option<Self> {
        let v: Value = serde_json::from_str(text).ok()?;
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        let file = v.get("file")?.as_str()?.to_owned();
        // Only a bare name beside the database.
        if file.contains(['/', '\\']) || !file.ends_with(".usearch") {
            return None;
        }
        Some(Self {
            file,
            seq: i64::try_from(n("seq")?).ok()?,
            bytes: n("bytes")?,
            dims: usize::try_from(n("dims")?).ok()?,
            vectors: usize::try_from(n("vectors")?).ok()?,
            removed: usize::try_from(n("removed").unwrap_or(0)).ok()?,
        })
    }

    pub(super) fn write(&self, conn: &Connection) -> rusqlite::Result<()> {
        let value = json!({
            "file": self.file, "seq": self.seq, "bytes": self.bytes, "dims": self.dims,
            "vectors": self.vectors, "removed": self.removed,
        });
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            params![META_KEY, value.to_string()],
        )
        .map(drop)
    }
}

/// The vector index of a store, as a status report shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorIndexStatus {
    /// Vectors stored.
    pub vectors: usize,
    /// The graph's file, `None` while the store is searched exactly.
    pub file: Option<PathBuf>,
    /// Vectors the graph holds.
    pub indexed: usize,
    /// Rows changed since the graph was written, searched exactly meanwhile.
    pub pending: usize,
}

impl std::fmt::Display for VectorIndexStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            None => write!(f, "exact vector search ({} vectors)", self.vectors),
            Some(_) if self.pending == 0 => {
                write!(f, "HNSW vector index ({} vectors)", self.indexed)
            }
            Some(_) => write!(
                f,
                "HNSW vector index ({} vectors, {} changed rows searched exactly)",
                self.indexed, self.pending
            ),
        }
    }
}

/// The rowids logged after `seq`.
pub(super) fn changed_since(conn: &Connection, seq: i64) -> rusqlite::Result<FxHashSet<i64>> {
    let mut stmt = conn.prepare_cached("SELECT row FROM vectors_log WHERE seq > ?1")?;
    let rows = stmt.query_map(params![seq], |r| r.get::<_, i64>(0))?;
    rows.collect()
}

pub(super) fn pending_count(conn: &Connection, seq: i64) -> rusqlite::Result<usize> {
    conn.query_row(
        "SELECT count(*) FROM vectors_log WHERE seq > ?1",
        params![seq],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n as usize)
}

/// The newest log entry ever written (the log itself may have been pruned).
pub(super) fn last_seq(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT seq FROM sqlite_sequence WHERE name = 'vectors_log'",
        [],
        |r| r.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
}

pub(super) fn vector_count(conn: &Connection) -> rusqlite::Result<usize> {
    conn.query_row("SELECT count(*) FROM vectors", [], |r| r.get::<_, i64>(0))
        .map(|n| n as usize)
}

pub(crate) fn file_path(db: &Path, file: &str) -> PathBuf {
    db.with_file_name(file)
}

/// The prefix of every vector index file of the database at `db`.
pub(super) fn file_prefix(db: &Path) -> String {
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}-vectors-")
}

/// Every vector index file (and unfinished one) beside the database at `db`.
pub fn vector_index_files(db: &Path) -> Vec<PathBuf> {
    let prefix = file_prefix(db);
    let dir = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

pub(super) fn usearch_err(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Other(format!("{}: {what}: {e}", path.display()))
}

pub(super) fn utf8(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| {
        Error::InvalidInput(format!(
            "{}: the vector index needs a UTF-8 path",
            path.display()
        ))
    })
}

/// The file `state` names, once its length and header agree with what was
/// recorded (a file cut short or overwritten is not handed to the reader).
pub(super) fn checked_file(db: &Path, state: &AnnState) -> Result<PathBuf> {
    let path = file_path(db, &state.file);
    let len = std::fs::metadata(&path)
        .map_err(|e| Error::io("opening", &path, e))?
        .len();
    if len != state.bytes {
        return Err(Error::corrupt(
            &path,
            format!("{len} bytes where {} were written", state.bytes),
        ));
    }
    let meta = Index::metadata(utf8(&path)?).map_err(|e| usearch_err(&path, "reading", e))?;
    if usize::try_from(meta.dimensions).ok() != Some(state.dims) {
        return Err(Error::corrupt(
            &path,
            format!("{} dimensions, {} recorded", meta.dimensions, state.dims),
        ));
    }
    Ok(path)
}

/// Opens the graph `state` names for reading, mapped (pages are read as a
/// search touches them).
pub(crate) fn open_view(db: &Path, state: &AnnState) -> Result<Index> {
    let path = checked_file(db, state)?;
    let index = Index::new(&options(state.dims)).map_err(|e| usearch_err(&path, "opening", e))?;
    // A search needs one of the index's per-thread contexts, and fails when
    // none is free (by default one per core); a view keeps the count reserved
    // before it, and `Gate` keeps searches within it.
    index
        .reserve_capacity_and_threads(0, SEARCH_SLOTS)
        .map_err(|e| usearch_err(&path, "opening", e))?;
    index
        .view(utf8(&path)?)
        .map_err(|e| usearch_err(&path, "mapping", e))?;
    index.change_expansion_search(EXPANSION_SEARCH.load(Ordering::Relaxed));
    Ok(index)
}

/// Searches that may run at once on one view (each holds a context of a
/// few kilobytes); more wait their turn.
const SEARCH_SLOTS: usize = 64;

/// Counts the searches in progress, process-wide, so that no more than
/// [`SEARCH_SLOTS`] run on any view at once.
struct Gate {
    running: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

static GATE: Gate = Gate {
    running: std::sync::Mutex::new(0),
    freed: std::sync::Condvar::new(),
};

/// A search's place under the gate, given back when dropped.
struct Slot;

impl Gate {
    fn enter(&self) -> Slot {
        let mut running = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *running >= SEARCH_SLOTS {
            running = self
                .freed
                .wait(running)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = GATE
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *running -= 1;
        GATE.freed.notify_one();
    }
}

pub(super) fn options(dims: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dims,
        metric: MetricKind::Cos,
        quantization: ScalarKind::F16,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH.load(Ordering::Relaxed),
        multi: false,
    }
}

/// Whether a row (by rowid) passes a query's filters.
pub(crate) type RowFilter<'a> = dyn Fn(&Connection, i64) -> Result<bool> + 'a;

/// Changed rows a query scores beside the graph at most (see `AnnQuery::run`).
const MAX_SCORED_CHANGES: usize = 20_000;

/// A query's answer from the graph: `None` when it cannot be trusted (a
/// filter the graph could not satisfy), so the caller scans.
pub(crate) struct AnnQuery<'a> {
    pub index: &'a Index,
    pub state: &'a AnnState,
    pub query: &'a [f32],
    pub top_k: usize,
    /// Whether the row passes the query's filters (`None`: no filters).
    pub keep: Option<&'a RowFilter<'a>>,
}

impl AnnQuery<'_> {
    /// The `top_k` best `(similarity, node id)` pairs, best first, scored as
    /// an exact search scores them.
    pub(crate) fn run(&self, conn: &Connection) -> Result<Option<Vec<(f32, String)>>> {
        // A query the exact path refuses (non-finite values) is refused there.
        if self.query.len() != self.state.dims
            || self.top_k == 0
            || self.query.iter().any(|v| !v.is_finite())
        {
            return Ok(None);
        }
        // Candidates beyond top_k: the graph ranks by half-precision vectors;
        // the re-scoring below restores the exact order among them.
        let want = self.top_k.saturating_mul(2).saturating_add(10);
        // Candidates for half the store or more: a scan reads it all anyway,
        // and rows the graph can no longer reach (after removals) are not missed.
        if want.saturating_mul(2) > self.state.vectors {
            return Ok(None);
        }
        let changed = changed_since(conn, self.state.seq).map_err(sql)?;
        // Updates failing for a while (a full disk): each changed row would
        // cost every query a read, so the rows are scanned instead.
        if changed.len() > MAX_SCORED_CHANGES {
            return Ok(None);
        }
        let failed = std::cell::Cell::new(None::<Error>);
        // A selective filter makes the walk visit most of the graph looking
        // for matches; past this many rows read, the rest are refused unread
        // and the matching rows are scanned instead.
        let budget = want.saturating_mul(20).max(2_000);
        let judged = std::cell::Cell::new(0usize);
        let keep_row = |key: u64| -> bool {
            let row = key as i64;
            if changed.contains(&row) {
                return false;
            }
            match self.keep {
                None => true,
                Some(_) if judged.get() >= budget => false,
                Some(keep) => {
                    judged.set(judged.get() + 1);
                    keep(conn, row).unwrap_or_else(|e| {
                        failed.set(Some(e));
                        false
                    })
                }
            }
        };
        let slot = GATE.enter();
        let found = if changed.is_empty() && self.keep.is_none() {
            self.index.search(self.query, want)
        } else {
            self.index.filtered_search(self.query, want, keep_row)
        }
        .map_err(|e| Error::Other(format!("searching the vector index: {e}")))?;
        drop(slot);
        if let Some(e) = failed.take() {
            return Err(e);
        }
        // A filter that left fewer candidates than asked for may have cut the
        // graph's paths short: the matching rows are scanned instead.
        if self.keep.is_some() && (found.keys.len() < want || judged.get() >= budget) {
            return Ok(None);
        }
        let mut rows: Vec<i64> = found.keys.iter().map(|k| *k as i64).collect();
        for &row in &changed {
            let keep = match self.keep {
                None => true,
                Some(keep) => keep(conn, row)?,
            };
            if keep {
                rows.push(row);
            }
        }
        // Scored in row order, as a scan scores them, so ties among the
        // candidates break alike (with more tied rows than candidates, which
        // of them are returned may differ).
        rows.sort_unstable();
        rows.dedup();
        let mut search = ExactSearch::new(
            self.query,
            ragloom_core::embeddings::SimilarityMode::Cosine,
            self.top_k,
        );
        let mut stmt = conn
            .prepare_cached("SELECT node_id, embedding FROM vectors WHERE rowid = ?1")
            .map_err(sql)?;
        let mut values = Vec::new();
        for row in rows {
            let mut hit = stmt.query(params![row]).map_err(sql)?;
            // A changed row may have been deleted: then it is not there.
            if let Some(r) = hit.next().map_err(sql)? {
                let id: String = r.get(0).map_err(sql)?;
                let blob = r
                    .get_ref(1)
                    .and_then(|v| v.as_blob().map_err(Into::into))
                    .map_err(sql)?;
                crate::vector_store::from_blob_into(blob, &mut values);
                search.push(id, &values)?;
            }
        }
        Ok(Some(search.finish()))
    }
}

pub(super) fn sql(e: rusqlite::Error) -> Error {
    Error::Other(format!("reading the vector index's rows: {e}"))
}

/// The status of the vector index of the commit `conn` reads.
pub(crate) fn status(db: &Path, conn: &Connection) -> rusqlite::Result<VectorIndexStatus> {
    let vectors = vector_count(conn)?;
    let state = AnnState::read(conn)?;
    Ok(match state {
        None => VectorIndexStatus {
            vectors,
            ..VectorIndexStatus::default()
        },
        Some(s) => VectorIndexStatus {
            vectors,
            file: Some(file_path(db, &s.file)),
            indexed: s.vectors,
            pending: pending_count(conn, s.seq)?,
        },
    })
}

/// A mapped vector index shared by a store's queries, with its file name.
#[derive(Clone)]
pub(crate) struct View(pub String, pub Arc<Index>);

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("View").field(&self.0).finish()
    }
}

/// The view a store's queries share, if one is open.
pub(crate) type SharedView = Option<View>;
