//! The vector index beside the file answers as an exact search does: the
//! same scores, recall against the exact answer, changes after the file,
//! filters of every selectivity, and a file that is missing or damaged.

#![allow(clippy::unwrap_used)]

use ragloom_core::prelude::*;
use ragloom_core::schema::{NodeRelationship, RelatedNodeInfo};
use ragloom_core::vector_stores::{
    FilterOperator, MetadataFilter, MetadataFilters, VectorStoreQuery,
};
use ragloom_storage_sqlite::{SqliteStore, VectorIndexUpdate, set_ann_min_vectors};
use std::collections::HashSet;

const DIMS: usize = 32;

/// A pseudo-random generator, so every run sees the same vectors.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    /// A unit vector near one of 40 centres: neighbours mean something.
    fn vector(&mut self, centres: &[Vec<f32>]) -> Vec<f32> {
        let c = &centres[((self.next() + 0.5) * centres.len() as f32) as usize % centres.len()];
        let mut v: Vec<f32> = c.iter().map(|x| x + self.next() * 0.6).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

fn centres(rng: &mut Rng) -> Vec<Vec<f32>> {
    (0..40)
        .map(|_| (0..DIMS).map(|_| rng.next()).collect())
        .collect()
}

/// `n` nodes from `first` on, each of document `doc-<i / 10>`, with a
/// `group` of 0..500 (so `group < g` keeps g in 500 of them).
fn nodes(rng: &mut Rng, centres: &[Vec<f32>], first: usize, n: usize) -> Vec<Node> {
    (first..first + n)
        .map(|i| {
            Node::text_node(format!("node {i}"))
                .with_id(format!("n{i}"))
                .with_metadata("group", (i * 7919) % 500)
                .with_relationship(
                    NodeRelationship::Source,
                    RelatedNodeInfo::new(format!("doc-{}", i / 10)),
                )
                .with_embedding(rng.vector(centres))
        })
        .collect()
}

async fn exact(store: &SqliteStore, q: &VectorStoreQuery) -> Vec<(String, f32)> {
    let simple = store.vector_store().to_simple_vector_store().await.unwrap();
    let r = simple.query(q).await.unwrap();
    r.ids.into_iter().zip(r.similarities).collect()
}

async fn ann(store: &SqliteStore, q: &VectorStoreQuery) -> Vec<(String, f32)> {
    let r = store.vector_store().query(q).await.unwrap();
    r.ids.into_iter().zip(r.similarities).collect()
}

/// Recall of `got` against `want` over `queries`, and every score of `got`
/// equal to the exact one of its node.
async fn recall(store: &SqliteStore, queries: &[VectorStoreQuery]) -> f64 {
    let simple = store.vector_store().to_simple_vector_store().await.unwrap();
    let (mut hits, mut total) = (0usize, 0usize);
    for q in queries {
        let want: Vec<String> = simple.query(q).await.unwrap().ids;
        let got = ann(store, q).await;
        // Scores are the exact cosine of each returned row.
        let everything = simple
            .query(&VectorStoreQuery {
                similarity_top_k: 100_000,
                ..q.clone()
            })
            .await
            .unwrap();
        for (id, score) in &got {
            let at = everything.ids.iter().position(|i| i == id).unwrap();
            assert!(
                (everything.similarities[at] - score).abs() < 1e-6,
                "{id}: {score} against {}",
                everything.similarities[at]
            );
        }
        let want: HashSet<&String> = want.iter().collect();
        hits += got.iter().filter(|(id, _)| want.contains(id)).count();
        total += want.len();
    }
    hits as f64 / total.max(1) as f64
}

fn queries(rng: &mut Rng, centres: &[Vec<f32>], n: usize) -> Vec<VectorStoreQuery> {
    (0..n)
        .map(|_| VectorStoreQuery::new(rng.vector(centres), 10))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vector_index_answers_as_an_exact_search_does() {
    set_ann_min_vectors(1_000);
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("a.sqlite")).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let centres = centres(&mut rng);
    let vs = store.vector_store();

    // Below the threshold: no index, exact answers.
    vs.add(&nodes(&mut rng, &centres, 0, 900)).await.unwrap();
    assert_eq!(store.vector_index_status().unwrap().file, None);

    // Past it: the commit built one.
    vs.add(&nodes(&mut rng, &centres, 900, 2_100))
        .await
        .unwrap();
    let status = store.vector_index_status().unwrap();
    let first = status
        .file
        .clone()
        .expect("a vector index once past the threshold");
    assert!(first.exists());
    assert_eq!(
        (status.vectors, status.indexed, status.pending),
        (3_000, 3_000, 0)
    );
    let qs = queries(&mut rng, &centres, 60);
    let r = recall(&store, &qs).await;
    assert!(r >= 0.95, "recall@10 {r}");

    // A few changes: scored exactly beside the file, which stays.
    vs.delete("doc-3").await.unwrap();
    let added = nodes(&mut rng, &centres, 3_000, 50);
    vs.add(&added).await.unwrap();
    let status = store.vector_index_status().unwrap();
    assert_eq!(status.file.as_ref(), Some(&first));
    assert_eq!(status.pending, 60);
    let probe = VectorStoreQuery::new(added[7].embedding.clone().unwrap(), 10);
    assert_eq!(ann(&store, &probe).await[0].0, "n3007");
    assert_eq!(ann(&store, &probe).await, exact(&store, &probe).await);
    for q in &qs {
        assert!(
            ann(&store, q)
                .await
                .iter()
                .all(|(id, _)| !(30..40).any(|i| *id == format!("n{i}"))),
            "a deleted node came back"
        );
    }
    assert!(recall(&store, &qs).await >= 0.95);

    // Many changes: the file is updated (not rebuilt) and the old one goes.
    vs.add(&nodes(&mut rng, &centres, 3_050, 400))
        .await
        .unwrap();
    let status = store.vector_index_status().unwrap();
    let second = status.file.clone().unwrap();
    assert_ne!(second, first);
    assert!(!first.exists(), "the replaced file stays");
    assert_eq!(status.pending, 0);
    assert_eq!(status.vectors, 3_440);
    assert!(recall(&store, &qs).await >= 0.95);
    assert_eq!(ann(&store, &probe).await, exact(&store, &probe).await);

    // Cleared: below the threshold, the index is dropped.
    vs.clear().await.unwrap();
    assert_eq!(store.vector_index_status().unwrap().file, None);
    assert!(!second.exists());
    assert!(ann(&store, &probe).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_of_every_selectivity_keep_their_recall() {
    set_ann_min_vectors(1_000);
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("f.sqlite")).unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let centres = centres(&mut rng);
    store
        .vector_store()
        .add(&nodes(&mut rng, &centres, 0, 4_000))
        .await
        .unwrap();
    assert!(store.vector_index_status().unwrap().file.is_some());
    // Half, a tenth, a hundredth and one in five hundred of the rows; and
    // one document (its source id, a field filters read too).
    for keep in [250, 50, 5, 1] {
        let filters =
            MetadataFilters::and([MetadataFilter::new("group", keep, FilterOperator::Lt)]);
        let qs: Vec<VectorStoreQuery> = queries(&mut rng, &centres, 20)
            .into_iter()
            .map(|q| q.with_filters(filters.clone()))
            .collect();
        let r = recall(&store, &qs).await;
        assert!(r >= 0.95, "keeping {keep} in 500: recall@10 {r}");
        for q in &qs {
            let got = ann(&store, q).await;
            let want = exact(&store, q).await;
            assert_eq!(got.len(), want.len(), "keeping {keep} in 500");
        }
    }
    let by_doc =
        VectorStoreQuery::new(rng.vector(&centres), 5).with_filters(MetadataFilters::and([
            MetadataFilter::new("doc_id", "doc-42", FilterOperator::Eq),
        ]));
    assert_eq!(ann(&store, &by_doc).await, exact(&store, &by_doc).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_damaged_index_file_is_scanned_past_and_rebuilt() {
    set_ann_min_vectors(1_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.sqlite");
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let centres = centres(&mut rng);
    let qs = queries(&mut rng, &centres, 10);
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .vector_store()
            .add(&nodes(&mut rng, &centres, 0, 2_000))
            .await
            .unwrap();
    }
    let file = SqliteStore::open(&path)
        .unwrap()
        .vector_index_status()
        .unwrap()
        .file
        .unwrap();
    for damage in ["truncated", "garbage", "missing"] {
        match damage {
            "truncated" => {
                let bytes = std::fs::read(&file).unwrap();
                std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
            }
            "garbage" => {
                let len = std::fs::metadata(&file).unwrap().len() as usize;
                std::fs::write(&file, vec![0xA5u8; len]).unwrap();
            }
            _ => std::fs::remove_file(&file).unwrap(),
        }
        // A new process: answers are the exact ones, from the rows.
        let store = SqliteStore::open(&path).unwrap();
        for q in &qs {
            assert_eq!(ann(&store, q).await, exact(&store, q).await, "{damage}");
        }
        // The next look rebuilds it.
        assert_eq!(
            store.update_vector_index().unwrap(),
            VectorIndexUpdate::Built { vectors: 2_000 },
            "{damage}"
        );
        let rebuilt = store.vector_index_status().unwrap().file.unwrap();
        assert_eq!(rebuilt, file, "the file is named by its log position");
        assert!(recall(&store, &qs).await >= 0.95, "{damage}");
    }
}

/// Many searches at once, past the graph's per-core search contexts: each
/// waits its turn and none fails.
#[test]
fn concurrent_searches_all_answer() {
    set_ann_min_vectors(1_000);
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("c.sqlite")).unwrap();
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    let centres = centres(&mut rng);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(
        store
            .vector_store()
            .add(&nodes(&mut rng, &centres, 0, 1_500)),
    )
    .unwrap();
    assert!(store.vector_index_status().unwrap().file.is_some());
    let qs = queries(&mut rng, &centres, 8);
    let want: Vec<Vec<(String, f32)>> = qs.iter().map(|q| rt.block_on(ann(&store, q))).collect();
    std::thread::scope(|s| {
        for t in 0..96 {
            let (store, qs, want) = (&store, &qs, &want);
            s.spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                for round in 0..5 {
                    let i = (t + round) % qs.len();
                    assert_eq!(rt.block_on(ann(store, &qs[i])), want[i]);
                }
            });
        }
    });
}
