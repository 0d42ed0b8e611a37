//! One SQLite file shared by every store of a [`crate::SqliteStore`]: a writer
//! connection, a pool of readers (WAL: readers see the last commit), and the transaction in progress.

use crate::schema;
use ragloom_core::error::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Bytes of each file that new reader connections map (see
/// [`set_reader_mmap_size`]).
static READER_MMAP: AtomicU64 = AtomicU64::new(0);

/// How much of each database file new reader connections map into memory
/// instead of copying its pages through `read(2)`, for the whole process,
/// as SQLite's own `SQLITE_CONFIG_MMAP_SIZE` is. Worth it where a process
/// answers many questions from the same files (a server: copying pages was
/// a sixth of a served BM25 question), not where it asks once (RSS counts
/// every mapped page touched: a command-line hybrid question over 15,000
/// nodes peaked at 118 MB mapped against 56 MB copied). The pages are the
/// OS cache's; files are only ever unlinked, which leaves a mapping valid,
/// and SQLite unmaps before it truncates. Default 0 (no mapping); ignored
/// on 32-bit targets, whose address space a map per connection would use up.
pub fn set_reader_mmap_size(bytes: u64) {
    READER_MMAP.store(bytes, Ordering::Relaxed);
}

/// How a [`crate::SqliteStore`] opens its file.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// How long a writer waits for another process's transaction to end
    /// before giving up (SQLite's busy timeout). Default: one hour, so a
    /// second ingest waits for the first; zero fails at once.
    pub busy_timeout: Duration,
    /// The file is new and nothing reads it before this store's first
    /// commit (a build an application publishes once it is written).
    /// Until that commit its pages are written once, in place, with a
    /// rollback journal on disk that holds next to nothing, instead of to
    /// the write-ahead log and then again into the file; a process killed
    /// before it leaves a file to delete, not one to open. Later commits
    /// use the log as usual.
    /// Opening an existing, non-empty file (or one with a journal) this way
    /// is an error. Default: false.
    pub fresh: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(3600),
            fresh: false,
        }
    }
}

/// Which state an operation sees: the last commit, or the open transaction's.
#[derive(Clone, Debug)]
pub(crate) enum Scope {
    Committed,
    Tx(Arc<TxState>),
}

/// The open transaction's state, shared by the stores it hands out.
#[derive(Debug)]
pub(crate) struct TxState {
    pub(crate) ended: AtomicBool,
    /// This process's turn to write; released when the transaction ends.
    pub(crate) permit: Mutex<Option<tokio::sync::OwnedMutexGuard<()>>>,
}

#[derive(Debug)]
pub(crate) struct Db {
    pub(crate) path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    options: SqliteOptions,
    /// One transaction at a time in this process (SQLite allows one writer).
    pub(crate) turn: Arc<tokio::sync::Mutex<()>>,
    /// Whether a transaction is open, so a write beside it is refused instead of deadlocking.
    pub(crate) in_tx: AtomicBool,
    /// One look at the vector index at a time (see `crate::ann`).
    pub(crate) ann_turn: Mutex<()>,
    /// Opened [`SqliteOptions::fresh`] and not yet committed: the writer
    /// keeps a rollback journal, and readers must not wait on it.
    fresh: AtomicBool,
}

/// A database's files: the file itself, its write-ahead log and shared
/// memory index, and its rollback journal, each SQLite's name beside it.
/// Removing a database means removing all four: a journal left behind would
/// be rolled back into a new file at that path.
pub fn database_files(path: &Path) -> [PathBuf; 4] {
    ["", "-wal", "-shm", "-journal"].map(|suffix| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    })
}

impl Db {
    pub(crate) fn open(path: &Path, options: SqliteOptions) -> Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("creating", parent, e))?;
        }
        // A journal left beside would be rolled back into the new file.
        let [file, _, _, journal] = database_files(path);
        let taken = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.len() > 0);
        if options.fresh && (taken(&file) || taken(&journal)) {
            return Err(Error::InvalidInput(format!(
                "{}: exists (or its journal does); a fresh store needs a new file",
                path.display()
            )));
        }
        let mut writer = open_connection(path, &options, true)?;
        schema::migrate(&mut writer).map_err(|m| Error::corrupt(path, m))?;
        Ok(Self {
            path: path.to_path_buf(),
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
            fresh: AtomicBool::new(options.fresh),
            options,
            turn: Arc::new(tokio::sync::Mutex::new(())),
            in_tx: AtomicBool::new(false),
            ann_turn: Mutex::new(()),
        })
    }

    /// After a commit: a fresh file's first one is complete, and from now
    /// on readers may read it while a writer writes, so it takes the log.
    /// The writer is opened anew for it: the connection that wrote the
    /// file without a log kept a transaction open after switching (every
    /// checkpoint on it then failed as "locked"). The commit stands whatever
    /// happens here; if the log cannot be had, the writer keeps a rollback
    /// journal on disk, so later commits still survive a kill.
    fn committed(&self, conn: &mut Connection) -> Result<()> {
        if !self.fresh.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        match self.open_on_wal() {
            Ok(writer) => {
                *conn = writer;
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "committed; the file keeps a rollback journal");
                conn.execute_batch("PRAGMA journal_mode = DELETE")
                    .map_err(|e2| Error::Provider {
                        provider: "sqlite".into(),
                        message: format!(
                            "{}: committed, but neither the write-ahead log ({e}) nor a rollback journal ({e2}) could be turned on",
                            self.path.display()
                        ),
                        source: None,
                    })
            }
        }
    }

    /// A new writer on the file, in WAL mode.
    fn open_on_wal(&self) -> Result<Connection> {
        let options = SqliteOptions {
            fresh: false,
            ..self.options.clone()
        };
        let writer = open_connection(&self.path, &options, true)?;
        let mode: String = writer
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| self.err("switching to the write-ahead log", e))?;
        // SQLite keeps the old mode when it cannot switch.
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Provider {
                provider: "sqlite".into(),
                message: format!(
                    "{}: the write-ahead log could not be turned on (the journal stays {mode})",
                    self.path.display()
                ),
                source: None,
            });
        }
        Ok(writer)
    }

    pub(crate) fn err(&self, what: &str, e: rusqlite::Error) -> Error {
        let message = match &e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
                format!(
                    "{}: {what}: another process is writing this index (waited {:?})",
                    self.path.display(),
                    self.options.busy_timeout
                )
            }
            _ => format!("{}: {what}: {e}", self.path.display()),
        };
        Error::Provider {
            provider: "sqlite".into(),
            message,
            source: Some(Box::new(e)),
        }
    }

    /// Runs `f` on a connection that sees `scope`'s state, in one read snapshot.
    pub(crate) fn read<R>(
        &self,
        scope: &Scope,
        f: impl FnOnce(&Connection) -> Result<R>,
    ) -> Result<R> {
        match scope {
            Scope::Tx(tx) => self.in_tx(tx, f),
            Scope::Committed => {
                let pooled = self
                    .readers
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop();
                let conn = match pooled {
                    Some(c) => c,
                    None => open_connection(&self.path, &self.options, false)?,
                };
                // A fresh file's writer may hold it whole until its first
                // commit: a read then fails at once rather than waiting.
                let fresh = self.fresh.load(Ordering::SeqCst);
                if fresh {
                    conn.busy_timeout(Duration::ZERO)
                        .map_err(|e| self.err("starting a read", e))?;
                }
                conn.execute_batch("BEGIN DEFERRED")
                    .map_err(|e| self.err("starting a read", e))?;
                let out = f(&conn);
                // A read transaction only ends; nothing to keep.
                let _ = conn.execute_batch("COMMIT");
                if fresh {
                    conn.busy_timeout(self.options.busy_timeout)
                        .map_err(|e| self.err("ending a read", e))?;
                }
                self.readers
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(conn);
                out
            }
        }
    }

    /// Runs `f` where its writes belong: in the open transaction for
    /// `Scope::Tx`, else in a transaction of its own that commits at once.
    pub(crate) fn write<R>(
        &self,
        scope: &Scope,
        f: impl FnOnce(&Connection) -> Result<R>,
    ) -> Result<R> {
        match scope {
            Scope::Tx(tx) => self.in_tx(tx, f),
            Scope::Committed => {
                if self.in_tx.load(Ordering::SeqCst) {
                    return Err(Error::InvalidInput(format!(
                        "{}: a transaction is open on this store; write through its storage context, or after it ends",
                        self.path.display()
                    )));
                }
                let mut conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
                conn.execute_batch("BEGIN IMMEDIATE")
                    .map_err(|e| self.err("starting a write", e))?;
                match f(&conn) {
                    Ok(out) => {
                        conn.execute_batch("COMMIT")
                            .map_err(|e| self.err("committing", e))?;
                        self.committed(&mut conn)?;
                        Ok(out)
                    }
                    Err(e) => {
                        let _ = conn.execute_batch("ROLLBACK");
                        Err(e)
                    }
                }
            }
        }
    }

    /// Runs `f` inside the open transaction `tx` (its reads see its writes).
    fn in_tx<R>(&self, tx: &TxState, f: impl FnOnce(&Connection) -> Result<R>) -> Result<R> {
        let conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        // Checked under the lock: a write that waited for it while the
        // transaction ended must not run on the connection after the end.
        check_open(tx)?;
        f(&conn)
    }

    /// Starts the transaction on the writer (waiting for other processes' writers).
    pub(crate) fn begin_on_writer(&self) -> Result<()> {
        let conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err("starting a transaction", e))
    }

    /// Ends the transaction on the writer with `COMMIT` or `ROLLBACK`.
    pub(crate) fn end_on_writer(&self, commit: bool) -> Result<()> {
        let mut conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        let out = conn.execute_batch(sql);
        if out.is_err() && commit {
            // A failed COMMIT leaves the transaction open: end it, so nothing half-written stays.
            let _ = conn.execute_batch("ROLLBACK");
        }
        out.map_err(|e| self.err(if commit { "committing" } else { "rolling back" }, e))?;
        if commit {
            self.committed(&mut conn)?;
        }
        Ok(())
    }

    /// Copies the write-ahead log into the file and empties it, waiting at
    /// most a second for readers; returns whether it was emptied.
    pub(crate) fn checkpoint(&self) -> Result<bool> {
        let conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        conn.busy_timeout(Duration::from_secs(1))
            .map_err(|e| self.err("checkpointing", e))?;
        let out: rusqlite::Result<i64> =
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0));
        conn.busy_timeout(self.options.busy_timeout)
            .map_err(|e| self.err("checkpointing", e))?;
        match out {
            Ok(busy) => Ok(busy == 0),
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseBusy =>
            {
                Ok(false)
            }
            Err(e) => Err(self.err("checkpointing", e)),
        }
    }

    pub(crate) fn schema_version(&self) -> Result<Option<i64>> {
        self.read(&Scope::Committed, |c| {
            schema::version(c).map_err(|e| self.err("reading the schema version", e))
        })
    }
}

fn check_open(tx: &TxState) -> Result<()> {
    if tx.ended.load(Ordering::SeqCst) {
        return Err(Error::InvalidInput(
            "this transaction has ended (committed or rolled back); use the store's own storage context".into(),
        ));
    }
    Ok(())
}

fn open_connection(path: &Path, options: &SqliteOptions, writer: bool) -> Result<Connection> {
    let flags = if writer {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let wrap = |e: rusqlite::Error| Error::Provider {
        provider: "sqlite".into(),
        message: format!("{}: opening: {e}", path.display()),
        source: Some(Box::new(e)),
    };
    let conn = Connection::open_with_flags(path, flags).map_err(wrap)?;
    conn.busy_timeout(options.busy_timeout).map_err(wrap)?;
    if writer {
        // WAL: readers keep reading the last commit while a writer writes;
        // synchronous=NORMAL in WAL loses no committed transaction on a process
        // crash (only, at worst, the last ones on a power loss).
        // The writer caches up to 64 MiB of pages (allocated as they are
        // read): a large ingest updates the key index at random places, and
        // SQLite's 2 MiB default made it re-read pages at every insert.
        // 16 KiB pages (a new file only; an existing one keeps its own): a
        // node's compressed JSON is a few KiB, and 4 KiB pages would leave a
        // third of each page empty (measured: the 50 MB corpus takes 1.75x its
        // text instead of 2.1x).
        // A fresh file keeps a rollback journal until its first commit (see
        // `SqliteOptions::fresh`): its pages are new, so there is almost
        // nothing to journal, and nothing is written twice. On disk, not in
        // memory: with the journal in memory SQLite held far more than its
        // cache (a 1 GB ingest peaked at 1.26 GB, against 0.57 GB so).
        let journal = if options.fresh { "TRUNCATE" } else { "WAL" };
        conn.execute_batch(&format!(
            "PRAGMA page_size = 16384; PRAGMA journal_mode = {journal}; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
             PRAGMA cache_size = -65536;"
        ))
        .map_err(wrap)?;
    } else if cfg!(target_pointer_width = "64") {
        let bytes = READER_MMAP.load(Ordering::Relaxed);
        if bytes > 0 {
            conn.execute_batch(&format!("PRAGMA mmap_size = {bytes};"))
                .map_err(wrap)?;
        }
    }
    Ok(conn)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Readers map the file only once a process asks for it; the writer never.
    #[test]
    fn readers_map_the_file_only_when_the_process_asks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sqlite");
        drop(open_connection(&path, &SqliteOptions::default(), true).unwrap());
        let mapped = |writer: bool| -> i64 {
            let conn = open_connection(&path, &SqliteOptions::default(), writer).unwrap();
            conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))
                .unwrap()
        };
        set_reader_mmap_size(0);
        assert_eq!(mapped(false), 0);
        set_reader_mmap_size(1 << 20);
        assert_eq!(mapped(false), 1 << 20);
        assert_eq!(mapped(true), 0);
        set_reader_mmap_size(0);
    }
}
