//! Keeping the vector index file up to a store's commits: built once the
//! store is large enough, updated from the change log, written beside the database and then named.

use super::{
    AnnState, META_KEY, MIN_VECTORS, changed_since, checked_file, file_path, file_prefix, last_seq,
    options, pending_count, sql, usearch_err, utf8, vector_count, vector_index_files,
};
use crate::db::{Db, Scope};
use crate::keyword::{meta_i64, set_meta};
use ragloom_core::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use usearch::Index;

/// [`maintain`] after a commit, off the async threads; a failure is only
/// logged (the commit stands, and queries scan until a later one succeeds).
pub(crate) async fn after_commit(db: &Arc<Db>) {
    // One look at a time per store: a commit landing while another commit's
    // look builds leaves its rows to be scored exactly until the next one.
    let out = match tokio::runtime::Handle::try_current() {
        Ok(_) => {
            let db = Arc::clone(db);
            tokio::task::spawn_blocking(move || maintain_if_idle(&db))
                .await
                .unwrap_or_else(|e| Err(Error::Other(format!("updating the vector index: {e}"))))
        }
        Err(_) => maintain_if_idle(db),
    };
    if let Err(e) = out {
        tracing::warn!(error = %e, "the vector index was not updated; queries scan the rows meanwhile");
    }
}

/// What a commit's look at the vector index did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VectorIndexUpdate {
    /// Nothing to do: too few vectors, or few enough changes that queries
    /// score them exactly beside the graph.
    Unchanged,
    /// The graph was built from every row.
    Built {
        /// Vectors in it.
        vectors: usize,
    },
    /// The rows changed since the last file were applied to it.
    Updated {
        /// Rows added, replaced or removed.
        changed: usize,
    },
    /// The store shrank below the threshold; the graph was dropped.
    Dropped,
}

/// Brings the vector index of `db` up to its last commit when it is due:
/// built once the store holds [`set_ann_min_vectors`] vectors, updated once
/// more than 1,000 rows changed since it was written (until then queries
/// score those rows exactly). Runs outside any transaction; the
/// file is named by a short transaction of its own once it is on disk.
pub(crate) fn maintain(db: &Db) -> Result<VectorIndexUpdate> {
    let _turn = db
        .ann_turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    maintain_locked(db)
}

/// [`maintain`], unless another look of this store is under way.
fn maintain_if_idle(db: &Db) -> Result<VectorIndexUpdate> {
    match db.ann_turn.try_lock() {
        Ok(_turn) => maintain_locked(db),
        Err(std::sync::TryLockError::Poisoned(p)) => {
            let _turn = p.into_inner();
            maintain_locked(db)
        }
        Err(std::sync::TryLockError::WouldBlock) => Ok(VectorIndexUpdate::Unchanged),
    }
}

fn maintain_locked(db: &Db) -> Result<VectorIndexUpdate> {
    let min = MIN_VECTORS.load(Ordering::Relaxed).max(1);
    // usearch names files by `&str`: a store elsewhere is searched exactly
    // (checked before a build, not after it).
    if db.path.to_str().is_none() {
        return Ok(VectorIndexUpdate::Unchanged);
    }
    // Decide and build in one snapshot, so the file holds exactly the rows
    // up to `last`.
    let built = db.read(&Scope::Committed, |c| {
        let vectors = vector_count(c).map_err(sql)?;
        let state = AnnState::read(c).map_err(sql)?;
        let last = last_seq(c).map_err(sql)?;
        if vectors < min {
            let logged: bool = c
                .query_row("SELECT EXISTS (SELECT 1 FROM vectors_log)", [], |r| {
                    r.get(0)
                })
                .map_err(sql)?;
            return Ok(if state.is_some() || logged {
                Plan::Drop { last }
            } else {
                Plan::Nothing
            });
        }
        let dims = match c
            .query_row("SELECT length(embedding) FROM vectors LIMIT 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map_err(sql)?
        {
            Some(bytes) if bytes > 0 => bytes as usize / 4,
            _ => return Ok(Plan::Nothing),
        };
        let usable = state
            .as_ref()
            .is_some_and(|s| checked_file(&db.path, s).is_ok());
        if let Some(s) = state.as_ref().filter(|_| usable) {
            let pending = pending_count(c, s.seq).map_err(sql)?;
            if pending == 0 || (s.dims == dims && pending <= max_pending(min)) {
                return Ok(Plan::Nothing);
            }
            if s.dims == dims && s.removed + pending <= vectors / 4 {
                match update(db, c, s, last) {
                    Ok(built) => return Ok(Plan::Install(built)),
                    Err(e) => tracing::warn!(error = %e, "rebuilding the vector index"),
                }
            }
        }
        build(db, c, dims, vectors, last).map(Plan::Install)
    })?;
    match built {
        Plan::Nothing => Ok(VectorIndexUpdate::Unchanged),
        Plan::Drop { last } => {
            let old = db.write(&Scope::Committed, |c| {
                let old = AnnState::read(c).map_err(sql)?;
                c.execute("DELETE FROM meta WHERE key = ?1", params![META_KEY])
                    .and_then(|_| prune_log(c, last))
                    .map_err(|e| db.err("dropping the vector index", e))?;
                Ok(old)
            })?;
            remove_stale(&db.path, None);
            Ok(if old.is_some() {
                VectorIndexUpdate::Dropped
            } else {
                VectorIndexUpdate::Unchanged
            })
        }
        Plan::Install(built) => install(db, built),
    }
}

/// How many changed rows queries score exactly beside the file before a
/// commit updates it: each costs a query a row read (30,000 pending rows
/// made a query over a million vectors take 42 ms instead of 2), and each
/// update rewrites the file, so a sync's one transaction updates it once.
fn max_pending(min_vectors: usize) -> usize {
    (min_vectors / 10).clamp(1, 1_000)
}

const PRUNED_KEY: &str = "ann_log_pruned";

/// The log entries up to which the log was emptied (0: never).
fn pruned_to(conn: &Connection) -> rusqlite::Result<i64> {
    meta_i64(conn, PRUNED_KEY)
}

/// Empties the log up to `seq`, recording how far, so no file built from
/// an older snapshot is named after it.
fn prune_log(conn: &Connection, seq: i64) -> rusqlite::Result<usize> {
    set_meta(conn, PRUNED_KEY, pruned_to(conn)?.max(seq))?;
    conn.execute("DELETE FROM vectors_log WHERE seq <= ?1", params![seq])
}

enum Plan {
    Nothing,
    Drop { last: i64 },
    Install(Built),
}

/// A graph written to its file, not yet named.
struct Built {
    state: AnnState,
    report: VectorIndexUpdate,
}

/// Rows are read and added in batches of this many, so a build holds one
/// batch of `f32` vectors beside the graph.
const BATCH: usize = 4096;

/// Adds `batch` to `index` on the rayon pool's threads (the index reserved
/// as many) and empties it; rows of another length are left out.
fn add_batch(
    index: &Index,
    batch: &mut Vec<(u64, Vec<f32>)>,
    dims: usize,
    path: &Path,
) -> Result<()> {
    use rayon::prelude::*;
    let failed = batch
        .par_iter()
        .filter(|(_, v)| v.len() == dims)
        .map(|(key, v)| index.add(*key, v).map_err(|e| e.to_string()))
        .find_any(Result::is_err);
    batch.clear();
    match failed {
        Some(Err(e)) => Err(usearch_err(path, "adding a vector", e)),
        _ => Ok(()),
    }
}

fn build(db: &Db, conn: &Connection, dims: usize, vectors: usize, last: i64) -> Result<Built> {
    let started = std::time::Instant::now();
    tracing::info!(vectors, "building the vector index");
    let index = Index::new(&options(dims)).map_err(|e| usearch_err(&db.path, "building", e))?;
    let threads = rayon::current_num_threads().max(1);
    index
        .reserve_capacity_and_threads(vectors, threads)
        .map_err(|e| usearch_err(&db.path, "reserving", e))?;
    let mut stmt = conn
        .prepare("SELECT rowid, embedding FROM vectors")
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut batch: Vec<(u64, Vec<f32>)> = Vec::with_capacity(BATCH);
    let mut added = 0usize;
    while let Some(r) = rows.next().map_err(sql)? {
        let key: i64 = r.get(0).map_err(sql)?;
        let blob = r
            .get_ref(1)
            .and_then(|v| v.as_blob().map_err(Into::into))
            .map_err(sql)?;
        if added >= vectors {
            // More rows than counted cannot happen in one snapshot; the
            // graph holds what it reserved for.
            break;
        }
        batch.push((key as u64, crate::vector_store::from_blob(blob)));
        added += 1;
        if batch.len() == BATCH {
            add_batch(&index, &mut batch, dims, &db.path)?;
        }
    }
    add_batch(&index, &mut batch, dims, &db.path)?;
    let vectors = index.size();
    tracing::info!(
        vectors,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "built the vector index"
    );
    let state = save(db, &index, dims, last, vectors, 0)?;
    Ok(Built {
        state,
        report: VectorIndexUpdate::Built { vectors },
    })
}

/// The graph of `state` with the rows logged after it applied.
fn update(db: &Db, conn: &Connection, state: &AnnState, last: i64) -> Result<Built> {
    let path = checked_file(&db.path, state)?;
    let index = Index::new(&options(state.dims)).map_err(|e| usearch_err(&path, "opening", e))?;
    index
        .load(utf8(&path)?)
        .map_err(|e| usearch_err(&path, "loading", e))?;
    let changed = changed_since(conn, state.seq).map_err(sql)?;
    index
        .reserve_capacity_and_threads(
            index.size() + changed.len() + 1,
            rayon::current_num_threads().max(1),
        )
        .map_err(|e| usearch_err(&path, "reserving", e))?;
    let mut stmt = conn
        .prepare_cached("SELECT embedding FROM vectors WHERE rowid = ?1")
        .map_err(sql)?;
    let mut removed = state.removed;
    let mut rows: Vec<i64> = changed.iter().copied().collect();
    rows.sort_unstable();
    let mut batch = Vec::with_capacity(BATCH);
    for row in &rows {
        let key = *row as u64;
        if index.contains(key) {
            index
                .remove(key)
                .map_err(|e| usearch_err(&path, "removing a vector", e))?;
            removed += 1;
        }
        let blob: Option<Vec<u8>> = stmt
            .query_row(params![row], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        if let Some(b) = blob {
            batch.push((key, crate::vector_store::from_blob(&b)));
        }
        if batch.len() == BATCH {
            add_batch(&index, &mut batch, state.dims, &path)?;
        }
    }
    add_batch(&index, &mut batch, state.dims, &path)?;
    let vectors = index.size();
    let state = save(db, &index, state.dims, last, vectors, removed)?;
    Ok(Built {
        state,
        report: VectorIndexUpdate::Updated {
            changed: rows.len(),
        },
    })
}

/// Writes `index` to its own file beside the database, synced: a file a
/// reader may map once a transaction names it.
fn save(
    db: &Db,
    index: &Index,
    dims: usize,
    last: i64,
    vectors: usize,
    removed: usize,
) -> Result<AnnState> {
    let file = format!("{}{last}.usearch", file_prefix(&db.path));
    let path = file_path(&db.path, &file);
    static TEMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = TEMPS.fetch_add(1, Ordering::Relaxed);
    let tmp = file_path(&db.path, &format!("{file}.{}-{n}.tmp", std::process::id()));
    index
        .save(utf8(&tmp)?)
        .map_err(|e| usearch_err(&tmp, "writing", e))?;
    let synced = std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all().map(|()| f.metadata()))
        .and_then(|m| m)
        .map_err(|e| Error::io("syncing", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io("renaming", &tmp, e))?;
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        // The rename itself must survive a power loss before `meta` names the file.
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(AnnState {
        file,
        seq: last,
        bytes: synced.len(),
        dims,
        vectors,
        removed,
    })
}

/// Names the new file, unless another writer named a newer one meanwhile;
/// then removes the files no commit names any more.
fn install(db: &Db, built: Built) -> Result<VectorIndexUpdate> {
    let named = db.write(&Scope::Committed, |c| {
        let current = AnnState::read(c).map_err(sql)?;
        // Another writer's newer file stays; so does an intact one of the
        // same position (this one then replaced it on disk with its equal).
        if current.as_ref().is_some_and(|s| {
            s.seq > built.state.seq || (s.seq == built.state.seq && s.file != built.state.file)
        }) {
            return Ok(false);
        }
        // The file needs every log entry after its own: another writer
        // that dropped the index meanwhile pruned some of them.
        if pruned_to(c).map_err(sql)? > built.state.seq {
            return Ok(false);
        }
        built
            .state
            .write(c)
            .and_then(|()| prune_log(c, built.state.seq))
            .map_err(|e| db.err("naming the vector index", e))?;
        Ok(true)
    });
    match named {
        Ok(true) => {
            remove_stale(&db.path, Some(&built.state));
            Ok(built.report)
        }
        Ok(false) => {
            let _ = std::fs::remove_file(file_path(&db.path, &built.state.file));
            Ok(VectorIndexUpdate::Unchanged)
        }
        // Whether the file got named is not known (a failure can follow a
        // commit): it stays, and a later install removes it once stale.
        Err(e) => Err(e),
    }
}

/// Removes the vector index files beside `db` older than `keep` (all of
/// them without it). A reader that mapped one keeps its pages; one about to
/// open it finds it gone and scans. A newer file is another writer's.
fn remove_stale(db: &Path, keep: Option<&AnnState>) {
    let prefix = file_prefix(db);
    for path in vector_index_files(db) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let seq = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('.').next())
            .and_then(|n| n.parse::<i64>().ok());
        let stale = match keep {
            None => true,
            Some(k) => name != k.file && seq.is_none_or(|s| s <= k.seq),
        };
        if stale {
            let _ = std::fs::remove_file(path);
        }
    }
}
