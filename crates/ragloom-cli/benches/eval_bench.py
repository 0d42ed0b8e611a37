"""Retrieval quality next to speed: `ragloom eval` on the shipped labelled set
(datasets/canterbury_qa) for each retrieval mode, with and without a local
embedding model, with chunks counted in cl100k tokens and fitted to the model.

    python3 eval_bench.py --ragloom target/release/ragloom --sources ../shared/corpus/sources \
        --dataset datasets/canterbury_qa/canterbury_qa.jsonl [--minilm MODEL_DIR] [--work DIR]

Prints a Markdown table: the chunking, each mode's hit rate@4 and MRR@4, its
median and 95th percentile query latency, and the ingest time. Without
--minilm only keyword retrieval is measured.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ragloom", required=True)
    p.add_argument("--sources", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--minilm", help="a sentence-transformers folder (all-MiniLM-L6-v2)")
    p.add_argument("--top-k", type=int, default=4)
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ragloom-eval-bench"))
    a = p.parse_args()

    os.makedirs(a.work, exist_ok=True)
    corpus = os.path.join(a.work, "canterbury")
    if not os.path.isdir(corpus):
        shutil.copytree(a.sources, corpus)
    configs = [("cl100k 1024/200, no embeddings", [], [])]
    if a.minilm:
        embed = ["--embed", "huggingface", "--embed-model", a.minilm]
        configs.append(("cl100k 1024/200, all-MiniLM-L6-v2", embed, []))
        configs.append(("fitted to all-MiniLM-L6-v2 (--chunk-fit)", embed, ["--chunk-fit"]))
    rows = []
    load = os.getloadavg()[0]
    for name, embed, ingest_flags in configs:
        home = os.path.join(a.work, "home-" + str(len(rows)))
        shutil.rmtree(home, ignore_errors=True)
        base = [a.ragloom, "--persist-dir", home] + embed
        start = time.perf_counter()
        run(base + ["ingest"] + ingest_flags + [corpus])
        ingest_s = time.perf_counter() - start
        status = json.loads(run(base + ["--json", "status", "--files", corpus]))
        report = json.loads(run(base + ["--json", "eval", "--files", corpus, "--dataset", a.dataset,
                                        "--at", str(a.top_k)]))
        for m in report["retrieval"]:
            rows.append((name, status["chunk_size"], status["chunk_overlap"], status["nodes"], m, ingest_s))
    print(f"\n{report['questions']} questions, hit rate and MRR at top_k {a.top_k}; "
          f"load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, {os.cpu_count()} cores\n")
    print("| chunks | nodes | mode | hit rate@%d | MRR@%d | p50 ms | p95 ms | ingest s |" % (a.top_k, a.top_k))
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name, size, overlap, nodes, m, ingest_s in rows:
        print(f"| {name} ({size}/{overlap}) | {nodes} | {m['mode']} | {m['hit_rate']:.3f} | {m['mrr']:.3f} "
              f"| {m['latency_ms_p50']:.2f} | {m['latency_ms_p95']:.2f} | {ingest_s:.1f} |")


if __name__ == "__main__":
    main()
