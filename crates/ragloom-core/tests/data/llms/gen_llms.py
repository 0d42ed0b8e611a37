"""Records LlamaIndex 0.14.25 behaviour the llms/tools tests compare against.

Run: /tmp/li/bin/python gen_llms.py  (writes llms_reference.json beside this file)
"""

import json
from pathlib import Path

from llama_index.core.base.llms.generic_utils import messages_to_history_str
from llama_index.core.base.llms.types import LLMMetadata, MessageRole, ToolCallBlock
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.output_parsers.pydantic import PYDANTIC_FORMAT_TMPL
from llama_index.core.output_parsers.utils import extract_json_str
from llama_index.core.tools import ToolMetadata


def dump(m: ChatMessage) -> dict:
    return json.loads(m.model_dump_json())


conversations = {
    "plain": [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Hi there"),
    ],
    "kwargs": [
        ChatMessage(
            role="user",
            content="Hi",
            additional_kwargs={"name": "bob", "n": 1, "f": True, "x": None, "l": [1.5, "a"]},
        ),
    ],
    "tool_round": [
        ChatMessage(role="user", content="add 1 and 2"),
        ChatMessage(
            role="assistant",
            blocks=[ToolCallBlock(tool_call_id="c1", tool_name="add", tool_kwargs={"a": 1, "b": 2})],
        ),
        ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1", "name": "add"}),
    ],
    "empty": [],
}

mock = MockLLM()
mock3 = MockLLM(max_tokens=3)
out = {
    "roles": [r.value for r in MessageRole],
    "default_metadata": json.loads(LLMMetadata().model_dump_json()),
    "mock_metadata": json.loads(mock.metadata.model_dump_json()),
    "mock3_metadata": json.loads(mock3.metadata.model_dump_json()),
    "mock_complete": {p: mock.complete(p).text for p in ["", "hello world", "multi\nline  prompt "]},
    "mock3_complete": mock3.complete("ignored").text,
    "mock_stream_complete_text": "".join(r.delta for r in mock.stream_complete("ab c")),
    "mock_chat": {k: mock.chat(v).message.content for k, v in conversations.items()},
    "mock3_chat": mock3.chat(conversations["plain"]).message.content,
    "history_str": {k: messages_to_history_str(v) for k, v in conversations.items()},
    "dumps": {k: [dump(m) for m in v] for k, v in conversations.items()},
    "dump_empty_content": dump(ChatMessage(role="assistant", content="")),
    "message_str": {k: [str(m) for m in v] for k, v in conversations.items()},
    "openai_tool_default_schema": ToolMetadata(
        description="Answers questions about the essay.", name="essay tool!"
    ).to_openai_tool(),
    "format_instructions": PYDANTIC_FORMAT_TMPL.format(
        schema=json.dumps({"type": "object", "properties": {"name": {"type": "string"}}}, ensure_ascii=False)
    ),
    "extract_json_str": {
        t: extract_json_str(t)
        for t in [
            'Here you go:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?',
            'prefix {"a": {"b": 1}} suffix',
        ]
    },
}
Path(__file__).with_name("llms_reference.json").write_text(
    json.dumps(out, indent=2, ensure_ascii=False) + "\n"
)
