//! The floors of `ragloom ingest`'s token counting and writing, measured on a
//! folder's text: its cl100k tokens counted on every core, and the same bytes
//! written as `ROWS` rows of one transaction of a SQLite file in the
//! embedded store's settings. `cargo xtask bench --store` runs it beside the
//! ingest (crates/ragloom-cli/benches/store_bench.py) and prints one JSON line.
//!
//! ```sh
//! cargo run --release -p ragloom-cli --example ingest_floors -- FOLDER ROWS
//! ```

use ragloom::{Cl100kTokenizer, Tokenizer};
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(rows)) = (args.next(), args.next()) else {
        return Err("usage: ingest_floors FOLDER ROWS".into());
    };
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
    let started = Instant::now();
    let tokens: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..cores)
            .map(|k| {
                let texts = &texts;
                s.spawn(move || {
                    let t = Cl100kTokenizer::new();
                    texts
                        .iter()
                        .skip(k)
                        .step_by(cores)
                        .map(|x| t.count(x))
                        .sum::<usize>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    let count_s = started.elapsed().as_secs_f64();

    // Writing: the text cut into `rows` rows, inserted in one transaction
    // and committed, with the store's page size, journal and sync settings.
    let all = texts.concat();
    let per_row = all.len().div_ceil(rows.max(1)).max(1);
    let work = tempfile::tempdir()?;
    let started = Instant::now();
    let mut conn = rusqlite::Connection::open(work.path().join("floor.sqlite"))?;
    conn.execute_batch(
        "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL);",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO kv (key, value) VALUES (?1, ?2)")?;
        for (i, chunk) in all.as_bytes().chunks(per_row).enumerate() {
            insert.execute(rusqlite::params![format!("row-{i:08}"), chunk])?;
        }
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    drop(conn);
    let insert_s = started.elapsed().as_secs_f64();

    println!(
        "{}",
        serde_json::json!({
            "files": texts.len(),
            "bytes": bytes,
            "tokens": tokens,
            "count_s": count_s,
            "count_cores": cores,
            "rows": rows,
            "insert_s": insert_s,
        })
    );
    Ok(())
}
