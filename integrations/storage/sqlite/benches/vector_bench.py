#!/usr/bin/env python3
"""`cargo xtask bench --vectors [--large]`: the embedded store's vector
index against Chroma and LanceDB on the same vectors, in one run.

  python vector_bench.py --bench PATH [--large] [--chroma PY] [--lancedb PY]

The vectors are fake_embeddings.py's (hashed bags of words, 384
dimensions) of 80-word pieces of the 53 MB benchmark corpus (about
100,000), or with --large of 150-word pieces of the 1 GB corpus (about
1.18 million; 1,000,000 stored). The last 500 are the queries, never
stored. Each side stores the rows (timed), adds 15% more (timed), and
answers the queries' top 10 (p50, p99, recall@10 against an exact search).
The corpora are made with shared/corpus/make_corpus.py and kept in /tmp.
A peer whose Python (PY, with chromadb or lancedb) is not given is skipped.
"""

import argparse
import array
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../../.."))
sys.path.insert(0, os.path.join(ROOT, "crates/ragloom-cli/benches"))
from fake_embeddings import embed  # noqa: E402

DIMS = 384
QUERIES = 500
# Search breadths (HNSW's ef) the index is asked at; 128 is the default.
BREADTHS = (64, 128, 256, 512)


def corpus(large):
    out = "/tmp/ragloom-corpus1g" if large else "/tmp/ragloom-corpus53"
    if not os.path.isdir(out):
        files, mb = (20000, 1000) if large else (2000, 50)
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "../shared/corpus/make_corpus.py"),
             "--out", out, "--files", str(files), "--mb", str(mb), "--seed", "42"],
            check=True, stdout=subprocess.DEVNULL)
    return out


def vectors(large):
    """The vectors file (made once) and its row count."""
    path = "/tmp/ragloom-vectors-1g.f32" if large else "/tmp/ragloom-vectors-53.f32"
    if not os.path.exists(path):
        src, words = corpus(large), (150 if large else 80)
        tmp = path + ".tmp"
        with open(tmp, "wb") as out:
            for name in sorted(os.listdir(src)):
                if not name.endswith(".txt"):
                    continue
                w = open(os.path.join(src, name), encoding="utf-8", errors="replace").read().split()
                buf = array.array("f")
                for i in range(0, len(w), words):
                    buf.extend(embed(" ".join(w[i:i + words])))
                out.write(buf.tobytes())
        os.replace(tmp, path)
    return path, os.path.getsize(path) // (4 * DIMS)


def run_json(cmd):
    """Runs cmd, returning its JSON lines and its peak RSS (MB)."""
    r = subprocess.run(["/usr/bin/time", "-f", "RSS %M"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    rss = next((int(l.split()[1]) / 1024 for l in r.stderr.splitlines() if l.startswith("RSS ")), 0)
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")], rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="the vector_index_bench binary")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--chroma", help="a Python with chromadb")
    ap.add_argument("--lancedb", help="a Python with lancedb")
    a = ap.parse_args()
    path, total = vectors(a.large)
    n = min(1_000_000, total - QUERIES) if a.large else total - QUERIES
    add = min(n * 15 // 100, total - QUERIES - n)
    # Added rows come from the stored ones' tail when the file has no room.
    if add < n // 10:
        n = (total - QUERIES) * 100 // 115
        add = total - QUERIES - n
    print(f"{n} vectors of {DIMS} dimensions stored, {add} added, {QUERIES} queries (top 10); "
          f"{os.cpu_count()} cores; load: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "r.sqlite")
        (b,), _ = run_json([a.bench, "build", path, str(DIMS), str(n), db])
        qs, _ = run_json([a.bench, "query", path, str(DIMS), str(n), str(QUERIES), db,
                          ",".join(str(b) for b in BREADTHS)])
        (ad,), _ = run_json([a.bench, "add", path, str(DIMS), str(n), str(add), db])
        for q in qs:
            rows.append((f"ragloom (HNSW ef={q['breadth']}, exact re-scoring)", b["total_per_s"],
                         ad["per_s"], q["p50_ms"], q["p99_ms"], q["recall10"],
                         f"a new process's first query {q['first_ms']:.1f} ms at peak RSS "
                         f"{q['rss_first_mb']:.0f} MB" if q is qs[0] else ""))
        for peer, py in (("chroma", a.chroma), ("lancedb", a.lancedb)):
            if not py:
                print(f"{peer}: skipped (pass --{peer} PYTHON, a Python with {peer} installed)")
                continue
            lines, _ = run_json([py, os.path.join(HERE, "vector_peers.py"), peer, path,
                                 str(DIMS), str(n), str(QUERIES), os.path.join(tmp, peer), str(add)])
            stored = next(l for l in lines if "stored" in l)
            added = next((l for l in lines if "added" in l), {"per_s": 0})
            for l in lines:
                if "setting" in l:
                    rows.append((f"{peer} ({l['setting']})", stored["per_s"], added["per_s"],
                                 l["p50_ms"], l["p99_ms"], l["recall10"], ""))
    print("\n| store | stored vectors/s | added vectors/s | top-10 p50 ms | p99 ms | recall@10 | notes |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:,} | {r[2]:,} | {r[3]} | {r[4]} | {r[5]} | {r[6]} |")


if __name__ == "__main__":
    main()
