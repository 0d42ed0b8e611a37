//! `PGVectorStore` and its builder: ragloom's `VectorStore` on PostgreSQL with
//! pgvector, reading and writing LlamaIndex's `data_<table>` rows.

use crate::filters::FilterSql;
use crate::sql::{Arg, Sql, quote_ident};
use crate::text_search::tsquery_input;
use async_trait::async_trait;
use futures::future::BoxFuture;
use pgvector::Vector;
use ragloom_common_postgres::{PROVIDER, PgSession, connect_options, endpoint};
use ragloom_core::schema::{Metadata, MetadataMode, Node};
use ragloom_core::utils::to_python_json_string;
use ragloom_core::vector_stores::{
    MetadataFilters, VectorStore, VectorStoreQuery, VectorStoreQueryMode, VectorStoreQueryResult,
    delete_selection, metadata_dict_to_node, node_to_metadata_dict,
};
use ragloom_core::{Error, Result};
use serde_json::Value;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, PgConnection, Postgres, Row};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Duration;
use tokio::sync::OnceCell;
use tracing::Instrument;

/// Rows written per `INSERT` statement (one round trip each, in one transaction).
const INSERT_BATCH: usize = 1000;
/// pgvector's largest dimension for the `vector` type.
const MAX_DIM: usize = 16_000;

/// How vectors are compared, and so which pgvector operator and index
/// operator class the store uses. Scores are "higher is nearer", as in core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DistanceMethod {
    /// Cosine distance (`<=>`, `vector_cosine_ops`); score `1 - distance`, the
    /// cosine similarity. LlamaIndex's `PGVectorStore` always queries this way.
    #[default]
    Cosine,
    /// Negative inner product (`<#>`, `vector_ip_ops`); score the inner product.
    InnerProduct,
    /// Euclidean distance (`<->`, `vector_l2_ops`); score the negated distance.
    L2,
}

impl DistanceMethod {
    /// The pgvector operator.
    pub fn operator(self) -> &'static str {
        match self {
            Self::Cosine => "<=>",
            Self::InnerProduct => "<#>",
            Self::L2 => "<->",
        }
    }

    /// The index operator class (LlamaIndex's `hnsw_dist_method`).
    pub fn ops_class(self) -> &'static str {
        match self {
            Self::Cosine => "vector_cosine_ops",
            Self::InnerProduct => "vector_ip_ops",
            Self::L2 => "vector_l2_ops",
        }
    }

    /// The similarity reported for a distance the operator returned.
    pub fn score(self, distance: f64) -> f32 {
        match self {
            Self::Cosine => (1.0 - distance) as f32,
            Self::InnerProduct | Self::L2 => (-distance) as f32,
        }
    }
}

/// An HNSW index on the embeddings (LlamaIndex's `hnsw_kwargs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HnswOptions {
    /// Links per node (`hnsw_m`; pgvector's default 16).
    pub m: u32,
    /// Candidate list size while building (`hnsw_ef_construction`; default 64).
    pub ef_construction: u32,
    /// Candidate list size while searching (`hnsw_ef_search`; `None` keeps the
    /// server's setting, 40 unless changed).
    pub ef_search: Option<u32>,
}

impl Default for HnswOptions {
    fn default() -> Self {
        Self {
            m: 16,
            ef_construction: 64,
            ef_search: Some(40),
        }
    }
}

/// An IVFFlat index on the embeddings. Build it once the table holds data:
/// its lists are computed from the rows present at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IvfFlatOptions {
    /// Number of inverted lists (pgvector suggests rows / 1000 up to 1M rows).
    pub lists: u32,
    /// Lists probed per query (`ivfflat_probes`; `None` keeps the server's, 1).
    pub probes: Option<u32>,
}

impl Default for IvfFlatOptions {
    fn default() -> Self {
        Self {
            lists: 100,
            probes: None,
        }
    }
}

/// The approximate index built on the `embedding` column, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorIndex {
    /// `USING hnsw`.
    Hnsw(HnswOptions),
    /// `USING ivfflat`.
    IvfFlat(IvfFlatOptions),
}

/// Where the connections come from.
enum Source {
    Url(String),
    Options(Box<PgConnectOptions>),
    Pool(PgPool),
}

/// Configures a [`PGVectorStore`]; made by [`PGVectorStore::from_url`],
/// [`PGVectorStore::from_params`] or [`PGVectorStore::from_pool`].
/// Defaults are LlamaIndex's (`llamaindex` table in `public`, 1536
/// dimensions, no hybrid search, `english`), except `use_jsonb` (on).
pub struct PGVectorStoreBuilder {
    source: Source,
    table_name: String,
    schema_name: String,
    embed_dim: usize,
    hybrid_search: bool,
    text_search_config: String,
    use_jsonb: bool,
    distance: DistanceMethod,
    index: Option<VectorIndex>,
    perform_setup: bool,
    max_connections: u32,
    acquire_timeout: Duration,
    allow_missing_embeddings: bool,
}

impl fmt::Debug for PGVectorStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The source may hold a password: only say what kind it is.
        let source = match &self.source {
            Source::Url(_) => "url",
            Source::Options(_) => "params",
            Source::Pool(_) => "pool",
        };
        f.debug_struct("PGVectorStoreBuilder")
            .field("source", &source)
            .field("table_name", &self.table_name)
            .field("schema_name", &self.schema_name)
            .field("embed_dim", &self.embed_dim)
            .field("hybrid_search", &self.hybrid_search)
            .field("text_search_config", &self.text_search_config)
            .field("use_jsonb", &self.use_jsonb)
            .field("distance", &self.distance)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl PGVectorStoreBuilder {
    fn new(source: Source) -> Self {
        Self {
            source,
            table_name: "llamaindex".into(),
            schema_name: "public".into(),
            embed_dim: 1536,
            hybrid_search: false,
            text_search_config: "english".into(),
            use_jsonb: true,
            distance: DistanceMethod::Cosine,
            index: None,
            perform_setup: true,
            max_connections: 5,
            acquire_timeout: Duration::from_secs(10),
            allow_missing_embeddings: false,
        }
    }

    ragloom_core::setters!(
        /// Stores a node that has no embedding with a NULL `embedding` instead of
        /// refusing it (off by default, as in LlamaIndex): text search finds such
        /// rows, dense search ranks them last. For a keyword-only index.
        allow_missing_embeddings => allow_missing_embeddings: bool,
        /// The table's name without LlamaIndex's `data_` prefix (lowercased, as
        /// Python does); letters, digits and `_` only.
        table_name => table_name: impl Into<String>,
        /// The schema (lowercased; created if missing and allowed).
        schema_name => schema_name: impl Into<String>,
        /// The embedding length, fixed by the `vector(n)` column.
        embed_dim => embed_dim: usize,
        /// Adds the `text_search_tsv` column (a generated `tsvector`) and its GIN
        /// index to a table this store creates, enabling text and hybrid search.
        hybrid_search => hybrid_search: bool,
        /// The full-text configuration (`english` unless set), e.g. `simple`.
        text_search_config => text_search_config: impl Into<String>,
        /// `metadata_` as `jsonb` (default) or, with `false`, `json` as
        /// LlamaIndex creates it by default. Existing tables are used as they are.
        use_jsonb => use_jsonb: bool,
        /// How vectors are compared (cosine unless set).
        distance => distance: DistanceMethod,
        /// Whether the first use creates the schema, the `vector` extension, the
        /// table and its indexes when missing (on unless set, as in LlamaIndex).
        perform_setup => perform_setup: bool,
        /// How long an operation waits for a connection before failing (10 s
        /// unless set; ignored with `from_pool`). A server that refuses
        /// connections is retried until then.
        acquire_timeout => acquire_timeout: Duration,
    );

    /// Builds an HNSW index on the embeddings (if missing).
    pub fn hnsw(mut self, options: HnswOptions) -> Self {
        self.index = Some(VectorIndex::Hnsw(options));
        self
    }

    /// Builds an IVFFlat index on the embeddings (if missing).
    pub fn ivfflat(mut self, options: IvfFlatOptions) -> Self {
        self.index = Some(VectorIndex::IvfFlat(options));
        self
    }

    /// Most connections the pool opens (5 unless set; ignored with `from_pool`).
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Checks the settings and makes the store; call it inside a Tokio
    /// runtime. Nothing connects yet: the first operation does, and sets up
    /// the table.
    pub fn build(self) -> Result<PGVectorStore> {
        let table_name = validate_identifier("table_name", &self.table_name, 63 - "data_".len())?;
        let schema_name = validate_identifier("schema_name", &self.schema_name, 63)?;
        if self.embed_dim == 0 || self.embed_dim > MAX_DIM {
            return Err(Error::InvalidInput(format!(
                "embed_dim must be between 1 and {MAX_DIM}, got {}",
                self.embed_dim
            )));
        }
        validate_text_search_config(&self.text_search_config)?;
        if let Some(index) = self.index {
            let bad = match index {
                VectorIndex::Hnsw(o) => {
                    o.m == 0 || o.ef_construction == 0 || o.ef_search == Some(0)
                }
                VectorIndex::IvfFlat(o) => o.lists == 0 || o.probes == Some(0),
            };
            if bad {
                return Err(Error::InvalidInput(format!(
                    "vector index options must be positive: {index:?}"
                )));
            }
        }
        if tokio::runtime::Handle::try_current().is_err() {
            // sqlx's pool starts its maintenance task on Tokio right away.
            return Err(Error::InvalidInput(
                "PGVectorStore must be built inside a Tokio runtime".into(),
            ));
        }
        let pool_options = PgPoolOptions::new()
            .max_connections(self.max_connections)
            .acquire_timeout(self.acquire_timeout);
        let (pool, connect_options) = match self.source {
            Source::Url(url) => {
                let options = connect_options(&url)?;
                (pool_options.connect_lazy_with(options.clone()), options)
            }
            Source::Options(options) => {
                (pool_options.connect_lazy_with((*options).clone()), *options)
            }
            Source::Pool(pool) => {
                let options = (*pool.connect_options()).clone();
                (pool, options)
            }
        };
        let data_table = format!("data_{table_name}");
        Ok(PGVectorStore {
            qualified: format!("{}.{}", quote_ident(&schema_name), quote_ident(&data_table)),
            display_name: format!("{schema_name}.{data_table}"),
            pool,
            connect_options,
            table_name,
            schema_name,
            embed_dim: self.embed_dim,
            hybrid_search: self.hybrid_search,
            text_search_config: self.text_search_config,
            use_jsonb: self.use_jsonb,
            distance: self.distance,
            index: self.index,
            perform_setup: self.perform_setup,
            allow_missing_embeddings: self.allow_missing_embeddings,
            session: None,
            table: OnceCell::new(),
        })
    }
}

/// Lowercases `name` (as LlamaIndex does) and accepts only `[a-z_][a-z0-9_]*`
/// within `max_len` bytes, so the name can be written into DDL.
fn validate_identifier(field: &str, name: &str, max_len: usize) -> Result<String> {
    let lower = name.to_lowercase();
    let mut chars = lower.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && lower.len() <= max_len;
    if ok {
        Ok(lower)
    } else {
        Err(Error::InvalidInput(format!(
            "{field} `{name}` must be letters, digits and `_`, not starting with a digit, \
             at most {max_len} characters"
        )))
    }
}

/// The configuration is written into the generated column's DDL, where no
/// parameter can stand: accept only a (schema-qualified) identifier.
fn validate_text_search_config(config: &str) -> Result<()> {
    let ident = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = config.split('.').collect();
    if parts.len() <= 2 && parts.iter().all(|p| ident(p)) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "text_search_config `{config}` is not a text search configuration name"
        )))
    }
}

/// A result row: node id, text, metadata payload (JSON text) and score.
type RowData = (Option<String>, String, Option<String>, f32);

/// What the first use learned about the table.
#[derive(Debug, Clone, Copy)]
struct TableInfo {
    /// `metadata_` is `jsonb` (else `json`).
    jsonb: bool,
    /// The table has `text_search_tsv`.
    has_tsv: bool,
    /// The server has ICU's root collation, for case-insensitive filters.
    icu: bool,
}

/// LlamaIndex's `PGVectorStore`: nodes as rows of `<schema>.data_<table>`
/// (`id`, `text`, `metadata_`, `node_id`, `embedding`, and `text_search_tsv`
/// with hybrid search), the node itself in `metadata_._node_content`.
/// Tables written by Python's store are read here and the reverse.
///
/// The table (and the schema, the `vector` extension and the indexes) is
/// created on first use unless [`PGVectorStoreBuilder::perform_setup`] is off.
/// Every failure of the server is an [`Error::Provider`] named `"postgres"`.
/// Share it as `Arc<PGVectorStore>`; it holds a connection pool, or runs in
/// a [`PgSession`]'s transaction (see [`in_session`](Self::in_session)).
#[derive(Clone)]
pub struct PGVectorStore {
    pool: PgPool,
    /// Set: every statement runs in this session (its transaction), not the pool.
    session: Option<PgSession>,
    allow_missing_embeddings: bool,
    /// Kept to explain connection failures (holds the password: never printed).
    connect_options: PgConnectOptions,
    table_name: String,
    schema_name: String,
    embed_dim: usize,
    hybrid_search: bool,
    text_search_config: String,
    use_jsonb: bool,
    distance: DistanceMethod,
    index: Option<VectorIndex>,
    perform_setup: bool,
    /// `"schema"."data_table"`, for statements.
    qualified: String,
    /// `schema.data_table`, for messages.
    display_name: String,
    table: OnceCell<TableInfo>,
}

impl fmt::Debug for PGVectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PGVectorStore")
            .field("server", &self.endpoint())
            .field("user", &self.connect_options.get_username())
            .field("table", &self.display_name)
            .field("embed_dim", &self.embed_dim)
            .field("hybrid_search", &self.hybrid_search)
            .field("text_search_config", &self.text_search_config)
            .field("distance", &self.distance)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

fn pg_error(context: impl fmt::Display, e: sqlx::Error) -> Error {
    Error::provider(PROVIDER, format!("{context}: {e}"), e)
}

impl PGVectorStore {
    /// A store on the server at `url` (`postgres://user:password@host:port/db`;
    /// Python's `postgresql+psycopg2://` form is accepted too).
    pub fn from_url(url: impl Into<String>) -> PGVectorStoreBuilder {
        PGVectorStoreBuilder::new(Source::Url(url.into()))
    }

    /// A store on `host:port`, database `database`, as `user` (LlamaIndex
    /// `PGVectorStore.from_params`).
    pub fn from_params(
        host: &str,
        port: u16,
        database: &str,
        user: &str,
        password: Option<&str>,
    ) -> PGVectorStoreBuilder {
        let mut options = PgConnectOptions::new()
            .host(host)
            .port(port)
            .database(database)
            .username(user);
        if let Some(password) = password {
            options = options.password(password);
        }
        PGVectorStoreBuilder::new(Source::Options(Box::new(options)))
    }

    /// A store using an existing pool (its timeouts and size apply).
    pub fn from_pool(pool: PgPool) -> PGVectorStoreBuilder {
        PGVectorStoreBuilder::new(Source::Pool(pool))
    }

    /// The table name without the `data_` prefix.
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// The schema name.
    pub fn schema_name(&self) -> &str {
        &self.schema_name
    }

    /// The embedding length.
    pub fn embed_dim(&self) -> usize {
        self.embed_dim
    }

    /// The connection pool, for statements of your own.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// This store with every statement run in `session` (and so inside its
    /// transaction, when it has one): what it writes is seen by the session's
    /// other stores and by no one else until the session commits.
    pub fn in_session(&self, session: PgSession) -> Self {
        let mut store = self.clone();
        store.session = Some(session);
        // A table created in the session exists only there until it commits.
        store.table = OnceCell::new();
        store
    }

    /// The session this store runs in, if any.
    pub fn session(&self) -> Option<&PgSession> {
        self.session.as_ref()
    }

    /// Runs `f` on a connection: the session's, else one from the pool.
    async fn with_conn<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BoxFuture<'c, Result<R>> + Send + 'static,
    {
        match &self.session {
            Some(session) => session.run(f).await,
            None => {
                let mut conn = self.acquire().await?;
                f(&mut conn).await
            }
        }
    }

    /// Connects and sets up the table now rather than on first use, so that a
    /// wrong address or missing permission shows at start-up.
    pub async fn initialize(&self) -> Result<()> {
        self.table().await.map(|_| ())
    }

    /// Closes the pool's connections (LlamaIndex `close`).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    fn endpoint(&self) -> String {
        endpoint(&self.connect_options)
    }

    /// The connection options (for a [`PgSession`] on the same server).
    pub fn connect_options(&self) -> &PgConnectOptions {
        &self.connect_options
    }

    /// A pooled connection, or an error that says why there is none: the pool
    /// only reports a timeout, so one direct attempt fetches the cause.
    async fn acquire(&self) -> Result<PoolConnection<Postgres>> {
        match self.pool.acquire().await {
            Ok(conn) => Ok(conn),
            Err(e) => {
                let cause = if matches!(e, sqlx::Error::PoolTimedOut) {
                    match tokio::time::timeout(
                        Duration::from_secs(5),
                        PgConnection::connect_with(&self.connect_options),
                    )
                    .await
                    {
                        Ok(Err(cause)) => cause.to_string(),
                        Ok(Ok(conn)) => {
                            let _ = conn.close().await;
                            "timed out waiting for a free connection".into()
                        }
                        Err(_) => "the connection attempt timed out".into(),
                    }
                } else {
                    e.to_string()
                };
                Err(Error::provider(
                    PROVIDER,
                    format!(
                        "cannot connect to PostgreSQL at {}: {cause}",
                        self.endpoint()
                    ),
                    e,
                ))
            }
        }
    }

    async fn table(&self) -> Result<TableInfo> {
        self.table.get_or_try_init(|| self.setup()).await.copied()
    }

    async fn setup(&self) -> Result<TableInfo> {
        let this = self.clone();
        self.with_conn(move |conn| {
            Box::pin(async move {
                if this.perform_setup {
                    this.create(conn).await?;
                }
                this.inspect(conn).await
            })
        })
        .await
    }

    async fn create(&self, conn: &mut PgConnection) -> Result<()> {
        let schema_exists: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1)",
        )
        .bind(&self.schema_name)
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| pg_error(format!("checking schema {}", self.schema_name), e))?;
        if !schema_exists {
            let ddl = format!(
                "CREATE SCHEMA IF NOT EXISTS {}",
                quote_ident(&self.schema_name)
            );
            sqlx::query(&ddl)
                .execute(&mut *conn)
                .await
                .map_err(|e| pg_error(format!("creating schema {}", self.schema_name), e))?;
        }
        // In its own (sub)transaction: inside a session's transaction a
        // failed statement would otherwise abort everything after it.
        let created = match conn.begin().await {
            Ok(mut sub) => match sqlx::query("CREATE EXTENSION IF NOT EXISTS vector")
                .execute(&mut *sub)
                .await
            {
                Ok(_) => sub.commit().await.map(|_| ()),
                Err(e) => {
                    let _ = sub.rollback().await;
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        if let Err(e) = created {
            // Creating an extension needs rights a store's user may lack; an
            // extension someone else installed is all the store needs.
            let installed: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')",
            )
            .fetch_one(&mut *conn)
            .await
            .unwrap_or(false);
            if !installed {
                return Err(pg_error(
                    "the pgvector extension `vector` is not installed and could not be created",
                    e,
                ));
            }
        }
        let exists: bool = sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
            .bind(&self.qualified)
            .fetch_one(&mut *conn)
            .await
            .map_err(|e| pg_error(format!("looking up table {}", self.display_name), e))?;
        let mut tx = conn
            .begin()
            .await
            .map_err(|e| pg_error("starting a transaction", e))?;
        if !exists {
            if self.hybrid_search {
                // Checked here so a typo is a clear error, not a failing DDL.
                sqlx::query("SELECT $1::text::regconfig")
                    .bind(&self.text_search_config)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| {
                        pg_error(
                            format!("text_search_config `{}`", self.text_search_config),
                            e,
                        )
                    })?;
            }
            for ddl in self.table_ddl() {
                sqlx::query(&ddl)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| pg_error(format!("creating table {}", self.display_name), e))?;
            }
        }
        if let Some(ddl) = self.index_ddl() {
            sqlx::query(&ddl).execute(&mut *tx).await.map_err(|e| {
                pg_error(
                    format!("creating the vector index of {}", self.display_name),
                    e,
                )
            })?;
        }
        tx.commit()
            .await
            .map_err(|e| pg_error(format!("creating table {}", self.display_name), e))
    }

    /// The statements LlamaIndex's SQLAlchemy model emits for the table.
    fn table_ddl(&self) -> Vec<String> {
        let q = &self.qualified;
        let metadata_type = if self.use_jsonb { "JSONB" } else { "JSON" };
        let tsv = if self.hybrid_search {
            // Validated to be an identifier, so it can stand in the literal.
            format!(
                ",\n  text_search_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('{}', text)) STORED",
                self.text_search_config
            )
        } else {
            String::new()
        };
        let mut ddl = vec![format!(
            "CREATE TABLE IF NOT EXISTS {q} (\n  id BIGSERIAL NOT NULL,\n  text VARCHAR NOT NULL,\n  \
             metadata_ {metadata_type},\n  node_id VARCHAR,\n  embedding VECTOR({}){tsv},\n  PRIMARY KEY (id)\n)",
            self.embed_dim
        )];
        let index = |suffix: &str| quote_ident(&format!("{}_idx{suffix}", self.table_name));
        if self.hybrid_search {
            ddl.push(format!(
                "CREATE INDEX IF NOT EXISTS {} ON {q} USING gin (text_search_tsv)",
                index("")
            ));
        }
        ddl.push(format!(
            "CREATE INDEX IF NOT EXISTS {} ON {q} USING btree ((metadata_ ->> 'ref_doc_id'))",
            index("_1")
        ));
        ddl
    }

    fn index_ddl(&self) -> Option<String> {
        let name = quote_ident(&format!("data_{}_embedding_idx", self.table_name));
        let ops = self.distance.ops_class();
        let q = &self.qualified;
        // The options are integers, written as such: DDL takes no parameters.
        Some(match self.index? {
            VectorIndex::Hnsw(o) => format!(
                "CREATE INDEX IF NOT EXISTS {name} ON {q} USING hnsw (embedding {ops}) \
                 WITH (m = {}, ef_construction = {})",
                o.m, o.ef_construction
            ),
            VectorIndex::IvfFlat(o) => format!(
                "CREATE INDEX IF NOT EXISTS {name} ON {q} USING ivfflat (embedding {ops}) \
                 WITH (lists = {})",
                o.lists
            ),
        })
    }

    async fn inspect(&self, conn: &mut PgConnection) -> Result<TableInfo> {
        let columns: Vec<(String, String, i32)> = sqlx::query_as(
            "SELECT a.attname::text, t.typname::text, a.atttypmod FROM pg_attribute a \
             JOIN pg_type t ON t.oid = a.atttypid \
             WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
        )
        .bind(&self.qualified)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| pg_error(format!("reading the columns of {}", self.display_name), e))?;
        if columns.is_empty() {
            return Err(Error::NotFound(format!(
                "table {} does not exist (perform_setup is off, so it is not created)",
                self.display_name
            )));
        }
        let types: HashMap<&str, (&str, i32)> = columns
            .iter()
            .map(|(name, ty, modifier)| (name.as_str(), (ty.as_str(), *modifier)))
            .collect();
        for required in ["id", "text", "metadata_", "node_id", "embedding"] {
            if !types.contains_key(required) {
                return Err(Error::InvalidInput(format!(
                    "table {} has no `{required}` column: it is not in LlamaIndex's PGVectorStore layout",
                    self.display_name
                )));
            }
        }
        let jsonb = match types.get("metadata_") {
            Some(("jsonb", _)) => true,
            Some(("json", _)) => false,
            other => {
                return Err(Error::InvalidInput(format!(
                    "`metadata_` of {} is {:?}, not json or jsonb",
                    self.display_name,
                    other.map(|t| t.0)
                )));
            }
        };
        match types.get("embedding") {
            Some(("vector", dim)) if *dim <= 0 || *dim as usize == self.embed_dim => {}
            Some(("vector", dim)) => {
                return Err(Error::InvalidInput(format!(
                    "table {} holds vectors of {dim} dimensions, the store is set to embed_dim {}",
                    self.display_name, self.embed_dim
                )));
            }
            other => {
                return Err(Error::InvalidInput(format!(
                    "`embedding` of {} is {:?}, not a pgvector `vector`",
                    self.display_name,
                    other.map(|t| t.0)
                )));
            }
        }
        let icu: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')",
        )
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| pg_error("reading the server's collations", e))?;
        Ok(TableInfo {
            jsonb,
            has_tsv: types.contains_key("text_search_tsv"),
            icu,
        })
    }

    /// The row LlamaIndex writes for `node`: its text, its metadata payload
    /// (as Python's `json.dumps` writes it), its id and its embedding.
    fn row(&self, node: &Node) -> Result<(String, String, Option<Vector>)> {
        let embedding = match node.embedding.as_deref() {
            Some(e) => Some(e),
            None if self.allow_missing_embeddings => None,
            None => {
                return Err(Error::InvalidInput(format!(
                    "node `{}` has no embedding",
                    node.id_
                )));
            }
        };
        let embedding = embedding.unwrap_or_default();
        let present = node.embedding.is_some();
        if present && embedding.len() != self.embed_dim {
            return Err(Error::InvalidInput(format!(
                "node `{}` has an embedding of {} dimensions, the store holds {}",
                node.id_,
                embedding.len(),
                self.embed_dim
            )));
        }
        if embedding.iter().any(|x| !x.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "node `{}` has a non-finite value in its embedding",
                node.id_
            )));
        }
        let text = node.get_content(MetadataMode::None);
        let metadata = to_python_json_string(&node_to_metadata_dict(node, true, false)?)?;
        // PostgreSQL text cannot hold NUL, nor can jsonb strings.
        if text.contains('\0') || metadata.contains("\\u0000") {
            return Err(Error::InvalidInput(format!(
                "node `{}` holds a NUL character, which PostgreSQL cannot store",
                node.id_
            )));
        }
        Ok((
            text,
            metadata,
            present.then(|| Vector::from(embedding.to_vec())),
        ))
    }

    /// Runs `sql` and returns its rows, in a transaction with `settings`
    /// (`set_config(name, value, is_local)`) applied first when there are any.
    async fn fetch(
        &self,
        sql: Sql,
        settings: Vec<(&'static str, String)>,
        context: &str,
    ) -> Result<Vec<PgRow>> {
        let what = format!("{context} {}", self.display_name);
        self.with_conn(move |conn| {
            Box::pin(async move {
                let err = |e| pg_error(&what, e);
                if settings.is_empty() {
                    return sql.query().fetch_all(&mut *conn).await.map_err(err);
                }
                let mut tx = conn.begin().await.map_err(err)?;
                for (name, value) in &settings {
                    sqlx::query("SELECT set_config($1, $2, true)")
                        .bind(*name)
                        .bind(value)
                        .execute(&mut *tx)
                        .await
                        .map_err(err)?;
                }
                let rows = sql.query().fetch_all(&mut *tx).await.map_err(err)?;
                tx.commit().await.map_err(err)?;
                Ok(rows)
            })
        })
        .await
    }

    /// The conditions for filters, node ids and doc ids, their values bound
    /// into `sql`; the caller joins them with `AND`.
    fn restrictions(
        &self,
        sql: &mut Sql,
        info: TableInfo,
        filters: Option<&MetadataFilters>,
        node_ids: Option<&[String]>,
        doc_ids: Option<&[String]>,
    ) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(filters) = filters {
            parts.push(FilterSql::new(sql, info.icu).group(filters));
        }
        if let Some(ids) = node_ids {
            let p = sql.bind(Arg::TextArray(ids.to_vec()));
            parts.push(format!("node_id = ANY({p})"));
        }
        if let Some(ids) = doc_ids {
            let p = sql.bind(Arg::TextArray(ids.to_vec()));
            parts.push(format!("(metadata_ ->> 'ref_doc_id') = ANY({p})"));
        }
        parts
    }

    fn push_where(sql: &mut Sql, parts: &[String]) {
        if !parts.is_empty() {
            sql.push(" WHERE ");
            sql.push(&parts.join(" AND "));
        }
    }

    fn limit(sql: &mut Sql, top_k: usize) {
        // 0 means every row, as in ragloom's SimpleVectorStore; LIMIT NULL is no limit.
        let limit = (top_k > 0).then(|| i64::try_from(top_k).unwrap_or(i64::MAX));
        let p = sql.bind(Arg::Int(limit));
        sql.push(&format!(" LIMIT {p}"));
    }

    /// Session settings for the approximate index (LlamaIndex sets them per query).
    fn index_settings(&self) -> Vec<(&'static str, String)> {
        let mut settings = Vec::new();
        match self.index {
            Some(VectorIndex::Hnsw(o)) => {
                if let Some(ef) = o.ef_search {
                    settings.push(("hnsw.ef_search", ef.to_string()));
                }
            }
            Some(VectorIndex::IvfFlat(o)) => {
                if let Some(probes) = o.probes {
                    settings.push(("ivfflat.probes", probes.to_string()));
                }
            }
            None => {}
        }
        if !settings.is_empty() {
            settings.push(("enable_bitmapscan", "off".into()));
        }
        settings
    }

    async fn dense_rows(&self, info: TableInfo, query: &VectorStoreQuery) -> Result<Vec<RowData>> {
        let embedding = query.query_embedding.as_deref().ok_or_else(|| {
            Error::InvalidInput(format!(
                "query mode `{}` needs a query_embedding",
                query.mode.as_str()
            ))
        })?;
        if embedding.len() != self.embed_dim {
            return Err(Error::InvalidInput(format!(
                "the query embedding has {} dimensions, the store holds {}",
                embedding.len(),
                self.embed_dim
            )));
        }
        let mut sql = Sql::new("SELECT id, (embedding ");
        let p = sql.bind(Arg::Vector(Vector::from(embedding.to_vec())));
        sql.push(&format!(
            "{} {p}) AS score FROM {}",
            self.distance.operator(),
            self.qualified
        ));
        let parts = self.restrictions(
            &mut sql,
            info,
            query.filters.as_ref(),
            query.node_ids.as_deref(),
            query.doc_ids.as_deref(),
        );
        Self::push_where(&mut sql, &parts);
        sql.push(" ORDER BY score ASC");
        Self::limit(&mut sql, query.similarity_top_k);
        let sql = self.with_rows(sql, "ASC");
        let rows = self.fetch(sql, self.index_settings(), "querying").await?;
        rows.iter()
            .map(|row| {
                let distance: Option<f64> = row.try_get("score").map_err(|e| self.decode(e))?;
                // A row without an embedding has no distance; Python scores it 0.
                let score = distance.map_or(0.0, |d| self.distance.score(d));
                self.common_columns(row, score)
            })
            .collect()
    }

    async fn text_rows(&self, info: TableInfo, query: &VectorStoreQuery) -> Result<Vec<RowData>> {
        if !info.has_tsv {
            return Err(Error::Unsupported(format!(
                "text search needs the `text_search_tsv` column, which {} lacks: \
                 create the table with hybrid_search(true)",
                self.display_name
            )));
        }
        let query_str = query.query_str.as_deref().ok_or_else(|| {
            Error::InvalidInput("query_str must be specified for a sparse vector query".into())
        })?;
        let mut sql = Sql::new("SELECT id, ");
        let config = sql.bind(Arg::Text(self.text_search_config.clone()));
        let words = sql.bind(Arg::Text(tsquery_input(query_str)));
        let tsquery = format!("to_tsquery({config}::regconfig, {words})");
        sql.push(&format!(
            "ts_rank(text_search_tsv, {tsquery}) AS score FROM {}",
            self.qualified
        ));
        let mut parts = vec![format!("text_search_tsv @@ {tsquery}")];
        parts.extend(self.restrictions(
            &mut sql,
            info,
            query.filters.as_ref(),
            query.node_ids.as_deref(),
            query.doc_ids.as_deref(),
        ));
        Self::push_where(&mut sql, &parts);
        sql.push(" ORDER BY score DESC");
        Self::limit(
            &mut sql,
            query.sparse_top_k.unwrap_or(query.similarity_top_k),
        );
        let sql = self.with_rows(sql, "DESC");
        let rows = self.fetch(sql, Vec::new(), "searching the text of").await?;
        rows.iter()
            .map(|row| {
                let rank: Option<f32> = row.try_get("score").map_err(|e| self.decode(e))?;
                self.common_columns(row, rank.unwrap_or(0.0))
            })
            .collect()
    }

    /// Wraps a ranking query (`id`, `score`, best first, limited) so that the
    /// text and metadata are read for the selected rows only: selected with
    /// the ranking, they would be detoasted and converted for every row scanned.
    fn with_rows(&self, ranking: Sql, order: &str) -> Sql {
        Sql {
            text: format!(
                "SELECT t.node_id, t.text, t.metadata_::text AS metadata, s.score \
                 FROM ({}) AS s JOIN {} AS t ON t.id = s.id ORDER BY s.score {order}",
                ranking.text, self.qualified
            ),
            args: ranking.args,
        }
    }

    fn decode(&self, e: sqlx::Error) -> Error {
        pg_error(format!("reading a row of {}", self.display_name), e)
    }

    fn common_columns(&self, row: &PgRow, score: f32) -> Result<RowData> {
        Ok((
            row.try_get("node_id").map_err(|e| self.decode(e))?,
            row.try_get("text").map_err(|e| self.decode(e))?,
            row.try_get("metadata").map_err(|e| self.decode(e))?,
            score,
        ))
    }

    /// Nodes from rows, in order, with their scores.
    fn to_result(rows: Vec<RowData>) -> VectorStoreQueryResult {
        let mut result = VectorStoreQueryResult {
            nodes: Some(Vec::with_capacity(rows.len())),
            ..Default::default()
        };
        for (node_id, text, metadata, score) in rows {
            let node = row_node(node_id.as_deref(), text, metadata.as_deref());
            result.ids.push(node_id.unwrap_or_else(|| node.id_.clone()));
            result.similarities.push(score);
            if let Some(nodes) = result.nodes.as_mut() {
                nodes.push(node);
            }
        }
        result
    }

    /// The stored nodes matching `node_ids` (when given) and `filters` (when
    /// given), embeddings included, in insertion order (LlamaIndex `get_nodes`
    /// with filters). Neither given returns every node.
    pub async fn get_nodes_filtered(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<Vec<Node>> {
        let info = self.table().await?;
        let mut sql = Sql::new(format!(
            "SELECT node_id, text, metadata_::text AS metadata, embedding FROM {}",
            self.qualified
        ));
        let parts = self.restrictions(&mut sql, info, filters, node_ids, None);
        Self::push_where(&mut sql, &parts);
        sql.push(" ORDER BY id");
        let rows = self.fetch(sql, Vec::new(), "reading nodes of").await?;
        rows.iter()
            .map(|row| {
                let node_id: Option<String> = row.try_get("node_id").map_err(|e| self.decode(e))?;
                let text: String = row.try_get("text").map_err(|e| self.decode(e))?;
                let metadata: Option<String> =
                    row.try_get("metadata").map_err(|e| self.decode(e))?;
                let embedding: Option<Vector> =
                    row.try_get("embedding").map_err(|e| self.decode(e))?;
                let mut node = row_node(node_id.as_deref(), text, metadata.as_deref());
                node.embedding = embedding.map(|v| v.to_vec());
                Ok(node)
            })
            .collect()
    }

    async fn search(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        let info = self.table().await?;
        let rows = match query.mode {
            VectorStoreQueryMode::Default => self.dense_rows(info, query).await?,
            VectorStoreQueryMode::TextSearch | VectorStoreQueryMode::Sparse => {
                self.text_rows(info, query).await?
            }
            VectorStoreQueryMode::Hybrid => {
                if query.alpha.is_some() {
                    tracing::warn!("postgres hybrid search does not support the alpha parameter");
                }
                let dense = self.dense_rows(info, query).await?;
                let sparse = self.text_rows(info, query).await?;
                // Dense results first, then text matches not already there.
                let mut seen = HashSet::new();
                dense
                    .into_iter()
                    .chain(sparse)
                    .filter(|row| seen.insert(row.0.clone()))
                    .collect()
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "PGVectorStore does not support query mode `{}`",
                    other.as_str()
                )));
            }
        };
        Ok(Self::to_result(rows))
    }

    /// Replaces the rows of these nodes' ids with new ones, in one transaction.
    async fn insert(&self, nodes: &[Node]) -> Result<()> {
        let mut rows = Vec::with_capacity(nodes.len());
        for node in nodes {
            rows.push(Some(self.row(node)?));
        }
        // The last of several nodes with one id wins, as a later add would.
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, node) in nodes.iter().enumerate() {
            last.insert(node.id_.as_str(), i);
        }
        let keep: Vec<usize> = (0..nodes.len())
            .filter(|&i| last.get(nodes[i].id_.as_str()) == Some(&i))
            .collect();
        let info = self.table().await?;
        let statement = format!(
            "INSERT INTO {} (text, metadata_, node_id, embedding) \
             SELECT r.text, r.metadata::{}, r.node_id, r.embedding \
             FROM UNNEST($1::varchar[], $2::text[], $3::varchar[], $4::vector[]) \
             WITH ORDINALITY AS r(text, metadata, node_id, embedding, ord) ORDER BY r.ord",
            self.qualified,
            if info.jsonb { "jsonb" } else { "json" }
        );
        let mut delete = Sql::new(format!(
            "DELETE FROM {} WHERE node_id = ANY(",
            self.qualified
        ));
        let p = delete.bind(Arg::TextArray(
            keep.iter().map(|&i| nodes[i].id_.clone()).collect(),
        ));
        delete.push(&format!("{p})"));
        // The rows in batches, built before the connection is taken.
        let mut batches = Vec::new();
        for chunk in keep.chunks(INSERT_BATCH) {
            let mut texts = Vec::with_capacity(chunk.len());
            let mut metadata = Vec::with_capacity(chunk.len());
            let mut node_ids = Vec::with_capacity(chunk.len());
            let mut embeddings = Vec::with_capacity(chunk.len());
            for &i in chunk {
                if let Some((text, md, embedding)) = rows[i].take() {
                    texts.push(text);
                    metadata.push(md);
                    node_ids.push(nodes[i].id_.clone());
                    embeddings.push(embedding);
                }
            }
            batches.push((texts, metadata, node_ids, embeddings));
        }
        let what = format!("adding {} nodes to {}", keep.len(), self.display_name);
        self.with_conn(move |conn| {
            Box::pin(async move {
                let err = |e| pg_error(&what, e);
                let mut tx = conn.begin().await.map_err(err)?;
                delete.query().execute(&mut *tx).await.map_err(err)?;
                for (texts, metadata, node_ids, embeddings) in batches {
                    sqlx::query(&statement)
                        .bind(texts)
                        .bind(metadata)
                        .bind(node_ids)
                        .bind(embeddings)
                        .execute(&mut *tx)
                        .await
                        .map_err(err)?;
                }
                tx.commit().await.map_err(err)
            })
        })
        .await
    }

    async fn execute(&self, sql: Sql, context: &str) -> Result<u64> {
        self.table().await?;
        let what = format!("{context} {}", self.display_name);
        self.with_conn(move |conn| {
            Box::pin(async move {
                sql.query()
                    .execute(&mut *conn)
                    .await
                    .map(|r| r.rows_affected())
                    .map_err(|e| pg_error(&what, e))
            })
        })
        .await
    }
}

/// The node a row holds: rebuilt from its payload, or (a row LlamaIndex's
/// older versions wrote, or foreign data) a text node with the row's id,
/// text and metadata, as Python falls back.
fn row_node(node_id: Option<&str>, text: String, metadata: Option<&str>) -> Node {
    let metadata: Metadata = metadata
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    match metadata_dict_to_node(&metadata, Some(&text)) {
        Ok(node) => node,
        Err(e) => {
            tracing::debug!(node_id, error = %e, "row without a node payload; reading it as a bare text node");
            Node::text_node(text)
                .with_id(node_id.unwrap_or_default())
                .with_metadata_map(metadata)
        }
    }
}

#[async_trait]
impl VectorStore for PGVectorStore {
    fn stores_text(&self) -> bool {
        true
    }

    /// Inserts the nodes in one transaction, replacing rows that hold the same
    /// node ids (LlamaIndex appends duplicates instead).
    async fn add(&self, nodes: &[Node]) -> Result<Vec<String>> {
        if nodes.is_empty() {
            return Ok(Vec::new());
        }
        let span =
            tracing::debug_span!("pgvector.add", table = %self.display_name, nodes = nodes.len());
        self.insert(nodes).instrument(span).await?;
        Ok(nodes.iter().map(|n| n.id_.clone()).collect())
    }

    async fn delete(&self, ref_doc_id: &str) -> Result<()> {
        let mut sql = Sql::new(format!(
            "DELETE FROM {} WHERE (metadata_ ->> 'ref_doc_id') = ",
            self.qualified
        ));
        let p = sql.bind(Arg::Text(ref_doc_id.to_string()));
        sql.push(&p);
        self.execute(sql, &format!("deleting document `{ref_doc_id}` from"))
            .await
            .map(|_| ())
    }

    /// Deletes the listed nodes that also match `filters`, read as
    /// [`ragloom_core::vector_stores::delete_selection`] reads them.
    async fn delete_nodes(
        &self,
        node_ids: Option<&[String]>,
        filters: Option<&MetadataFilters>,
    ) -> Result<()> {
        let Some(sel) = delete_selection(node_ids, filters)? else {
            return Ok(());
        };
        let info = self.table().await?;
        let mut sql = Sql::new(format!("DELETE FROM {}", self.qualified));
        let parts = self.restrictions(&mut sql, info, sel.filters, sel.node_ids, None);
        Self::push_where(&mut sql, &parts);
        self.execute(sql, "deleting nodes from").await.map(|_| ())
    }

    async fn query(&self, query: &VectorStoreQuery) -> Result<VectorStoreQueryResult> {
        let span = tracing::debug_span!(
            "pgvector.query",
            table = %self.display_name,
            mode = query.mode.as_str(),
            top_k = query.similarity_top_k
        );
        self.search(query).instrument(span).await
    }

    async fn get_nodes(&self, node_ids: &[String]) -> Result<Vec<Node>> {
        if node_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.get_nodes_filtered(Some(node_ids), None).await
    }

    async fn clear(&self) -> Result<()> {
        let sql = Sql::new(format!("DELETE FROM {}", self.qualified));
        self.execute(sql, "clearing").await.map(|_| ())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercased_and_checked() {
        assert_eq!(
            validate_identifier("table_name", "PG_Essay1", 58).ok(),
            Some("pg_essay1".into())
        );
        for bad in ["", "1abc", "a-b", "a b", "x\"; DROP", "é"] {
            assert!(validate_identifier("table_name", bad, 58).is_err(), "{bad}");
        }
        assert!(validate_identifier("t", &"a".repeat(59), 58).is_err());
        assert!(validate_text_search_config("english").is_ok());
        assert!(validate_text_search_config("pg_catalog.simple").is_ok());
        assert!(validate_text_search_config("english') --").is_err());
    }

    #[tokio::test]
    async fn debug_output_never_shows_the_password() {
        let store = PGVectorStore::from_url("postgres://alice:s3cr3t-pw@db.example:6543/rag")
            .table_name("Docs")
            .embed_dim(3)
            .build();
        let text = format!("{store:?}");
        assert!(text.contains("db.example:6543/rag"), "{text}");
        assert!(text.contains("public.data_docs"), "{text}");
        assert!(!text.contains("s3cr3t-pw"), "{text}");
        let builder =
            PGVectorStore::from_params("h", 1, "d", "alice", Some("s3cr3t-pw")).embed_dim(3);
        let text = format!("{builder:?}");
        assert!(!text.contains("s3cr3t-pw"), "{text}");
    }

    #[test]
    fn building_outside_a_runtime_is_an_error() {
        let err = PGVectorStore::from_url("postgres://h/d").build();
        assert!(
            matches!(&err, Err(Error::InvalidInput(m)) if m.contains("Tokio")),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn bad_settings_are_errors_not_panics() {
        assert!(PGVectorStore::from_url("not a url").build().is_err());
        assert!(
            PGVectorStore::from_url("postgres://h/d")
                .embed_dim(0)
                .build()
                .is_err()
        );
        assert!(
            PGVectorStore::from_url("postgres://h/d")
                .hnsw(HnswOptions {
                    m: 0,
                    ..Default::default()
                })
                .build()
                .is_err()
        );
    }

    #[test]
    fn scores_are_higher_for_nearer() {
        assert_eq!(DistanceMethod::Cosine.score(0.25), 0.75);
        assert_eq!(DistanceMethod::InnerProduct.score(-2.0), 2.0);
        assert_eq!(DistanceMethod::L2.score(3.0), -3.0);
    }
}
