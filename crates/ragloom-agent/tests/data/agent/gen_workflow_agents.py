"""Records what LlamaIndex 0.14.25's workflow agents send to the model.

FunctionAgent, ReActAgent and AgentWorkflow run against a scripted model
that plays fixed replies and keeps every conversation it is sent. For each
scenario the file holds the replies and, per model call, the messages
(role, content, tool call id, tool calls) and the names of the tools offered.

Run with the reference venv (llama-index-core 0.14.25), from this folder:
    python gen_workflow_agents.py
Writes workflow_agents.json: the tool's metadata and the scenarios.
"""

import asyncio
import json
from typing import Any, List, Sequence

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
)
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools import FunctionTool


def multiply(a: int, b: int) -> int:
    """Multiplies two integers."""
    return a * b


class Scripted(FunctionCallingLLM):
    """Plays `replies` in order; each is text or a list of (id, name, args) calls."""

    replies: List[Any] = []
    seen: List[Any] = []
    function_calling: bool = True

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True, is_function_calling_model=self.function_calling)

    def _reply(self, messages: Sequence[ChatMessage], tools=None) -> ChatResponse:
        self.seen.append(
            {
                "messages": [dump(m) for m in messages],
                "tools": [t.metadata.name for t in (tools or [])],
            }
        )
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return ChatResponse(message=ChatMessage(role="assistant", content=reply))
        calls = [ToolSelection(tool_id=i, tool_name=n, tool_kwargs=a) for i, n, a in reply]
        return ChatResponse(
            message=ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": calls})
        )

    def chat(self, messages, **kw):
        return self._reply(messages, kw.get("tools"))

    async def achat(self, messages, **kw):
        return self._reply(messages, kw.get("tools"))

    async def astream_chat(self, messages, **kw):
        response = self._reply(messages, kw.get("tools"))

        async def gen():
            yield ChatResponse(message=response.message, delta=response.message.content)

        return gen()

    def stream_chat(self, messages, **kw):
        raise NotImplementedError

    def complete(self, prompt, formatted=False, **kw):
        raise NotImplementedError

    async def acomplete(self, prompt, formatted=False, **kw):
        raise NotImplementedError

    def stream_complete(self, prompt, formatted=False, **kw):
        raise NotImplementedError

    async def astream_complete(self, prompt, formatted=False, **kw):
        raise NotImplementedError

    def _prepare_chat_with_tools(self, tools, user_msg=None, chat_history=None, **kw):
        messages = list(chat_history or [])
        if user_msg:
            messages.append(user_msg)
        return {"messages": messages, "tools": tools}

    def get_tool_calls_from_response(self, response, error_on_no_tool_call=True, **kw):
        return list(response.message.additional_kwargs.get("tool_calls", []))


def dump(m: ChatMessage) -> dict:
    calls = m.additional_kwargs.get("tool_calls", [])
    return {
        "role": m.role.value,
        "content": m.content or "",
        "tool_call_id": m.additional_kwargs.get("tool_call_id"),
        "tool_calls": [[c.tool_id, c.tool_name, c.tool_kwargs] for c in calls],
    }


async def scenario(name, make, user_msg, replies, function_calling=True, **run_kw):
    llm = Scripted(replies=list(replies), seen=[], function_calling=function_calling)
    workflow = make(llm)
    handler = workflow.run(user_msg=user_msg, **run_kw)
    events = []
    async for ev in handler.stream_events():
        name_ = type(ev).__name__
        if not (events and events[-1] == name_ == "AgentStream"):
            events.append(name_)
    try:
        out = await handler
        result = {"response": str(out.response.content), "agent": out.current_agent_name}
    except Exception as e:  # noqa: BLE001 - the error is the recorded result
        result = {"error": str(e)}
    return {
        "name": name,
        "user_msg": user_msg,
        "replies": replies,
        "run": run_kw,
        "requests": llm.seen,
        "events": events,
        "result": result,
    }


def tool():
    return FunctionTool.from_defaults(multiply)


async def main():
    out = []
    out.append(
        await scenario(
            "function_agent_tool_then_answer",
            lambda llm: FunctionAgent(llm=llm, tools=[tool()], system_prompt="You multiply."),
            "What is 6 * 7?",
            [[["c1", "multiply", {"a": 6, "b": 7}]], "It is 42."],
        )
    )
    out.append(
        await scenario(
            "function_agent_state",
            lambda llm: FunctionAgent(llm=llm, tools=[tool()], initial_state={"k": 1}),
            "hi",
            [[["c1", "multiply", {"a": 2, "b": 3}]], "Done."],
        )
    )
    out.append(
        await scenario(
            "function_agent_early_stop_generate",
            lambda llm: FunctionAgent(
                llm=llm, tools=[tool()], early_stopping_method="generate"
            ),
            "loop",
            [
                [["1", "multiply", {"a": 1, "b": 1}]],
                [["2", "multiply", {"a": 1, "b": 1}]],
                "best guess",
            ],
            max_iterations=2,
        )
    )
    out.append(
        await scenario(
            "react_agent_tool_then_answer",
            lambda llm: ReActAgent(llm=llm, tools=[tool()], system_prompt="Be terse."),
            "What is 6 * 7?",
            [
                'Thought: I need to multiply.\nAction: multiply\nAction Input: {"a": 6, "b": 7}',
                "Thought: I can answer without using any more tools.\nAnswer: 42",
            ],
            function_calling=False,
        )
    )
    out.append(
        await scenario(
            "react_agent_parse_error_then_answer",
            lambda llm: ReActAgent(llm=llm, tools=[tool()]),
            "q",
            ["Thought: hmm\nAction: multiply", "", "Thought: ok\nAnswer: fixed"],
            function_calling=False,
        )
    )

    def two_agents(llm):
        triage = FunctionAgent(
            name="triage",
            description="Routes requests.",
            system_prompt="You route.",
            llm=llm,
            tools=[tool()],
        )
        writer = FunctionAgent(
            name="writer", description="Writes poems.", llm=llm, can_handoff_to=[]
        )
        return AgentWorkflow(
            agents=[triage, writer], root_agent="triage", initial_state={"topic": "roses"}
        )

    out.append(
        await scenario(
            "agent_workflow_handoff",
            two_agents,
            "A poem please",
            [
                [["h1", "handoff", {"to_agent": "writer", "reason": "a poem"}]],
                "Roses are red.",
            ],
        )
    )
    out.append(
        await scenario(
            "agent_workflow_handoff_unknown",
            two_agents,
            "Paint",
            [
                [["h1", "handoff", {"to_agent": "painter", "reason": "art"}]],
                "Myself.",
            ],
        )
    )
    t = tool().metadata
    recorded = {
        "tool": {"name": t.name, "description": t.description, "fn_schema_str": t.fn_schema_str},
        "scenarios": out,
    }
    with open("workflow_agents.json", "w") as f:
        json.dump(recorded, f, indent=1, ensure_ascii=False)
        f.write("\n")


asyncio.run(main())
