"""Records llama-index-retrievers-bm25 (bm25s, PyStemmer) rankings and scores.

Run with a venv holding llama-index-core==0.14.25, llama-index-retrievers-bm25
and PyStemmer:  /tmp/bm25-venv/bin/python gen_bm25.py  (writes bm25.json here).
"""

import json
import os

from llama_index.core.schema import TextNode
from llama_index.retrievers.bm25 import BM25Retriever

HERE = os.path.dirname(os.path.abspath(__file__))

TEXTS = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "A fast auburn fox leaped across sleeping dogs by the riverside.",
    "Rust is a systems programming language focused on safety and speed.",
    "Python programming is popular for data science and machine learning.",
    "Retrieval augmented generation combines search with large language models.",
    "BM25 ranks documents by term frequency and inverse document frequency.",
    "Dogs and cats are common household pets; dogs love running outside.",
    "The river flooded the town after days of heavy rain and storms.",
    "Machine learning models learn patterns from training data.",
    "Searching documents quickly needs an inverted index of terms.",
    "Running, runner, runs: stemming maps these words to one root.",
    "Caf\u00e9 owners in M\u00fcnchen serve cr\u00e8me br\u00fbl\u00e9e and espresso daily.",
]

QUERIES = [
    "fox and dog by the river",
    "programming language safety",
    "machine learning data",
    "search documents with an inverted index",
    "running dogs",
    "M\u00fcnchen caf\u00e9 espresso",
    "the of and",
    "unrelated zebra",
]


def nodes():
    out = []
    for i, t in enumerate(TEXTS):
        n = TextNode(text=t, id_=f"node-{i}")
        if i % 3 == 0:
            n.metadata = {"topic": "animals" if i in (0, 6) else "other", "n": i}
        out.append(n)
    return out


def run(skip_stemming):
    r = BM25Retriever.from_defaults(
        nodes=nodes(), similarity_top_k=len(TEXTS), skip_stemming=skip_stemming
    )
    results = {}
    for q in QUERIES:
        got = r.retrieve(q)
        results[q] = [[n.node.node_id, n.score] for n in got]
    return results


def main():
    data = {
        "nodes": [
            {"id": n.node_id, "text": n.text, "metadata": n.metadata} for n in nodes()
        ],
        "queries": QUERIES,
        "stemmed": run(False),
        "unstemmed": run(True),
    }
    with open(os.path.join(HERE, "bm25.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
