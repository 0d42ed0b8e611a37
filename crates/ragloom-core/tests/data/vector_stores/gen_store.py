"""Records SimpleVectorStore files and query results from llama-index-core 0.14.25.

Run with the reference interpreter:  /tmp/li/bin/python gen_store.py
Writes, next to this script:
  nodes.json                    the nodes (to_dict(), embeddings included) added to store A
  store_a.json                  store A as SimpleVectorStore.persist writes it
  store_a_after_delete.json     store A after delete("doc-a")
  store_b.json                  store B: arbitrary float64 vectors (load -> persist round trip)
  store_ties.json               many equal vectors under random ids (tie order)
  queries.json                  {store: [{query, ids, similarities}]} as Python answers them
  similarity.json               base.embeddings.similarity for each mode
"""

import json
import math
import os
import random
import warnings

from llama_index.core.base.embeddings.base import SimilarityMode, similarity
from llama_index.core.schema import (
    Document,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.simple import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

warnings.filterwarnings("ignore")  # numpy warns on zero norms
HERE = os.path.dirname(os.path.abspath(__file__))


def src(doc_id):
    return {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc_id)}


# Store A: embeddings exactly representable in f32, so a Rust store built from
# the same nodes (whose embeddings are f32) writes the very same file.
nodes = [
    TextNode(id_="n1", text="alpha", embedding=[1.0, 0.0, 0.0, 0.0],
             metadata={"author": "Ann", "year": 2020, "tags": ["x", "y"]},
             relationships=src("doc-a")),
    TextNode(id_="n2", text="beta", embedding=[0.75, 0.25, 0.0, 0.0],
             metadata={"author": "Bob", "year": 2021.0, "score": 0.5},
             relationships=src("doc-a")),
    TextNode(id_="n3", text="gamma", embedding=[0.5, 0.5, 0.5, 0.5],
             metadata={"author": "Zoë", "year": 2019, "title": "Ünïcödé “quotes” \\ \"q\" \t\n\u007f 😀"},
             relationships=src("doc-b")),
    TextNode(id_="n4", text="delta", embedding=[0.0, 1.0, 0.0, 0.0],
             metadata={"author": "Ann", "year": 2022, "tags": [], "nested": {"k": [1, 2.5, None, True]}},
             relationships=src("doc-b")),
    TextNode(id_="n5", text="epsilon", embedding=[0.5, 0.5, 0.5, 0.5],
             metadata={"author": "Cy", "year": 2020, "big": 1e16, "small": 1e-05},
             relationships=src("doc-c")),
    TextNode(id_="n0", text="zeta", embedding=[0.5, 0.5, 0.5, 0.5],
             metadata={"author": "Cy"}, relationships=src("doc-c")),
    TextNode(id_="orphan", text="no source", embedding=[-1.0, 0.5, 0.0, 0.25],
             metadata={"year": 2018}),
    Document(id_="doc-z", text="a document", embedding=[0.0, 0.0, 1.0, 0.0],
             metadata={"file_name": "z.txt", "doc_id": "overwritten"}),
    IndexNode(id_="idx", text="index node", index_id="other-index",
              embedding=[0.0, -0.5, 0.0, 1.0], metadata={"kind": "index"},
              relationships=src("doc-a")),
]

store_a = SimpleVectorStore()
store_a.add(nodes)
store_a.persist(os.path.join(HERE, "store_a.json"))
with open(os.path.join(HERE, "nodes.json"), "w", encoding="utf-8") as f:
    json.dump([n.to_dict() for n in nodes], f, ensure_ascii=False, indent=1)


def q_to_json(q, mmr_threshold=None):
    out = {"query_embedding": q.query_embedding, "similarity_top_k": q.similarity_top_k}
    if q.node_ids is not None:
        out["node_ids"] = q.node_ids
    if q.filters is not None:
        out["filters"] = json.loads(q.filters.model_dump_json())
    if q.mode != VectorStoreQueryMode.DEFAULT:
        out["mode"] = q.mode.value
    if mmr_threshold is not None:
        out["mmr_threshold"] = mmr_threshold
    return out


def run(store, q, mmr_threshold=None):
    kwargs = {} if mmr_threshold is None else {"mmr_threshold": mmr_threshold}
    res = store.query(q, **kwargs)
    return {
        "query": q_to_json(q, mmr_threshold),
        "ids": list(res.ids),
        "similarities": [float(s) for s in res.similarities],
    }


F = MetadataFilter
queries_a = []
for emb in ([1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5], [0.1, 0.9, -0.3, 0.2]):
    for k in (0, 1, 2, 3, 5, 20):
        queries_a.append(run(store_a, VectorStoreQuery(query_embedding=emb, similarity_top_k=k)))
e = [0.2, 0.4, 0.6, 0.8]
for filters in (
    MetadataFilters(filters=[F(key="author", value="Ann")]),
    MetadataFilters(filters=[F(key="year", value=2020, operator=FilterOperator.GTE)]),
    MetadataFilters(filters=[F(key="year", value=2021)]),
    MetadataFilters(filters=[F(key="author", value="Ann"), F(key="year", value=2021.0)],
                    condition=FilterCondition.OR),
    MetadataFilters(filters=[F(key="author", value="Ann")], condition=FilterCondition.NOT),
    MetadataFilters(filters=[F(key="tags", value="x", operator=FilterOperator.CONTAINS)]),
    MetadataFilters(filters=[F(key="doc_id", value="doc-b")]),
    MetadataFilters(filters=[F(key="_node_type", value="IndexNode")]),
    MetadataFilters(filters=[F(key="tags", value=None, operator=FilterOperator.IS_EMPTY)]),
):
    queries_a.append(run(store_a, VectorStoreQuery(query_embedding=e, similarity_top_k=10, filters=filters)))
queries_a.append(run(store_a, VectorStoreQuery(query_embedding=e, similarity_top_k=10, node_ids=["n2", "n3", "doc-z", "nope"])))
queries_a.append(run(store_a, VectorStoreQuery(query_embedding=e, similarity_top_k=10, node_ids=[])))
for thr in (None, 0.0, 0.3, 1.0):
    for k in (1, 3, 0):
        queries_a.append(run(store_a, VectorStoreQuery(query_embedding=e, similarity_top_k=k, mode=VectorStoreQueryMode.MMR), thr))

store_a.delete("doc-a")
store_a.persist(os.path.join(HERE, "store_a_after_delete.json"))
queries_a_del = [run(store_a, VectorStoreQuery(query_embedding=e, similarity_top_k=20))]

# Store B: full-precision float64 values, written by Python; ragloom must load
# them and write them back unchanged.
rng = random.Random(7)
b = SimpleVectorStore()
b_nodes = []
for i in range(60):
    vec = [rng.uniform(-1, 1) for _ in range(16)]
    if i % 13 == 0:
        vec = [v * 1e-7 for v in vec]
    b_nodes.append(TextNode(id_=f"b{i:02d}-{rng.getrandbits(32):08x}", text="", embedding=vec,
                            metadata={"i": i, "bucket": i % 5, "even": i % 2 == 0, "name": f"n{i}"},
                            relationships=src(f"doc{i % 7}")))
b.add(b_nodes)
b.persist(os.path.join(HERE, "store_b.json"))
queries_b = []
for j in range(4):
    emb = [rng.uniform(-1, 1) for _ in range(16)]
    for k in (1, 4, 10, 0):
        queries_b.append(run(b, VectorStoreQuery(query_embedding=emb, similarity_top_k=k)))
    queries_b.append(run(b, VectorStoreQuery(query_embedding=emb, similarity_top_k=5,
                                             filters=MetadataFilters(filters=[F(key="bucket", value=[1, 3], operator=FilterOperator.IN)]))))
    queries_b.append(run(b, VectorStoreQuery(query_embedding=emb, similarity_top_k=6, mode=VectorStoreQueryMode.MMR), 0.6))
    queries_b.append(run(b, VectorStoreQuery(query_embedding=emb, similarity_top_k=6, mode=VectorStoreQueryMode.MMR)))

# Ties: three distinct directions shared by many random ids, in random order.
t = SimpleVectorStore()
dirs = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]
t_nodes = []
for i in range(45):
    t_nodes.append(TextNode(id_="".join(rng.choice("abcdef0123") for _ in range(5)) + str(i),
                            text="", embedding=rng.choice(dirs), relationships=src("d")))
t.add(t_nodes)
t.persist(os.path.join(HERE, "store_ties.json"))
queries_t = []
for emb in ([1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0001]):
    for k in list(range(0, 46, 1)):
        queries_t.append(run(t, VectorStoreQuery(query_embedding=emb, similarity_top_k=k)))

with open(os.path.join(HERE, "queries.json"), "w", encoding="utf-8") as f:
    json.dump({"store_a": queries_a, "store_a_after_delete": queries_a_del,
               "store_b": queries_b, "store_ties": queries_t}, f)

# similarity() in each mode; zero vectors give NaN in Python (recorded as null).
pairs = [([1.0, 2.0, 3.0], [4.0, -5.0, 6.0]), ([0.5, 0.5], [0.5, 0.5]),
         ([1.0, 0.0], [-1.0, 0.0]), ([0.0, 0.0], [1.0, 1.0]), ([0.0, 0.0], [0.0, 0.0]),
         ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]), ([1e-3, 2e-3], [3e3, -4e3])]
sims = []
for a, bb in pairs:
    row = {"a": a, "b": bb}
    for mode in SimilarityMode:
        v = float(similarity(a, bb, mode))
        row[mode.value] = None if math.isnan(v) else v
    sims.append(row)
with open(os.path.join(HERE, "similarity.json"), "w", encoding="utf-8") as f:
    json.dump(sims, f, indent=1)
print("ok", len(queries_a), len(queries_b), len(queries_t))
