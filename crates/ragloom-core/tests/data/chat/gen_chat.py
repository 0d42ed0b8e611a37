"""Records LlamaIndex 0.14.25 chat engines, memory and token counting for
crates/ragloom-core/tests/chat_engines.rs.

Run: /tmp/li/bin/python gen_chat.py  (writes chat_reference.json beside this file)

Every chat mode runs two turns against a scripted model that records what it
is sent: the first turn with an empty memory, the second with the first turn
in memory (so the condense prompts carry a history). Retrieval returns fixed
nodes so the Rust side can reproduce it without embeddings.
"""

import json
import random
from pathlib import Path
from typing import Any, List, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    ToolCallBlock,
)
from llama_index.core.callbacks import CallbackManager, TokenCountingHandler
from llama_index.core.chat_engine import (
    CondensePlusContextChatEngine,
    CondenseQuestionChatEngine,
    ContextChatEngine,
    SimpleChatEngine,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.utilities.token_counting import TokenCounter


class RecordingLLM(CustomLLM):
    """Answers with scripted replies in order and records every request."""

    replies: List[str] = []
    requests: List[dict] = []
    chat_model: bool = True

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(num_output=-1, is_chat_model=self.chat_model, model_name="recording")

    def _next(self) -> str:
        return self.replies.pop(0)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.requests.append(
            {"kind": "chat", "messages": [{"role": m.role.value, "content": m.content} for m in messages]}
        )
        return ChatResponse(message=ChatMessage(role="assistant", content=self._next()))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.requests.append({"kind": "complete", "prompt": prompt, "formatted": formatted})
        return CompletionResponse(text=self._next())

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        raise NotImplementedError


NODES = [
    TextNode(id_="node-1", text="Ragloom ports LlamaIndex to Rust.", metadata={"file_name": "about.txt"}),
    TextNode(id_="node-2", text="Chat engines keep a memory of the conversation.", metadata={"file_name": "chat.txt"}),
]
SCORES = [0.9, 0.5]


class FixedRetriever(BaseRetriever):
    queries: List[str] = []

    def __init__(self) -> None:
        super().__init__()
        self.queries = []

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        self.queries.append(query_bundle.query_str)
        return [NodeWithScore(node=n, score=s) for n, s in zip(NODES, SCORES)]


TURNS = ["What is ragloom?", "And what do its chat engines keep?"]
SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly."


def dump_history(messages: List[ChatMessage]) -> List[dict]:
    return [{"role": m.role.value, "content": m.content} for m in messages]


def run_mode(mode: str, chat_model: bool) -> dict:
    llm = RecordingLLM(replies=[f"reply {i}" for i in range(1, 10)], requests=[], chat_model=chat_model)
    retriever = FixedRetriever()
    if mode == "simple":
        engine = SimpleChatEngine.from_defaults(llm=llm, system_prompt=SYSTEM_PROMPT)
    elif mode == "condense_question":
        qe = RetrieverQueryEngine.from_args(retriever=retriever, llm=llm)
        engine = CondenseQuestionChatEngine.from_defaults(query_engine=qe, llm=llm)
    elif mode == "context":
        engine = ContextChatEngine.from_defaults(retriever=retriever, llm=llm, system_prompt=SYSTEM_PROMPT)
    elif mode == "condense_plus_context":
        engine = CondensePlusContextChatEngine.from_defaults(
            retriever=retriever, llm=llm, system_prompt=SYSTEM_PROMPT
        )
    else:
        raise ValueError(mode)
    turns = []
    for message in TURNS:
        before = len(llm.requests)
        response = engine.chat(message)
        turns.append(
            {
                "message": message,
                "requests": llm.requests[before:],
                "response": response.response,
                "source_node_ids": [n.node.node_id for n in response.source_nodes],
                "source_tool_names": [s.tool_name for s in response.sources],
                "source_raw_inputs": [s.raw_input for s in response.sources],
            }
        )
    return {
        "turns": turns,
        "retriever_queries": retriever.queries,
        "history": dump_history(engine.chat_history),
    }


def long_history() -> List[ChatMessage]:
    """90 messages of varied words (rare ones too), with a tool round every
    ten messages, so the Rust side's bisection meets LlamaIndex's scan."""
    rng = random.Random(7)
    words = ["the", "rabbit", "Zzyzx", "waistcoat", "pocket", "42", "naïve", "über", "don't",
             "hole", "Queen", "croquet", "flamingo", "{braces}", "\n", "tea", "Hatter", "e.g.",
             "supercalifragilistic", "x"]
    out: List[ChatMessage] = []
    for i in range(90):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        if i % 10 == 7:
            out.append(ChatMessage(role="assistant", blocks=[
                ToolCallBlock(tool_call_id=f"t{i}", tool_name="lookup", tool_kwargs={"q": text[:20]})]))
        elif i % 10 == 8:
            out.append(ChatMessage(role="tool", content=text, additional_kwargs={"tool_call_id": f"t{i - 1}"}))
        else:
            out.append(ChatMessage(role="user" if i % 2 == 0 else "assistant", content=text))
    return out


def memory_cases() -> list:
    """ChatMemoryBuffer.get for histories and limits around the cut points."""
    plain = [
        ChatMessage(role="user", content="Tell me about the first topic in some detail please."),
        ChatMessage(role="assistant", content="The first topic is long and has many words in it."),
        ChatMessage(role="user", content="And the second?"),
        ChatMessage(role="assistant", content="The second topic is short."),
        ChatMessage(role="user", content="Thanks!"),
    ]
    tools = [
        ChatMessage(role="user", content="What is 1 + 2 and 3 + 4?"),
        ChatMessage(
            role="assistant",
            blocks=[
                ToolCallBlock(tool_call_id="c1", tool_name="add", tool_kwargs={"a": 1, "b": 2}),
                ToolCallBlock(tool_call_id="c2", tool_name="add", tool_kwargs={"a": 3, "b": 4}),
            ],
        ),
        ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1", "name": "add"}),
        ChatMessage(role="tool", content="7", additional_kwargs={"tool_call_id": "c2", "name": "add"}),
        ChatMessage(role="assistant", content="They are 3 and 7."),
        ChatMessage(role="user", content="Now multiply them."),
    ]
    # The tool round still open: the newest messages are the tool results.
    tools_pending = [
        ChatMessage(role="user", content="Hello there, who are you?"),
        ChatMessage(role="assistant", content="I am an assistant that can add numbers."),
        *tools[:4],
    ]
    histories = {
        "plain": plain,
        "tools": tools,
        "tools_pending": tools_pending,
        "long": long_history(),
    }
    cases = []
    for name, history in histories.items():
        limits = [*range(1, 46), 1000] if name != "long" else [*range(5, 2200, 113), 3000]
        for limit in limits:
            for initial in [0, 4]:
                if initial > limit:
                    continue
                memory = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=limit)
                got = memory.get(initial_token_count=initial)
                cases.append(
                    {
                        "history": name,
                        "token_limit": limit,
                        "initial_token_count": initial,
                        "kept": len(got),
                    }
                )
    dumps = {k: [json.loads(m.model_dump_json()) for m in v] for k, v in histories.items()}
    counter = TokenCounter()
    estimates = {k: [counter.estimate_tokens_in_messages([m]) for m in v] for k, v in histories.items()}
    return cases, dumps, estimates


def token_counting() -> dict:
    handler = TokenCountingHandler()
    llm = RecordingLLM(
        replies=["The answer is 42.", "Short reply."],
        requests=[],
        chat_model=True,
        callback_manager=CallbackManager([handler]),
    )
    llm.chat(
        [
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="What is the answer to everything?"),
        ]
    )
    llm.complete("Complete this sentence: the sky is")
    return {
        "events": [
            {
                "prompt": e.prompt,
                "completion": e.completion,
                "prompt_token_count": e.prompt_token_count,
                "completion_token_count": e.completion_token_count,
            }
            for e in handler.llm_token_counts
        ],
        "prompt_llm_token_count": handler.prompt_llm_token_count,
        "completion_llm_token_count": handler.completion_llm_token_count,
        "total_llm_token_count": handler.total_llm_token_count,
    }


cases, histories, estimates = memory_cases()
out = {
    "system_prompt": SYSTEM_PROMPT,
    "turns": TURNS,
    "nodes": [{"id": n.node_id, "text": n.text, "metadata": n.metadata} for n in NODES],
    "scores": SCORES,
    "modes": {
        kind: {mode: run_mode(mode, chat_model) for mode in
               ["simple", "condense_question", "context", "condense_plus_context"]}
        for kind, chat_model in [("chat_model", True), ("completion_model", False)]
    },
    "memory_histories": histories,
    "memory_cases": cases,
    "message_token_estimates": estimates,
    "memory_defaults": {
        "no_llm": ChatMemoryBuffer.from_defaults().token_limit,
        "llm_3900": ChatMemoryBuffer.from_defaults(llm=RecordingLLM()).token_limit,
    },
    "token_counting": token_counting(),
}
Path(__file__).with_name("chat_reference.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
