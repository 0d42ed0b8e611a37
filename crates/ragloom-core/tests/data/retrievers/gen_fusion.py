"""Records QueryFusionRetriever's fusion outputs on fixed retriever results.

Run: /tmp/li/bin/python gen_fusion.py  (writes fusion.json here).
Scores are rounded to float32 so that Rust's f32 inputs are the same numbers.
"""

import copy
import json
import os
import random
import struct

from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.base.base_retriever import BaseRetriever

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


class Empty(BaseRetriever):
    def _retrieve(self, query_bundle):
        return []


def make_cases():
    rnd = random.Random(7)
    texts = [f"chunk number {i}" for i in range(12)]
    cases = []
    # Two retrievers, one query, overlapping results.
    cases.append(
        {
            "name": "two_retrievers_one_query",
            "num_retrievers": 2,
            "num_queries": 1,
            "weights": None,
            "results": [
                ["q", 0, [[texts[0], 0.9], [texts[1], 0.75], [texts[2], 0.5]]],
                ["q", 1, [[texts[2], 12.5], [texts[3], 7.25], [texts[0], 1.0]]],
            ],
        }
    )
    # Two queries, two retrievers, weights, random scores.
    res = []
    for q in ["q", "q variant"]:
        for i in range(2):
            picks = rnd.sample(texts, 6)
            res.append([q, i, [[t, f32(rnd.uniform(0, 10 if i else 1))] for t in picks]])
    cases.append(
        {
            "name": "two_queries_weighted",
            "num_retrievers": 2,
            "num_queries": 2,
            "weights": [0.3, 0.7],
            "results": res,
        }
    )
    # Edge cases: equal scores, an empty list, all-zero scores, unsorted input.
    cases.append(
        {
            "name": "edges",
            "num_retrievers": 3,
            "num_queries": 4,
            "weights": [1.0, 1.0, 2.0],
            "results": [
                ["q", 0, [[texts[4], 0.5], [texts[5], 0.5]]],
                ["q", 1, []],
                ["q", 2, [[texts[6], 0.0], [texts[4], 0.0]]],
                ["other", 0, [[texts[7], 0.25], [texts[5], 0.75], [texts[8], 0.5]]],
            ],
        }
    )
    return cases


def to_results(case):
    out = {}
    for q, i, lst in case["results"]:
        out[(q, i)] = [
            NodeWithScore(node=TextNode(text=t, id_=f"id-{t}"), score=s) for t, s in lst
        ]
    return out


def run(case):
    retrievers = [Empty() for _ in range(case["num_retrievers"])]
    r = QueryFusionRetriever(
        retrievers,
        llm=MockLLM(),
        num_queries=case["num_queries"],
        retriever_weights=case["weights"],
    )
    results = to_results(case)
    fmt = lambda ns: [[n.node.text, n.score] for n in ns]
    return {
        "simple": fmt(r._simple_fusion(copy.deepcopy(results))),
        "reciprocal_rerank": fmt(r._reciprocal_rerank_fusion(copy.deepcopy(results))),
        "relative_score": fmt(r._relative_score_fusion(copy.deepcopy(results))),
        "dist_based_score": fmt(
            r._relative_score_fusion(copy.deepcopy(results), dist_based=True)
        ),
    }


def main():
    cases = make_cases()
    for c in cases:
        c["expected"] = run(c)
    with open(os.path.join(HERE, "fusion.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
