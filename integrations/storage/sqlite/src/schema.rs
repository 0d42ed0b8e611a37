//! The file's tables and their version: a new file gets the current schema,
//! an older one is migrated step by step in one transaction, a newer one is refused.

use rusqlite::{Connection, OptionalExtension, params};

/// The schema this build writes. Bump it with a new entry in `MIGRATIONS`.
pub const SCHEMA_VERSION: i64 = 6;

/// `MIGRATIONS[i]` takes a file from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: LlamaIndex's key-value collections (docstore, index store,
    // document hashes) and the vectors beside them.
    "CREATE TABLE kv (
        collection TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (collection, key)
    );
    CREATE TABLE vectors (
        node_id TEXT PRIMARY KEY,
        ref_doc_id TEXT,
        embedding BLOB NOT NULL,
        metadata TEXT NOT NULL
    );
    CREATE INDEX vectors_by_ref_doc ON vectors (ref_doc_id);",
    // 1 → 2: embeddings by content (a hash of the model key and the text), so
    // unchanged text is never embedded twice, whatever node carries it.
    "CREATE TABLE embedding_cache (
        key BLOB PRIMARY KEY,
        embedding BLOB NOT NULL
    ) WITHOUT ROWID;",
    // 2 → 3: the keyword index (BM25 term counts per node, postings per
    // term in segments, tombstones of deleted nodes), filled from the stored nodes.
    "CREATE TABLE bm25_docs (
        row INTEGER PRIMARY KEY AUTOINCREMENT,
        node_id TEXT NOT NULL UNIQUE,
        length INTEGER NOT NULL
    );
    CREATE TABLE bm25_postings (
        term TEXT NOT NULL,
        segment INTEGER NOT NULL,
        postings BLOB NOT NULL,
        PRIMARY KEY (term, segment)
    ) WITHOUT ROWID;
    CREATE TABLE bm25_deleted (row INTEGER PRIMARY KEY);",
    // 3 → 4: long values are written as zstd frames instead of raw deflate.
    // No table changes (deflated values still read); the version keeps
    // builds that cannot read zstd from opening the file.
    "",
    // 4 → 5: a record per keyword segment (its size, for the merge
    // policy), and postings keyed by segment first, so a batch's rows are
    // appended together and a merge reads each segment as one sorted run;
    // queries find a term's rows through an index.
    "CREATE TABLE bm25_segments (
        segment INTEGER PRIMARY KEY,
        docs INTEGER NOT NULL
    );
    CREATE TABLE bm25_postings_5 (
        segment INTEGER NOT NULL,
        term TEXT NOT NULL,
        postings BLOB NOT NULL,
        PRIMARY KEY (segment, term)
    ) WITHOUT ROWID;
    INSERT INTO bm25_postings_5 (segment, term, postings)
        SELECT segment, term, postings FROM bm25_postings ORDER BY segment, term;
    DROP TABLE bm25_postings;
    ALTER TABLE bm25_postings_5 RENAME TO bm25_postings;
    CREATE INDEX bm25_postings_by_term ON bm25_postings (term);",
    // 5 → 6: every vector row added, replaced or removed is logged by
    // rowid, so the vector index file beside the database (written as of
    // one log entry) is brought up to a commit without reading every row.
    "CREATE TABLE vectors_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        row INTEGER NOT NULL
    );
    CREATE TRIGGER vectors_logged_insert AFTER INSERT ON vectors
        BEGIN INSERT INTO vectors_log (row) VALUES (NEW.rowid); END;
    CREATE TRIGGER vectors_logged_update AFTER UPDATE OF embedding ON vectors
        BEGIN INSERT INTO vectors_log (row) VALUES (NEW.rowid); END;
    CREATE TRIGGER vectors_logged_delete AFTER DELETE ON vectors
        BEGIN INSERT INTO vectors_log (row) VALUES (OLD.rowid); END;",
];

/// Brings the file at `conn` to [`SCHEMA_VERSION`]. The caller holds no
/// transaction. A file already current is only read, so opening an index
/// never waits for another process's write.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), String> {
    let current = match version(conn) {
        Ok(v) => v.unwrap_or(0),
        // No `meta` table yet: a new file.
        Err(_) => 0,
    };
    check_not_newer(current)?;
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| e.to_string())?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    )
    .map_err(|e| e.to_string())?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let found: Option<String> = tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| e.to_string())?;
    let version = match found {
        None => 0,
        Some(v) => v
            .parse::<i64>()
            .map_err(|_| format!("unreadable schema version `{v}`"))?,
    };
    check_not_newer(version)?;
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .map_err(|e| format!("migrating from schema version {from}: {e}"))?;
    }
    if version < 3 {
        // Nodes stored before the keyword index existed are indexed now.
        crate::keyword::index_stored_nodes(&tx)?;
    } else if version < 5 {
        // Segments written before their records: merged into one, recorded.
        crate::keyword::adopt_segments(&tx)?;
    }
    if version < SCHEMA_VERSION {
        tx.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1)",
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

fn check_not_newer(version: i64) -> Result<(), String> {
    if version > SCHEMA_VERSION {
        return Err(format!(
            "written by a newer ragloom (schema version {version}; this build reads up to {SCHEMA_VERSION}): upgrade ragloom"
        ));
    }
    Ok(())
}

/// The schema version recorded in the file, if any.
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'schema_version'",
        [],
        |r| r.get::<_, String>(0),
    )
    .optional()
    .map(|v| v.and_then(|v| v.parse().ok()))
}
