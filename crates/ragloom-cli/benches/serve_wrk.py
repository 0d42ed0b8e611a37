#!/usr/bin/env python3
"""`POST /v1/retrieve` (top 4) under wrk: `ragloom serve` against the
FastAPI + LlamaIndex `BM25Retriever` service (python/llamaindex_serve.py)
over the same corpus, measured alternately in one run.

  python3 serve_wrk.py --ragloom target/release/ragloom --python PY \\
      --corpus DIR --work DIR [--seconds 8] [--rounds 2]

wrk (Debian's package) is the load, in a process of its own, rotating 16
questions: one connection (latency) and 200 (throughput; ragloom's
concurrent-request limit is raised to 256 so none is refused). Prints a
Markdown table and the load average. Standard library only; PY is an
interpreter with llama-index-core, llama-index-retrievers-bm25, fastapi and
uvicorn.
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS = [
    "What did the author work on before college?",
    "How does the storage engine recover after a crash?",
    "Who wrote about the history of the printing press?",
    "Why do rivers change their course over time?",
    "What is the role of the committee in the proposal?",
    "When was the bridge across the river finished?",
    "What happened to the ship during the storm?",
    "Which methods measure the speed of light?",
    "How are the accounts kept by the treasurer?",
    "What did the queen say to the gardeners?",
    "Where did the travellers stop for the night?",
    "What makes the garden grow in early spring?",
    "What did the rabbit take out of its waistcoat pocket?",
    "Why was the serpent cast out of paradise?",
    "How do libraries preserve electronic texts?",
    "Who is banished to the forest of Arden?",
]
LUA = """
local qs = {%s}
local i = 0
request = function()
  i = i + 1
  local body = '{"query": "' .. qs[(i %% #qs) + 1] .. '", "top_k": 4}'
  return wrk.format("POST", "/v1/retrieve", {["Content-Type"] = "application/json"}, body)
end
""" % ", ".join('"%s"' % q for q in QUESTIONS)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, what):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode}")
        try:
            req = urllib.request.Request(url + "/v1/retrieve", data=b'{"query": "ready", "top_k": 1}',
                                         headers={"Content-Type": "application/json"})
            urllib.request.urlopen(req, timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"{what} did not answer at {url}")


def wrk(url, script, conns, seconds):
    threads = "1" if conns == 1 else "2"
    out = subprocess.run(["wrk", "-t", threads, "-c", str(conns), "-d", f"{seconds}s", "--latency",
                          "-s", script, url], capture_output=True, text=True, check=True).stdout

    def ms(label):
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"p50": ms(50), "p99": ms(99), "rps": rps, "non2xx": int(bad.group(1)) if bad else 0}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ragloom", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    if not shutil.which("wrk"):
        sys.exit("serve_wrk: wrk is not installed (apt-get install wrk)")
    work = Path(a.work)
    home, pystore = work / "wrk-ragloom", work / "wrk-python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGLOOM_", "OPENAI_"))}
    subprocess.run([a.ragloom, "--persist-dir", str(home), "--embed", "none", "--llm", "none",
                    "ingest", a.corpus], check=True, env=env, capture_output=True)
    if not pystore.is_dir() or not any(pystore.iterdir()):
        subprocess.run([a.python, str(HERE / "python" / "llamaindex_ingest.py"), "ingest", a.corpus,
                        str(pystore)], check=True, capture_output=True)
    script = Path(tempfile.mkdtemp()) / "retrieve.lua"
    script.write_text(LUA)
    rport, pport = free_port(), free_port()
    servers = {
        "ragloom": subprocess.Popen(
            [a.ragloom, "--persist-dir", str(home), "--embed", "none", "--llm", "none", "serve",
             "--files", a.corpus, "--port", str(rport), "--max-concurrent-requests", "256"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        "Python": subprocess.Popen(
            [a.python, str(HERE / "python" / "llamaindex_serve.py"), str(pystore), str(pport),
             "http://127.0.0.1:9/v1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    }
    urls = {"ragloom": f"http://127.0.0.1:{rport}", "Python": f"http://127.0.0.1:{pport}"}
    rows = []
    try:
        for name, proc in servers.items():
            wait_ready(urls[name], proc, name)
        start_load = os.getloadavg()[0]
        for r in range(a.rounds):
            for name in servers:
                wrk(urls[name], str(script), 1, 2)  # warm-up
                one = wrk(urls[name], str(script), 1, a.seconds)
                many = wrk(urls[name], str(script), 200, a.seconds)
                rows.append((name, r + 1, one, many))
    finally:
        for proc in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    print(f"\n/v1/retrieve under wrk, {a.seconds} s per measurement, {os.cpu_count()} cores; "
          f"load average {start_load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end\n")
    print("| server | round | 1 conn p50 ms | p99 ms | 200 conns req/s | non-2xx |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r, one, many in rows:
        print(f"| {name} | {r} | {one['p50']:.2f} | {one['p99']:.2f} | {many['rps']:.0f} | "
              f"{one['non2xx'] + many['non2xx']} |")


if __name__ == "__main__":
    main()
