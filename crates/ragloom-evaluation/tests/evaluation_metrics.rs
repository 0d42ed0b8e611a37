//! Retrieval metrics equal LlamaIndex 0.14.25's on the cases
//! tests/data/evaluation/gen_retrieval_metrics.py recorded, and hand-computed
//! values where the formula is easy to get wrong.

#![allow(clippy::unwrap_used)]

use ragloom_evaluation::{
    AveragePrecision, DiscountedGainMode, HitRate, Mrr, Ndcg, Precision, Recall, RetrievalMetric,
    resolve_metrics,
};
use serde_json::Value;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn metrics() -> Vec<(&'static str, Box<dyn RetrievalMetric>)> {
    vec![
        ("hit_rate", Box::new(HitRate::default())),
        (
            "hit_rate_granular",
            Box::new(HitRate {
                use_granular_hit_rate: true,
            }),
        ),
        ("mrr", Box::new(Mrr::default())),
        (
            "mrr_granular",
            Box::new(Mrr {
                use_granular_mrr: true,
            }),
        ),
        ("precision", Box::new(Precision)),
        ("recall", Box::new(Recall)),
        ("ap", Box::new(AveragePrecision)),
        ("ndcg_linear", Box::new(Ndcg::default())),
        (
            "ndcg_exponential",
            Box::new(Ndcg {
                mode: DiscountedGainMode::Exponential,
            }),
        ),
    ]
}

#[test]
fn scores_equal_llamaindex_on_the_recorded_cases() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/evaluation/retrieval_metrics.json"
    );
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(data["llama_index_core"], "0.14.25");
    let cases = data["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let (expected, retrieved) = (ids(&case["expected"]), ids(&case["retrieved"]));
        for (name, metric) in metrics() {
            let want = case["scores"][name].as_f64().unwrap();
            let got = metric.compute(&expected, &retrieved).unwrap().score;
            assert_eq!(got, want, "{name} of {retrieved:?} against {expected:?}");
        }
    }
    // Python raises for empty expected ids; so does every metric here.
    for (name, metric) in metrics() {
        let err = metric.compute(&[], &["a".to_string()]).unwrap_err();
        let want = data["empty_expected"][name].as_str().unwrap();
        assert!(
            want.ends_with(&err.to_string().replace("invalid input: ", "")),
            "{name}: {err}"
        );
    }
}

#[test]
fn hand_computed_values() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let (expected, retrieved) = (s(&["a", "b"]), s(&["c", "a", "d", "b"]));
    // First hit at rank 2; granular: (1/2 + 1/4) / 2.
    assert_eq!(
        Mrr::default().compute(&expected, &retrieved).unwrap().score,
        0.5
    );
    let granular = Mrr {
        use_granular_mrr: true,
    };
    assert_eq!(
        granular.compute(&expected, &retrieved).unwrap().score,
        0.375
    );
    // AP: (1/2 + 2/4) / 2.
    assert_eq!(
        AveragePrecision
            .compute(&expected, &retrieved)
            .unwrap()
            .score,
        0.5
    );
    // NDCG: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3)).
    let ndcg = Ndcg::default()
        .compute(&expected, &retrieved)
        .unwrap()
        .score;
    let want = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
    assert!((ndcg - want).abs() < 1e-15, "{ndcg} vs {want}");
    assert_eq!(Precision.compute(&expected, &retrieved).unwrap().score, 0.5);
    assert_eq!(Recall.compute(&expected, &retrieved).unwrap().score, 1.0);
}

#[test]
fn metrics_resolve_by_name() {
    let names: Vec<&str> =
        resolve_metrics(&["hit_rate", "mrr", "precision", "recall", "ap", "ndcg"])
            .unwrap()
            .iter()
            .map(|m| m.metric_name())
            .collect();
    assert_eq!(
        names,
        ["hit_rate", "mrr", "precision", "recall", "ap", "ndcg"]
    );
    let err = resolve_metrics(&["mrr", "bleu"]).unwrap_err();
    assert!(
        err.to_string().contains("Invalid metric name: bleu"),
        "{err}"
    );
}
