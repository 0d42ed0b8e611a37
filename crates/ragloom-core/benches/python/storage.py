"""LlamaIndex 0.14.25 persisting and loading a VectorStoreIndex, the workload
of the `index_persist`/`index_load` benches in benches/storage.rs.

Run: /tmp/li/bin/python crates/ragloom-core/benches/python/storage.py [N ...]
Default size 10000 nodes. Each node: ~90 words of text, two metadata keys, a
source document (one per 10 nodes), a 384-dimensional embedding. Times
`storage_context.persist(dir)` and `load_index_from_storage(
StorageContext.from_defaults(persist_dir=dir))`, and prints the folder's size.
"""

import os
import random
import sys
import tempfile
import time

from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import Document, NodeRelationship, TextNode

DIM = 384
WORDS = ["alpha", "beta", "gamma", "délta", "epsilon", "zeta", "eta", "thêta"]


def nodes(n, rng):
    docs = [
        Document(id_=f"doc-{d}", text=f"document {d}", metadata={"file_name": f"file_{d}.txt"})
        for d in range(n // 10)
    ]
    out = []
    for i in range(n):
        text = " ".join(WORDS[(i * 7 + w * 3) % len(WORDS)] for w in range(90))
        out.append(
            TextNode(
                id_=f"node-{i:06d}",
                text=text,
                metadata={"file_name": f"file_{i // 10}.txt", "page": i % 40},
                relationships={NodeRelationship.SOURCE: docs[i // 10].as_related_node_info()},
                embedding=[rng.uniform(-1.0, 1.0) for _ in range(DIM)],
            )
        )
    return out


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [10_000]
    embed = MockEmbedding(embed_dim=DIM)
    for n in sizes:
        rng = random.Random(7)
        ns = nodes(n, rng)
        t = time.perf_counter()
        index = VectorStoreIndex(ns, embed_model=embed)
        build_s = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            index.storage_context.persist(persist_dir=d)
            persist_s = time.perf_counter() - t
            size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            t = time.perf_counter()
            loaded = load_index_from_storage(
                StorageContext.from_defaults(persist_dir=d), embed_model=embed
            )
            load_s = time.perf_counter() - t
            assert len(loaded.index_struct.nodes_dict) == n
        print(
            f"n={n} build={build_s:.2f}s persist={persist_s:.2f}s load={load_s:.2f}s "
            f"folder={size / 1e6:.0f}MB",
            flush=True,
        )


if __name__ == "__main__":
    main()
