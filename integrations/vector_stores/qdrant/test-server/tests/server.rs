//! The test server driven only through qdrant-client, as a store drives a real
//! Qdrant: hybrid collections, fusion, payload updates, filters, the binary.
#![allow(clippy::unwrap_used)]

use qdrant_client::qdrant::point_id::PointIdOptions;
use qdrant_client::qdrant::vector_output::Vector as Out;
use qdrant_client::qdrant::vectors_config::Config;
use qdrant_client::qdrant::{
    Condition, CountPointsBuilder, CreateCollectionBuilder, DeletePayloadPointsBuilder, Distance,
    Filter, Fusion, GetPointsBuilder, Modifier, NamedVectors, PointId, PointStruct, PointsIdsList,
    PrefetchQueryBuilder, Query, QueryPointsBuilder, Range, ScrollPointsBuilder,
    SearchPointsBuilder, SetPayloadPointsBuilder, SparseIndices, SparseVectorParamsBuilder,
    SparseVectorsConfigBuilder, UpsertPointsBuilder, Vector, VectorInput, VectorParamsBuilder,
    VectorsConfigBuilder,
};
use qdrant_client::{Payload, Qdrant};
use serde_json::{Value, json};

const DENSE: &str = "text-dense";
const SPARSE: &str = "text-sparse-new";

fn client(url: &str) -> Qdrant {
    // The server has no `Qdrant` health service: no version to check.
    Qdrant::from_url(url)
        .skip_compatibility_check()
        .build()
        .unwrap()
}

fn payload(v: Value) -> Payload {
    Payload::try_from(v).unwrap()
}

/// The gRPC status code of a failed call.
fn code(err: qdrant_client::QdrantError) -> tonic::Code {
    match err {
        qdrant_client::QdrantError::ResponseError { status } => status.code(),
        other => panic!("not a response error: {other}"),
    }
}

fn num(id: Option<&PointId>) -> u64 {
    match id.and_then(|id| id.point_id_options.as_ref()) {
        Some(PointIdOptions::Num(n)) => *n,
        other => panic!("not a numeric id: {other:?}"),
    }
}

/// A dense `text-dense` (dot product, 2 dimensions) and a sparse
/// `text-sparse-new`, IDF-weighted when `idf`.
async fn create_hybrid(client: &Qdrant, name: &str, idf: bool) {
    let mut dense = VectorsConfigBuilder::default();
    dense.add_named_vector_params(DENSE, VectorParamsBuilder::new(2, Distance::Dot));
    let mut sparse = SparseVectorsConfigBuilder::default();
    let mut params = SparseVectorParamsBuilder::default();
    if idf {
        params = params.modifier(Modifier::Idf);
    }
    sparse.add_named_vector_params(SPARSE, params);
    client
        .create_collection(
            CreateCollectionBuilder::new(name)
                .vectors_config(dense)
                .sparse_vectors_config(sparse),
        )
        .await
        .unwrap();
}

fn hybrid_point(id: u64, dense: [f32; 2], sparse: &[(u32, f32)], doc: &str) -> PointStruct {
    let (indices, values): (Vec<u32>, Vec<f32>) = sparse.iter().copied().unzip();
    let vectors = NamedVectors::default()
        .add_vector(DENSE, Vector::new_dense(dense.to_vec()))
        .add_vector(SPARSE, Vector::new_sparse(indices, values));
    PointStruct::new(id, vectors, payload(json!({"doc": doc, "n": id})))
}

async fn sparse_ranking(client: &Qdrant, name: &str) -> Vec<(u64, f32)> {
    let result = client
        .query(
            QueryPointsBuilder::new(name)
                .query(Query::new_nearest(VectorInput::new_sparse(
                    vec![1, 2],
                    vec![1.0, 1.0],
                )))
                .using(SPARSE)
                .limit(2),
        )
        .await
        .unwrap()
        .result;
    result
        .iter()
        .map(|p| (num(p.id.as_ref()), p.score))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idf_ranks_a_rare_term_above_a_common_one() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    // Term 1 is in four points out of five, term 2 in one. Point 1 holds the
    // rare term; point 2 the common one with a higher weight.
    let points = vec![
        hybrid_point(1, [0.0, 1.0], &[(2, 1.2)], "a"),
        hybrid_point(2, [0.0, 1.0], &[(1, 1.5)], "a"),
        hybrid_point(3, [0.0, 1.0], &[(1, 1.0)], "a"),
        hybrid_point(4, [0.0, 1.0], &[(1, 1.0)], "a"),
        hybrid_point(5, [0.0, 1.0], &[(1, 1.0)], "a"),
    ];
    for (name, idf) in [("with_idf", true), ("without_idf", false)] {
        create_hybrid(&client, name, idf).await;
        client
            .upsert_points(UpsertPointsBuilder::new(name, points.clone()).wait(true))
            .await
            .unwrap();
    }
    // Without IDF the raw weights decide: 1.5 before 1.2.
    let plain = sparse_ranking(&client, "without_idf").await;
    assert_eq!(plain.iter().map(|p| p.0).collect::<Vec<_>>(), [2, 1]);
    assert!((plain[0].1 - 1.5).abs() < 1e-5, "{plain:?}");
    // With IDF: idf = ln((N - n + 0.5) / (n + 0.5) + 1), N = 5.
    let weighted = sparse_ranking(&client, "with_idf").await;
    assert_eq!(weighted.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 2]);
    let idf = |n: f32| ((5.0 - n + 0.5) / (n + 0.5) + 1.0).ln();
    assert!(
        (weighted[0].1 - 1.2 * idf(1.0)).abs() < 1e-4,
        "{weighted:?}"
    );
    assert!(
        (weighted[1].1 - 1.5 * idf(4.0)).abs() < 1e-4,
        "{weighted:?}"
    );
}

/// Five points: dense scores against [1, 0] are 1.0, 0.8, 0.6, 0.2, 0.4
/// (ids 1..5); only ids 2 and 4 hold sparse term 7 (weights 2 and 1).
async fn fusion_collection(client: &Qdrant) {
    create_hybrid(client, "fused", true).await;
    let points = vec![
        hybrid_point(1, [1.0, 0.0], &[(8, 1.0)], "x"),
        hybrid_point(2, [0.8, 0.0], &[(7, 2.0)], "x"),
        hybrid_point(3, [0.6, 0.0], &[(8, 1.0)], "y"),
        hybrid_point(4, [0.2, 0.0], &[(7, 1.0)], "y"),
        hybrid_point(5, [0.4, 0.0], &[(9, 1.0)], "y"),
    ];
    client
        .upsert_points(UpsertPointsBuilder::new("fused", points).wait(true))
        .await
        .unwrap();
}

fn hybrid_query(fusion: Fusion) -> QueryPointsBuilder {
    QueryPointsBuilder::new("fused")
        .add_prefetch(
            PrefetchQueryBuilder::default()
                .query(Query::new_nearest(vec![1.0, 0.0]))
                .using(DENSE)
                .limit(3u64),
        )
        .add_prefetch(
            PrefetchQueryBuilder::default()
                .query(Query::new_nearest(VectorInput::new_sparse(
                    vec![7],
                    vec![1.0],
                )))
                .using(SPARSE)
                .limit(2u64),
        )
        .query(Query::new_fusion(fusion))
        .with_payload(true)
}

async fn ranked(client: &Qdrant, q: QueryPointsBuilder) -> Vec<(u64, f32)> {
    let result = client.query(q).await.unwrap().result;
    result
        .iter()
        .map(|p| (num(p.id.as_ref()), p.score))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rrf_fuses_dense_and_sparse_prefetches_by_rank() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    fusion_collection(&client).await;
    // Dense top 3: [1, 2, 3]; sparse top 2: [2, 4]. RRF (k = 2) scores a
    // rank r (from 0) 1 / (r + 2): 2 = 1/3 + 1/2, 1 = 1/2, 4 = 1/3, 3 = 1/4.
    let got = ranked(&client, hybrid_query(Fusion::Rrf).limit(10)).await;
    let want = [(2, 1.0 / 3.0 + 0.5), (1, 0.5), (4, 1.0 / 3.0), (3, 0.25)];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((id, score), (wid, wscore)) in got.iter().zip(want) {
        assert_eq!(*id, wid, "{got:?}");
        assert!((score - wscore).abs() < 1e-5, "{got:?}");
    }
    // limit and offset cut the fused list.
    let page = ranked(&client, hybrid_query(Fusion::Rrf).limit(2).offset(1)).await;
    assert_eq!(page.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 4]);
    // score_threshold cuts the fused scores.
    let above = ranked(&client, hybrid_query(Fusion::Rrf).score_threshold(0.4)).await;
    assert_eq!(above.iter().map(|p| p.0).collect::<Vec<_>>(), [2, 1]);
    // The top-level filter reaches the prefetches: without point 3 the dense
    // prefetch takes point 5, which a filter applied after fusion would miss.
    let filtered = hybrid_query(Fusion::Rrf).filter(Filter::must_not([Condition::has_id([3])]));
    let got = ranked(&client, filtered).await;
    assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), [2, 1, 4, 5]);
    // A payload filter in one prefetch narrows that prefetch only.
    let only_y = QueryPointsBuilder::new("fused")
        .add_prefetch(
            PrefetchQueryBuilder::default()
                .query(Query::new_nearest(vec![1.0, 0.0]))
                .using(DENSE)
                .filter(Filter::must([Condition::matches("doc", "y".to_string())]))
                .limit(2u64),
        )
        .add_prefetch(
            PrefetchQueryBuilder::default()
                .query(Query::new_nearest(VectorInput::new_sparse(
                    vec![7],
                    vec![1.0],
                )))
                .using(SPARSE)
                .limit(1u64),
        )
        .query(Query::new_fusion(Fusion::Rrf));
    // Dense (doc y) [3, 5], sparse [2]: 3 = 1/2, 2 = 1/2 (tie), 5 = 1/3.
    let got = ranked(&client, only_y).await;
    let mut top: Vec<u64> = got[..2].iter().map(|p| p.0).collect();
    top.sort_unstable();
    assert_eq!((top, got[2].0, got.len()), (vec![2, 3], 5, 3), "{got:?}");
    // DBSF fuses the same union; point 2, high in both, comes first.
    let got = ranked(&client, hybrid_query(Fusion::Dbsf)).await;
    let mut ids: Vec<u64> = got.iter().map(|p| p.0).collect();
    assert_eq!(ids[0], 2, "{got:?}");
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_vectors_arrive_in_either_form_and_come_back() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    // Only a sparse vector: the collection has no dense one.
    let mut sparse = SparseVectorsConfigBuilder::default();
    sparse.add_named_vector_params(SPARSE, SparseVectorParamsBuilder::default());
    client
        .create_collection(
            CreateCollectionBuilder::new("sparse_only").sparse_vectors_config(sparse),
        )
        .await
        .unwrap();
    #[allow(deprecated)] // the older form: values in `data`, the indices beside
    let older = Vector {
        data: vec![0.5, 2.0],
        indices: Some(SparseIndices { data: vec![3, 9] }),
        ..Default::default()
    };
    let newer = Vector::new_sparse(vec![3u32, 4], vec![1.0, 1.0]);
    let points = vec![
        PointStruct::new(
            1,
            NamedVectors::default().add_vector(SPARSE, older),
            Payload::new(),
        ),
        PointStruct::new(
            2,
            NamedVectors::default().add_vector(SPARSE, newer),
            Payload::new(),
        ),
    ];
    client
        .upsert_points(UpsertPointsBuilder::new("sparse_only", points).wait(true))
        .await
        .unwrap();
    let got = client
        .get_points(
            GetPointsBuilder::new("sparse_only", vec![1.into(), 2.into()]).with_vectors(true),
        )
        .await
        .unwrap()
        .result;
    let sparse_of = |i: usize| match got[i].vectors.as_ref().unwrap().get_vector_by_name(SPARSE) {
        Some(Out::Sparse(s)) => (s.indices, s.values),
        other => panic!("{other:?}"),
    };
    assert_eq!(sparse_of(0), (vec![3, 9], vec![0.5, 2.0]));
    assert_eq!(sparse_of(1), (vec![3, 4], vec![1.0, 1.0]));
    // Term 9 is in point 1 only.
    let top = client
        .query(
            QueryPointsBuilder::new("sparse_only")
                .query(Query::new_nearest(VectorInput::new_sparse(
                    vec![9],
                    vec![1.0],
                )))
                .using(SPARSE),
        )
        .await
        .unwrap()
        .result;
    assert_eq!(top.len(), 1, "{top:?}");
    assert_eq!((num(top[0].id.as_ref()), top[0].score), (1, 2.0));
    // A dense query on the sparse vector is bad input, as in Qdrant.
    let err = client
        .query(
            QueryPointsBuilder::new("sparse_only")
                .query(Query::new_nearest(vec![1.0, 0.0]))
                .using(SPARSE),
        )
        .await
        .unwrap_err();
    assert_eq!(code(err), tonic::Code::InvalidArgument);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collection_info_reports_the_layout() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    create_hybrid(&client, "hybrid", true).await;
    client
        .create_collection(
            CreateCollectionBuilder::new("plain")
                .vectors_config(VectorParamsBuilder::new(4, Distance::Cosine)),
        )
        .await
        .unwrap();
    let params = |info: qdrant_client::qdrant::GetCollectionInfoResponse| {
        info.result.unwrap().config.unwrap().params.unwrap()
    };
    let hybrid = params(client.collection_info("hybrid").await.unwrap());
    let Some(Config::ParamsMap(dense)) = hybrid.vectors_config.unwrap().config else {
        panic!("named dense vectors expected");
    };
    let text = &dense.map[DENSE];
    assert_eq!(
        (dense.map.len(), text.size, text.distance),
        (1, 2, Distance::Dot as i32)
    );
    let sparse = hybrid.sparse_vectors_config.unwrap().map;
    assert_eq!(sparse.len(), 1);
    assert_eq!(sparse[SPARSE].modifier, Some(Modifier::Idf as i32));
    let plain = params(client.collection_info("plain").await.unwrap());
    let Some(Config::Params(p)) = plain.vectors_config.unwrap().config else {
        panic!("one unnamed vector expected");
    };
    assert_eq!((p.size, p.distance), (4, Distance::Cosine as i32));
    assert!(plain.sparse_vectors_config.is_none());
    let names: Vec<String> = client
        .list_collections()
        .await
        .unwrap()
        .collections
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["hybrid", "plain"]);
    // Calls the server lacks say so.
    let err = client
        .search_points(SearchPointsBuilder::new("plain", vec![1.0; 4], 1))
        .await
        .unwrap_err();
    assert_eq!(code(err), tonic::Code::Unimplemented);
}

async fn count(client: &Qdrant, name: &str, filter: Filter) -> u64 {
    let r = client
        .count(CountPointsBuilder::new(name).filter(filter).exact(true))
        .await
        .unwrap();
    r.result.unwrap().count
}

async fn scroll_ids(client: &Qdrant, name: &str, filter: Filter) -> Vec<u64> {
    let r = client
        .scroll(ScrollPointsBuilder::new(name).filter(filter).limit(100))
        .await
        .unwrap();
    let mut ids: Vec<u64> = r.result.iter().map(|p| num(p.id.as_ref())).collect();
    ids.sort_unstable();
    ids
}

/// Four points without vectors: doc x (1, 2) and doc y (3, 4), `n` = id,
/// and point 4 with `deleted_at` null.
async fn no_vector_collection(client: &Qdrant, name: &str) {
    client
        .create_collection(CreateCollectionBuilder::new(name))
        .await
        .unwrap();
    let points: Vec<PointStruct> = (1..=4u64)
        .map(|id| PointStruct {
            id: Some(id.into()),
            payload: {
                let mut p = json!({"doc": if id <= 2 { "x" } else { "y" }, "n": id});
                if id == 4 {
                    p["deleted_at"] = Value::Null;
                }
                payload(p).into()
            },
            vectors: None,
        })
        .collect();
    client
        .upsert_points(UpsertPointsBuilder::new(name, points).wait(true))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_payload_by_filter_then_filters_see_it() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    no_vector_collection(&client, "gen").await;
    let doc_x = Filter::must([Condition::matches("doc", "x".to_string())]);
    client
        .set_payload(
            SetPayloadPointsBuilder::new("gen", payload(json!({"generation": 3})))
                .points_selector(doc_x.clone())
                .wait(true),
        )
        .await
        .unwrap();
    let gen_at_least = |v: f64| {
        Filter::must([Condition::range(
            "generation",
            Range {
                gte: Some(v),
                ..Default::default()
            },
        )])
    };
    // Integer payload values against double bounds.
    assert_eq!(scroll_ids(&client, "gen", gen_at_least(3.0)).await, [1, 2]);
    assert_eq!(count(&client, "gen", gen_at_least(3.5)).await, 0);
    assert_eq!(
        scroll_ids(
            &client,
            "gen",
            Filter::must([Condition::is_empty("generation")])
        )
        .await,
        [3, 4]
    );
    // `is_null` sees the stored null only, `is_empty` it and the missing keys.
    let is_null = || Filter::must([Condition::is_null("deleted_at")]);
    assert_eq!(scroll_ids(&client, "gen", is_null()).await, [4]);
    assert_eq!(
        count(
            &client,
            "gen",
            Filter::must([Condition::is_empty("deleted_at")])
        )
        .await,
        4
    );
    // By ids; as in Qdrant, setting a key to null removes it.
    client
        .set_payload(
            SetPayloadPointsBuilder::new("gen", payload(json!({"deleted_at": null, "score": 0.5})))
                .points_selector(PointsIdsList {
                    ids: vec![3.into(), 4.into()],
                })
                .wait(true),
        )
        .await
        .unwrap();
    assert_eq!(count(&client, "gen", is_null()).await, 0);
    let below_one = Condition::range(
        "score",
        Range {
            lt: Some(1.0),
            gt: Some(0.0),
            ..Default::default()
        },
    );
    assert_eq!(
        scroll_ids(&client, "gen", Filter::must([below_one])).await,
        [3, 4]
    );
    // must / should / must_not, has_id and a nested filter together.
    let mixed = Filter {
        must: vec![
            Filter::should([
                Condition::matches("doc", "x".to_string()),
                Condition::range(
                    "n",
                    Range {
                        gte: Some(4.0),
                        ..Default::default()
                    },
                ),
            ])
            .into(),
        ],
        must_not: vec![Condition::has_id([1])],
        ..Default::default()
    };
    assert_eq!(scroll_ids(&client, "gen", mixed).await, [2, 4]);
    // The payload came back whole, untouched keys kept.
    let got = client
        .get_points(GetPointsBuilder::new("gen", vec![1.into()]).with_payload(true))
        .await
        .unwrap()
        .result;
    let stored: Value = Payload::from(got[0].payload.clone()).into();
    assert_eq!(stored, json!({"doc": "x", "n": 1, "generation": 3}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_payload_by_filter_removes_only_those_keys() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    no_vector_collection(&client, "del").await;
    client
        .set_payload(
            SetPayloadPointsBuilder::new("del", payload(json!({"generation": 1, "tag": "t"})))
                .points_selector(Filter::must([Condition::range(
                    "n",
                    Range {
                        lte: Some(3.0),
                        ..Default::default()
                    },
                )]))
                .wait(true),
        )
        .await
        .unwrap();
    assert_eq!(
        count(
            &client,
            "del",
            Filter::must([Condition::is_empty("generation")])
        )
        .await,
        1
    );
    client
        .delete_payload(
            DeletePayloadPointsBuilder::new("del", vec!["generation".to_string()])
                .points_selector(Filter::must([Condition::matches("doc", "x".to_string())]))
                .wait(true),
        )
        .await
        .unwrap();
    assert_eq!(
        scroll_ids(
            &client,
            "del",
            Filter::must([Condition::is_empty("generation")])
        )
        .await,
        [1, 2, 4]
    );
    // `tag` stayed where `generation` went.
    assert_eq!(
        scroll_ids(
            &client,
            "del",
            Filter::must([Condition::matches("tag", "t".to_string())])
        )
        .await,
        [1, 2, 3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_without_vectors_stores_and_scrolls_payloads() {
    let server = ragloom_qdrant_test_server::start().await;
    let client = client(&server.url);
    no_vector_collection(&client, "meta").await;
    let info = client
        .collection_info("meta")
        .await
        .unwrap()
        .result
        .unwrap();
    assert_eq!(info.points_count, Some(4));
    let params = info.config.unwrap().params.unwrap();
    let Some(Config::ParamsMap(dense)) = params.vectors_config.unwrap().config else {
        panic!("an empty map of vectors expected");
    };
    assert!(dense.map.is_empty() && params.sparse_vectors_config.is_none());
    let page = client
        .scroll(
            ScrollPointsBuilder::new("meta")
                .limit(3)
                .with_payload(true)
                .with_vectors(true),
        )
        .await
        .unwrap();
    let ids: Vec<u64> = page.result.iter().map(|p| num(p.id.as_ref())).collect();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(num(page.next_page_offset.as_ref()), 4);
    let first: Value = Payload::from(page.result[0].payload.clone()).into();
    assert_eq!(first, json!({"doc": "x", "n": 1}));
    let no_vectors = |p: &qdrant_client::qdrant::RetrievedPoint| {
        p.vectors.as_ref().is_none_or(|v| v.get_vector().is_none())
    };
    assert!(page.result.iter().all(no_vectors));
}

#[test]
fn the_binary_serves_until_its_stdin_closes() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let mut child = Command::new(env!("CARGO_BIN_EXE_ragloom-qdrant-test-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line
        .strip_prefix("listening ")
        .and_then(|l| l.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = client(&url);
        client
            .create_collection(
                CreateCollectionBuilder::new("spawned")
                    .vectors_config(VectorParamsBuilder::new(3, Distance::Cosine)),
            )
            .await
            .unwrap();
        assert!(client.collection_exists("spawned").await.unwrap());
    });

    // End-of-file on stdin: the server goes, and says nothing more.
    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_folder_outlives_its_server() {
    let dir = tempfile::tempdir().unwrap();
    {
        let server = ragloom_qdrant_test_server::start_with(0, Some(dir.path()))
            .await
            .unwrap();
        create_hybrid(&client(&server.url), "kept", true).await;
        let points = vec![hybrid_point(7, [1.0, 0.0], &[(3, 1.0)], "x")];
        client(&server.url)
            .upsert_points(UpsertPointsBuilder::new("kept", points).wait(true))
            .await
            .unwrap();
    }
    // A new server on the same folder serves the collection, layout and points.
    let server = ragloom_qdrant_test_server::start_with(0, Some(dir.path()))
        .await
        .unwrap();
    assert_eq!(server.state.vector_names("kept"), [DENSE]);
    assert_eq!(server.state.sparse_vector_names("kept"), [SPARSE]);
    let client = client(&server.url);
    let got = client
        .get_points(GetPointsBuilder::new("kept", vec![7.into()]).with_payload(true))
        .await
        .unwrap()
        .result;
    let stored: Value = Payload::from(got[0].payload.clone()).into();
    assert_eq!(stored, json!({"doc": "x", "n": 7}));
}
