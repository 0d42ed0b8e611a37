"""The Python reference for `benches/serve_load.rs`: the service a LlamaIndex
user writes with FastAPI over the store bench's persisted BM25 index.

  python llamaindex_serve.py PERSIST_DIR PORT LLM_API_BASE

`POST /v1/retrieve` and an OpenAI-shaped `POST /v1/chat/completions` (a
condense-plus-context chat engine, streamed or not, with the sources in the
reply), its LLM an `OpenAILike` client of the bench's mock server. One
uvicorn worker, as `uvicorn.run` starts by default.

Needs fastapi, uvicorn and llama-index-llms-openai-like beside
llama-index-core and llama-index-retrievers-bm25.
"""

import json
import sys
import time
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.chat_engine import CondensePlusContextChatEngine
from llama_index.llms.openai_like import OpenAILike
from llama_index.retrievers.bm25 import BM25Retriever
from pydantic import BaseModel

TOP_K = 4


class RetrieveRequest(BaseModel):
    query: str
    top_k: int = TOP_K


class ChatRequest(BaseModel):
    model: str = "corpus"
    messages: list[dict]
    stream: bool = False


def sources(nodes) -> list[dict]:
    return [
        {"node_id": n.node.node_id, "score": n.score,
         "file": n.node.metadata.get("file_name")}
        for n in nodes
    ]


def build_app(persist_dir: str, llm_base: str) -> FastAPI:
    retriever = BM25Retriever.from_persist_dir(str(Path(persist_dir) / "bm25"))
    llm = OpenAILike(model="mock", api_base=llm_base, api_key="unused",
                     is_chat_model=True, context_window=3900)
    app = FastAPI()

    @app.post("/v1/retrieve")
    def retrieve(req: RetrieveRequest) -> dict:
        # The retriever was persisted with similarity_top_k = TOP_K.
        hits = retriever.retrieve(req.query)[: req.top_k]
        return {"nodes": [dict(s, text=h.node.get_content())
                          for s, h in zip(sources(hits), hits)]}

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest):
        history = [ChatMessage(role=m["role"], content=m["content"]) for m in req.messages]
        engine = CondensePlusContextChatEngine.from_defaults(
            retriever=retriever, llm=llm, chat_history=history[:-1])
        question = history[-1].content
        created = int(time.time())
        if not req.stream:
            reply = await engine.achat(question)
            return {
                "id": "chatcmpl", "object": "chat.completion", "created": created,
                "model": req.model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.response}}],
                "sources": sources(reply.source_nodes),
            }
        streamed = await engine.astream_chat(question)

        async def events():
            def chunk(delta: dict, finish=None, **extra) -> str:
                body = {"id": "chatcmpl", "object": "chat.completion.chunk",
                        "created": created, "model": req.model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                        **extra}
                return f"data: {json.dumps(body)}\n\n"

            yield chunk({"role": "assistant", "content": ""})
            async for token in streamed.async_response_gen():
                yield chunk({"content": token})
            yield chunk({}, "stop", sources=sources(streamed.source_nodes))
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


def main(argv: list) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    persist_dir, port, llm_base = argv[0], int(argv[1]), argv[2]
    app = build_app(persist_dir, llm_base)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
