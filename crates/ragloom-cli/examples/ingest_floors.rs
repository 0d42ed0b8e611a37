//! The floors of `ragloom ingest`'s token counting and writing, measured on a
//! folder's text: its cl100k tokens counted on every core, the same bytes
//! written as `ROWS` rows of one transaction of a SQLite file in the
//! embedded store's settings, and, given the index an ingest wrote
//! (`STORE`), its very rows written again into an empty file of its schema
//! in one transaction. `cargo xtask bench --store` runs it beside the
//! ingest (crates/ragloom-cli/benches/store_bench.py) and prints one JSON line.
//!
//! ```sh
//! cargo run --release -p ragloom-cli --example ingest_floors -- FOLDER ROWS [STORE]
//! ```

use ragloom::{Cl100kTokenizer, Tokenizer};
use rusqlite::types::Value;
use std::path::Path;
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

/// How the store writes a new file until its first commit: its page size
/// and cache, a rollback journal on disk, one sync at the commit.
const NEW_FILE: &str = "PRAGMA page_size = 16384; PRAGMA journal_mode = TRUNCATE;
    PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;";

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(rows)) = (args.next(), args.next()) else {
        return Err("usage: ingest_floors FOLDER ROWS [STORE]".into());
    };
    let store = args.next();
    let rows: usize = rows.parse()?;
    let mut paths: Vec<_> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    paths.sort();
    let texts: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned()))
        .collect::<Result<_, _>>()?;
    let bytes: usize = texts.iter().map(String::len).sum();

    // Counting: each core takes every n-th file, as the splitter's workers do.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Each worker also times itself: their sum is the thread time that
    // `ingest --json`'s `stages.count` is set beside.
    let started = Instant::now();
    let (tokens, count_thread_s) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..cores)
            .map(|k| {
                let texts = &texts;
                s.spawn(move || {
                    let own = Instant::now();
                    let t = Cl100kTokenizer::new();
                    let n = texts
                        .iter()
                        .skip(k)
                        .step_by(cores)
                        .map(|x| t.count(x))
                        .sum::<usize>();
                    (n, own.elapsed().as_secs_f64())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or((0, 0.0)))
            .fold((0, 0.0), |(n, t), (m, u)| (n + m, t + u))
    });
    let count_s = started.elapsed().as_secs_f64();

    // Writing: the text cut into `rows` rows, inserted in one transaction
    // and committed, as the store writes a new file.
    let all = texts.concat();
    let per_row = all.len().div_ceil(rows.max(1)).max(1);
    let work = tempfile::tempdir()?;
    let started = Instant::now();
    let mut conn = rusqlite::Connection::open(work.path().join("floor.sqlite"))?;
    conn.execute_batch(&format!(
        "{NEW_FILE} CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL);"
    ))?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO kv (key, value) VALUES (?1, ?2)")?;
        for (i, chunk) in all.as_bytes().chunks(per_row).enumerate() {
            insert.execute(rusqlite::params![format!("row-{i:08}"), chunk])?;
        }
    }
    tx.commit()?;
    drop(conn);
    let insert_s = started.elapsed().as_secs_f64();

    let mut out = serde_json::json!({
        "files": texts.len(),
        "bytes": bytes,
        "tokens": tokens,
        "count_s": count_s,
        "count_thread_s": count_thread_s,
        "count_cores": cores,
        "rows": rows,
        "insert_s": insert_s,
    });
    if let Some(store) = store {
        let (copied, copy_s) = copy_rows(Path::new(&store), &work.path().join("copy.sqlite"))?;
        out["store_rows"] = copied.into();
        out["store_insert_s"] = copy_s.into();
    }
    println!("{out}");
    Ok(())
}

/// The floor of writing exactly what an ingest wrote: every row of `store`,
/// read into memory first, inserted table by table into a new file made
/// with the same tables and indexes (before the rows, as an ingest has
/// them), in one transaction, committed as the store writes a new file.
/// Returns the rows and the seconds the writing took.
fn copy_rows(store: &Path, into: &Path) -> Result<(usize, f64), Error> {
    let src =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let schema: Vec<(String, String, String)> = src
        .prepare(
            "SELECT type, name, sql FROM sqlite_master
             WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut tables: Vec<(String, Vec<Vec<Value>>)> = Vec::new();
    for (kind, name, _) in &schema {
        if kind != "table" {
            continue;
        }
        let mut stmt = src.prepare(&format!("SELECT * FROM \"{name}\""))?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?
            .collect::<Result<Vec<Vec<Value>>, _>>()?;
        tables.push((name.clone(), rows));
    }
    let count = tables.iter().map(|(_, rows)| rows.len()).sum();

    let started = Instant::now();
    let mut conn = rusqlite::Connection::open(into)?;
    conn.execute_batch(NEW_FILE)?;
    for (_, _, sql) in &schema {
        conn.execute_batch(sql)?;
    }
    let tx = conn.transaction()?;
    for (name, rows) in &tables {
        let Some(first) = rows.first() else { continue };
        let marks = vec!["?"; first.len()].join(", ");
        let mut insert = tx.prepare(&format!("INSERT INTO \"{name}\" VALUES ({marks})"))?;
        for row in rows {
            insert.execute(rusqlite::params_from_iter(row))?;
        }
    }
    tx.commit()?;
    drop(conn);
    Ok((count, started.elapsed().as_secs_f64()))
}
