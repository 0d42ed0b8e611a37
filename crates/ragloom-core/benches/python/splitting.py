"""Python side of benches/splitting.rs on llama-index-core 0.14.25: the essay
through SentenceSplitter (defaults and 512/50) and LlamaIndex's global
tokenizer (tiktoken cl100k_base) counting it; medians in milliseconds.

Run with the reference venv: python splitting.py PATH_TO/paul_graham_essay.txt
"""

import statistics
import sys
import time

from llama_index.core import Document
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.utils import get_tokenizer

text = open(sys.argv[1], encoding="utf-8").read()
docs = [Document(text=text, id_="essay")]
tokenizer = get_tokenizer()


def med(f, n):
    f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


default = SentenceSplitter()
small = SentenceSplitter(chunk_size=512, chunk_overlap=50)
print("sentence_splitter_default_essay: %.1f ms" % med(lambda: default.get_nodes_from_documents(docs), 15))
print("sentence_splitter_512_50_essay: %.1f ms" % med(lambda: small.get_nodes_from_documents(docs), 15))
print("cl100k_count_essay: %.2f ms" % med(lambda: len(tokenizer(text)), 30))
