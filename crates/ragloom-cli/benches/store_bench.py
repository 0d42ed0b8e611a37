#!/usr/bin/env python3
"""The `ragloom` command line's embedded store against Python LlamaIndex.

Ingests the 50 MB benchmark corpus (shared/corpus/make_corpus.py) with
`ragloom ingest` and with the Python reference workload
(benches/python/llamaindex_ingest.py), runs three BM25 queries on each, and
prints wall time, peak RSS and store size side by side, with the `cat` and
`sha256sum` floors of reading the same text. Every step is a separate
process, so the figures are what a user of either tool would see.

With --postgres URL, ragloom does the same again with the index in
PostgreSQL (`--store URL?schema=...`, a fresh schema dropped afterwards),
and a table sets the store modes side by side: ingest, re-ingest, query,
size.

With --qdrant-server BIN (the ragloom-qdrant-test-server binary: Qdrant's
engine, qdrant-edge, behind Qdrant's gRPC API), the same again with the
index in Qdrant (`--store qdrant://...`); the store size is the server's
data folder.

Then (unless --no-hybrid) ragloom alone ingests and queries the corpus with
an embedding model, for hybrid (dense + BM25) retrieval. The model is
fake_embeddings.py beside this file: an OpenAI-compatible server that hashes
words into 384-dimension vectors, so the figures are ragloom's store and
client, not a model's speed.

  python3 crates/ragloom-cli/benches/store_bench.py \\
      --ragloom target/release/ragloom \\
      --python ~/.cache/ragloom/pyref-llama-index-core-0.14.25/bin/python

Standard library only. MB are 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
# benches/ -> ragloom-cli/ -> crates/ -> the repository root.
REPO_ROOT = HERE.parents[2]
MAKE_CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "make_corpus.py"
PY_WORKLOAD = HERE / "python" / "llamaindex_ingest.py"
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
FAKE_EMBEDDINGS = HERE / "fake_embeddings.py"
EMBED_DIM = 384  # fake_embeddings.py's vectors

SMALL = {"files": 2000, "mb": 50, "seed": 42}
LARGE = {"files": 40000, "mb": 1000, "seed": 42}
QUESTIONS = [
    "What did the author work on before college?",
    "Who is the White Rabbit?",
    "What did Adam and Eve lose in Paradise?",
]
# Large/small ratios the store is meant to stay within (name, target).
SCALING_TARGETS = [
    ("ingest wall (s)", "ingest_wall_s", 25.0),
    ("BM25 query peak RSS (MB)", "query_peak_mb", 1.2),
    ("ingest peak RSS (MB)", "ingest_peak_mb", 2.0),
]


class StepFailed(Exception):
    pass


@dataclass
class Run:
    """One child process: its wall time, peak RSS and output."""

    wall_s: float
    peak_mb: float
    stdout: str


def measure(cmd: list[str], env: dict | None = None) -> Run:
    """Run `cmd` to completion; wall seconds and peak RSS from wait4.

    Output goes to temporary files rather than pipes so that the child can be
    reaped with os.wait4 (which returns its rusage) without a reader thread.
    """
    # A child forked from this interpreter reports the interpreter's own
    # resident size as its peak (Linux records the pre-exec image's high-water
    # mark), so the peak is taken by GNU time, a small process, when present.
    rss_file = tempfile.NamedTemporaryFile(delete=False)
    rss_file.close()
    if GNU_TIME:
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file.name] + cmd
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        except OSError as e:
            raise StepFailed(f"cannot start {shlex.join(cmd)}: {e}") from e
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise StepFailed(
            f"step failed (exit {proc.returncode}): {shlex.join(cmd)}\n"
            f"--- stderr (tail) ---\n{stderr[-3000:]}"
        )
    # ru_maxrss and GNU time's %M are in KiB on Linux; for a shell pipeline
    # it is the largest of the reaped descendants.
    peak_kib = usage.ru_maxrss
    if GNU_TIME:
        try:
            peak_kib = int(Path(rss_file.name).read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    os.unlink(rss_file.name)
    return Run(wall, peak_kib * 1024 / 1e6, stdout)


def sh(script: str) -> Run:
    return measure(["sh", "-c", script])


def dir_bytes(path: Path) -> int:
    """Sum of the sizes of the files under `path` (links not followed)."""
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.lstat(os.path.join(root, f)).st_size for f in files)
    return total


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def settle() -> None:
    """Flush pending writeback (a corpus just generated, the other tool's
    store) so that it does not land inside the next timed ingest."""
    subprocess.run(["sync"], check=True)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def last_json(stdout: str) -> dict | None:
    """The last line of `stdout` that parses as a JSON object, if any."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


# ---------------------------------------------------------------- the corpus


def corpus(work: Path, make_corpus: Path, spec: dict) -> tuple[Path, int]:
    """The corpus described by `spec`, generated once and cached in `work`.

    Returns its folder and its text size in bytes (from the manifest).
    """
    out = work / f"corpus-{spec['files']}f-{spec['mb']}mb-s{spec['seed']}"
    manifest = out.parent / (out.name + ".manifest.json")
    if not manifest.exists():
        print(f"generating {out} ...", file=sys.stderr)
        measure([
            "python3", str(make_corpus), "--out", str(out),
            "--files", str(spec["files"]), "--mb", str(spec["mb"]),
            "--seed", str(spec["seed"]),
        ])
    return out, json.loads(manifest.read_text())["total_bytes"]


def floors(corpus_dir: Path) -> dict:
    """What just reading and hashing the text costs: the floor of any ingest.

    Run before the tools so that all of them find the corpus in the page cache.
    """
    files = f"find '{corpus_dir}' -type f -print0 | sort -z | xargs -0 cat"
    return {
        "cat_wall_s": sh(f"{files} > /dev/null").wall_s,
        "sha256_wall_s": sh(f"{files} | sha256sum > /dev/null").wall_s,
    }


# ---------------------------------------------------------------- the tools


def queries(cmd_for) -> dict:
    """The three questions: median wall and the largest peak."""
    runs = [measure(cmd_for(q)) for q in QUESTIONS]
    return {
        "query_wall_s": statistics.median(r.wall_s for r in runs),
        "query_peak_mb": max(r.peak_mb for r in runs),
    }


def store_args(store: str | None) -> list[str]:
    return ["--store", store] if store else []


def stored_bytes(ragloom: str, base: list[str], corpus_dir: Path, persist: Path,
                 store: str | None, env: dict) -> int:
    """The index's size: the persist folder, plus the tables on a server
    (Qdrant: the test server's data folder, counted by the caller)."""
    size = dir_bytes(persist)
    if store and not store.startswith("qdrant://"):
        run = measure(base + ["status", "--files", str(corpus_dir)], env)
        size += ((last_json(run.stdout) or {}).get("store") or {}).get("size_bytes", 0)
    return size


def bench_ragloom(ragloom: str, corpus_dir: Path, persist: Path,
                  store: str | None = None) -> dict:
    # Only the flags given here may steer it: no persist dir, config or
    # provider from the caller's environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLOOM_")}
    fresh_dir(persist)
    # No model: an OPENAI_API_KEY in the caller's shell must not pick one.
    base = [ragloom, "--persist-dir", str(persist), *store_args(store),
            "--llm", "none", "--embed", "none", "--json"]

    def run(*args: str) -> Run:
        return measure(base + list(args), env)

    settle()
    first = run("ingest", str(corpus_dir))
    again = run("ingest", str(corpus_dir))
    figures = {
        "ingest_wall_s": first.wall_s,
        "ingest_peak_mb": first.peak_mb,
        "reingest_wall_s": again.wall_s,
        **queries(lambda q: base + ["query", q, "--files", str(corpus_dir)]),
        "disk_bytes": stored_bytes(ragloom, base, corpus_dir, persist, store, env),
    }
    summary = (last_json(first.stdout) or {}).get("ingest", {})
    figures["nodes"] = summary.get("nodes_total", "?")
    figures["stages"] = summary.get("stages", {})
    # No embedding model is configured, so there are no vectors on disk; if a
    # config file set one anyway, say that the split is unknown.
    figures["vector_bytes"] = 0 if summary.get("nodes_embedded", 0) == 0 else "?"
    return figures


def bench_python(python: str, corpus_dir: Path, persist: Path) -> dict:
    workload = [python, str(PY_WORKLOAD)]
    fresh_dir(persist)
    settle()
    first = measure(workload + ["ingest", str(corpus_dir), str(persist)])
    figures = {
        "ingest_wall_s": first.wall_s,
        "ingest_peak_mb": first.peak_mb,
        **queries(lambda q: workload + ["query", str(persist), q]),
        "disk_bytes": dir_bytes(persist),
        "vector_bytes": 0,  # BM25 only: no embeddings
    }
    figures["nodes"] = (last_json(first.stdout) or {}).get("nodes", "?")
    return figures


class FakeEmbeddings:
    """fake_embeddings.py on a free port, for the length of a `with`."""

    def __enter__(self) -> "FakeEmbeddings":
        # The driver's own interpreter: the server needs only the standard
        # library. Its stderr is ours: it is silent unless a request fails.
        self.proc = subprocess.Popen([sys.executable, str(FAKE_EMBEDDINGS)],
                                     stdout=subprocess.PIPE, text=True)
        try:
            first = self.proc.stdout.readline().split()  # "PORT <n>"
            if first[:1] != ["PORT"]:
                raise StepFailed(f"{FAKE_EMBEDDINGS} did not start (its stderr is above)")
            self.base = f"http://127.0.0.1:{first[1]}"
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def stats(self) -> dict:
        # No proxy: a caller's http_proxy must not carry this to another host.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.base + "/stats", timeout=10) as reply:
            return json.load(reply)


def served_s(before: dict, after: dict) -> float:
    """Seconds the server was busy with requests between two /stats."""
    return (after["busy_ms"] - before["busy_ms"]) / 1000


def bench_hybrid(ragloom: str, corpus_dir: Path, persist: Path,
                 store: str | None = None) -> dict:
    # As bench_ragloom, and no OpenAI settings either, but a key in case the
    # client insists on one; no proxy between it and the server.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RAGLOOM_", "OPENAI_"))}
    env.update(OPENAI_API_KEY="fake", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    fresh_dir(persist)
    with FakeEmbeddings() as server:
        # --llm none: the key alone would select OpenAI's LLM for the answer.
        base = [ragloom, "--persist-dir", str(persist), *store_args(store), "--llm", "none",
                "--embed", "openai-like", "--embed-api-base", server.base + "/v1",
                "--embed-model", "fake-384", "--json"]
        settle()
        before = server.stats()
        ingest = measure(base + ["ingest", str(corpus_dir)], env)
        ingest_served = served_s(before, server.stats())
        walls, embeds, peaks = [], [], []
        for q in QUESTIONS:
            before = server.stats()
            run = measure(base + ["query", q, "--files", str(corpus_dir)], env)
            after = server.stats()
            said = (last_json(run.stdout) or {}).get("retrieval")
            if said != "hybrid":
                raise StepFailed(f"hybrid query {q!r} answered with retrieval {said!r}, "
                                 f"not 'hybrid':\n{run.stdout[-2000:]}")
            if after["requests"] == before["requests"]:
                raise StepFailed(f"hybrid query {q!r} did not embed the question")
            walls.append(run.wall_s)
            embeds.append(served_s(before, after))
            peaks.append(run.peak_mb)
    summary = (last_json(ingest.stdout) or {}).get("ingest", {})
    nodes = summary.get("nodes_total", "?")
    if summary.get("nodes_embedded") != nodes:
        raise StepFailed(f"hybrid ingest embedded {summary.get('nodes_embedded', '?')} "
                         f"of {nodes} nodes:\n{ingest.stdout[-2000:]}")
    return {
        "ingest_wall_s": ingest.wall_s,
        "ingest_peak_mb": ingest.peak_mb,
        # Python hashing words on the same CPUs: part of the ingest wall
        # that a real model server would replace with its own.
        "ingest_served_s": ingest_served,
        "query_wall_s": statistics.median(walls),
        "query_wall_excl_embed_s": statistics.median(w - e for w, e in zip(walls, embeds)),
        "query_embed_served_s": statistics.median(embeds),
        "query_peak_mb": max(peaks),
        "disk_bytes": stored_bytes(ragloom, base, corpus_dir, persist, store, env),
        "vector_bytes": nodes * EMBED_DIM * 4,
        "nodes": nodes,
        "embed_dim": EMBED_DIM,
    }


def warm_up(ragloom: str, python: str | None) -> None:
    """Check that both tools start, and load them into the page cache, so
    the first timed step does not pay for a cold binary or cold imports."""
    measure([ragloom, "--version"])
    if python:
        measure([python, "-c", "import llama_index.core, llama_index.retrievers.bm25"])


# ---------------------------------------------------------------- the report


def num(value, fmt: str) -> str:
    return format(value, fmt) if isinstance(value, (int, float)) else str(value)


def ratio(a, b) -> str:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return f"{a / b:.2f}×"
    return "—"


def store_cell(figures: dict | None, text_bytes: int) -> str:
    if not figures:
        return "—"
    mb = figures["disk_bytes"] / 1e6
    return f"{mb:.1f} ({figures['disk_bytes'] / text_bytes:.1f}× text)"


def vectors_cell(figures: dict | None) -> str:
    if not figures:
        return "—"
    v = figures["vector_bytes"]
    return num(v / 1e6, ".0f") if isinstance(v, int) else str(v)


def comparison_table(rl: dict, py: dict | None, text_bytes: int) -> list[str]:
    rows = [
        ("ingest wall (s)", "ingest_wall_s", ".2f"),
        ("ingest peak RSS (MB)", "ingest_peak_mb", ".0f"),
        ("unchanged re-ingest wall (s)", "reingest_wall_s", ".2f"),
        ("BM25 query wall, median of 3 (s)", "query_wall_s", ".3f"),
        ("BM25 query peak RSS, max of 3 (MB)", "query_peak_mb", ".0f"),
    ]
    lines = ["| | ragloom | Python LlamaIndex | ragloom / Python |", "|---|---:|---:|---:|"]
    pyf = py or {}  # without --python every Python cell is "—"
    for label, key, fmt in rows:
        a, b = rl.get(key, "—"), pyf.get(key, "—")
        lines.append(f"| {label} | {num(a, fmt)} | {num(b, fmt)} | {ratio(a, b)} |")
    lines.append(
        f"| store on disk (MB) | {store_cell(rl, text_bytes)} | "
        f"{store_cell(py, text_bytes)} | "
        f"{ratio(rl['disk_bytes'], pyf.get('disk_bytes'))} |"
    )
    lines.append(f"| of which vectors (MB) | {vectors_cell(rl)} | {vectors_cell(py)} | — |")
    lines.append(f"| nodes | {rl['nodes']} | {pyf.get('nodes', '—')} | — |")
    return lines


def floor_table(fl: dict, text_bytes: int) -> list[str]:
    return [
        f"Floors over the same {text_bytes / 1e6:.1f} MB of text:",
        "",
        "| floor | wall (s) |",
        "|---|---:|",
        f"| `cat` of all files > /dev/null | {fl['cat_wall_s']:.2f} |",
        f"| `sha256sum` of the concatenated text | {fl['sha256_wall_s']:.2f} |",
    ]


def live_store(persist: Path) -> Path | None:
    """The SQLite file of the index an ingest into `persist` made live."""
    for pointer in sorted(persist.glob("indexes/*/current.json")):
        name = json.loads(pointer.read_text()).get("db")
        if name:
            return pointer.parent / name
    return None


def stage_floors(floors_bin: str, corpus_dir: Path, rows: int, store: Path | None) -> dict:
    """The ingest_floors example: counting the text's tokens on every core,
    writing its bytes as `rows` rows of one SQLite transaction, and writing
    the rows of `store` (the index the ingest wrote) again into a new file."""
    if not os.access(floors_bin, os.X_OK):
        print(f"no {floors_bin}: the stage floors are left out", file=sys.stderr)
        return {}
    run = measure([floors_bin, str(corpus_dir), str(rows), *([str(store)] if store else [])])
    return last_json(run.stdout) or {}


def stage_table(rl: dict, fl: dict) -> list[str]:
    """ragloom's ingest stage by stage (its own timings, `--json`'s
    `stages`) beside the floor of the same work on the same text."""
    st = rl.get("stages") or {}
    if not st:
        return []
    ms = lambda k: st.get(k, 0) / 1000
    rows = [
        ("list and read the files", ms("list") + ms("read"), "`cat` of the files", fl.get("cat_wall_s")),
        ("split on every core (sentences, cl100k counts, merging, nodes)", ms("split"),
         "counting the text's cl100k tokens on every core", fl.get("count_s")),
        ("of which counting tokens, each call's wall time summed over threads", ms("count") if "count" in st else None,
         "the same count's thread time summed over cores", fl.get("count_thread_s")),
        ("encode on every core (node JSON, zstd, node hashes, BM25 counts)",
         ms("encode") if "encode" in st else None, "(no floor named)", None),
        ("write the encoded rows (lookups, inserts); merge postings; commit",
         ms("write") + ms("keyword_index") + ms("commit"),
         f"the index's own {fl.get('store_rows', '?')} rows, written again into a new file "
         "in one SQLite transaction", fl.get("store_insert_s")),
        ("of which the writer's own work (its thread's CPU time, without waiting for a core "
         "beside the split); merge postings; commit",
         ms("write_cpu") + ms("keyword_index") + ms("commit") if st.get("write_cpu") else None,
         "(the same rows)", fl.get("store_insert_s")),
        ("(the same)", None,
         f"the text as {fl.get('rows', '?')} rows of one SQLite transaction", fl.get("insert_s")),
        ("(hashing: documents in planning, nodes in encode)", None,
         "`sha256sum` of the concatenated text", fl.get("sha256_wall_s")),
    ]
    # The stages overlap, so the whole ingest is also set against the floors
    # of the stages done one after the other. The sha256sum floor
    # reads the files through `cat`, so it stands for reading and hashing.
    parts = [fl.get(k) for k in ("sha256_wall_s", "count_s", "store_insert_s")]
    if rl.get("ingest_wall_s") is not None and all(p is not None for p in parts):
        rows.append(("the whole ingest (its stages overlap)", rl["ingest_wall_s"],
                     "reading and hashing (`cat | sha256sum`), counting, and writing "
                     "floors, one after the other", sum(parts)))
    lines = ["| ingest stage | ragloom (s) | floor | floor (s) | ragloom / floor |",
             "|---|---:|---|---:|---:|"]
    for label, t, floor_label, f in rows:
        lines.append(f"| {label} | {num(t, '.2f') if t is not None else '—'} | {floor_label} | "
                     f"{num(f, '.2f') if f is not None else '—'} | "
                     f"{ratio(t, f) if t is not None and f else '—'} |")
    return lines


def hybrid_table(h: dict) -> list[str]:
    return [
        "| ragloom, hybrid retrieval | |",
        "|---|---:|",
        f"| ingest wall (s) | {h['ingest_wall_s']:.2f} |",
        f"| of which the embedding server was busy (s) | {h['ingest_served_s']:.2f} |",
        f"| ingest peak RSS (MB) | {h['ingest_peak_mb']:.0f} |",
        f"| query wall, median of 3 (s) | {h['query_wall_s']:.3f} |",
        f"| query wall less the query's embedding, median of 3 (s) "
        f"| {h['query_wall_excl_embed_s']:.3f} |",
        f"| query peak RSS, max of 3 (MB) | {h['query_peak_mb']:.0f} |",
        f"| store on disk (MB) | {h['disk_bytes'] / 1e6:.1f} |",
        f"| of which vectors, nodes × {h['embed_dim']} × 4 B (MB) "
        f"| {h['vector_bytes'] / 1e6:.1f} |",
    ]


def modes_table(r: dict) -> list[str]:
    """ragloom's store modes side by side (the rows this run measured)."""
    modes = [("embedded, BM25", r.get("ragloom")),
             ("PostgreSQL, full text", (r.get("postgres") or {}).get("keyword")),
             ("Qdrant, BM25 sparse vectors", (r.get("qdrant") or {}).get("keyword")),
             ("embedded, hybrid", r.get("hybrid")),
             ("PostgreSQL, hybrid", (r.get("postgres") or {}).get("hybrid")),
             ("Qdrant, hybrid (fused in Qdrant)", (r.get("qdrant") or {}).get("hybrid"))]
    lines = ["| store, retrieval | ingest wall (s) | ingest peak RSS (MB) | "
             "unchanged re-ingest (s) | query wall, median of 3 (s) | store (MB) |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, f in modes:
        if f:
            lines.append(f"| {label} | {f['ingest_wall_s']:.2f} | {f['ingest_peak_mb']:.0f} | "
                         f"{num(f.get('reingest_wall_s', '—'), '.2f')} | "
                         f"{f['query_wall_s']:.3f} | {f['disk_bytes'] / 1e6:.1f} |")
    return lines


class QdrantServer:
    """The Qdrant test server, on a free port with its data in `data`."""

    def __init__(self, binary: str, data: Path) -> None:
        self.data = fresh_dir(data)
        self.proc = subprocess.Popen([binary, "--dir", str(data)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening http://"):
            raise StepFailed(f"the Qdrant test server said {line!r}")
        self.url = line.replace("listening http://", "qdrant://", 1)

    def __enter__(self) -> "QdrantServer":
        return self

    def __exit__(self, *_) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def drop_schema(url: str, schema: str) -> None:
    """Drops a bench schema with psql, when there is one (best effort)."""
    if shutil.which("psql"):
        subprocess.run(["psql", url, "-qc", f"DROP SCHEMA IF EXISTS {schema} CASCADE"],
                       capture_output=True, check=False)


def scaling_table(small: dict, large: dict) -> list[str]:
    lines = [
        "| ragloom | small | large | large / small | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, key, target in SCALING_TARGETS:
        r = large[key] / small[key]
        verdict = "ok" if r <= target else "OVER"
        lines.append(
            f"| {label} | {small[key]:.2f} | {large[key]:.2f} | "
            f"{r:.2f} | ≤ {target:g} ({verdict}) |"
        )
    for label, key in [("unchanged re-ingest wall (s)", "reingest_wall_s"),
                       ("BM25 query wall (s)", "query_wall_s")]:
        lines.append(f"| {label} | {small[key]:.3f} | {large[key]:.3f} | "
                     f"{large[key] / small[key]:.2f} | — |")
    lines.append(f"| store on disk (MB) | {small['disk_bytes'] / 1e6:.1f} | "
                 f"{large['disk_bytes'] / 1e6:.1f} | "
                 f"{large['disk_bytes'] / small['disk_bytes']:.2f} | — |")
    return lines


# ---------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ragloom", required=True, help="the release `ragloom` binary")
    ap.add_argument("--python", help="the reference interpreter (Python rows skipped without it)")
    # A fixed default (not mkdtemp) so the generated corpora are reused.
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ragloom-store-bench",
                    help="scratch folder; corpora are cached here (default: %(default)s)")
    ap.add_argument("--large", action="store_true",
                    help="also run ragloom on the 20x corpus (40,000 files, 1 GB)")
    ap.add_argument("--no-hybrid", action="store_true",
                    help="skip the hybrid-retrieval rows (ragloom with fake_embeddings.py)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write all figures here as JSON")
    ap.add_argument("--postgres", metavar="URL",
                    help="also run ragloom with the index in this PostgreSQL server (pgvector)")
    ap.add_argument("--qdrant-server", metavar="BIN",
                    help="also run ragloom with the index in Qdrant, behind this "
                         "ragloom-qdrant-test-server binary")
    ap.add_argument("--floors-bin", metavar="BIN",
                    help="the ingest_floors example (token counting and bulk-insert floors)")
    ap.add_argument("--make-corpus", type=Path, default=MAKE_CORPUS,
                    help="make_corpus.py (default: %(default)s)")
    return ap.parse_args()


def run(a: argparse.Namespace) -> dict:
    work = a.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ragloom = str(Path(a.ragloom).resolve())
    corpus_dir, text_bytes = corpus(work, a.make_corpus, SMALL)
    warm_up(ragloom, a.python)
    fl = floors(corpus_dir)

    settle()
    load_start = load_average()
    rl = bench_ragloom(ragloom, corpus_dir, work / "ragloom-store")
    if a.floors_bin and isinstance(rl.get("nodes"), int):
        fl.update(stage_floors(a.floors_bin, corpus_dir, rl["nodes"],
                               live_store(work / "ragloom-store")))
    py = bench_python(a.python, corpus_dir, work / "python-store") if a.python else None
    result = {"corpus": str(corpus_dir), "text_bytes": text_bytes, "floors": fl,
              "ragloom": rl, "python": py}
    if not a.no_hybrid:
        result["hybrid"] = bench_hybrid(ragloom, corpus_dir, work / "ragloom-store-hybrid")
    if a.postgres:
        sep = "&" if "?" in a.postgres else "?"
        pg = {}
        for mode in ["keyword"] + ([] if a.no_hybrid else ["hybrid"]):
            schema = f"ragloom_bench_{mode}"
            drop_schema(a.postgres, schema)
            store = f"{a.postgres}{sep}schema={schema}"
            bench = bench_ragloom if mode == "keyword" else bench_hybrid
            pg[mode] = bench(ragloom, corpus_dir, work / f"ragloom-store-pg-{mode}", store)
            drop_schema(a.postgres, schema)
        result["postgres"] = pg
    if a.qdrant_server:
        qd = {}
        for mode in ["keyword"] + ([] if a.no_hybrid else ["hybrid"]):
            with QdrantServer(a.qdrant_server, work / f"qdrant-data-{mode}") as server:
                bench = bench_ragloom if mode == "keyword" else bench_hybrid
                qd[mode] = bench(ragloom, corpus_dir, work / f"ragloom-store-qdrant-{mode}",
                                 server.url)
                qd[mode]["disk_bytes"] += dir_bytes(server.data)
        result["qdrant"] = qd
    if a.large:
        large_dir, large_bytes = corpus(work, a.make_corpus, LARGE)
        result["large"] = {"corpus": str(large_dir), "text_bytes": large_bytes,
                           "ragloom": bench_ragloom(ragloom, large_dir, work / "ragloom-store-large")}
    result["load_average"] = {"start": load_start, "end": load_average()}
    return result


def report(r: dict) -> None:
    lines = [f"## ragloom store vs Python LlamaIndex — {r['text_bytes'] / 1e6:.1f} MB corpus", ""]
    lines += comparison_table(r["ragloom"], r["python"], r["text_bytes"])
    lines += [""] + floor_table(r["floors"], r["text_bytes"])
    stages = stage_table(r["ragloom"], r["floors"])
    if stages:
        lines += ["", "ragloom's ingest stage by stage, beside each stage's floor:", ""] + stages
    if "hybrid" in r:
        h = r["hybrid"]
        lines += ["", f"## ragloom hybrid retrieval — same corpus, {h['nodes']} nodes, "
                      f"fake {h['embed_dim']}-dimension embeddings over HTTP", ""]
        lines += hybrid_table(h)
    if "postgres" in r or "qdrant" in r:
        lines += ["", "## ragloom's store modes — same corpus, same run", ""]
        lines += modes_table(r)
    if "large" in r:
        big = r["large"]
        lines += ["", f"## Scaling: {r['text_bytes'] / 1e6:.1f} MB → {big['text_bytes'] / 1e6:.1f} MB "
                      f"({big['ragloom']['nodes']} nodes)", ""]
        lines += scaling_table(r["ragloom"], big["ragloom"])
    la = r["load_average"]
    lines += ["", f"Load average (1, 5, 15 min): {la['start']} at start, {la['end']} at end "
                  f"on {os.cpu_count()} CPUs. Walls include process start "
                  "(for Python: the interpreter and its imports)."]
    print("\n".join(lines))


def main() -> int:
    a = parse_args()
    try:
        result = run(a)
    except StepFailed as e:
        print(e, file=sys.stderr)
        return 1
    report(result)
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
