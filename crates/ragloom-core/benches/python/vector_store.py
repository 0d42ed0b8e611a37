"""LlamaIndex 0.14.25's SimpleVectorStore on the workloads of benches/vector_store.rs.

Run: /tmp/li/bin/python crates/ragloom-core/benches/python/vector_store.py [N ...]
Default sizes 10000 and 100000 (dimension 384). For each: top-10 without a
filter and with `bucket == 3` (10% of the nodes), median of a few runs.
Vectors are seeded pseudo-random floats in [-1, 1), as the Rust bench's.
"""

import gc
import random
import statistics
import sys
import time

from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.simple import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    MetadataFilters,
    VectorStoreQuery,
)

DIM = 384


def build(n, rng):
    store = SimpleVectorStore()
    for start in range(0, n, 10_000):
        nodes = [
            TextNode(
                id_=f"node-{i:07d}",
                text="",
                metadata={"bucket": i % 10},
                embedding=[rng.uniform(-1.0, 1.0) for _ in range(DIM)],
            )
            for i in range(start, min(n, start + 10_000))
        ]
        store.add(nodes)
    return store


def timed(f, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    for n in sizes:
        rng = random.Random(42)
        t = time.perf_counter()
        store = build(n, rng)
        build_s = time.perf_counter() - t
        q = [rng.uniform(-1.0, 1.0) for _ in range(DIM)]
        runs = 5 if n <= 100_000 else 2
        plain = VectorStoreQuery(query_embedding=q, similarity_top_k=10)
        filtered = VectorStoreQuery(
            query_embedding=q,
            similarity_top_k=10,
            filters=MetadataFilters.from_dict({"bucket": 3}),
        )
        assert len(store.query(filtered).ids) == 10
        print(
            f"n={n} dim={DIM} build={build_s:.2f}s "
            f"top10={timed(lambda: store.query(plain), runs) * 1e3:.1f}ms "
            f"top10_filter_10pct={timed(lambda: store.query(filtered), runs) * 1e3:.1f}ms",
            flush=True,
        )
        del store
        gc.collect()


if __name__ == "__main__":
    main()
