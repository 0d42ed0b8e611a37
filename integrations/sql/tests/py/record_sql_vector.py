"""Records LlamaIndex 0.14.25's VectorIndexAutoRetriever, SQLJoinQueryEngine and
SQLAutoVectorQueryEngine behaviour with scripted LLMs and MockEmbedding.

Run with the reference virtualenv from integrations/sql:
    $HOME/.cache/ragloom/pyref-llama-index-core-0.14.25/bin/python \
        tests/py/record_sql_vector.py tests/data/sample.sql tests/data/sql_vector.json

No network, no keys. Every LLM is a non-function-calling, non-chat CustomLLM
(`Scripted`) that pops its replies in order and records the prompt string each
`complete` call receives (`LLM.predict` formats the template and calls
`complete(prompt, formatted=True)` because `is_chat_model` is False).
Verbose printing (print_text / print) is captured per case under "stdout".
"""

import contextlib
import io
import json
import logging
import re
import sqlite3
import sys
import tempfile
from typing import Any, List

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.response.schema import Response
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.indices.struct_store.sql_query import NLSQLTableQueryEngine
from llama_index.core.indices.vector_store.retrievers.auto_retriever import (
    VectorIndexAutoRetriever,
)
from llama_index.core.indices.vector_store.retrievers.auto_retriever import (
    prompts as ar_prompts,
)
from llama_index.core.indices.vector_store.retrievers.auto_retriever.output_parser import (
    VectorStoreQueryOutputParser,
)
from llama_index.core.llms import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.output_parsers.selection import FORMAT_STR, SelectionOutputParser
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.query_engine import sql_join_query_engine as sjq
from llama_index.core.query_engine import sql_vector_query_engine as svq
from llama_index.core.schema import QueryBundle, TextNode
from llama_index.core.selectors.prompts import DEFAULT_SINGLE_SELECT_PROMPT_TMPL
from llama_index.core.selectors.utils import get_selector_from_llm
from llama_index.core.tools import QueryEngineTool
from llama_index.core.utilities.sql_wrapper import SQLDatabase
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    MetadataInfo,
    VectorStoreInfo,
    VectorStoreQuerySpec,
)
from sqlalchemy import create_engine


class Scripted(CustomLLM):
    replies: List[str] = []
    prompts: List[str] = []
    chat_model: bool = False
    fc_model: bool = False
    messages: List[Any] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=3900,
            num_output=256,
            model_name="scripted",
            is_chat_model=self.chat_model,
            is_function_calling_model=self.fc_model,
        )

    def chat(self, messages, **kwargs):  # only reached when chat_model is True
        self.messages.append([{"role": m.role.value, "content": m.content} for m in messages])
        return super().chat(messages, **kwargs)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies.pop(0))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


class RecEmbedding(MockEmbedding):
    """MockEmbedding that records the query strings it embeds."""

    queries: List[str] = []

    def _get_query_embedding(self, query: str) -> List[float]:
        self.queries.append(query)
        return super()._get_query_embedding(query)


# Record every VectorStoreQuery SimpleVectorStore receives.
STORE_QUERIES: List[dict] = []
_orig_query = SimpleVectorStore.query


def _rec_query(self, query, **kwargs):
    STORE_QUERIES.append({
        "query_str": query.query_str,
        "query_embedding": query.query_embedding,
        "similarity_top_k": query.similarity_top_k,
        "mode": str(query.mode.value),
        "filters": query.filters.model_dump(mode="json") if query.filters is not None else None,
    })
    result = _orig_query(self, query, **kwargs)
    STORE_QUERIES[-1]["result_ids"] = list(result.ids or [])
    STORE_QUERIES[-1]["result_similarities"] = [float(s) for s in result.similarities or []]
    return result


SimpleVectorStore.query = _rec_query


class LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.levelname}:{record.name}:{record.getMessage()}")


LOG = LogCapture()
logging.getLogger("llama_index").addHandler(LOG)
logging.getLogger("llama_index").setLevel(logging.WARNING)


def err(e: BaseException) -> dict:
    return {"type": type(e).__name__, "message": str(e)}


UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def norm_id(node_id: str) -> str:
    # The SQL result TextNode gets a random uuid4 id; replace it with a fixed marker.
    return "<uuid>" if UUID_RE.match(node_id) else node_id


def jsonable(v: Any) -> Any:
    v = json.loads(json.dumps(v, default=lambda o: repr(o)))
    if isinstance(v, dict):
        v = {norm_id(k): val for k, val in v.items()}
    return v


NODES = [
    ("n1", "Toronto is the largest city in Canada, known for the CN Tower and a busy theatre district.", {"title": "Toronto", "country": "Canada", "year": 2020}),
    ("n2", "Vancouver sits between the mountains and the Pacific and has a large film industry.", {"title": "Vancouver", "country": "Canada", "year": 2018}),
    ("n3", "Tokyo has kabuki theatre, many museums, and the Tsukiji outer market.", {"title": "Tokyo", "country": "Japan", "year": 2021}),
    ("n4", "Osaka is famous for street food such as takoyaki and for Osaka Castle.", {"title": "Osaka", "country": "Japan", "year": 2019}),
    ("n5", "Berlin is known for its museums island, techno clubs and the Brandenburg Gate.", {"title": "Berlin", "country": "Germany", "year": 2022}),
    ("n6", "Tokyo's food scene ranges from ramen stalls to sushi counters.", {"title": "Tokyo", "country": "Japan", "year": 2017}),
]

VECTOR_STORE_INFO = VectorStoreInfo(
    content_info="Short encyclopedia articles about cities",
    metadata_info=[
        MetadataInfo(name="title", type="str", description="Name of the city the article is about"),
        MetadataInfo(name="country", type="str", description="Country of the city, e.g. Canada, Japan or Germany"),
        MetadataInfo(name="year", type="int", description="Year the article was written"),
    ],
)


def build_index(emb: MockEmbedding) -> VectorStoreIndex:
    nodes = [TextNode(id_=i, text=t, metadata=m) for i, t, m in NODES]
    return VectorStoreIndex(nodes, embed_model=emb)


def scored(nodes) -> List[dict]:
    return [{"id": norm_id(n.node.node_id), "score": n.score, "text": n.node.get_content()} for n in nodes]


def auto_retriever_section(out: dict) -> None:
    out["auto_retriever_templates"] = {
        "PREFIX": ar_prompts.PREFIX,
        "EXAMPLES": ar_prompts.EXAMPLES,
        "SUFFIX": ar_prompts.SUFFIX,
        "DEFAULT_VECTOR_STORE_QUERY_PROMPT_TMPL": ar_prompts.DEFAULT_VECTOR_STORE_QUERY_PROMPT_TMPL,
        "example_info_json": ar_prompts.example_info.model_dump_json(indent=4),
        "example_output_json": ar_prompts.example_output.model_dump_json(),
        "example_info_2_json": ar_prompts.example_info_2.model_dump_json(indent=4),
        "example_output_2_json": ar_prompts.example_output_2.model_dump_json(),
        # generate_retrieval_spec passes the schema *dict* as schema_str, so the prompt
        # shows Python's str() of it (single quotes, True/None), not JSON.
        "schema_str_as_formatted": str(VectorStoreQuerySpec.model_json_schema()),
        "schema_json": VectorStoreQuerySpec.model_json_schema(),
    }
    out["vector_store_info"] = VECTOR_STORE_INFO.model_dump(mode="json")
    out["vector_store_info_json"] = VECTOR_STORE_INFO.model_dump_json(indent=4)
    out["nodes"] = [{"id": i, "text": t, "metadata": m} for i, t, m in NODES]

    fence = "```json\n{}\n```"
    cases = [
        ("clean", "Tell me about the history and landmarks of these cities",
         fence.format('{"query": "history and landmarks", "filters": [], "top_k": null}'), {}),
        ("filters_eq_gt_in", "Food culture in Japanese cities Tokyo or Osaka, from articles written after 2018",
         fence.format(json.dumps({"query": "food culture", "filters": [
             {"key": "country", "value": "Japan", "operator": "=="},
             {"key": "year", "value": 2018, "operator": ">"},
             {"key": "title", "value": ["Tokyo", "Osaka"], "operator": "in"}]})),
         {"verbose": True}),
        ("filter_default_operator", "Articles about Tokyo",
         fence.format('{"query": "Tokyo", "filters": [{"key": "title", "value": "Tokyo"}]}'), {}),
        ("top_k_clamped", "Give me 5 articles about museums",
         fence.format('{"query": "museums", "filters": [], "top_k": 5}'), {"similarity_top_k": 4, "max_top_k": 3}),
        ("top_k_small", "Give me 1 article about museums",
         fence.format('{"query": "museums", "filters": [], "top_k": 1}'), {"similarity_top_k": 10}),
        ("top_k_all_six", "Give me 6 articles",
         fence.format('{"query": "cities", "filters": [], "top_k": 6}'), {"similarity_top_k": 10}),
        ("empty_query", "All Canadian articles",
         fence.format('{"query": "", "filters": [{"key": "country", "value": "Canada", "operator": "=="}]}'), {}),
        ("empty_query_top_k_none", "All articles",
         fence.format('{"query": "", "filters": []}'), {"empty_query_top_k": None, "similarity_top_k": 3}),
        ("empty_query_default_vector", "All articles",
         fence.format('{"query": "", "filters": []}'),
         {"default_empty_query_vector": [1.0, 0, 0, 0, 0, 0, 0, 0], "empty_query_top_k": 2}),
        ("extra_filters", "Museums",
         fence.format('{"query": "museums", "filters": [{"key": "year", "value": 2019, "operator": ">="}]}'),
         {"extra_filters": {"key": "country", "value": "Japan"}}),
        ("unfenced_with_prose", "Museums",
         'Sure! Here is the request: {"query": "museums", "filters": []} Hope it helps.', {}),
        ("trailing_comma_yaml", "Museums",
         fence.format('{"query": "museums", "filters": [],}'), {}),
        ("unclosed_fence", "Museums",
         '```json\n{"query": "museums", "filters": [], "top_k": 1}', {}),
        ("malformed_prose_no_json", "Which cities have museums?",
         "I think you want articles about museums.", {}),
        ("malformed_broken_json", "Which cities have museums?",
         fence.format('{"query": "museums", "filters": [}'), {}),
        ("malformed_unknown_operator", "Which cities have museums?",
         fence.format('{"query": "museums", "filters": [{"key": "year", "value": 2018, "operator": "~"}]}'), {}),
        ("malformed_missing_filters", "Which cities have museums?",
         fence.format('{"query": "museums"}'), {}),
        ("malformed_bracket_before_brace", "Which cities have museums?",
         'Filters [none] apply: {"query": "museums", "filters": []}', {}),
        ("string_value_vs_int_metadata", "Articles after 2018",
         fence.format('{"query": "cities", "filters": [{"key": "year", "value": "2018", "operator": ">"}]}'), {}),
        ("chat_model_variant", "Articles about Tokyo",
         fence.format('{"query": "Tokyo", "filters": [{"key": "title", "value": "Tokyo"}]}'), {"_chat": True}),
    ]
    parser = VectorStoreQueryOutputParser()
    results = []
    for name, question, reply, opts in cases:
        emb = RecEmbedding(embed_dim=8, queries=[])
        index = build_index(emb)
        llm = Scripted(replies=[reply], prompts=[], chat_model=bool(opts.get("_chat")), messages=[])
        kwargs = {k: v for k, v in opts.items() if not k.startswith("_")}
        if "extra_filters" in kwargs:
            kwargs["extra_filters"] = MetadataFilters(filters=[MetadataFilter(**kwargs["extra_filters"])])
        retriever = VectorIndexAutoRetriever(index, vector_store_info=VECTOR_STORE_INFO, llm=llm, **kwargs)
        spec_seen: List[Any] = []
        orig_build = retriever._build_retriever_from_spec

        def build(spec, _orig=orig_build, _seen=spec_seen):
            _seen.append(spec.model_dump(mode="json"))
            r, qb = _orig(spec)
            _seen.append({"query_bundle": {"query_str": qb.query_str, "embedding": qb.embedding,
                                           "embedding_strs": qb.embedding_strs},
                          "similarity_top_k": r._similarity_top_k,
                          "filters": r._filters.model_dump(mode="json") if r._filters is not None else None})
            return r, qb

        retriever._build_retriever_from_spec = build
        STORE_QUERIES.clear()
        LOG.records.clear()
        try:
            direct = parser.parse(reply).parsed_output.model_dump(mode="json")
        except Exception as e:  # noqa: BLE001
            direct = {"error": err(e)}
        buf = io.StringIO()
        entry: dict = {"name": name, "question": question, "reply": reply, "options": opts,
                       "output_parser": direct}
        with contextlib.redirect_stdout(buf):
            try:
                nodes = retriever.retrieve(question)
                entry["retrieved"] = scored(nodes)
            except Exception as e:  # noqa: BLE001
                entry["error"] = err(e)
        entry["prompts"] = llm.prompts
        if llm.chat_model:
            entry["chat_messages"] = llm.messages
        entry["spec"] = spec_seen[0] if spec_seen else None
        entry["built"] = spec_seen[1] if len(spec_seen) > 1 else None
        entry["store_queries"] = list(STORE_QUERIES)
        entry["embedded_queries"] = list(emb.queries)
        entry["stdout"] = buf.getvalue()
        entry["warnings"] = list(LOG.records)
        results.append(entry)
    out["auto_retriever_cases"] = results


SQL_TOOL_DESC = (
    "Useful for translating a natural language query into a SQL query over a table "
    "containing: city, containing the population and country of each city; country, "
    "containing the name and continent of each country."
)
OTHER_TOOL_DESC = "Useful for answering semantic questions about different cities"


def run_engine(engine, question: str, llm: Scripted, emb: RecEmbedding, labels: List[str], replies: List[str]) -> dict:
    STORE_QUERIES.clear()
    emb.queries.clear()
    buf = io.StringIO()
    entry: dict = {"question": question, "replies": replies, "call_labels": labels}
    with contextlib.redirect_stdout(buf):
        try:
            response = engine.query(question)
            entry["response_type"] = type(response).__name__
            entry["response"] = str(response)
            entry["metadata"] = jsonable(dict(response.metadata or {}))
            entry["source_nodes"] = scored(response.source_nodes)
        except Exception as e:  # noqa: BLE001
            entry["error"] = err(e)
    entry["prompts"] = llm.prompts
    entry["unused_replies"] = list(llm.replies)
    entry["store_queries"] = list(STORE_QUERIES)
    entry["embedded_queries"] = list(emb.queries)
    entry["stdout"] = buf.getvalue()
    assert len(llm.prompts) == len(labels), (question, len(llm.prompts), labels, entry.get("error"), entry.get("response"))
    return entry


def sql_section(out: dict, db: SQLDatabase) -> None:
    out["selector"] = {
        "DEFAULT_SINGLE_SELECT_PROMPT_TMPL": DEFAULT_SINGLE_SELECT_PROMPT_TMPL,
        "FORMAT_STR": FORMAT_STR,
        "single_select_template_with_format": DEFAULT_SINGLE_SELECT_PROMPT_TMPL
        + "\n\n" + FORMAT_STR.replace("{", "{{").replace("}", "}}"),
    }
    # which selector does get_selector_from_llm pick?
    picks = {}
    for label, fc in [("non_function_calling", False), ("is_function_calling_model_true", True)]:
        try:
            picks[label] = type(get_selector_from_llm(Scripted(replies=[], prompts=[], fc_model=fc), is_multi=False)).__name__
        except Exception as e:  # noqa: BLE001
            picks[label] = {"error": err(e)}
    out["selector"]["get_selector_from_llm"] = picks
    sel_parser = SelectionOutputParser()
    parses = []
    for reply in [
        '[{"choice": 1, "reason": "SQL"}]',
        '{"choice": 2, "reason": "vector"}',
        'The answer is:\n[\n    {\n        choice: 1,\n        reason: "yaml style keys"\n    }\n]',
        '[{"choice": 1, "reason": "a"}, {"choice": 2, "reason": "b"}]',
        '{"answer": {"choice": 2, "reason": "nested"}}',
        '[{"choice": "1", "reason": "string choice"}]',
        'I pick the first one',
        '[{"choice": 1}]',
    ]:
        try:
            p = sel_parser.parse(reply)
            parses.append({"reply": reply, "answers": [{"choice": a.choice, "reason": a.reason} for a in p.parsed_output]})
        except Exception as e:  # noqa: BLE001
            parses.append({"reply": reply, "error": err(e)})
    out["selector"]["parse"] = parses

    out["sql_join_templates"] = {
        "DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL": sjq.DEFAULT_SQL_JOIN_SYNTHESIS_PROMPT_TMPL,
        "DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL": sjq.DEFAULT_SQL_AUGMENT_TRANSFORM_PROMPT_TMPL,
        "DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL": svq.DEFAULT_SQL_VECTOR_SYNTHESIS_PROMPT_TMPL,
    }
    out["format_sql_query"] = [
        {"in": s, "out": sjq._format_sql_query(s)}
        for s in ["SELECT a\nFROM t\tWHERE x = 1", "SELECT 1\r\nFROM t"]
    ]
    out["check_stop"] = [
        {"query_str": s, "stop": sjq._default_check_stop(QueryBundle(s))}
        for s in ["None", "none", "NONE", " None", "None.", "None\n", "'None'", "No"]
    ]

    def make_join(replies, engine_cls="join", **kw):
        emb = RecEmbedding(embed_dim=8, queries=[])
        llm = Scripted(replies=list(replies), prompts=[])
        sql_engine = NLSQLTableQueryEngine(sql_database=db, tables=["city", "country"], llm=llm, embed_model=emb)
        index = build_index(emb)
        sql_tool = QueryEngineTool.from_defaults(sql_engine, name="sql_tool", description=SQL_TOOL_DESC)
        if engine_cls == "join":
            other = index.as_query_engine(llm=llm, similarity_top_k=2)
            other_tool = QueryEngineTool.from_defaults(other, name="vector_tool", description=OTHER_TOOL_DESC)
            engine = sjq.SQLJoinQueryEngine(sql_tool, other_tool, llm=llm, **kw)
        else:
            auto = VectorIndexAutoRetriever(index, vector_store_info=VECTOR_STORE_INFO, llm=llm)
            other = RetrieverQueryEngine.from_args(auto, llm=llm)
            other_tool = QueryEngineTool.from_defaults(other, name="vector_tool", description=OTHER_TOOL_DESC)
            engine = svq.SQLAutoVectorQueryEngine(sql_tool, other_tool, llm=llm, **kw)
        return engine, llm, emb

    engine, _, _ = make_join(["x"])
    out["sql_join_engine_defaults"] = {
        "selector_class": type(engine._selector).__name__,
        "verbose": engine._verbose,
        "use_sql_join_synthesis": engine._use_sql_join_synthesis,
        "prompt_keys": sorted(engine.get_prompts().keys()),
    }
    engine, _, _ = make_join(["x"], engine_cls="auto")
    out["sql_auto_vector_engine_defaults"] = {
        "selector_class": type(engine._selector).__name__,
        "verbose": engine._verbose,
        "prompt_keys": sorted(engine.get_prompts().keys()),
    }

    big = "Tell me about the arts and culture of the city with the highest population."
    multi_sql = "SELECT city.name, city.population\nFROM city\nORDER BY city.population DESC\nLIMIT 1"
    sel_sql = '[{"choice": 1, "reason": "Needs the population column from the city table."}]'
    sel_other = '{"choice": 2, "reason": "A descriptive question about a city."}'
    join_cases = [
        ("sql_then_other", big, [sel_sql, multi_sql, "Tokyo has the highest population, 13,960,000.",
                                 "What are the arts and culture of Tokyo?",
                                 "Tokyo has kabuki theatre and many museums.",
                                 "Tokyo, the most populous city, is known for kabuki theatre and museums."],
         ["selector", "text_to_sql", "sql_response_synthesis", "sql_augment_transform", "other_text_qa", "sql_join_synthesis"], {}),
        ("other_tool", "What is Berlin known for?", [sel_other, "Museums, techno clubs and the Brandenburg Gate."],
         ["selector", "other_text_qa"], {}),
        ("no_join_synthesis", big, [sel_sql, multi_sql, "Tokyo has the highest population."],
         ["selector", "text_to_sql", "sql_response_synthesis"], {"use_sql_join_synthesis": False}),
        ("augment_none_stops", "What is the city with the highest population?",
         [sel_sql, "SELECT name FROM city ORDER BY population DESC LIMIT 1", "Tokyo.", "None"],
         ["selector", "text_to_sql", "sql_response_synthesis", "sql_augment_transform"], {}),
        ("augment_none_dot_continues", "What is the city with the highest population?",
         [sel_sql, "SELECT name FROM city ORDER BY population DESC LIMIT 1", "Tokyo.", "None.",
          "I don't know.", "Tokyo."],
         ["selector", "text_to_sql", "sql_response_synthesis", "sql_augment_transform", "other_text_qa", "sql_join_synthesis"], {}),
        ("selector_out_of_range", big, ['[{"choice": 3, "reason": "no such tool"}]'], ["selector"], {}),
        ("selector_two_choices", big, ['[{"choice": 1, "reason": "a"}, {"choice": 2, "reason": "b"}]'], ["selector"], {}),
        ("selector_no_json", big, ["I pick the first one"], ["selector"], {}),
        ("quiet", "What is Berlin known for?", [sel_other, "Museums."], ["selector", "other_text_qa"], {"verbose": False}),
    ]
    res = []
    for name, q, replies, labels, kw in join_cases:
        engine, llm, emb = make_join(replies, **kw)
        entry = run_engine(engine, q, llm, emb, labels, replies)
        entry["name"] = name
        entry["options"] = kw
        res.append(entry)
    out["sql_join_cases"] = res

    spec_tokyo = '```json\n{"query": "arts and culture", "filters": [{"key": "title", "value": "Tokyo", "operator": "=="}]}\n```'
    spec_canada_empty = '```json\n{"query": "", "filters": [{"key": "country", "value": "Canada", "operator": "=="}]}\n```'
    spec_canada = '```json\n{"query": "city life", "filters": [{"key": "country", "value": "Canada", "operator": "=="}]}\n```'
    auto_cases = [
        ("sql_then_vector", big,
         [sel_sql, multi_sql, "Tokyo has the highest population, 13,960,000.",
          "What are the arts and culture of Tokyo?", spec_tokyo,
          "Tokyo has kabuki theatre and many museums.",
          "Tokyo, the most populous city, is known for kabuki theatre and museums."],
         ["selector", "text_to_sql", "sql_response_synthesis", "sql_augment_transform",
          "auto_retriever_spec", "vector_text_qa", "sql_vector_synthesis"], {}),
        ("vector_only", "What do the articles say about Canadian cities?",
         ['[{"choice": 2, "reason": "Semantic question about cities."}]', spec_canada,
          "Toronto has the CN Tower; Vancouver has a film industry."],
         ["selector", "auto_retriever_spec", "vector_text_qa"], {}),
        # empty spec query without default_empty_query_vector: QueryBundle("").embedding_strs == []
        # so nothing is embedded and SimpleVectorStore gets query_embedding=None -> TypeError.
        ("vector_only_empty_query_error", "What do the articles say about Canadian cities?",
         ['[{"choice": 2, "reason": "Semantic question about cities."}]', spec_canada_empty],
         ["selector", "auto_retriever_spec"], {}),
        ("no_vector_synthesis", big, [sel_sql, multi_sql, "Tokyo has the highest population."],
         ["selector", "text_to_sql", "sql_response_synthesis"], {"use_sql_vector_synthesis": False}),
    ]
    res = []
    for name, q, replies, labels, kw in auto_cases:
        engine, llm, emb = make_join(replies, engine_cls="auto", **kw)
        entry = run_engine(engine, q, llm, emb, labels, replies)
        entry["name"] = name
        entry["options"] = kw
        res.append(entry)
    out["sql_auto_vector_cases"] = res


NOTES = [
    "LLM.predict with a CustomLLM whose metadata.is_chat_model is False formats the PromptTemplate "
    "(SafeFormatter: regex \\{([^{}]+)\\}, unknown keys and '{{'/'}}' are left untouched) and calls "
    "complete(prompt, formatted=True); 'prompts' hold those strings. chat_model_variant shows the "
    "is_chat_model=True path: one user message, then CustomLLM.chat -> messages_to_prompt -> complete.",
    "Auto-retriever prompt: EXAMPLES is pre-escaped with '{{'/'}}' but SafeFormatter never unescapes, "
    "so the examples reach the LLM with doubled braces; schema_str is the model_json_schema() dict, "
    "rendered with Python str() (single quotes, None).",
    "SimpleVectorStore tie order: heapq of (score, node_id) tuples in insertion order, heappop when "
    "longer than top_k (so ties keep the largest ids), then a stable sort by score desc of the heap's "
    "internal list. MockEmbedding scores are all 0.9999999999999998 (numpy cosine of [0.5]*8).",
    "Spec parse failures (OutputParserException, incl. pydantic ValidationError) fall back to "
    "VectorStoreQuerySpec(query=<original query>, filters=[], top_k=None) with a logged warning; "
    "type errors in filter evaluation (str value vs int metadata) and an empty spec query without "
    "default_empty_query_vector raise TypeError instead.",
    "SQLJoin: the augment transform is called with query_bundle.query_str (a str), so run() builds "
    "custom_embedding_strs=[original question] and _run copies it; the other engine embeds the "
    "original question while its query_str is the transformed one. The augment prompt gets the SQL "
    "with \\n/\\t replaced by spaces; the join synthesis prompt gets the raw SQL. check_stop is "
    "query_str.lower() == 'none' with no strip.",
    "Response metadata merges {**sql_response.metadata, **other_response.metadata}; the SQL "
    "response's metadata carries a random uuid4 key (the SQL result TextNode id) replaced here by "
    "'<uuid>'. source_nodes are the other engine's only.",
]


def main() -> None:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = Scripted(replies=[], prompts=[])  # nothing should fall back to it
    path = tempfile.mktemp(suffix=".db")
    con = sqlite3.connect(path)
    con.executescript(open(sys.argv[1]).read())
    con.commit()
    con.close()
    db = SQLDatabase(create_engine(f"sqlite:///{path}"))
    out: dict = {"notes": NOTES}
    auto_retriever_section(out)
    sql_section(out, db)
    assert Settings.llm.prompts == [], "Settings.llm was used"
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
