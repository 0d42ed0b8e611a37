"""Records LlamaIndex 0.14.25 query-engine behaviour the query_engines tests compare against:
selector and sub-question prompts, the selection and sub-question parsers, the router's
combine step, the sub-question engine's final prompt, HyDE, citation chunks, QueryEngineTool.

Run: /tmp/li/bin/python gen_query_engines.py  (writes query_engines.json beside this file)
"""

import json
from pathlib import Path
from typing import Any, List

from llama_index.core import PromptTemplate
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.base_selector import MultiSelection, SingleSelection
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.base.response.schema import Response
from llama_index.core.indices.query.query_transform.base import HyDEQueryTransform
from llama_index.core.llms import MockLLM
from llama_index.core.output_parsers.selection import SelectionOutputParser
from llama_index.core.program.function_program import get_function_tool
from llama_index.core.query_engine import (
    CitationQueryEngine,
    CustomQueryEngine,
    RouterQueryEngine,
    SubQuestionQueryEngine,
    TransformQueryEngine,
)
from llama_index.core.question_gen.llm_generators import LLMQuestionGenerator
from llama_index.core.question_gen.output_parser import SubQuestionOutputParser
from llama_index.core.question_gen.prompts import DEFAULT_SUB_QUESTION_PROMPT_TMPL
from llama_index.core.question_gen.types import SubQuestionList
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.selectors import LLMMultiSelector, LLMSingleSelector
from llama_index.core.selectors.prompts import (
    DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL,
    DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL,
)
from llama_index.core.tools import QueryEngineTool, RetrieverTool, ToolMetadata

HERE = Path(__file__).parent
# `shared/corpus` beside the repository (or beside the worktree folder); the
# sources are public domain, so the slices used are recorded in the JSON.
CORPUS = next(p / "shared/corpus" for p in HERE.parents if (p / "shared/corpus").is_dir()) / "sources/alice29.txt"

PROMPTS: List[str] = []
# Queries each FixedEngine received, by its answer (pydantic copies list fields).
SEEN: dict = {}
REPLIES: List[str] = []


class ScriptedLLM(MockLLM):
    """MockLLM that records every prompt and answers with the scripted replies, then echoes."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        PROMPTS.append(prompt)
        return CompletionResponse(text=REPLIES.pop(0) if REPLIES else prompt)

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self.complete(prompt, formatted, **kwargs)


def script(*replies: str) -> None:
    PROMPTS.clear()
    REPLIES.clear()
    REPLIES.extend(replies)


class FixedEngine(CustomQueryEngine):
    """A query engine answering `answer` with one source node, recording its queries."""

    answer: str
    source_text: str

    def custom_query(self, query_str: str) -> Response:
        SEEN.setdefault(self.answer, []).append(query_str)
        node = NodeWithScore(node=TextNode(text=self.source_text, id_=f"src-{self.answer}"), score=0.5)
        return Response(response=self.answer, source_nodes=[node])


class FixedRetriever(BaseRetriever):
    def __init__(self, nodes: List[NodeWithScore]) -> None:
        super().__init__()
        self._nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        return self._nodes


llm = ScriptedLLM()
out: dict = {}

# --- selectors -------------------------------------------------------------
choices = [
    ToolMetadata(name="vector", description="Useful for specific facts\nabout the author's life."),
    ToolMetadata(name="summary", description="Useful for summaries of the whole essay."),
    ToolMetadata(name="code", description="Useful for questions about code."),
]
query = "What did the author do growing up?"

script('[{"choice": 1, "reason": "facts about life"}]')
single = LLMSingleSelector.from_defaults(llm=llm)
res = single.select(choices, query)
out["single_select"] = {
    "prompt": PROMPTS[0],
    "selections": [{"index": s.index, "reason": s.reason} for s in res.selections],
}

script('[{"choice": 1, "reason": "a"}, {"choice": 3, "reason": "b"}]')
multi = LLMMultiSelector.from_defaults(llm=llm)
res = multi.select(choices, query)
out["multi_select"] = {
    "prompt": PROMPTS[0],
    "template": multi.get_prompts()["prompt"].get_template(),
    "selections": [{"index": s.index, "reason": s.reason} for s in res.selections],
}
script("ok")
multi2 = LLMMultiSelector.from_defaults(llm=llm, max_outputs=2)
try:
    multi2.select(choices, query)
except Exception:
    pass
out["multi_select_max2_prompt"] = PROMPTS[0]

parser = SelectionOutputParser()
parse_cases = [
    '[{"choice": 2, "reason": "plain"}]',
    '{"choice": 2, "reason": "one object"}',
    'Sure! Here is my answer:\n```json\n[\n  {"choice": 1, "reason": "fenced"}\n]\n```\nHope it helps.',
    '[\n    {\n        choice: 3,\n        reason: "unquoted keys, as in the example"\n    },\n]',
    "[{'choice': 1, 'reason': 'single quotes'}]",
    '{"answer": {"choice": 2, "reason": "nested"}}',
    '[{"choice": 1, "reason": "x"}, {"choice": 2, "reason": "y"},]',
    "I cannot decide.",
    '[{"reason": "no choice"}]',
]
parsed = []
for text in parse_cases:
    try:
        answers = parser.parse(text).parsed_output
        parsed.append({"input": text, "answers": [{"choice": a.choice, "reason": a.reason} for a in answers]})
    except Exception as e:  # noqa: BLE001
        parsed.append({"input": text, "error": type(e).__name__})
out["selection_parse"] = parsed

def tool_json(cls) -> dict:
    return get_function_tool(cls).metadata.to_openai_tool()

out["pydantic_tools"] = {"single": tool_json(SingleSelection), "multi": tool_json(MultiSelection)}
out["pydantic_prompts"] = {
    "single": PromptTemplate(DEFAULT_SINGLE_PYD_SELECT_PROMPT_TMPL).format(
        num_choices=3, context_list="(1) a\n\n(2) b", query_str="q"
    ),
    "multi": PromptTemplate(DEFAULT_MULTI_PYD_SELECT_PROMPT_TMPL).format(
        num_choices=3, max_outputs=3, context_list="(1) a\n\n(2) b", query_str="q"
    ),
}

# --- router --------------------------------------------------------------------
eng_a = FixedEngine(answer="Answer from A.", source_text="source a")
eng_b = FixedEngine(answer="Answer from B.", source_text="source b")
tools = [
    QueryEngineTool.from_defaults(eng_a, name="a", description="Engine A: the author's childhood."),
    QueryEngineTool.from_defaults(eng_b, name="b", description="Engine B: the author's work."),
]
script('[{"choice": 2, "reason": "work"}]')
router = RouterQueryEngine(selector=LLMSingleSelector.from_defaults(llm=llm), query_engine_tools=tools, llm=llm)
r = router.query("What work did the author do?")
out["router_single"] = {"response": str(r), "prompts": list(PROMPTS), "seen": SEEN.get("Answer from B.", [])}

SEEN.clear()
script('[{"choice": 1, "reason": "childhood"}, {"choice": 2, "reason": "work"}]', "Combined answer.")
router = RouterQueryEngine(selector=LLMMultiSelector.from_defaults(llm=llm), query_engine_tools=tools, llm=llm)
r = router.query("Tell me about childhood and work.")
out["router_multi"] = {
    "response": str(r),
    "prompts": list(PROMPTS),
    "source_node_ids": [n.node.node_id for n in r.source_nodes],
    "seen": dict(SEEN),
}

# --- sub-questions ----------------------------------------------------------------
sq_tools = [
    ToolMetadata(name="uber_10k", description="Provides information about Uber financials for year 2021"),
    ToolMetadata(name="lyft_10k", description="Provides information about Lyft financials for year 2021"),
]
out["sub_question_template"] = DEFAULT_SUB_QUESTION_PROMPT_TMPL
script('```json\n{"items": [{"sub_question": "q1", "tool_name": "uber_10k"}]}\n```')
gen = LLMQuestionGenerator.from_defaults(llm=llm)
subs = gen.generate(sq_tools, QueryBundle("Compare Uber and Lyft revenue growth in 2021"))
out["sub_question_gen"] = {
    "prompt": PROMPTS[0],
    "subs": [s.model_dump() for s in subs],
}
sq_parser = SubQuestionOutputParser()
sq_cases = [
    '```json\n{\n    "items": [\n        {"sub_question": "a", "tool_name": "t1"},\n        {"sub_question": "b", "tool_name": "t2"}\n    ]\n}\n```',
    '[{"sub_question": "bare list", "tool_name": "t1"}]',
    'Here you go: {"items": [{"sub_question": "prose", "tool_name": "t1"}]} done',
    "no json at all",
    '{"items": [{"sub_question": "missing tool"}]}',
]
sq_parsed = []
for text in sq_cases:
    try:
        sq_parsed.append({"input": text, "subs": [s.model_dump() for s in sq_parser.parse(text).parsed_output]})
    except Exception as e:  # noqa: BLE001
        sq_parsed.append({"input": text, "error": type(e).__name__})
out["sub_question_parse"] = sq_parsed

sq_engine_tools = [
    QueryEngineTool(FixedEngine(answer="Uber grew 57%.", source_text="uber doc"), sq_tools[0]),
    QueryEngineTool(FixedEngine(answer="Lyft grew 36%.", source_text="lyft doc"), sq_tools[1]),
]
script(
    json.dumps(
        {
            "items": [
                {"sub_question": "What is the revenue growth of Uber", "tool_name": "uber_10k"},
                {"sub_question": "What is the EBITDA of Uber", "tool_name": "uber_10k"},
                {"sub_question": "What is the revenue growth of Lyft", "tool_name": "lyft_10k"},
                {"sub_question": "What is the revenue of Didi", "tool_name": "didi_10k"},
            ]
        }
    ),
    "Final comparison.",
)
sq_engine = SubQuestionQueryEngine.from_defaults(
    query_engine_tools=sq_engine_tools,
    llm=llm,
    question_gen=LLMQuestionGenerator.from_defaults(llm=llm),
    verbose=False,
    use_async=False,
)
r = sq_engine.query("Compare revenue growth of Uber and Lyft in 2021")
out["sub_question_engine"] = {
    "response": str(r),
    "prompts": list(PROMPTS),
    "seen_uber": SEEN.get("Uber grew 57%.", []),
    "seen_lyft": SEEN.get("Lyft grew 36%.", []),
    "source_node_texts": [n.node.get_content() for n in r.source_nodes],
}

# --- HyDE -------------------------------------------------------------------------
script("A hypothetical passage about the author.")
hyde = HyDEQueryTransform(llm=llm, include_original=True)
qb = hyde.run(QueryBundle("What did the author do growing up?"))
hyde_prompt = PROMPTS[0]
script("Another passage.")
qb2 = HyDEQueryTransform(llm=llm, include_original=False).run("Who is Alice?")
script("Passage three.")
qb3 = HyDEQueryTransform(llm=llm).run(QueryBundle("q", custom_embedding_strs=["e1", "e2"]))
out["hyde"] = {
    "prompt": hyde_prompt,
    "include_original": {"query_str": qb.query_str, "embedding_strs": qb.embedding_strs},
    "without_original": {"query_str": qb2.query_str, "embedding_strs": qb2.embedding_strs},
    "custom_strs": {"query_str": qb3.query_str, "embedding_strs": qb3.embedding_strs},
}

# --- citations ---------------------------------------------------------------------
alice = CORPUS.read_text(encoding="utf-8")
text_a = alice[2000:5200]
text_b = alice[9000:9800]
cite_nodes = [
    NodeWithScore(node=TextNode(text=text_a, id_="node-a", metadata={"file_name": "alice29.txt"}), score=0.9),
    NodeWithScore(node=TextNode(text=text_b, id_="node-b"), score=0.7),
]
script("Alice was bored [1] and followed the rabbit [2].", "Refined [1][3].")
cite = CitationQueryEngine(retriever=FixedRetriever(cite_nodes), llm=llm)
r = cite.query("Why did Alice follow the rabbit?")
out["citation"] = {
    "text_a": text_a,
    "text_b": text_b,
    "response": str(r),
    "prompts": list(PROMPTS),
    "source_texts": [n.node.get_content() for n in r.source_nodes],
    "source_scores": [n.score for n in r.source_nodes],
    "source_metadata": [n.node.metadata for n in r.source_nodes],
    "ids_differ": [n.node.node_id not in ("node-a", "node-b") for n in r.source_nodes],
}


class SmallWindowLLM(ScriptedLLM):
    """ScriptedLLM with a 1200-token window, so the citation sources need a refine call."""

    @property
    def metadata(self):  # type: ignore[override]
        meta = super().metadata
        meta.context_window = 1200
        return meta


script(*[f"Answer {i} [{i}]." for i in range(1, 9)])
cite = CitationQueryEngine(retriever=FixedRetriever(cite_nodes), llm=SmallWindowLLM())
r = cite.query("Why did Alice follow the rabbit?")
out["citation_refine"] = {"response": str(r), "prompts": list(PROMPTS)}
small = CitationQueryEngine(retriever=FixedRetriever(cite_nodes), llm=llm, citation_chunk_size=128, citation_chunk_overlap=10)
out["citation_small_chunks"] = [n.node.get_content() for n in small._create_citation_nodes(cite_nodes)]

# --- QueryEngineTool ---------------------------------------------------------------
qe_tool = QueryEngineTool.from_defaults(FixedEngine(answer="Tool answer.", source_text="t"))
calls = []
for args, kwargs in [((), {"input": "by input"}), (("positional",), {}), ((), {"query": "other key", "n": 1})]:
    o = qe_tool.call(*args, **kwargs)
    calls.append({"kwargs": kwargs, "args": list(args), "content": o.content, "raw_input": o.raw_input})
out["query_engine_tool"] = {
    "metadata": {
        "name": qe_tool.metadata.name,
        "description": qe_tool.metadata.description,
        "fn_schema": qe_tool.metadata.get_parameters_dict(),
    },
    "calls": calls,
    "seen": SEEN.get("Tool answer.", []),
}

# --- RetrieverTool ------------------------------------------------------------------
r_tool = RetrieverTool.from_defaults(
    FixedRetriever(
        [
            NodeWithScore(node=TextNode(text="first", metadata={"k": "v"}), score=1.0),
            NodeWithScore(node=TextNode(text="second"), score=0.5),
        ]
    )
)
r_calls = []
for args, kwargs in [((), {"input": "what"}), (("positional",), {}), ((), {"a": "x", "b": 2})]:
    o = r_tool.call(*args, **kwargs)
    r_calls.append({"kwargs": kwargs, "args": list(args), "content": o.content, "raw_input": o.raw_input})
out["retriever_tool"] = {
    "metadata": {"name": r_tool.metadata.name, "description": r_tool.metadata.description},
    "calls": r_calls,
}

# --- function-calling sub-question generator: the tool it offers ----------------------
out["sub_question_list_schema"] = SubQuestionList.model_json_schema()

(HERE / "query_engines.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
print("wrote", HERE / "query_engines.json")
