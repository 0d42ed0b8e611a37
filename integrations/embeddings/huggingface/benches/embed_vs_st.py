"""ragloom's local embeddings against sentence-transformers on the same CPU,
model, texts and batch size: rounds interleaved (ragloom, then Python, then
ragloom...), median of the rounds, at 1 and 2 threads.

    python3 embed_vs_st.py --example target/release/examples/embed_timing \
        --python ST_VENV/bin/python --model MINILM_DIR --texts TEXTS [--rounds 5]

ST_VENV is a virtualenv with sentence-transformers 6.2 (and torch). The
example is built with `cargo build --release -p ragloom-embeddings-huggingface
--example embed_timing`.

TEXTS has one text per line (e.g. chunks of the Canterbury texts). Prints a
Markdown table and the load average before and after.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ST = r'''
import sys, time, json, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(int(sys.argv[3]))
texts = open(sys.argv[2]).read().split("\n")
texts = [t for t in texts if t]
m = SentenceTransformer(sys.argv[1], device="cpu")
m.encode(texts[:4], batch_size=int(sys.argv[4]))
t = time.perf_counter()
m.encode(texts, batch_size=int(sys.argv[4]))
print(json.dumps({"seconds": time.perf_counter() - t, "texts": len(texts)}))
'''


def one(cmd, env):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--example", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--texts", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    a = p.parse_args()
    n = sum(1 for line in open(a.texts) if line.strip())
    print(f"{n} texts, batch {a.batch}; load average {os.getloadavg()[0]:.2f} before")
    rows = []
    for threads in (1, 2):
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        ours, theirs = [], []
        for _ in range(a.rounds):
            ours.append(one([a.example, a.model, a.texts, "1", str(a.batch)], env))
            theirs.append(one([a.python, "-c", ST, a.model, a.texts, str(threads), str(a.batch)], env))
        r, s = statistics.median(ours), statistics.median(theirs)
        rows.append((threads, r, s, min(ours), max(ours), min(theirs), max(theirs)))
    print(f"load average {os.getloadavg()[0]:.2f} after\n")
    print("| threads | ragloom (median, min–max) | sentence-transformers | speed vs sentence-transformers |")
    print("|---:|---:|---:|---:|")
    for t, r, s, rlo, rhi, slo, shi in rows:
        print(f"| {t} | {r:.2f} s ({rlo:.2f}–{rhi:.2f}) | {s:.2f} s ({slo:.2f}–{shi:.2f}) | {s / r:.2f}× |")


if __name__ == "__main__":
    main()
