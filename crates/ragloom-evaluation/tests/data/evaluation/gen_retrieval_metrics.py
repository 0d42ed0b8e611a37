"""Records llama-index-core 0.14.25's retrieval metrics on fixed cases, for
ragloom's evaluation tests: `python gen_retrieval_metrics.py > retrieval_metrics.json`."""

import json

import llama_index.core
from llama_index.core.evaluation.retrieval.metrics import (
    MRR,
    NDCG,
    AveragePrecision,
    HitRate,
    Precision,
    Recall,
)

CASES = [
    {"expected": ["a"], "retrieved": ["a", "b", "c"]},
    {"expected": ["a"], "retrieved": ["b", "c", "a"]},
    {"expected": ["a"], "retrieved": ["b", "c", "d"]},
    {"expected": ["a", "b"], "retrieved": ["c", "a", "d", "b"]},
    {"expected": ["a", "b", "c"], "retrieved": ["a"]},
    {"expected": ["a", "b", "c"], "retrieved": ["d", "e", "c", "b", "a"]},
    {"expected": ["a", "b"], "retrieved": ["a", "a", "b"]},
    {"expected": ["x", "y", "z", "w"], "retrieved": ["y", "q", "w", "r", "s", "x"]},
    {"expected": ["a", "b", "c", "d", "e"], "retrieved": ["e", "d"]},
    {"expected": ["a"], "retrieved": ["a"]},
]

METRICS = {
    "hit_rate": HitRate(),
    "hit_rate_granular": HitRate(use_granular_hit_rate=True),
    "mrr": MRR(),
    "mrr_granular": MRR(use_granular_mrr=True),
    "precision": Precision(),
    "recall": Recall(),
    "ap": AveragePrecision(),
    "ndcg_linear": NDCG(mode="linear"),
    "ndcg_exponential": NDCG(mode="exponential"),
}


def main() -> None:
    out = []
    for case in CASES:
        values = {}
        for name, metric in METRICS.items():
            r = metric.compute(expected_ids=case["expected"], retrieved_ids=case["retrieved"])
            values[name] = r.score
        out.append({**case, "scores": values})
    errors = {}
    for name, metric in METRICS.items():
        try:
            metric.compute(expected_ids=[], retrieved_ids=["a"])
            errors[name] = None
        except Exception as e:  # noqa: BLE001 - the message is what is recorded
            errors[name] = f"{type(e).__name__}: {e}"
    print(json.dumps({"llama_index_core": llama_index.core.__version__, "cases": out,
                      "empty_expected": errors}, indent=1))


if __name__ == "__main__":
    main()
