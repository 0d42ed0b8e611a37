"""Loads a BM25Retriever folder with LlamaIndex (llama-index-retrievers-bm25)
and prints its answers as JSON: {query: [[node_id, score, text], ...]}, zero
scores left out. Usage: bm25_load.py DIR QUERY...
"""

import contextlib
import io
import json
import sys

from llama_index.retrievers.bm25 import BM25Retriever

with contextlib.redirect_stderr(io.StringIO()):
    retriever = BM25Retriever.from_persist_dir(sys.argv[1])
    out = {}
    for q in sys.argv[2:]:
        out[q] = [
            [h.node.node_id, h.score, h.node.get_content()]
            for h in retriever.retrieve(q)
            if h.score > 0
        ]
print(json.dumps(out, ensure_ascii=False))
