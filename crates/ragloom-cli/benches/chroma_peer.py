#!/usr/bin/env python3
"""The peer of a hybrid `ragloom query`: one question to a Chroma
`PersistentClient` collection holding the same nodes and vectors, in a
fresh process, as a user's script would ask it.

  python chroma_peer.py load INDEX.sqlite CHROMA_DIR
      copies the nodes (text) and vectors of a ragloom embedded index (the
      live build's SQLite file) into a Chroma collection (cosine, HNSW)
  python chroma_peer.py query CHROMA_DIR EMBED_URL QUESTION [TOP_K]
      embeds QUESTION with the OpenAI-compatible server at EMBED_URL (the
      fake_embeddings.py server ragloom's ingest used) and asks Chroma for
      the TOP_K (4) nearest, with their documents; prints one JSON line

`query` is what to time (`/usr/bin/time -f "%e %M"`): interpreter start,
import, opening the store, the embedding request and the query. Needs
chromadb (its own virtualenv).
"""

import json
import sqlite3
import struct
import sys
import time
import urllib.request
import zlib


def node_texts(db):
    """Node id -> text, from the docstore rows (zstd, deflate or plain JSON)."""
    try:
        import zstandard  # chromadb does not need it; a fallback below
    except ImportError:
        zstandard = None
    out = {}
    for key, value in db.execute(
        "SELECT key, value FROM kv WHERE collection = 'docstore/data'"
    ):
        if isinstance(value, bytes):
            if value[:4] == b"\x28\xb5\x2f\xfd":
                if zstandard is None:
                    sys.exit("pip install zstandard to read compressed nodes")
                value = zstandard.ZstdDecompressor().decompress(value)
            else:
                value = zlib.decompress(value, -15)
            value = value.decode()
        data = json.loads(value)
        out[key] = data.get("__data__", data).get("text", "")
    return out


def load(sqlite_path, chroma_dir):
    import chromadb

    db = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    texts = node_texts(db)
    client = chromadb.PersistentClient(path=chroma_dir)
    coll = client.get_or_create_collection("nodes", metadata={"hnsw:space": "cosine"})
    batch = ([], [], [])
    started = time.perf_counter()
    total = 0
    for node_id, blob in db.execute("SELECT node_id, embedding FROM vectors ORDER BY rowid"):
        vector = list(struct.unpack(f"<{len(blob) // 4}f", blob))
        batch[0].append(node_id)
        batch[1].append(vector)
        batch[2].append(texts.get(node_id, ""))
        if len(batch[0]) == 1000:
            coll.add(ids=batch[0], embeddings=batch[1], documents=batch[2])
            total += len(batch[0])
            batch = ([], [], [])
    if batch[0]:
        coll.add(ids=batch[0], embeddings=batch[1], documents=batch[2])
        total += len(batch[0])
    print(json.dumps({"vectors": total, "seconds": round(time.perf_counter() - started, 2)}))


def query(chroma_dir, embed_url, question, top_k=4):
    import chromadb

    request = urllib.request.Request(
        embed_url.rstrip("/") + "/embeddings",
        data=json.dumps({"input": [question], "model": "fake-384"}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer fake"},
    )
    with urllib.request.urlopen(request) as reply:
        vector = json.load(reply)["data"][0]["embedding"]
    client = chromadb.PersistentClient(path=chroma_dir)
    coll = client.get_collection("nodes")
    found = coll.query(query_embeddings=[vector], n_results=top_k, include=["documents", "distances"])
    print(json.dumps({"ids": found["ids"][0], "distances": found["distances"][0]}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "load":
        load(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "query":
        query(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 4)
    else:
        sys.exit(__doc__)
