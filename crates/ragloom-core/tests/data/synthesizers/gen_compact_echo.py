"""Records what llama-index-core 0.14.25 does for the default (compact) query
engine with an echoing `MockLLM()` (context_window 3900, num_output -1 -> 256)
over four 1024-token chunks of the public-domain `alice29.txt`.

The echo makes every answer the whole previous prompt, so each refine prompt
holds the one before it: Python makes three calls and then fails to repack
with "Calculated available context size -23 was not non-negative.".
Output (`compact_echo.json`): the chunks, the compacted chunks' token counts,
each call's prompt sha256 and token count, and the error raised.

Run: /tmp/li/bin/python gen_compact_echo.py   (from this folder)
"""

import hashlib
import json
import os
import sys
from typing import Any

from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms.mock import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.utils import get_tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
NUM_CHUNKS = 4
CHUNK_TOKENS = 1024
QUERY = "What did Alice see when she fell down the rabbit-hole?"
tokenize = get_tokenizer()


def corpus_file() -> str:
    """`alice29.txt` from `$RAGLOOM_CORPUS_DIR` or the nearest `shared/corpus` above."""
    env = os.environ.get("RAGLOOM_CORPUS_DIR")
    dirs = [env] if env else []
    d = HERE
    while os.path.dirname(d) != d:
        dirs.append(os.path.join(d, "shared", "corpus"))
        d = os.path.dirname(d)
    for cand in dirs:
        path = os.path.join(cand, "sources", "alice29.txt")
        if os.path.isfile(path):
            return path
    sys.exit("shared/corpus/sources/alice29.txt not found; set RAGLOOM_CORPUS_DIR")


def make_chunks() -> list[str]:
    with open(corpus_file(), encoding="utf-8") as f:
        text = f.read()
    words = text[text.index("Alice was beginning") :].split()
    chunks, current = [], []
    for w in words:
        if len(tokenize(" ".join(current + [w]))) > CHUNK_TOKENS:
            chunks.append(" ".join(current))
            current = [w]
            if len(chunks) == NUM_CHUNKS:
                break
        else:
            current.append(w)
    return chunks


CALLS: list = []


class RecordingMockLLM(MockLLM):
    """`MockLLM()` (echo, default metadata) that records every completion."""

    def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
        CALLS.append(
            {
                "template": "text_qa" if prompt.startswith("Context information") else "refine",
                "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
                "prompt_tokens": len(tokenize(prompt)),
            }
        )
        return super().complete(prompt, formatted, **kw)


class ChunkRetriever(BaseRetriever):
    def __init__(self, chunks: list[str]) -> None:
        super().__init__()
        self._chunks = chunks

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=TextNode(text=c, id_=f"n{i}"), score=1.0 - i / 10)
            for i, c in enumerate(self._chunks)
        ]


def main() -> None:
    chunks = make_chunks()
    assert [len(tokenize(c)) for c in chunks] == [CHUNK_TOKENS] * NUM_CHUNKS
    llm = RecordingMockLLM()
    engine = RetrieverQueryEngine.from_args(ChunkRetriever(chunks), llm=llm)
    compacted = engine._response_synthesizer._make_compact_text_chunks(QUERY, chunks)
    out: dict = {
        "query": QUERY,
        "llm_metadata": {
            "context_window": llm.metadata.context_window,
            "num_output": llm.metadata.num_output,
        },
        "chunks": chunks,
        "compacted_tokens": [len(tokenize(c)) for c in compacted],
    }
    try:
        response = engine.query(QUERY)
        out["response_chars"] = len(str(response))
    except ValueError as e:
        out["error"] = str(e)
    out["calls"] = CALLS
    with open(os.path.join(HERE, "compact_echo.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(json.dumps({k: v for k, v in out.items() if k != "chunks"}, indent=1))


if __name__ == "__main__":
    main()
