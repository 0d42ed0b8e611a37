"""Records LlamaIndex 0.14.25's ReAct output parser and chat formatter as test data.

Run with the reference venv: /tmp/li/bin/python gen_react.py (from this folder).
Writes react_parser_cases.json and react_formatter.json.
"""

import json
from typing import List

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.agent.react.output_parser import ReActOutputParser
from llama_index.core.agent.react.types import (
    ActionReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
from llama_index.core.tools import FunctionTool

REPLIES = [
    # 0 plain answer
    "Thought: I can answer without using any more tools.\nAnswer: 405",
    # 1 plain action
    'Thought: I need to use a tool to help me answer the question.\nAction: multiply\nAction Input: {"a": 121, "b": 3}',
    # 2 implicit answer (no keywords)
    "The answer is 405.",
    # 3 JSON inside a code fence
    'Thought: I need a tool.\nAction: add\nAction Input: ```json\n{"a": 363, "b": 42}\n```',
    # 4 trailing comma
    'Thought: Use add.\nAction: add\nAction Input: {"a": 363, "b": 42,}',
    # 5 single quotes
    "Thought: Use the search.\nAction: search\nAction Input: {'input': 'hello world'}",
    # 6 unquoted keys
    'Thought: Use add.\nAction: add\nAction Input: {a: 1, b: 2}',
    # 7 unterminated JSON
    'Thought: Use add.\nAction: add\nAction Input: {"a": 1, "b": 2',
    # 8 action before an answer
    'Thought: I need a tool.\nAction: multiply\nAction Input: {"a": 2, "b": 3}\nObservation: 6\nThought: done\nAnswer: 6',
    # 9 answer before an action
    "Thought: I know it.\nAnswer: 6\nAction: multiply\nAction Input: {\"a\": 2, \"b\": 3}",
    # 10 action without input
    "Thought: I need a tool.\nAction: multiply",
    # 11 no Thought before Action (group 2)
    'I should multiply.\nAction: multiply\nAction Input: {"a": 2, "b": 3}',
    # 12 answer without a Thought
    "Answer: 42",
    # 13 Thought only
    "Thought: I am still thinking about this.",
    # 14 multiline answer
    "Thought: I can answer.\nAnswer: Line one.\nLine two.\n\nLine four.",
    # 15 empty input object
    "Thought: I need the time.\nAction: now\nAction Input: {}",
    # 16 nested JSON
    'Thought: Search with filters.\nAction: search\nAction Input: {"query": "cats", "filters": {"year": 2020, "tags": ["a", "b"]}}',
    # 17 text after the JSON
    'Thought: add\nAction: add\nAction Input: {"a": 1, "b": 2}\nI hope that works.',
    # 18 leading whitespace and blank lines
    '  \nThought: tool time\n\nAction: add\n\nAction Input: {"a": 5, "b": 7}',
    # 19 action name with parentheses
    'Thought: call it\nAction: add(a, b)\nAction Input: {"a": 5, "b": 7}',
    # 20 Python literals
    "Thought: flags\nAction: toggle\nAction Input: {'on': True, 'name': 'x'}",
    # 21 invalid JSON that the fallback regex rescues partly
    'Thought: t\nAction: search\nAction Input: {"input": "a", "n": 5 oops}',
    # 22 Action: on the first line without a thought line
    'Action: add\nAction Input: {"a": 1, "b": 2}',
    # 23 streaming-style answer with trailing spaces
    "Thought: ok\nAnswer:   spaced answer   ",
    # 24 no JSON object at all in Action Input
    "Thought: t\nAction: add\nAction Input: a=1, b=2",
    # 25 unicode
    'Thought: traduire\nAction: translate\nAction Input: {"text": "café ünïcode"}',
    # 26 empty reply
    "",
    # 27 JSON with comment-like text and numbers as floats
    'Thought: t\nAction: div\nAction Input: {"a": 1.5, "b": -2e3}',
]


def step_record(step) -> dict:
    if isinstance(step, ActionReasoningStep):
        return {
            "kind": "action",
            "thought": step.thought,
            "action": step.action,
            "action_input": json.loads(json.dumps(step.action_input)),
            "content": step.get_content(),
        }
    if isinstance(step, ResponseReasoningStep):
        return {
            "kind": "response",
            "thought": step.thought,
            "response": step.response,
            "content": step.get_content(),
        }
    raise TypeError(type(step))


def parser_cases() -> List[dict]:
    parser = ReActOutputParser()
    cases = []
    for reply in REPLIES:
        try:
            cases.append({"reply": reply, "ok": step_record(parser.parse(reply))})
        except Exception as e:  # noqa: BLE001 - the exception class is the record
            cases.append(
                {"reply": reply, "error": {"class": type(e).__name__, "message": str(e)}}
            )
    return cases


def multiply(a: int, b: int) -> int:
    """Multiply two integers and return the result."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers and return the result."""
    return a + b


def formatter_case() -> dict:
    tools = [FunctionTool.from_defaults(fn=multiply), FunctionTool.from_defaults(fn=add)]
    formatter = ReActChatFormatter()
    from llama_index.core.base.llms.types import ChatMessage

    reasoning = [
        ActionReasoningStep(thought="I need to multiply.", action="multiply", action_input={"a": 121, "b": 3}),
        ObservationReasoningStep(observation="363"),
        ResponseReasoningStep(thought="done", response="405"),
        ResponseReasoningStep(thought="streaming", response="40", is_streaming=True),
    ]
    messages = formatter.format(
        tools, [ChatMessage(role="user", content="What is (121 * 3) + 42?")], reasoning
    )
    context = ReActChatFormatter.from_defaults(context="Some context.")
    ctx_messages = context.format(tools, [], [])
    no_tools = formatter.format([], [], [])
    return {
        "tools": [
            {"name": t.metadata.name, "description": t.metadata.description, "fn_schema_str": t.metadata.fn_schema_str}
            for t in tools
        ],
        "messages": [{"role": m.role.value, "content": m.content} for m in messages],
        "context_system_header": ctx_messages[0].content,
        "no_tools_system_header": no_tools[0].content,
    }


if __name__ == "__main__":
    with open("react_parser_cases.json", "w", encoding="utf-8") as f:
        json.dump(parser_cases(), f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open("react_formatter.json", "w", encoding="utf-8") as f:
        json.dump(formatter_case(), f, indent=1, ensure_ascii=False)
        f.write("\n")
