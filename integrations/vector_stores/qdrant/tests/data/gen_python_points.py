"""Record the points LlamaIndex's QdrantVectorStore writes, for ragloom's interop tests.

Run with a Python that has llama-index-core 0.14.25 and
llama-index-vector-stores-qdrant 0.10.4 (qdrant-client 1.20.0):

    python gen_python_points.py > python_points.json

Nodes are written with qdrant-client's local mode (no server); the output
holds each node as LlamaIndex serialises it (`to_dict()`, embedding
included), the collection's vector configuration, every stored point (id,
named vectors, payload) and the result of one query, so ragloom can check
it reads these points back as the same nodes and writes the same payloads.
"""

import json
import sys

from qdrant_client import QdrantClient
from llama_index.core.schema import (
    Document,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.vector_stores.qdrant import QdrantVectorStore

DOC_ID = "3b1f5a60-52a1-4f5e-9d9e-0d8f3c3b2a10"


def nodes():
    source = RelatedNodeInfo(node_id=DOC_ID, metadata={"file_name": "essay.txt"})
    a = TextNode(
        id_="0a8c6f4e-1c1d-4b7a-8f43-6a3e3c0c9b01",
        text="Paul Graham wrote essays — about startups.",
        metadata={"author": "pg", "year": 2004, "score": 0.5, "draft": False},
        relationships={NodeRelationship.SOURCE: source},
        start_char_idx=0,
        end_char_idx=42,
        embedding=[1.0, 0.0, 0.0, 0.0],
    )
    b = TextNode(
        id_="1b9d7a5f-2d2e-4c8b-9a54-7b4f4d1daa02",
        text="Lisp is a programmable programming language.",
        metadata={"author": "pg", "year": 2001, "score": 1.5, "draft": True},
        relationships={NodeRelationship.SOURCE: source},
        embedding=[0.6, 0.8, 0.0, 0.0],
        excluded_embed_metadata_keys=["score"],
    )
    c = IndexNode(
        id_="2cae8b60-3e3f-4d9c-8b65-8c5e5e2ebb03",
        text="A summary pointing at another index.",
        index_id="summary-index",
        metadata={"author": "someone else", "year": 1999},
        embedding=[0.0, 0.0, 1.0, 0.0],
    )
    d = Document(
        id_="3dbf9c71-4f40-4ead-9c76-9d6f6f3fcc04",
        text="A whole document, stored as a node.",
        metadata={"title": "Ünïcode “quotes”", "tags": "a,b"},
        embedding=[0.0, 0.0, 0.0, 1.0],
    )
    return [a, b, c, d]


def main():
    client = QdrantClient(location=":memory:")
    store = QdrantVectorStore(client=client, collection_name="pg_essay")
    ns = nodes()
    ids = store.add(ns)
    info = client.get_collection("pg_essay")
    params = info.config.params.vectors
    # Without hybrid search LlamaIndex creates one unnamed vector (name "").
    named = params.items() if isinstance(params, dict) else [("", params)]
    vectors = {
        name: {"size": p.size, "distance": str(p.distance.value)} for name, p in named
    }
    points, _ = client.scroll("pg_essay", limit=100, with_payload=True, with_vectors=True)
    points = sorted(points, key=lambda p: str(p.id))
    result = store.query(
        VectorStoreQuery(query_embedding=[0.8, 0.6, 0.3, 0.1], similarity_top_k=3)
    )
    out = {
        "collection_name": "pg_essay",
        "vectors_config": vectors,
        "added_ids": ids,
        "nodes": [n.to_dict() for n in ns],
        "points": [
            {"id": str(p.id), "vector": p.vector, "payload": p.payload} for p in points
        ],
        "query": {
            "embedding": [0.8, 0.6, 0.3, 0.1],
            "top_k": 3,
            "ids": result.ids,
            "similarities": result.similarities,
        },
    }
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
