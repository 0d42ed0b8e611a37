"""Records the messages LlamaIndex 0.12.52's ReActAgent sends for the two-tool
task "What is (121 * 3) + 42?", with a scripted model.

0.13 removed this agent, so run it in a separate venv:
    python3 -m venv /tmp/li012 && /tmp/li012/bin/pip install llama-index-core==0.12.52
    /tmp/li012/bin/python gen_react_agent_0_12.py
Writes react_agent_0_12.json.
"""

import json
from typing import Any, List, Sequence

from llama_index.core.agent import ReActAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.tools import FunctionTool

REPLIES = [
    'Thought: The current language of the user is: English. I need to use a tool to help me answer the question.\nAction: multiply\nAction Input: {"a": 121, "b": 3}',
    'Thought: I need to add 42 to the result.\nAction: add\nAction Input: {"a": 363, "b": 42}',
    "Thought: I can answer without using any more tools. I'll use the user's language to answer\nAnswer: (121 * 3) + 42 = 405",
]


class ScriptedLLM(CustomLLM):
    replies: List[str] = []
    requests: List[List[dict]] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.requests.append([{"role": m.role.value, "content": m.content} for m in messages])
        return ChatResponse(message=ChatMessage(role="assistant", content=self.replies.pop(0)))

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


def multiply(a: int, b: int) -> int:
    """Multiply two integers and return the result."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers and return the result."""
    return a + b


def main() -> None:
    llm = ScriptedLLM(replies=list(REPLIES), requests=[])
    tools = [FunctionTool.from_defaults(fn=multiply), FunctionTool.from_defaults(fn=add)]
    agent = ReActAgent.from_tools(tools, llm=llm)
    response = agent.chat("What is (121 * 3) + 42?")
    out = {
        "question": "What is (121 * 3) + 42?",
        "replies": REPLIES,
        "tools": [
            {"name": t.metadata.name, "description": t.metadata.description, "fn_schema_str": t.metadata.fn_schema_str}
            for t in tools
        ],
        "requests": llm.requests,
        "response": str(response),
        "sources": [s.content for s in response.sources],
        "chat_history": [{"role": m.role.value, "content": m.content} for m in agent.chat_history],
    }
    with open("react_agent_0_12.json", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
