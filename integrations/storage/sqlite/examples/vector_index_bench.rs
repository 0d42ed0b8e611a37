//! The embedded store's vector index on a file of vectors, for `cargo xtask
//! bench --vectors` (beside Chroma and LanceDB on the same file: benches/vector_peers.py).
//!
//! ```text
//! vector_index_bench build FILE DIMS N DB     store N rows, then build the index (timed)
//! vector_index_bench add FILE DIMS N M DB     add M more rows and update the index (timed)
//! vector_index_bench query FILE DIMS N Q DB [EF,..]
//!                                             Q queries (the file's last Q vectors) in one
//!                                             process: first-query time and peak RSS,
//!                                             then for each search breadth (default
//!                                             128) warm p50/p99 and recall@10 against exact
//! ```
//! FILE holds little-endian `f32` rows of DIMS values. One JSON line of figures each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ragloom_core::prelude::*;
use ragloom_core::vector_stores::VectorStoreQuery;
use ragloom_storage_sqlite::{SqliteStore, set_ann_min_vectors, set_ann_search_breadth};
use std::collections::HashSet;
use std::time::Instant;

fn rows(file: &str) -> Vec<f32> {
    let bytes = std::fs::read(file).expect("the vectors file");
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The file's last `q` rows, read alone (the process's memory is measured).
fn tail_rows(file: &str, dims: usize, q: usize) -> Vec<Vec<f32>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(file).expect("the vectors file");
    f.seek(SeekFrom::End(-((q * dims * 4) as i64))).unwrap();
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).unwrap();
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    values.chunks_exact(dims).map(<[f32]>::to_vec).collect()
}

fn node(i: usize, v: &[f32]) -> Node {
    Node::text_node("")
        .with_id(format!("v{i}"))
        .with_embedding(v.to_vec())
}

/// Rows `from..to` in one transaction, as a sync writes them; its commit
/// builds or updates the vector index when due.
async fn store_rows(store: &SqliteStore, data: &[f32], dims: usize, from: usize, to: usize) {
    let tx = store.begin().await.unwrap();
    let vs = tx.storage_context().vector_store().unwrap();
    for start in (from..to).step_by(10_000) {
        let end = (start + 10_000).min(to);
        let batch: Vec<Node> = (start..end)
            .map(|i| node(i, &data[i * dims..(i + 1) * dims]))
            .collect();
        vs.add(&batch).await.unwrap();
    }
    tx.commit().await.unwrap();
}

/// The ids of the 10 rows of `data[..n]` nearest each query by cosine, exactly.
fn exact_top10(data: &[f32], dims: usize, n: usize, queries: &[Vec<f32>]) -> Vec<HashSet<String>> {
    use rayon::prelude::*;
    let norms: Vec<f32> = (0..n)
        .into_par_iter()
        .map(|i| {
            data[i * dims..(i + 1) * dims]
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
        })
        .collect();
    queries
        .par_iter()
        .map(|q| {
            let qn = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            let mut scored: Vec<(f32, usize)> = (0..n)
                .map(|i| {
                    let row = &data[i * dims..(i + 1) * dims];
                    let dot: f32 = row.iter().zip(q).map(|(a, b)| a * b).sum();
                    (dot / (norms[i] * qn).max(f32::MIN_POSITIVE), i)
                })
                .collect();
            scored.select_nth_unstable_by(10, |a, b| b.0.total_cmp(&a.0));
            scored[..10].iter().map(|(_, i)| format!("v{i}")).collect()
        })
        .collect()
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> usize { args[i].parse().expect("a number") };
    let (cmd, file, dims) = (args[0].as_str(), args[1].as_str(), arg(2));
    match cmd {
        "build" => {
            let (n, db) = (arg(3), &args[4]);
            let data = rows(file);
            set_ann_min_vectors(usize::MAX);
            let store = SqliteStore::open(db).unwrap();
            let t = Instant::now();
            store_rows(&store, &data, dims, 0, n).await;
            let rows_s = t.elapsed().as_secs_f64();
            set_ann_min_vectors(ragloom_storage_sqlite::DEFAULT_ANN_MIN_VECTORS);
            let t = Instant::now();
            let update = store.update_vector_index().unwrap();
            let build_s = t.elapsed().as_secs_f64();
            println!(
                "{{\"cmd\":\"build\",\"n\":{n},\"rows_s\":{rows_s:.2},\"index_s\":{build_s:.2},\"index_per_s\":{:.0},\"total_per_s\":{:.0},\"update\":\"{update:?}\"}}",
                n as f64 / build_s,
                n as f64 / (rows_s + build_s)
            );
        }
        "add" => {
            let (n, m, db) = (arg(3), arg(4), &args[5]);
            let data = rows(file);
            let store = SqliteStore::open(db).unwrap();
            // One transaction, as a sync writes: its commit updates the
            // index (past 1,000 changed rows), so the figure includes that.
            let t = Instant::now();
            store_rows(&store, &data, dims, n, n + m).await;
            let s = t.elapsed().as_secs_f64();
            let status = store.vector_index_status().unwrap();
            println!(
                "{{\"cmd\":\"add\",\"m\":{m},\"s\":{s:.2},\"per_s\":{:.0},\"indexed\":{},\"pending\":{}}}",
                m as f64 / s,
                status.indexed,
                status.pending
            );
        }
        "query" => {
            let (n, q, db) = (arg(3), arg(4), &args[5]);
            let t = Instant::now();
            let store = SqliteStore::open(db).unwrap();
            let vs = store.vector_store();
            let queries = tail_rows(file, dims, q);
            // The first question as a new process asks it (the vectors file
            // read above is not counted: it is the queries' source only).
            let t_first = Instant::now();
            let first = vs
                .query(&VectorStoreQuery::new(queries[0].clone(), 10))
                .await
                .unwrap();
            let first_ms = t_first.elapsed().as_secs_f64() * 1e3;
            let open_ms = (t.elapsed().as_secs_f64() * 1e3) - first_ms;
            let rss_first = peak_rss_mb();
            assert_eq!(first.ids.len(), 10);
            let data = rows(file);
            // Exact answers over the stored rows (the file's first n).
            let want = exact_top10(&data, dims, n, &queries);
            drop(data);
            let breadths: Vec<usize> = args
                .get(6)
                .map(|s| {
                    s.split(',')
                        .map(|b| b.parse().expect("a breadth"))
                        .collect()
                })
                .unwrap_or_else(|| vec![ragloom_storage_sqlite::DEFAULT_ANN_SEARCH_BREADTH]);
            for ef in breadths {
                set_ann_search_breadth(ef);
                // A store opened anew maps the file with this breadth.
                let store = SqliteStore::open(db).unwrap();
                let vs = store.vector_store();
                let (mut lat, mut hits) = (Vec::new(), 0usize);
                for round in 0..2 {
                    for (qv, want) in queries.iter().zip(&want) {
                        let t = Instant::now();
                        let r = vs
                            .query(&VectorStoreQuery::new(qv.clone(), 10))
                            .await
                            .unwrap();
                        // The first round warms the pages the searches touch.
                        if round == 1 {
                            lat.push(t.elapsed().as_secs_f64() * 1e3);
                            hits += r.ids.iter().filter(|id| want.contains(*id)).count();
                        }
                    }
                }
                lat.sort_by(f64::total_cmp);
                let status = store.vector_index_status().unwrap();
                println!(
                    "{{\"cmd\":\"query\",\"n\":{n},\"indexed\":{},\"breadth\":{ef},\"first_ms\":{first_ms:.2},\"open_ms\":{open_ms:.1},\"rss_first_mb\":{rss_first:.0},\"p50_ms\":{:.3},\"p99_ms\":{:.3},\"recall10\":{:.4}}}",
                    status.indexed,
                    lat[lat.len() / 2],
                    lat[lat.len() * 99 / 100],
                    hits as f64 / (10 * queries.len()) as f64
                );
            }
        }
        _ => panic!("build | add | query"),
    }
}
