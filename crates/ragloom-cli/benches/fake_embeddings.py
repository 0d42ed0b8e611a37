#!/usr/bin/env python3
"""A fake OpenAI embeddings server for benchmarks: no model, no network.

  python3 fake_embeddings.py [PORT] [--verbose]

Serves on 127.0.0.1 (PORT 0, the default, picks a free port); the first line
on stdout is `PORT <n>`.

  POST /v1/embeddings  OpenAI's request and reply; `encoding_format: "base64"`
                       gives little-endian float32 bytes, base64-encoded
                       (ragloom's client sends only `input` and `model`)
  GET  /v1/models      the one model, `fake-384`
  GET  /stats          {"requests", "last_ms", "busy_ms"}: embedding requests
                       served and their handling time, so a driver can tell
                       the server's share of a client's wall time

A vector is a hashed bag of words: each lowercase word adds ±1 to one of 384
dimensions, then the vector is L2-normalised. Texts that share words get
similar vectors, so dense retrieval is meaningful, and the same text always
gets the same vector. Standard library only; --verbose logs the first
request in full and a line per request to stderr, otherwise nothing.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import string
import struct
import sys
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 384
MODEL = "fake-384"
# Punctuation to spaces, then split: faster than a regular expression.
UNPUNCT = str.maketrans(string.punctuation, " " * len(string.punctuation))
PACK = struct.Struct(f"<{DIM}f")

# word -> (dimension, ±1). crc32 rather than hash(), which is salted per
# process and would make vectors differ between runs.
_slots: dict[str, tuple[int, int]] = {}


def slot(word: str) -> tuple[int, int]:
    s = _slots.get(word)
    if s is None:
        h = zlib.crc32(word.encode())
        s = _slots[word] = (h % DIM, 1 if h & 0x80000000 else -1)
    return s


def embed(text: str) -> list[float]:
    v = [0.0] * DIM
    for word, n in Counter(text.lower().translate(UNPUNCT).split()).items():
        d, sign = slot(word)
        v[d] += sign * n
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0.0:
        # No words (or ones that cancel out): a fixed unit vector rather than
        # zeros, whose cosine similarity is undefined.
        v[0] = norm = 1.0
    return [x / norm for x in v]


class Stats:
    """Embedding requests served. A request's handling time runs from its
    body's arrival to its reply's being ready; `busy_ms` is the time with at
    least one in progress: a client that sends several at once overlaps
    them, and their summed times would exceed what they cost its wall time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.last_ms = 0.0
        self.busy_ms = 0.0
        self.in_flight = 0
        self.busy_since = 0.0

    def begin(self) -> float:
        now = time.perf_counter()
        with self.lock:
            if self.in_flight == 0:
                self.busy_since = now
            self.in_flight += 1
        return now

    def end(self, start: float) -> float:
        now = time.perf_counter()
        with self.lock:
            self.requests += 1
            self.last_ms = (now - start) * 1000
            self.in_flight -= 1
            if self.in_flight == 0:
                self.busy_ms += (now - self.busy_since) * 1000
            return self.last_ms

    def snapshot(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "last_ms": self.last_ms,
                    "busy_ms": self.busy_ms}


def error_body(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error",
                      "param": None, "code": None}}


def embeddings(body: bytes) -> tuple[int, dict]:
    """The status and reply to a `POST /v1/embeddings` with `body`."""
    try:
        req = json.loads(body)
        texts = req["input"]
        if isinstance(texts, str):
            texts = [texts]
        if not (isinstance(texts, list) and all(isinstance(t, str) for t in texts)):
            raise ValueError("`input` must be a string or a list of strings")
        b64 = req.get("encoding_format", "float") == "base64"
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        return 400, error_body(f"bad request: {e!r}")
    data, tokens = [], 0
    for i, text in enumerate(texts):
        v = embed(text)
        tokens += len(text.split())
        data.append({"object": "embedding", "index": i,
                     "embedding": base64.b64encode(PACK.pack(*v)).decode() if b64 else v})
    return 200, {"object": "list", "data": data, "model": req.get("model", MODEL),
                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


class Handler(BaseHTTPRequestHandler):
    # Keep-alive, as an HTTP client pool expects; every reply has a length.
    protocol_version = "HTTP/1.1"
    stats = Stats()
    verbose = False
    logged_first = False

    def log_message(self, format: str, *args) -> None:
        if self.verbose:
            super().log_message(format, *args)

    def send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def reply(self, status: int, body: dict) -> None:
        self.send(status, json.dumps(body, separators=(",", ":")).encode())

    def do_GET(self) -> None:
        if self.path == "/stats":
            self.reply(200, self.stats.snapshot())
        elif self.path.rstrip("/") == "/v1/models":
            self.reply(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "ragloom-bench"}]})
        else:
            self.reply(404, error_body(f"no route {self.path}"))

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/embeddings":
            self.reply(404, error_body(f"no route {self.path}"))
            return
        if self.verbose and not Handler.logged_first:
            Handler.logged_first = True
            sys.stderr.write(f"first request: POST {self.path}\n{self.headers}"
                             f"{body.decode('utf-8', 'replace')}\n")
        start = self.stats.begin()
        try:
            status, reply = embeddings(body)
            data = json.dumps(reply, separators=(",", ":")).encode()
        finally:
            # Counted before the reply goes out: once the client has it, a
            # driver may read /stats at once and must find this request there.
            ms = self.stats.end(start)
        if self.verbose:
            sys.stderr.write(f"{status}: {len(reply.get('data', []))} texts in {ms:.1f} ms\n")
        self.send(status, data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("port", type=int, nargs="?", default=0)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    Handler.verbose = a.verbose
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
