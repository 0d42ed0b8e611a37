//! Where an index lives: the embedded store (one SQLite file per build under
//! the persist folder), PostgreSQL (`--store postgres://...`) or Qdrant
//! (`--store qdrant://...`, see [`qdrant`]), behind one API.
//!
//! In PostgreSQL a build is three tables in LlamaIndex's layouts, named
//! `rl_<source hash>_<settings fingerprint>`: `data_<name>` (PGVectorStore,
//! with full text), `data_<name>_docstore` and `data_<name>_indexstore`. The
//! table `data_ragloom_indexes` says which build is live for each source; it is
//! updated in the ingest's own transaction, so a build becomes live whole.

mod qdrant;

use crate::error::{CliError, exit};
use crate::source::Source;
use crate::store::{self, BuildSettings, FileRecord, IndexDir, Manifest};
use crate::ui::Ui;
use ragloom::embeddings::EmbeddingCacheStore;
use ragloom::indices::VectorStoreIndex;
use ragloom::postgres::{
    KvTableName, PostgresEmbeddingCache, PostgresKv, PostgresStore, PostgresTransaction,
    WriterLock, drop_index, index_names,
};
use ragloom::retrievers::Retriever;
use ragloom::sqlite::{SqliteStore, SqliteTransaction};
use ragloom::storage::StorageContext;
use ragloom::storage::docstore::DocStore;
use ragloom::storage::kvstore::{KvBackend, SimpleKVStore};
use ragloom::vector_stores::{
    MetadataFilters, SimpleVectorStore, VectorStore, VectorStoreQueryMode,
};
use ragloom::{Embedding, MockEmbedding};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Where indexes are kept: `--store`, `RAGLOOM_STORE` or the config file's `store`.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum StoreLocation {
    /// SQLite files under the persist folder (the default).
    #[default]
    Embedded,
    /// A PostgreSQL server with pgvector; tables in `schema`.
    Postgres { url: String, schema: String },
    /// A Qdrant server; `url` is its gRPC address (`http://host:6334`),
    /// `prefix` starts every collection name (empty, or ending in `_`).
    Qdrant { url: String, prefix: String },
}

impl StoreLocation {
    /// `embedded` (or `sqlite`), or a `postgres://` URL; a `schema=` query
    /// parameter names the schema (default `public`).
    pub fn parse(value: &str) -> Result<Self, CliError> {
        let v = value.trim();
        if v.is_empty() || v == "embedded" || v == "sqlite" {
            return Ok(Self::Embedded);
        }
        if let Some(rest) = v.strip_prefix("qdrant://") {
            return Self::parse_qdrant(rest, "http");
        }
        if let Some(rest) = v.strip_prefix("qdrants://") {
            return Self::parse_qdrant(rest, "https");
        }
        if !(v.starts_with("postgres://") || v.starts_with("postgresql://")) {
            return Err(CliError::config(
                "unknown store: give `embedded`, a postgres:// or a qdrant:// URL".to_string(),
                "e.g. postgres://user@host:5432/db or qdrant://localhost:6334",
            ));
        }
        let (base, query) = v.split_once('?').unwrap_or((v, ""));
        let mut schema = "public".to_string();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("schema", s)) => schema = s.to_lowercase(),
                _ => rest.push(pair),
            }
        }
        let ok = schema
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && schema
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(CliError::config(
                format!("the schema `{schema}` is not a plain identifier"),
                "use letters, digits and `_`, e.g. ?schema=ragloom",
            ));
        }
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        ragloom::postgres::connect_options(&url)?;
        Ok(Self::Postgres { url, schema })
    }

    /// `qdrant://HOST[:PORT][?prefix=NAME]` (the gRPC port, 6334 by
    /// default; a prefix keeps several sets of indexes apart on one server),
    /// `qdrants://` for TLS.
    fn parse_qdrant(rest: &str, scheme: &str) -> Result<Self, CliError> {
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut prefix = String::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("prefix", p))
                    if !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
                {
                    prefix = format!("{p}_");
                }
                _ => {
                    return Err(CliError::config(
                        format!("`{pair}` is not an option of a qdrant:// store"),
                        "the one option is ?prefix=NAME (letters, digits and `_`)",
                    ));
                }
            }
        }
        let rest = rest.trim_end_matches('/');
        let bad = || {
            CliError::config(
                format!("`qdrant://{rest}` is not a Qdrant address"),
                "give qdrant://HOST:PORT with Qdrant's gRPC port, e.g. qdrant://localhost:6334",
            )
        };
        if rest.is_empty() || rest.contains(['/', '?', '@', ' ']) {
            return Err(bad());
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !h.ends_with(':') => {
                (h, p.parse::<u16>().map_err(|_| bad())?)
            }
            Some(_) => return Err(bad()),
            None => (rest, 6334),
        };
        Ok(Self::Qdrant {
            url: format!("{scheme}://{host}:{port}"),
            prefix,
        })
    }

    /// For messages: the server, user and database, never a password.
    pub fn label(&self) -> String {
        match self {
            Self::Embedded => "embedded".into(),
            Self::Qdrant { url, prefix } => {
                let base =
                    url.replacen("https://", "qdrants://", 1)
                        .replacen("http://", "qdrant://", 1);
                if prefix.is_empty() {
                    base
                } else {
                    format!("{base}?prefix={}", prefix.trim_end_matches('_'))
                }
            }
            Self::Postgres { url, schema } => match ragloom::postgres::connect_options(url) {
                Ok(o) => format!(
                    "postgres://{}@{}:{}/{} (schema {schema})",
                    o.get_username(),
                    o.get_host(),
                    o.get_port(),
                    o.get_database().unwrap_or(o.get_username())
                ),
                Err(_) => format!("postgres://... (schema {schema})"),
            },
        }
    }
}

impl std::fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password.
        f.write_str(&self.label())
    }
}

/// The registry's table and collection, and one entry of it.
const REGISTRY_TABLE: &str = "ragloom_indexes";
const REGISTRY: &str = "ragloom/indexes";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    /// The build's name (its tables are `data_<name>...`).
    name: String,
    embed_dim: usize,
    /// The committed generation (Qdrant).
    #[serde(default, skip_serializing_if = "is_zero")]
    generation: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What keeps a second writer of a source out until the first is done.
#[derive(Debug)]
pub enum WriterGuard {
    /// PostgreSQL's advisory lock.
    Postgres { _lock: WriterLock },
    /// A lock on a file of the source's folder (Qdrant has no locks: its
    /// writers of one source must run on one machine).
    File { _lock: std::fs::File },
}

/// One source's index, wherever it lives. The folder under the persist root
/// is used in both modes: it holds the embedding cache.
#[derive(Clone, Debug)]
pub struct Index {
    pub dir: IndexDir,
    pub location: StoreLocation,
    key: String,
}

/// A build opened for reading or writing.
#[derive(Clone, Debug)]
pub enum Build {
    Sqlite(SqliteStore),
    Postgres(PostgresStore, usize),
    Qdrant(qdrant::QdrantBuild),
}

/// An ingest's transaction on a build.
#[derive(Debug)]
pub enum BuildTx {
    Sqlite {
        tx: SqliteTransaction,
        store: SqliteStore,
    },
    Postgres {
        tx: PostgresTransaction,
        embed_dim: usize,
    },
    Qdrant(qdrant::QdrantTx),
}

/// What `status` says about where an index lives.
#[derive(Debug, Serialize)]
pub struct StoreInfo {
    /// `sqlite`, `postgres` or `qdrant`.
    pub kind: &'static str,
    /// The SQLite file, or the server and tables.
    pub path: String,
    pub size_bytes: u64,
    /// Qdrant: the build's points (nodes and key-value entries, with those
    /// an ingest is writing or has just deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points: Option<u64>,
}

impl Index {
    pub fn new(root: &std::path::Path, source: &Source, location: StoreLocation) -> Self {
        Self {
            dir: IndexDir::for_source(root, source),
            location,
            key: source.key.clone(),
        }
    }

    fn pg(&self) -> Option<(&str, &str)> {
        match &self.location {
            StoreLocation::Postgres { url, schema } => Some((url, schema)),
            _ => None,
        }
    }

    fn qd(&self) -> Option<&str> {
        match &self.location {
            StoreLocation::Qdrant { url, .. } => Some(url),
            _ => None,
        }
    }

    /// What this store's Qdrant collection names start with.
    fn qdrant_prefix(&self) -> &str {
        match &self.location {
            StoreLocation::Qdrant { prefix, .. } => prefix,
            _ => "",
        }
    }

    /// This source's commit marker in Qdrant.
    async fn qdrant_entry(&self, url: &str) -> Result<Option<Entry>, CliError> {
        let Some(v) = qdrant::markers(url, self.qdrant_prefix())?
            .get(&self.key)
            .await?
        else {
            return Ok(None);
        };
        serde_json::from_value(v).map(Some).map_err(|e| {
            ragloom::Error::InvalidInput(format!(
                "the commit marker of {} is damaged: {e}",
                self.key
            ))
            .into()
        })
    }

    fn registry_name(schema: &str) -> KvTableName {
        KvTableName {
            schema: schema.to_string(),
            table: REGISTRY_TABLE.into(),
            use_jsonb: false,
        }
    }

    async fn registry(&self, url: &str, schema: &str) -> Result<PostgresKv, CliError> {
        Ok(PostgresKv::connect(url, Self::registry_name(schema)).await?)
    }

    /// The registry if it exists (readers create nothing).
    async fn existing_registry(
        &self,
        url: &str,
        schema: &str,
    ) -> Result<Option<PostgresKv>, CliError> {
        Ok(PostgresKv::open_existing(url, Self::registry_name(schema)).await?)
    }

    fn read_entry(&self, registry: &PostgresKv) -> ragloom::Result<Option<Entry>> {
        registry.read(|t| {
            t.get(&self.key, REGISTRY)?
                .map(|v| {
                    serde_json::from_value(serde_json::Value::Object(v.into_owned())).map_err(|e| {
                        ragloom::Error::InvalidInput(format!("a registry entry is damaged: {e}"))
                    })
                })
                .transpose()
        })
    }

    /// What every build name of this source starts with (48 bits of its key's hash).
    fn build_prefix(&self) -> String {
        let digest = Sha256::digest(self.key.as_bytes());
        let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        format!("{}rl_{hash}_", self.qdrant_prefix())
    }

    /// The name of this source's build with `settings`.
    fn build_name(&self, settings: &BuildSettings) -> String {
        format!("{}{}", self.build_prefix(), settings.fingerprint())
    }

    /// The lock a writer of this source holds from before it reads the
    /// live build until it commits: one per source and schema.
    fn lock_name(&self, schema: &str) -> String {
        format!("ragloom-source:{schema}:{}", self.key)
    }

    /// Takes this source's writer lock (a lock file beside the source's
    /// folder for the embedded store and Qdrant, an advisory lock in
    /// PostgreSQL), saying so when another ingest makes it wait; with
    /// `no_wait`, fails at once instead. The embedded store's transaction
    /// locks its file too, but only once the build is open: a new build's
    /// leftovers are removed before that, under this lock.
    pub async fn lock_writer(
        &self,
        ui: &Ui,
        no_wait: bool,
    ) -> Result<Option<WriterGuard>, CliError> {
        if self.qd().is_some() || self.pg().is_none() {
            return self.lock_file(ui, no_wait).await.map(Some);
        }
        let Some((url, schema)) = self.pg() else {
            return Ok(None);
        };
        let name = self.lock_name(schema);
        let acquire = WriterLock::acquire(url, &name, !no_wait);
        tokio::pin!(acquire);
        let taken = tokio::select! {
            r = &mut acquire => r,
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                ui.note("waiting for another ingest of this folder to finish ...");
                acquire.await
            }
        }?;
        let lock = taken.ok_or_else(another_ingest)?;
        // The registry exists before any ingest transaction: creating it
        // inside one would hold the schema's creation lock until its commit.
        self.registry(url, schema).await?;
        Ok(Some(WriterGuard::Postgres { _lock: lock }))
    }

    /// Takes the lock file of the source's folder, waiting (unless
    /// `no_wait`) while another process holds it.
    async fn lock_file(&self, ui: &Ui, no_wait: bool) -> Result<WriterGuard, CliError> {
        // Beside the source's folder, not in it: `--clear` removes the
        // folder, and a lock on a removed file would let a second writer in.
        let locks = self.dir.locks_dir();
        std::fs::create_dir_all(&locks).map_err(|e| ragloom::Error::io("creating", &locks, e))?;
        let path = locks.join(format!("{}.lock", self.dir.name()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| ragloom::Error::io("opening", &path, e))?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => return Ok(WriterGuard::File { _lock: file }),
            Err(fs4::TryLockError::WouldBlock) if !no_wait => {}
            Err(fs4::TryLockError::WouldBlock) => return Err(another_ingest()),
            Err(fs4::TryLockError::Error(e)) => {
                return Err(ragloom::Error::io("locking", &path, e).into());
            }
        }
        ui.note("waiting for another ingest of this folder to finish ...");
        let file = tokio::task::spawn_blocking(move || fs4::FileExt::lock(&file).map(|()| file))
            .await
            .map_err(|e| ragloom::Error::Other(format!("waiting for the writer lock: {e}")))?
            .map_err(|e| ragloom::Error::io("locking", &path, e))?;
        Ok(WriterGuard::File { _lock: file })
    }

    /// Drops this source's builds other than `keep` (in PostgreSQL): builds
    /// an earlier ingest replaced (kept until now for queries still reading
    /// them) and tables a failed build left. Call it holding the writer lock.
    pub async fn collect_garbage(&self, keep: Option<&Build>, ui: &Ui) -> Result<(), CliError> {
        if let Some(url) = self.qd() {
            let keep = match keep {
                Some(Build::Qdrant(b)) => Some(b.name.clone()),
                _ => None,
            };
            for name in qdrant::build_names(url, &self.build_prefix()).await? {
                if Some(&name) != keep.as_ref()
                    && let Err(e) = qdrant::drop_build(url, &name).await
                {
                    ui.warn(&format!("kept the replaced build {name} for now: {e}"));
                }
            }
            return Ok(());
        }
        let Some((url, schema)) = self.pg() else {
            return Ok(());
        };
        let keep = match keep {
            Some(Build::Postgres(s, _)) => Some(s.name().to_string()),
            _ => None,
        };
        for name in index_names(url, schema, &self.build_prefix()).await? {
            if Some(&name) != keep.as_ref() {
                // Only space: a build still in use is dropped by a later ingest.
                if let Err(e) = drop_index(url, schema, &name).await {
                    ui.warn(&format!("kept the replaced build {name} for now: {e}"));
                }
            }
        }
        Ok(())
    }

    /// The build `name`; with `setup`, its missing tables are created (for
    /// writers), else a missing one is `Error::NotFound`.
    async fn pg_store(
        url: &str,
        schema: &str,
        name: &str,
        embed_dim: usize,
        setup: bool,
    ) -> ragloom::Result<PostgresStore> {
        PostgresStore::builder(url)
            .schema(schema)
            .name(name)
            .embed_dim(embed_dim.max(1))
            .hybrid_search(true)
            .allow_missing_embeddings(true)
            .perform_setup(setup)
            .build()
            .await
    }

    /// The live build, `None` if nothing was ingested here yet. With
    /// `no_wait`, an embedded build fails writes at once when another
    /// process holds it (PostgreSQL writers decide at `begin`). With
    /// `rebuild_missing`, a live embedded file that vanished is `None` (an
    /// ingest rebuilds it), else an error.
    pub async fn open_live(
        &self,
        no_wait: bool,
        rebuild_missing: bool,
    ) -> Result<Option<Build>, CliError> {
        if let Some(url) = self.qd() {
            let Some(e) = self.qdrant_entry(url).await? else {
                return Ok(None);
            };
            let build = Build::Qdrant(
                qdrant::QdrantBuild::open(url, &e.name, e.embed_dim, e.generation).await?,
            );
            if let Some(m) = build.manifest()?.filter(|m| m.source != self.key) {
                return Err(CliError::new(
                    exit::FAILURE,
                    format!(
                        "the collections of {} hold the index of {}, not of {}",
                        e.name, m.source, self.key
                    ),
                    "report this as a bug",
                ));
            }
            return Ok(Some(build));
        }
        match self.pg() {
            None => match self.dir.live_db()? {
                Some(path) if path.exists() => Ok(Some(Build::Sqlite(store::open_build(
                    &path, no_wait, false,
                )?))),
                Some(_) if rebuild_missing => Ok(None),
                Some(path) => Err(CliError::new(
                    exit::FAILURE,
                    format!("the index file {} is missing", path.display()),
                    "rebuild the index with `ragloom rag --clear --files ...`",
                )),
                None => Ok(None),
            },
            Some((url, schema)) => {
                let Some(registry) = self.existing_registry(url, schema).await? else {
                    return Ok(None);
                };
                let Some(e) = self.read_entry(&registry)? else {
                    return Ok(None);
                };
                let store = match Self::pg_store(url, schema, &e.name, e.embed_dim, false).await {
                    Ok(s) => s,
                    // Tables dropped under the registry: an ingest rebuilds them.
                    Err(ragloom::Error::NotFound(_)) if rebuild_missing => return Ok(None),
                    Err(ragloom::Error::NotFound(what)) => {
                        return Err(CliError::new(
                            exit::FAILURE,
                            format!("the index of {} is damaged: {what}", self.key),
                            format!("rebuild it with `ragloom rag --clear --files {}`", self.key),
                        ));
                    }
                    Err(e) => return Err(e.into()),
                };
                let build = Build::Postgres(store, e.embed_dim);
                if let Some(m) = build.manifest()?.filter(|m| m.source != self.key) {
                    return Err(CliError::new(
                        exit::FAILURE,
                        format!(
                            "the tables of {} hold the index of {}, not of {}",
                            e.name, m.source, self.key
                        ),
                        "ingest with another ?schema= for one of the two",
                    ));
                }
                Ok(Some(build))
            }
        }
    }

    /// The build with `settings`: `live` when it has them, else a new one
    /// beside it. `embed_dim` is asked only for a new PostgreSQL build.
    pub async fn open_build<F, Fut>(
        &self,
        live: Option<Build>,
        settings: &BuildSettings,
        import: bool,
        no_wait: bool,
        embed_dim: F,
    ) -> Result<Build, CliError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<usize, CliError>>,
    {
        let nanos = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        };
        if let Some(url) = self.qd() {
            let mut name = self.build_name(settings);
            if import {
                name = format!("{name}_i{}", base36(nanos()));
            }
            return match live {
                Some(Build::Qdrant(b)) if b.name == name => Ok(Build::Qdrant(b)),
                _ => {
                    let dim = embed_dim().await?;
                    // A new build starts at generation 0, empty: collections
                    // a failed or replaced build of these settings left go first.
                    qdrant::drop_build(url, &name).await?;
                    Ok(Build::Qdrant(
                        qdrant::QdrantBuild::open(url, &name, dim, 0).await?,
                    ))
                }
            };
        }
        match self.pg() {
            None => {
                let path = if import {
                    std::fs::create_dir_all(&self.dir.dir)
                        .map_err(|e| ragloom::Error::io("creating", &self.dir.dir, e))?;
                    self.dir.dir.join(format!(
                        "index-{}-import-{}.sqlite",
                        settings.fingerprint(),
                        nanos()
                    ))
                } else {
                    self.dir.db_path(settings)
                };
                match live {
                    Some(Build::Sqlite(s)) if s.path() == path => Ok(Build::Sqlite(s)),
                    _ => {
                        // New unless the pointer names it (a live file that
                        // vanished is rebuilt where queries look for it, in
                        // the usual way, so they never open a file being
                        // written without its log).
                        let named = self.dir.live_db()?.is_some_and(|live| live == path);
                        Ok(Build::Sqlite(store::open_build(&path, no_wait, !named)?))
                    }
                }
            }
            Some((url, schema)) => {
                let mut name = self.build_name(settings);
                if import {
                    // Base 36 keeps the name within PostgreSQL's identifiers.
                    name = format!("{name}_i{}", base36(nanos()));
                }
                match live {
                    Some(Build::Postgres(s, dim)) if s.name() == name => {
                        Ok(Build::Postgres(s, dim))
                    }
                    _ => {
                        let dim = embed_dim().await?;
                        Ok(Build::Postgres(
                            Self::pg_store(url, schema, &name, dim, true).await?,
                            dim,
                        ))
                    }
                }
            }
        }
    }

    /// Starts the ingest's transaction on `build`, saying so when another
    /// ingest of this source makes it wait (in PostgreSQL the writer lock
    /// taken before, with [`lock_writer`](Self::lock_writer), did the waiting).
    pub async fn begin(&self, build: &Build, ui: &Ui) -> Result<BuildTx, CliError> {
        let store = match build {
            Build::Sqlite(store) => store,
            Build::Qdrant(b) => return Ok(BuildTx::Qdrant(b.begin().await?)),
            Build::Postgres(store, dim) => {
                return Ok(BuildTx::Postgres {
                    tx: store.begin().await?,
                    embed_dim: *dim,
                });
            }
        };
        let begin = async {
            store.begin().await.map(|tx| BuildTx::Sqlite {
                tx,
                store: store.clone(),
            })
        };
        tokio::pin!(begin);
        let result = tokio::select! {
            r = &mut begin => r,
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                ui.note("waiting for another ingest of this folder to finish ...");
                begin.await
            }
        };
        result.map_err(|e| {
            if e.to_string().contains("another process is writing") {
                another_ingest()
            } else {
                e.into()
            }
        })
    }

    /// Writes `manifest` in the build's transaction, commits it and makes
    /// the build live. The embedded store removes the build it replaced at
    /// once; in PostgreSQL the next ingest of the source drops it.
    pub async fn commit(&self, tx: BuildTx, manifest: &Manifest) -> Result<(), CliError> {
        match tx {
            BuildTx::Sqlite { tx, store } => {
                let db = store.path().to_path_buf();
                store::commit_build(tx, &store, &self.dir, &db, manifest).await
            }
            BuildTx::Qdrant(tx) => {
                let Some(url) = self.qd() else {
                    return Err(CliError::new(
                        exit::FAILURE,
                        "a Qdrant build outside Qdrant mode",
                        "report this as a bug",
                    ));
                };
                store::write_manifest(&tx.kv, manifest)?;
                tx.kv.flush().await?;
                let committed = tx.generation.writing()?;
                let entry = Entry {
                    name: tx.build.name.clone(),
                    embed_dim: tx.build.embed_dim,
                    generation: committed,
                };
                let value = serde_json::to_value(&entry).map_err(ragloom::Error::from)?;
                let markers = qdrant::markers(url, self.qdrant_prefix())?;
                // The lock file keeps writers of one machine apart; this
                // catches one from elsewhere that committed meanwhile.
                let now = self.qdrant_entry(url).await?;
                let ours = tx.build.committed;
                let unchanged = match now {
                    Some(e) if e.name == entry.name => e.generation == ours && ours > 0,
                    _ => ours == 0,
                };
                if !unchanged {
                    return Err(CliError::new(
                        exit::FAILURE,
                        format!(
                            "another ingest of {} committed while this one ran; nothing of this one was published",
                            self.key
                        ),
                        "ingest a source from one machine at a time; run the ingest again",
                    ));
                }
                // The commit: one point, written whole.
                markers.set(&self.key, &value).await?;
                if let Err(e) = qdrant::QdrantBuild::tidy(url, &entry.name, committed).await {
                    tracing::warn!("left deleted points for the next ingest to remove: {e}");
                }
                Ok(())
            }
            BuildTx::Postgres { tx, embed_dim } => {
                let Some((_, schema)) = self.pg() else {
                    return Err(CliError::new(
                        exit::FAILURE,
                        "a PostgreSQL build outside PostgreSQL mode",
                        "report this as a bug",
                    ));
                };
                store::write_manifest(&*tx.kv(), manifest)?;
                let entry = Entry {
                    name: tx.store().name().to_string(),
                    embed_dim,
                    generation: 0,
                };
                let value = match serde_json::to_value(&entry).map_err(ragloom::Error::from)? {
                    serde_json::Value::Object(m) => m,
                    _ => ragloom::storage::kvstore::KvValue::new(),
                };
                let registry = tx.kv_table(Self::registry_name(schema)).await?;
                registry.write(|t| t.put(&self.key, value, REGISTRY))?;
                // The build it replaces stays until the next ingest of the
                // source drops it, so queries reading it now finish.
                tx.commit().await?;
                Ok(())
            }
        }
    }

    /// Where the vectors of texts already embedded are kept: a SQLite file of
    /// the source's folder (its own file, so it commits while the ingest's
    /// transaction is open), or a table of the PostgreSQL schema, shared by
    /// every source and machine using it.
    pub async fn embedding_cache(&self) -> Result<Arc<dyn EmbeddingCacheStore>, CliError> {
        Ok(match self.pg() {
            // Qdrant keeps them beside the index, in the source's folder.
            None => Arc::new(SqliteStore::open(self.dir.embeddings_path())?),
            Some((url, schema)) => Arc::new(PostgresEmbeddingCache::connect(url, schema).await?),
        })
    }

    /// Removes the whole index (`--clear`): the source's folder under the
    /// persist root (with its embedding cache) and, in PostgreSQL, every
    /// build of the source (the schema's shared embedding cache stays).
    ///
    /// Under the writer lock, as an ingest writes (waiting for one that is
    /// running, or with `no_wait` failing at once): removing the folder
    /// while an ingest or a server's upload job writes into it would lose
    /// its commit or leave it writing into deleted files.
    pub async fn clear(&self, ui: &Ui, no_wait: bool) -> Result<(), CliError> {
        let _writer = self.lock_writer(ui, no_wait).await?;
        if let Some(url) = self.qd() {
            qdrant::markers(url, self.qdrant_prefix())?
                .remove(&self.key)
                .await?;
            self.collect_garbage(None, ui).await?;
        }
        if let Some((url, schema)) = self.pg() {
            if let Some(registry) = self.existing_registry(url, schema).await? {
                registry.write(|t| t.delete(&self.key, REGISTRY).map(|_| ()))?;
            }
            self.collect_garbage(None, ui).await?;
        }
        // The lock file lives beside the index folders (see `lock_file`),
        // so removing this folder keeps the lock held until the end.
        self.dir.clear()
    }
}

impl Build {
    /// The manifest stored in the build, if any.
    pub fn manifest(&self) -> ragloom::Result<Option<Manifest>> {
        match self {
            Build::Sqlite(s) => store::read_manifest(&*s.kv()),
            Build::Postgres(s, _) => store::read_manifest(&*s.kv()),
            Build::Qdrant(b) => store::read_manifest(&b.kv),
        }
    }

    /// The build's stores, reading the last commit.
    pub fn docstore(&self) -> Arc<dyn DocStore> {
        match self {
            Build::Sqlite(s) => s.docstore(),
            Build::Postgres(s, _) => s.docstore(),
            Build::Qdrant(b) => {
                Arc::new(ragloom::storage::docstore::KvDocumentStore::from_backend(
                    Arc::new(b.kv.clone()),
                    None,
                ))
            }
        }
    }

    /// What keyword retrieval is in this store: `bm25`, `fulltext` or `sparse`.
    pub fn keyword_kind(&self) -> &'static str {
        match self {
            Build::Sqlite(_) => "bm25",
            Build::Postgres(..) => "fulltext",
            Build::Qdrant(_) => "sparse",
        }
    }

    /// Keyword retrieval: BM25 over the embedded store's keyword index,
    /// PostgreSQL full text over the vector table (PGVectorStore's text
    /// search), or Qdrant's sparse vectors; only nodes matching `filters`.
    pub fn keyword_retriever(
        &self,
        top_k: usize,
        filters: Option<MetadataFilters>,
    ) -> ragloom::Result<Arc<dyn Retriever>> {
        let (vectors, dim, mode) = match self {
            Build::Sqlite(s) => {
                let mut r = s.bm25_retriever().similarity_top_k(top_k);
                if let Some(f) = filters {
                    r = r.filters(f);
                }
                return Ok(Arc::new(r));
            }
            Build::Postgres(s, dim) => (
                s.vector_store() as Arc<dyn VectorStore>,
                *dim,
                VectorStoreQueryMode::TextSearch,
            ),
            Build::Qdrant(b) => (
                b.vectors.clone() as Arc<dyn VectorStore>,
                b.embed_dim,
                VectorStoreQueryMode::Sparse,
            ),
        };
        // Text and sparse search embed nothing: the model is never called.
        let index =
            VectorStoreIndex::from_vector_store(vectors, Arc::new(MockEmbedding::new(dim.max(1))))?;
        let mut r = index
            .as_retriever()
            .vector_store_query_mode(mode)
            .similarity_top_k(top_k);
        if let Some(f) = filters {
            r = r.filters(f);
        }
        Ok(Arc::new(r))
    }

    /// The build's vectors as an index embedding queries with `embed`, the
    /// model the vectors were made with.
    pub async fn vector_index(
        &self,
        embed: Arc<dyn Embedding>,
    ) -> ragloom::Result<VectorStoreIndex> {
        match self {
            Build::Sqlite(s) => {
                VectorStoreIndex::builder(embed)
                    .storage_context(s.storage_context())
                    .load_or_create()
                    .await
            }
            Build::Postgres(s, _) => VectorStoreIndex::from_vector_store(s.vector_store(), embed),
            Build::Qdrant(b) => VectorStoreIndex::from_vector_store(b.vectors.clone(), embed),
        }
    }

    /// Whether the store fuses keyword and dense search itself (Qdrant:
    /// both searches and their reciprocal rank fusion in one query).
    pub fn fuses_hybrid(&self) -> bool {
        matches!(self, Build::Qdrant(_))
    }

    /// Where the build lives and its size there.
    pub async fn info(&self, index: &Index) -> Result<StoreInfo, CliError> {
        Ok(match self {
            Build::Sqlite(s) => StoreInfo {
                kind: "sqlite",
                path: s.path().display().to_string(),
                size_bytes: index.dir.size_bytes(),
                points: None,
            },
            Build::Postgres(s, _) => StoreInfo {
                kind: "postgres",
                path: format!(
                    "{} tables {}.data_{name}, data_{name}_docstore, data_{name}_indexstore",
                    index.location.label(),
                    s.docstore_table().schema,
                    name = s.name()
                ),
                size_bytes: s.size_bytes().await?,
                points: None,
            },
            Build::Qdrant(b) => StoreInfo {
                kind: "qdrant",
                path: format!(
                    "{} collections {name}, {name}_kv (generation {})",
                    index.location.label(),
                    b.committed,
                    name = b.name
                ),
                // Qdrant reports no sizes: what stays on this machine (the embedding cache).
                size_bytes: index.dir.size_bytes(),
                points: Some(b.points().await?),
            },
        })
    }

    /// The build as LlamaIndex's in-memory stores: docstore and index store
    /// collections copied value for value, and the vectors.
    pub async fn to_simple(
        &self,
        doc_collections: &[String],
        index_collections: &[String],
    ) -> ragloom::Result<(
        Arc<SimpleKVStore>,
        Arc<SimpleKVStore>,
        Arc<SimpleVectorStore>,
    )> {
        match self {
            Build::Sqlite(s) => Ok((
                copy_collections(&*s.kv(), doc_collections)?,
                copy_collections(&*s.kv(), index_collections)?,
                s.vector_store().to_simple_vector_store().await?,
            )),
            Build::Postgres(s, _) => {
                let index_kv = s.index_store();
                let nodes = s.vector_store().get_nodes_filtered(None, None).await?;
                let vectors = Arc::new(SimpleVectorStore::new());
                let embedded: Vec<_> = nodes
                    .into_iter()
                    .filter(|n| n.embedding.is_some())
                    .collect();
                vectors.add(&embedded).await?;
                Ok((
                    copy_collections(&*s.kv(), doc_collections)?,
                    copy_collections(&**index_kv.kvstore(), index_collections)?,
                    vectors,
                ))
            }
            Build::Qdrant(b) => {
                let vectors = Arc::new(SimpleVectorStore::new());
                let embedded: Vec<_> = b
                    .vectors
                    .get_nodes_with_embeddings(usize::MAX)
                    .await?
                    .into_iter()
                    .filter(|n| n.embedding.is_some())
                    .collect();
                vectors.add(&embedded).await?;
                Ok((
                    copy_collections(&b.kv, doc_collections)?,
                    copy_collections(&b.kv, index_collections)?,
                    vectors,
                ))
            }
        }
    }
}

/// Copies `collections` of `from` into a new in-memory kv store, values
/// untouched, so hashes and ids are exactly the stored ones.
fn copy_collections<B: KvBackend>(
    from: &B,
    collections: &[String],
) -> ragloom::Result<Arc<SimpleKVStore>> {
    let kv = Arc::new(SimpleKVStore::new());
    from.read(|from| {
        kv.write(|to| {
            for c in collections {
                let all = from.get_all(c)?.into_owned();
                for (key, value) in all {
                    to.put(&key, value, c)?;
                }
            }
            Ok(())
        })
    })?;
    Ok(kv)
}

impl BuildTx {
    /// The stores of the transaction.
    pub fn storage_context(&self) -> StorageContext {
        match self {
            BuildTx::Sqlite { tx, .. } => tx.storage_context().clone(),
            BuildTx::Postgres { tx, .. } => tx.storage_context().clone(),
            BuildTx::Qdrant(tx) => tx.context.clone(),
        }
    }

    /// The embedded store's document store, typed, whose
    /// [`prepare`](ragloom::sqlite::SqliteDocumentStore::prepare) lets a
    /// batch be encoded while the one before it is written.
    pub fn sqlite_docstore(&self) -> Option<Arc<ragloom::sqlite::SqliteDocumentStore>> {
        match self {
            BuildTx::Sqlite { tx, .. } => Some(tx.docstore().clone()),
            _ => None,
        }
    }

    /// Whether nodes written without embeddings must also go to the vector
    /// store (PostgreSQL's full text reads the vector table, Qdrant's
    /// sparse vectors live in the nodes' points).
    pub fn text_rows(&self) -> bool {
        matches!(self, BuildTx::Postgres { .. } | BuildTx::Qdrant(_))
    }

    pub fn read_manifest(&self) -> ragloom::Result<Option<Manifest>> {
        match self {
            BuildTx::Sqlite { tx, .. } => store::read_manifest(&*tx.kv()),
            BuildTx::Postgres { tx, .. } => store::read_manifest(&*tx.kv()),
            BuildTx::Qdrant(tx) => store::read_manifest(&tx.kv),
        }
    }

    pub fn read_files(&self) -> ragloom::Result<BTreeMap<String, FileRecord>> {
        match self {
            BuildTx::Sqlite { tx, .. } => store::read_files(&*tx.kv()),
            BuildTx::Postgres { tx, .. } => store::read_files(&*tx.kv()),
            BuildTx::Qdrant(tx) => store::read_files(&tx.kv),
        }
    }

    pub fn write_files(
        &self,
        seen: &[(String, FileRecord)],
        gone: &[String],
    ) -> ragloom::Result<()> {
        match self {
            BuildTx::Sqlite { tx, .. } => store::write_files(&*tx.kv(), seen, gone),
            BuildTx::Postgres { tx, .. } => store::write_files(&*tx.kv(), seen, gone),
            BuildTx::Qdrant(tx) => store::write_files(&tx.kv, seen, gone),
        }
    }

    /// Folds the embedded store's keyword index into one list per term
    /// when deletions or many segments call for it (PostgreSQL keeps its
    /// full-text index current by itself).
    pub fn finish_keyword_index(&self) -> ragloom::Result<()> {
        match self {
            BuildTx::Sqlite { tx, .. } => tx.merge_keyword_index(),
            BuildTx::Postgres { .. } | BuildTx::Qdrant(_) => Ok(()),
        }
    }
}

fn another_ingest() -> CliError {
    CliError::new(
        exit::FAILURE,
        "another ingest of this folder is running",
        "wait for it to finish, or run without --no-wait to wait for it",
    )
}

fn base36(mut n: u128) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The length of `embed`'s vectors, for a new PostgreSQL build's `vector(n)`
/// column: as the model says, else from one query; 1 without a model (no
/// vectors are stored).
pub async fn probe_dim(embed: Option<&Arc<dyn Embedding>>) -> Result<usize, CliError> {
    match embed {
        // A model that knows its length is not called.
        Some(e) => match e.dimensions() {
            Some(n) => Ok(n.max(1)),
            None => Ok(e.embed_query("ragloom").await?.len().max(1)),
        },
        None => Ok(1),
    }
}
