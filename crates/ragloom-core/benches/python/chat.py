"""Python side of benches/chat.rs: the same two workloads on llama-index-core 0.14.25, medians.

The mock model answers "text" five times, as the Rust bench's MockLlm::with_max_tokens(5)
(Python's MockLLM is a completion model behind the chat API; the engine's work is the same).
Run: /tmp/li/bin/python chat.py
"""

import statistics
import time
from typing import List
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.chat_engine import CondensePlusContextChatEngine
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

history = [ChatMessage(role="user" if i % 2 == 0 else "assistant",
    content=f"Message {i}: the quick brown fox jumps over the lazy dog while the conversation goes on about retrieval, memory, tokens and limits, turn {i}.") for i in range(200)]
mem = ChatMemoryBuffer.from_defaults(token_limit=3644, chat_history=history)
assert len(mem.get()) < 200

def med(f, n):
    f()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3

print("memory get: %.1f ms" % med(mem.get, 30))

class Fixed(BaseRetriever):
    def _retrieve(self, q: QueryBundle) -> List[NodeWithScore]:
        return [NodeWithScore(node=TextNode(text="A retrieved chunk of text. " * 40, id_=f"n{i}"), score=0.5) for i in range(2)]

eng = CondensePlusContextChatEngine.from_defaults(retriever=Fixed(), llm=MockLLM(max_tokens=5))
recent = history[-10:]
print("cpc turn: %.1f ms" % med(lambda: eng.chat("And then?", chat_history=list(recent)), 50))
