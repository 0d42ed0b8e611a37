//! `PgSession`: one PostgreSQL connection on a thread of its own, optionally
//! inside one transaction, shared by async stores and by synchronous ones.
//!
//! The key-value stores under LlamaIndex's docstore are synchronous (their
//! writes are closures over a table), the vector store is async, and one
//! transaction must carry both: so the connection lives on a dedicated
//! thread with its own runtime and both kinds of caller send it jobs.

use crate::PROVIDER;
use futures::future::BoxFuture;
use ragloom_core::{Error, Result};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection, Postgres, TransactionManager};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};

/// How long a session waits for the server to accept its connection.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

const BEGIN_READ_COMMITTED: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

/// Work for the session's connection.
type Job = Box<dyn for<'c> FnOnce(&'c mut PgConnection) -> BoxFuture<'c, ()> + Send>;

enum Msg {
    Job(Job),
    /// Ends the session: commits (`true`) or rolls back its transaction.
    End(bool, oneshot::Sender<Result<()>>),
}

/// One connection, inside one transaction when started with
/// [`begin`](Self::begin). Cloning shares it; its jobs run one at a time, in
/// the order sent. Dropping the last clone without [`end`](Self::end) rolls
/// the transaction back (the server does so when the connection closes).
#[derive(Clone)]
pub struct PgSession {
    inner: Arc<Inner>,
}

struct Inner {
    jobs: mpsc::UnboundedSender<Msg>,
    ended: AtomicBool,
    /// Set by the connection's thread when the session's transaction was
    /// rolled back under it (an error where no savepoint could catch it).
    lost: Arc<AtomicBool>,
    transactional: bool,
    endpoint: String,
    turn: std::sync::Mutex<()>,
}

impl fmt::Debug for PgSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgSession")
            .field("server", &self.inner.endpoint)
            .field("transactional", &self.inner.transactional)
            .field("ended", &self.inner.ended.load(Ordering::SeqCst))
            .finish()
    }
}

/// Where `o` points, as `host:port/database` (never the password), for
/// errors and logs.
pub fn endpoint(o: &PgConnectOptions) -> String {
    format!(
        "{}:{}/{}",
        o.get_host(),
        o.get_port(),
        o.get_database().unwrap_or(o.get_username())
    )
}

impl PgSession {
    /// Connects and starts a transaction; every job sees its writes, and
    /// nothing of it is visible to others until [`end`](Self::end)`(true)`.
    pub async fn begin(options: &PgConnectOptions) -> Result<Self> {
        Self::start(options, true).await
    }

    /// Connects without a transaction: each statement commits on its own.
    pub async fn connect(options: &PgConnectOptions) -> Result<Self> {
        Self::start(options, false).await
    }

    async fn start(options: &PgConnectOptions, transactional: bool) -> Result<Self> {
        let endpoint = endpoint(options);
        let (jobs, mut inbox) = mpsc::unbounded_channel::<Msg>();
        let (ready, started) = oneshot::channel::<Result<()>>();
        let options = options.clone();
        let where_ = endpoint.clone();
        let lost = Arc::new(AtomicBool::new(false));
        let lost_here = Arc::clone(&lost);
        std::thread::Builder::new()
            .name("ragloom-pg-session".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready.send(Err(Error::failed("starting a PostgreSQL session", e)));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let connect = PgConnection::connect_with(&options);
                    let mut conn = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
                        Ok(Ok(c)) => c,
                        Ok(Err(e)) => {
                            let _ = ready.send(Err(connect_error(&where_, e)));
                            return;
                        }
                        Err(_) => {
                            let _ = ready.send(Err(Error::provider(
                                PROVIDER,
                                format!(
                                    "cannot connect to PostgreSQL at {where_}: no answer in {} s",
                                    CONNECT_TIMEOUT.as_secs()
                                ),
                                std::io::Error::from(std::io::ErrorKind::TimedOut),
                            )));
                            return;
                        }
                    };
                    if !transactional {
                        let _ = ready.send(Ok(()));
                        if let Some((_, reply)) = serve(&mut conn, &mut inbox, None).await {
                            let _ = reply.send(Ok(()));
                        }
                        let _ = conn.close().await;
                        return;
                    }
                    // READ COMMITTED whatever the server's default: a writer that
                    // waited for a lock must see what the previous one committed.
                    let mut tx = match conn.begin_with(BEGIN_READ_COMMITTED).await {
                        Ok(tx) => tx,
                        Err(e) => {
                            let _ = ready.send(Err(pg(&where_, "starting a transaction", e)));
                            return;
                        }
                    };
                    let _ = ready.send(Ok(()));
                    match serve(&mut tx, &mut inbox, Some(&lost_here)).await {
                        Some((commit, reply)) => {
                            // Through sqlx's depth, so the dropped handle below
                            // finds nothing left to roll back.
                            let out = finish(&mut tx, commit, &lost_here, &where_).await;
                            drop(tx);
                            let _ = reply.send(out);
                        }
                        // Every handle dropped: dropping the transaction rolls it back.
                        None => drop(tx),
                    }
                    let _ = conn.close().await;
                });
            })
            .map_err(|e| Error::failed("starting a PostgreSQL session", e))?;
        started
            .await
            .map_err(|_| Error::Other("the PostgreSQL session stopped while starting".into()))??;
        Ok(Self {
            inner: Arc::new(Inner {
                jobs,
                ended: AtomicBool::new(false),
                transactional,
                endpoint,
                turn: std::sync::Mutex::new(()),
                lost,
            }),
        })
    }

    /// Whether the session runs inside one transaction.
    pub fn is_transactional(&self) -> bool {
        self.inner.transactional
    }

    /// Holds the session for a sequence of jobs that must not interleave with
    /// other callers' (a `BEGIN` ... `COMMIT` on a session without a
    /// transaction). Not re-entrant: take it once per sequence.
    pub fn turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner
            .turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether [`end`](Self::end) was called.
    pub fn is_ended(&self) -> bool {
        self.inner.ended.load(Ordering::SeqCst)
    }

    fn send(&self, job: Job) -> Result<()> {
        if self.is_ended() {
            return Err(Error::InvalidInput(
                "this PostgreSQL transaction has ended; start a new one".into(),
            ));
        }
        self.inner.jobs.send(Msg::Job(job)).map_err(|_| self.gone())
    }

    fn gone(&self) -> Error {
        if self.inner.lost.load(Ordering::SeqCst) {
            return Error::Other(format!(
                "the transaction on PostgreSQL at {} was rolled back by an earlier error; \
                 start a new one",
                self.inner.endpoint
            ));
        }
        Error::Other(format!(
            "the PostgreSQL session with {} ended (its connection closed)",
            self.inner.endpoint
        ))
    }

    /// Runs `f` on the session's connection and returns what it returns.
    pub async fn run<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BoxFuture<'c, Result<R>> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.send(Box::new(move |conn| {
            Box::pin(async move {
                let _ = tx.send(f(conn).await);
            })
        }))?;
        rx.await.map_err(|_| self.gone())?
    }

    /// Runs `f` on the session's connection, blocking this thread until it
    /// is done: for synchronous callers. The connection's own thread does the
    /// work, so this is safe inside any Tokio runtime.
    pub fn run_blocking<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BoxFuture<'c, Result<R>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Box::new(move |conn| {
            Box::pin(async move {
                let _ = tx.send(f(conn).await);
            })
        }))?;
        rx.recv().map_err(|_| self.gone())?
    }

    /// Ends the session: commits its transaction (`commit`) or rolls it back,
    /// and closes the connection. Later jobs are refused. Ending twice is no error.
    pub async fn end(&self, commit: bool) -> Result<()> {
        if self.inner.ended.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let (tx, rx) = oneshot::channel();
        self.inner
            .jobs
            .send(Msg::End(commit, tx))
            .map_err(|_| self.gone())?;
        rx.await.map_err(|_| self.gone())?
    }

    /// Starts a sub-transaction for a synchronous caller: a savepoint inside
    /// the session's transaction, or a transaction (`statement`, e.g. a
    /// read-only snapshot, else `BEGIN`) on a session without one. sqlx
    /// tracks it, so statements other jobs nest inside it become savepoints.
    /// End it with [`end_sub_blocking`](Self::end_sub_blocking); hold
    /// [`turn`](Self::turn) across the sequence.
    pub fn begin_sub_blocking(&self, statement: Option<&'static str>) -> Result<()> {
        let statement = statement.filter(|_| !self.is_transactional());
        self.run_blocking(move |conn| {
            Box::pin(async move {
                <Postgres as sqlx::Database>::TransactionManager::begin(
                    conn,
                    statement.map(std::borrow::Cow::Borrowed),
                )
                .await
                .map_err(|e| Error::provider(PROVIDER, format!("starting a transaction: {e}"), e))
            })
        })
    }

    /// Ends the sub-transaction [`begin_sub_blocking`](Self::begin_sub_blocking)
    /// started: keeps its writes (`commit`) or undoes them.
    pub fn end_sub_blocking(&self, commit: bool) -> Result<()> {
        self.run_blocking(move |conn| {
            Box::pin(async move {
                type Tm = <Postgres as sqlx::Database>::TransactionManager;
                let out = if commit {
                    match Tm::commit(conn).await {
                        // sqlx keeps the level open when its commit fails: close it.
                        Err(e) => {
                            let _ = Tm::rollback(conn).await;
                            Err(e)
                        }
                        ok => ok,
                    }
                } else {
                    Tm::rollback(conn).await
                };
                out.map_err(|e| Error::provider(PROVIDER, format!("ending a transaction: {e}"), e))
            })
        })
    }

    /// Rolls back without waiting (for `Drop`).
    pub fn abandon(&self) {
        if !self.inner.ended.swap(true, Ordering::SeqCst) {
            let (tx, _rx) = oneshot::channel();
            let _ = self.inner.jobs.send(Msg::End(false, tx));
        }
    }
}

/// Runs jobs until the session ends; returns how it ended (`None`: every
/// handle was dropped).
/// Runs jobs until the session ends; returns how it ended (`None`: every
/// handle was dropped). With `lost`, the connection holds the session's
/// transaction (depth 1 between jobs): a job after which it no longer does
/// (sqlx rolled it back when a savepoint could not be made in an aborted
/// transaction) marks the session lost, and later jobs are not run.
async fn serve(
    conn: &mut PgConnection,
    inbox: &mut mpsc::UnboundedReceiver<Msg>,
    lost: Option<&AtomicBool>,
) -> Option<(bool, oneshot::Sender<Result<()>>)> {
    while let Some(msg) = inbox.recv().await {
        match msg {
            // Dropped unrun: its caller gets the session's error.
            Msg::Job(_) if lost.is_some_and(|l| l.load(Ordering::SeqCst)) => {}
            Msg::Job(job) => {
                job(conn).await;
                if let Some(lost) = lost {
                    if <Postgres as sqlx::Database>::TransactionManager::get_transaction_depth(conn)
                        == 0
                    {
                        lost.store(true, Ordering::SeqCst);
                    }
                }
            }
            Msg::End(commit, reply) => return Some((commit, reply)),
        }
    }
    None
}

/// Ends the session's transaction: commits it only if it is whole (no job
/// lost it, no sub-transaction left open, no error aborted it).
async fn finish(
    conn: &mut PgConnection,
    commit: bool,
    lost: &AtomicBool,
    endpoint: &str,
) -> Result<()> {
    type Tm = <Postgres as sqlx::Database>::TransactionManager;
    if lost.load(Ordering::SeqCst) {
        return if commit {
            Err(Error::Other(format!(
                "the transaction on PostgreSQL at {endpoint} was rolled back by an earlier \
                 error; nothing of it was written"
            )))
        } else {
            Ok(())
        };
    }
    if !commit {
        return rollback_all(conn, endpoint).await;
    }
    let depth = Tm::get_transaction_depth(conn);
    if depth != 1 {
        let _ = rollback_all(conn, endpoint).await;
        return Err(Error::Other(format!(
            "a sub-transaction was left open ({} deep) on PostgreSQL at {endpoint}; \
             the transaction was rolled back",
            depth.saturating_sub(1)
        )));
    }
    // PostgreSQL answers COMMIT in a transaction an error aborted with a
    // rollback, and no error: ask first.
    if let Err(e) = sqlx::query("SELECT 1").execute(&mut *conn).await {
        let _ = rollback_all(conn, endpoint).await;
        return Err(pg(
            endpoint,
            "the transaction was aborted by an earlier error and rolled back; \
             nothing of it was written",
            e,
        ));
    }
    Tm::commit(conn)
        .await
        .map_err(|e| pg(endpoint, "committing", e))
}

/// Rolls back every level of the open transaction.
async fn rollback_all(conn: &mut PgConnection, endpoint: &str) -> Result<()> {
    type Tm = <Postgres as sqlx::Database>::TransactionManager;
    while Tm::get_transaction_depth(conn) > 0 {
        Tm::rollback(conn)
            .await
            .map_err(|e| pg(endpoint, "rolling back", e))?;
    }
    Ok(())
}

fn pg(endpoint: &str, what: &str, e: sqlx::Error) -> Error {
    Error::provider(
        PROVIDER,
        format!("{what} on PostgreSQL at {endpoint}: {e}"),
        e,
    )
}

fn connect_error(endpoint: &str, e: sqlx::Error) -> Error {
    Error::provider(
        PROVIDER,
        format!("cannot connect to PostgreSQL at {endpoint}: {e}"),
        e,
    )
}
