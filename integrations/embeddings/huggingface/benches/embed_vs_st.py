"""ragloom's local embeddings against sentence-transformers on the same CPU,
model, texts and batch size: rounds interleaved (ragloom, then Python, then
ragloom...), median of the rounds, at 1 and 2 threads.

A third column is the floor: the model's matrix products alone, for the same
token counts without padding, through torch (MKL's sgemm), with nothing else
of the model around them. No f32 implementation can be faster than it on
this CPU by more than its kernels beat MKL's.

    python3 embed_vs_st.py --example target/release/examples/embed_timing \
        --python ST_VENV/bin/python --model MINILM_DIR --texts TEXTS [--rounds 5]

ST_VENV is a virtualenv with sentence-transformers 6.2 (and torch). The
example is built with `cargo build --release -p ragloom-embeddings-huggingface
--example embed_timing`.

TEXTS has one text per line; or --passages-from FILE cuts FILE (e.g. a
Canterbury text) into 64 passages of about 1,000 characters (written to the
temporary folder). Prints a Markdown table and the load average before
and after.
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

FLOOR = r'''
import sys, time, json, torch
from tokenizers import Tokenizer
model, texts, threads, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
cfg = json.load(open(model + "/config.json"))
seq = json.load(open(model + "/sentence_bert_config.json"))["max_seq_length"]
h, inter, heads, layers = (cfg["hidden_size"], cfg["intermediate_size"],
                           cfg["num_attention_heads"], cfg["num_hidden_layers"])
tok = Tokenizer.from_file(model + "/tokenizer.json")
tok.no_padding()
tok.enable_truncation(min(seq, cfg["max_position_embeddings"]))
texts = [t for t in open(texts).read().split("\n") if t]
lens = sorted((len(e.ids) for e in tok.encode_batch(texts)), reverse=True)
batches = [lens[i:i + batch] for i in range(0, len(lens), batch)]
w = [torch.randn(h, 3 * h), torch.randn(h, h), torch.randn(h, inter), torch.randn(inter, h)]
work = []
for b in batches:
    t = sum(b)
    work.append((torch.randn(t, h), torch.randn(t, inter),
                 [(torch.randn(heads, n, h // heads), torch.randn(heads, n, n)) for n in b]))
def run():
    for x, y, per_text in work:
        for _ in range(layers):
            x @ w[0]; x @ w[1]; x @ w[2]; y @ w[3]
            for q, p in per_text:
                torch.bmm(q, q.transpose(1, 2)); torch.bmm(p, q)
run()
t = time.perf_counter()
run()
print(json.dumps({"seconds": time.perf_counter() - t, "tokens": sum(lens)}))
'''


def passages(source, count=64, chars=1000):
    """`count` runs of whole words of about `chars` characters, one per line."""
    words, out, cur = open(source, encoding="latin-1").read().split(), [], []
    for w in words:
        cur.append(w)
        if sum(len(x) + 1 for x in cur) >= chars:
            out.append(" ".join(cur))
            cur = []
            if len(out) == count:
                break
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), os.path.basename(source) + ".passages.txt")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


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
    p.add_argument("--texts")
    p.add_argument("--passages-from")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    a = p.parse_args()
    if a.passages_from:
        a.texts = passages(a.passages_from)
    elif not a.texts:
        sys.exit("give --texts or --passages-from")
    n = sum(1 for line in open(a.texts) if line.strip())
    print(f"{n} texts, batch {a.batch}; load average {os.getloadavg()[0]:.2f} before")
    rows = []
    for threads in (1, 2):
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        ours, theirs, floor = [], [], []
        for _ in range(a.rounds):
            ours.append(one([a.example, a.model, a.texts, "1", str(a.batch)], env))
            theirs.append(one([a.python, "-c", ST, a.model, a.texts, str(threads), str(a.batch)], env))
            floor.append(one([a.python, "-c", FLOOR, a.model, a.texts, str(threads), str(a.batch)], env))
        r, s, f = (statistics.median(x) for x in (ours, theirs, floor))
        rows.append((threads, r, s, f, min(ours), max(ours), min(theirs), max(theirs)))
    print(f"load average {os.getloadavg()[0]:.2f} after\n")
    print("| threads | ragloom (median, min–max) | sentence-transformers | speed vs sentence-transformers "
          "| matrix products alone (torch) |")
    print("|---:|---:|---:|---:|---:|")
    for t, r, s, f, rlo, rhi, slo, shi in rows:
        print(f"| {t} | {r:.2f} s ({rlo:.2f}–{rhi:.2f}) | {s:.2f} s ({slo:.2f}–{shi:.2f}) | {s / r:.2f}× "
              f"| {f:.2f} s |")


if __name__ == "__main__":
    main()
