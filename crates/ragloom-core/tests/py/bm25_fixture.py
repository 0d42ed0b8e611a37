"""Writes the BM25 fixture: LlamaIndex's BM25Retriever (llama-index-retrievers-bm25
0.8.0, bm25s 0.3.16) persisted to `python/`, and its corpus and answers to `expected.json`.

Run from crates/ragloom-core/tests/data/bm25_persist with a python that has
llama-index-retrievers-bm25 installed.
"""

import json

from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters
from llama_index.retrievers.bm25 import BM25Retriever

TEXTS = [
    "The cat sat on the mat while the dogs slept.",
    "Dogs chase cats around the garden, barking loudly.",
    "A bird in the hand is worth two in the bush.",
    "Cats and dogs, birds and bees: the garden is busy in spring.",
    "Rust's ownership model makes memory safety checkable at compile time.",
    "Die Größe des Gartens überrascht: Katzen, Hunde und Vögel.",
    "Inverted indexes map each term to the documents that contain it.",
    "Spring gardens bloom; the bees are busy and the birds sing.",
]
QUERIES = ["cats and dogs", "busy garden bees", "memory safety", "Größe Gartens", "zebra"]

nodes = [
    TextNode(id_=f"node-{i}", text=t, metadata={"n": i, "lang": "de" if i == 5 else "en"})
    for i, t in enumerate(TEXTS)
]
retriever = BM25Retriever.from_defaults(
    nodes=nodes,
    similarity_top_k=4,
    filters=MetadataFilters(filters=[MetadataFilter(key="n", value=2, operator=FilterOperator.NE)]),
)
retriever.persist("python")
expected = {"texts": TEXTS, "answers": {}}
for q in QUERIES:
    hits = retriever.retrieve(q)
    expected["answers"][q] = [[h.node.node_id, h.score] for h in hits if h.score > 0]
with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, ensure_ascii=False)
