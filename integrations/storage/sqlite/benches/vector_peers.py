#!/usr/bin/env python3
"""The peers of the embedded store's vector index, on the same vectors file
as examples/vector_index_bench.rs (little-endian float32 rows).

  python vector_peers.py chroma FILE DIMS N Q DIR [ADD]
  python vector_peers.py lancedb FILE DIMS N Q DIR [ADD]

Stores the file's first N rows (ids v0..), timed as vectors per second;
then ADD more rows (default 0), timed; then asks the file's last Q rows
for their 10 nearest (cosine), reporting p50/p99 latency and recall@10
against an exact search (numpy) over the N stored rows. Chroma is asked at
its default search breadth and at wider ones (its HNSW's `ef`), LanceDB
with its IVF-PQ index at several `nprobes` with exact re-ranking of
candidates (`refine_factor`), so each can be read at the recall the
ragloom row shows. One JSON line per setting. Each peer needs its own
virtualenv (chromadb; lancedb).
"""

import json
import sys
import time

import numpy as np


def load(path, dims):
    return np.fromfile(path, dtype="<f4").reshape(-1, dims)


def exact_top10(data, queries):
    unit = data / np.maximum(np.linalg.norm(data, axis=1, keepdims=True), 1e-12)
    q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    out = []
    for row in q:
        scores = unit @ row
        out.append(set(np.argpartition(-scores, 10)[:10].tolist()))
    return out


def report(name, setting, lat, got, want, extra=None):
    lat = sorted(lat)
    hits = sum(len(g & w) for g, w in zip(got, want))
    line = {
        "peer": name,
        "setting": setting,
        "p50_ms": round(lat[len(lat) // 2], 3),
        "p99_ms": round(lat[len(lat) * 99 // 100], 3),
        "recall10": round(hits / (10 * len(want)), 4),
    }
    line.update(extra or {})
    print(json.dumps(line), flush=True)


def chroma(data, n, q, directory, add):
    import chromadb

    client = chromadb.PersistentClient(path=directory)
    col = client.get_or_create_collection("bench", metadata={"hnsw:space": "cosine"})
    batch = client.get_max_batch_size()

    def put(lo, hi):
        for s in range(lo, hi, batch):
            e = min(s + batch, hi)
            col.add(ids=[f"v{i}" for i in range(s, e)], embeddings=data[s:e])

    t = time.perf_counter()
    put(0, n)
    build = time.perf_counter() - t
    print(json.dumps({"peer": "chroma", "stored": n, "s": round(build, 2),
                      "per_s": round(n / build)}), flush=True)
    if add:
        t = time.perf_counter()
        put(n, n + add)
        s = time.perf_counter() - t
        print(json.dumps({"peer": "chroma", "added": add, "s": round(s, 2),
                          "per_s": round(add / s)}), flush=True)
        # Recall is measured over the first n rows: the added ones go again.
        col.delete(ids=[f"v{i}" for i in range(n, n + add)])
    queries = data[-q:]
    want = exact_top10(data[:n], queries)
    for ef in (None, 64, 128, 256):
        if ef is not None:
            col.modify(configuration={"hnsw": {"ef_search": ef}})
            # The loaded index keeps its breadth until the collection is fetched anew.
            col = client.get_collection("bench")
        lat, got = [], []
        for row in queries:
            t = time.perf_counter()
            r = col.query(query_embeddings=[row], n_results=10, include=[])
            lat.append((time.perf_counter() - t) * 1e3)
            got.append({int(i[1:]) for i in r["ids"][0]})
        report("chroma", f"ef_search={ef or 'default'}", lat, got, want)


def lancedb_peer(data, n, q, directory, add):
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(directory)
    dims = data.shape[1]

    def table_of(lo, hi):
        return pa.table({
            "id": pa.array(range(lo, hi), pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(data[lo:hi].reshape(-1), pa.float32()), dims),
        })

    t = time.perf_counter()
    tbl = db.create_table("bench", table_of(0, n), mode="overwrite")
    tbl.create_index(metric="cosine", index_type="IVF_PQ",
                     num_partitions=max(1, int(n ** 0.5)), num_sub_vectors=dims // 8)
    build = time.perf_counter() - t
    print(json.dumps({"peer": "lancedb", "stored": n, "s": round(build, 2),
                      "per_s": round(n / build)}), flush=True)
    if add:
        t = time.perf_counter()
        tbl.add(table_of(n, n + add))
        tbl.optimize()
        s = time.perf_counter() - t
        print(json.dumps({"peer": "lancedb", "added": add, "s": round(s, 2),
                          "per_s": round(add / s)}), flush=True)
        tbl.delete(f"id >= {n}")
    queries = data[-q:]
    want = exact_top10(data[:n], queries)
    for nprobes, refine in ((20, 5), (50, 10), (100, 20)):
        lat, got = [], []
        for row in queries:
            t = time.perf_counter()
            r = (tbl.search(row).metric("cosine").nprobes(nprobes)
                 .refine_factor(refine).limit(10).select(["id"]).to_list())
            lat.append((time.perf_counter() - t) * 1e3)
            got.append({x["id"] for x in r})
        report("lancedb", f"nprobes={nprobes},refine={refine}", lat, got, want)


def main():
    peer, path, dims, n, q, directory = sys.argv[1:7]
    add = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    data = load(path, int(dims))
    n, q = int(n), int(q)
    if n + add > len(data) - q:
        sys.exit(f"{path}: {len(data)} rows; N + ADD + Q must fit")
    {"chroma": chroma, "lancedb": lancedb_peer}[peer](data, n, q, directory, add)


if __name__ == "__main__":
    main()
