"""Records what llama-index-core 0.14.25's node postprocessors and
SentenceWindowNodeParser produce on fixed inputs, as test data for ragloom's
`postprocessor` module and `SentenceWindowNodeParser`.

FixedRecencyPostprocessor needs pandas, which the reference venv lacks; run
with an interpreter that sees llama-index-core and pandas, e.g.

    python -m venv /tmp/pp-venv
    echo /tmp/li/lib/python3.11/site-packages > /tmp/pp-venv/lib/python3.11/site-packages/li.pth
    /tmp/pp-venv/bin/pip install pandas
    /tmp/pp-venv/bin/python crates/ragloom-core/tests/data/postprocessors/gen_postprocessors.py

KeywordNodePostprocessor needs spaCy and is not recorded (tested by hand).
The corpus is looked up in the nearest ancestor folder holding
`shared/corpus` (or $RAGLOOM_CORPUS_DIR); the essay's text is never written
out, only offsets and sha256 digests.
"""

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, List

from llama_index.core import Document
from llama_index.core.indices.utils import (
    default_format_node_batch_fn,
    default_parse_choice_select_answer_fn,
)
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.node_parser import SentenceWindowNodeParser
from llama_index.core.postprocessor import (
    FixedRecencyPostprocessor,
    LLMRerank,
    LongContextReorder,
    MetadataReplacementPostProcessor,
    AutoPrevNextNodePostprocessor,
    PrevNextNodePostprocessor,
    SimilarityPostprocessor,
    TimeWeightedPostprocessor,
)
from llama_index.core.schema import (
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.storage.docstore import SimpleDocumentStore

HERE = Path(__file__).resolve().parent


def corpus_dir() -> Path:
    env = os.environ.get("RAGLOOM_CORPUS_DIR")
    if env:
        return Path(env)
    for parent in HERE.parents:
        cand = parent / "shared" / "corpus"
        if cand.is_dir():
            return cand
    sys.exit("corpus folder shared/corpus not found; set RAGLOOM_CORPUS_DIR")


def sha(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def dump(name: str, value) -> None:
    with open(HERE / name, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


def nws(spec: dict) -> NodeWithScore:
    """A NodeWithScore from {id, text, score, metadata, prev, next}."""
    rel = {}
    if spec.get("prev"):
        rel[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id=spec["prev"])
    if spec.get("next"):
        rel[NodeRelationship.NEXT] = RelatedNodeInfo(node_id=spec["next"])
    node = TextNode(
        id_=spec["id"],
        text=spec.get("text", spec["id"]),
        metadata=dict(spec.get("metadata", {})),
        relationships=rel,
    )
    return NodeWithScore(node=node, score=spec.get("score"))


def out(nodes: List[NodeWithScore]) -> list:
    return [{"id": n.node.node_id, "score": n.score} for n in nodes]


QUERY = QueryBundle("What happened?")

# ---------------------------------------------------------------- similarity
SIM_NODES = [
    {"id": "a", "score": 0.9},
    {"id": "b", "score": None},
    {"id": "c", "score": -0.2},
    {"id": "d", "score": 0.5},
    {"id": "e", "score": 0.0},
    {"id": "f", "score": 0.49},
]
similarity = []
for cutoff in ["default", 0.5, -1.0]:
    p = (
        SimilarityPostprocessor()
        if cutoff == "default"
        else SimilarityPostprocessor(similarity_cutoff=cutoff)
    )
    res = p.postprocess_nodes([nws(s) for s in SIM_NODES], QUERY)
    similarity.append({"cutoff": cutoff, "output": out(res)})

# ---------------------------------------------------------- long context
reorder = []
SCORES = [0.3, None, 0.9, 0.1, 0.5, 0.5, 0.7, None, 0.2]
for n in range(len(SCORES) + 1):
    specs = [{"id": f"n{i}", "score": s} for i, s in enumerate(SCORES[:n])]
    res = LongContextReorder().postprocess_nodes([nws(s) for s in specs], QUERY)
    reorder.append({"input": specs, "output": [x.node.node_id for x in res]})

# ---------------------------------------------------------- time weighted
NOW = 1_700_000_000.0
TW_NODES = [
    {"id": "t0", "score": 0.5, "metadata": {"__last_accessed__": NOW - 3600}},
    {"id": "t1", "score": 0.8, "metadata": {"__last_accessed__": NOW - 7200}},
    {"id": "t2", "score": 0.0, "metadata": {}},
    {"id": "t3", "score": None, "metadata": {"__last_accessed__": NOW - 1800}},
    {"id": "t4", "score": 0.6, "metadata": {"__last_accessed__": NOW}},
    {"id": "t5", "score": 0.6, "metadata": {"last_seen": NOW - 360}},
]
time_weighted = []
for cfg in [
    {"top_k": 1},
    {"top_k": 3},
    {"top_k": 10},
    {"top_k": 10, "time_decay": 0.5},
    {"top_k": 4, "last_accessed_key": "last_seen", "time_access_refresh": False},
]:
    p = TimeWeightedPostprocessor(now=NOW, **cfg)
    res = p.postprocess_nodes([nws(s) for s in TW_NODES], QUERY)
    time_weighted.append(
        {
            "config": cfg,
            "output": [
                {
                    "id": x.node.node_id,
                    "score": x.score,
                    "metadata": x.node.metadata,
                }
                for x in res
            ],
        }
    )

# ---------------------------------------------------------- fixed recency
recency = []
for dates in [
    ["2023-01-05", "2024-03-01", "2022-12-31", "2024-03-01", "2023-06-15"],
    [
        "2023-01-05 10:00:00",
        "2023-01-05 09:59:59",
        "2023-01-05 10:00:01",
        "2022-01-01 00:00:00",
    ],
    [
        "2023-01-05T10:00:00Z",
        "2023-01-05T09:00:00Z",
        "2023-01-05T08:30:00Z",
    ],
]:
    specs = [
        {"id": f"r{i}", "score": 1.0 - i / 10, "metadata": {"date": d}}
        for i, d in enumerate(dates)
    ]
    for top_k in [1, 3, 10]:
        p = FixedRecencyPostprocessor(top_k=top_k)
        res = p.postprocess_nodes([nws(s) for s in specs], QUERY)
        recency.append({"input": specs, "top_k": top_k, "output": out(res)})

# ---------------------------------------------------------- prev / next
CHAIN = [f"c{i}" for i in range(7)]
chain_specs = []
for i, cid in enumerate(CHAIN):
    chain_specs.append(
        {
            "id": cid,
            "text": f"Chunk {i}.",
            "prev": CHAIN[i - 1] if i > 0 else None,
            "next": CHAIN[i + 1] if i + 1 < len(CHAIN) else None,
        }
    )
docstore = SimpleDocumentStore()
docstore.add_documents([nws(s).node for s in chain_specs])
by_id = {s["id"]: s for s in chain_specs}
prev_next = []
for retrieved in [
    [("c3", 0.9)],
    [("c1", 0.9), ("c5", 0.7)],
    [("c5", 0.9), ("c2", 0.8), ("c3", 0.7)],
    [("c0", 0.5), ("c6", 0.4)],
    [("c4", 0.8), ("c5", 0.6)],
]:
    for mode in ["next", "previous", "both"]:
        for num in [1, 2]:
            p = PrevNextNodePostprocessor(docstore=docstore, num_nodes=num, mode=mode)
            inp = [nws({**by_id[i], "score": s}) for i, s in retrieved]
            res = p.postprocess_nodes(inp, QUERY)
            prev_next.append(
                {
                    "retrieved": [[i, s] for i, s in retrieved],
                    "mode": mode,
                    "num_nodes": num,
                    "output": out(res),
                }
            )

# ---------------------------------------------------------- metadata replacement
MR_NODES = [
    {"id": "m0", "text": "short", "metadata": {"window": "the long window", "k": 1}},
    {"id": "m1", "text": "no window here", "metadata": {"k": 2}},
    {"id": "m2", "text": "empty window", "metadata": {"window": ""}},
]
mr = MetadataReplacementPostProcessor(target_metadata_key="window")
res = mr.postprocess_nodes([nws(s) for s in MR_NODES], QUERY)
metadata_replacement = {
    "input": MR_NODES,
    "output": [
        {
            "id": x.node.node_id,
            "text": x.node.text,
            "content_none": x.node.get_content(MetadataMode.NONE),
        }
        for x in res
    ],
}


# ---------------------------------------------------------- LLM rerank
class ScriptedLLM(CustomLLM):
    replies: List[str] = []
    prompts: List[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kw: Any):
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies[len(self.prompts) - 1])

    def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any):
        raise NotImplementedError


RR_NODES = [
    {"id": f"d{i}", "text": f"Document text number {i}.", "score": 0.1 * i,
     "metadata": {"source": f"s{i}"} if i % 2 == 0 else {}}
    for i in range(7)
]
llm_rerank = []
for case in [
    {
        "choice_batch_size": 3,
        "top_n": 10,
        "replies": [
            "Doc: 2, Relevance: 8\nDoc: 1, Relevance: 3",
            "Doc: 3, Relevance: 9\nDoc: 9, Relevance: 10\nnot an answer line",
            "Doc: 1, Relevance: 5",
        ],
    },
    {
        "choice_batch_size": 10,
        "top_n": 2,
        "replies": [
            "Answer:\nDoc: 4, Relevance: 6 (fairly relevant)\nDoc: 7, Relevance: 7\n"
            "Doc: 1, Relevance: 2"
        ],
    },
    {
        "choice_batch_size": 4,
        "top_n": 10,
        "replies": ["Doc: 2, Relevance: high", "Doc: 1, Relevance: 4"],
    },
]:
    llm = ScriptedLLM(replies=case["replies"], prompts=[])
    p = LLMRerank(
        llm=llm, choice_batch_size=case["choice_batch_size"], top_n=case["top_n"]
    )
    res = p.postprocess_nodes([nws(s) for s in RR_NODES], QUERY)
    llm_rerank.append({**case, "prompts": list(llm.prompts), "output": out(res)})

auto_prev_next = []
for retrieved, replies in [
    ([("c3", 0.9)], ["NEXT"]),
    ([("c3", 0.9), ("c1", 0.5)], ["Answer: PREVIOUS", "none of them"]),
    ([("c5", 0.9), ("c2", 0.8)], ["  next \n", "Previous."]),
]:
    llm = ScriptedLLM(replies=replies, prompts=[])
    p = AutoPrevNextNodePostprocessor(docstore=docstore, llm=llm, num_nodes=1)
    inp = [nws({**by_id[i], "score": s}) for i, s in retrieved]
    res = p.postprocess_nodes(inp, QUERY)
    auto_prev_next.append(
        {
            "retrieved": [[i, s] for i, s in retrieved],
            "replies": replies,
            "prompts": list(llm.prompts),
            "output": out(res),
        }
    )

parse_cases = []
for answer, n in [
    ("Doc: 9, Relevance: 7\nDoc: 3, Relevance: 4\nDoc: 7, Relevance: 3", 10),
    ("Doc: 9, Relevance: 7\nDoc: 3, Relevance: 4", 5),
    ("Doc: 2, Relevance: 7.5", 3),
    ("garbage\n\nDoc:1,Relevance:10\n  Doc: 2 , Relevance: 3/10  ", 3),
    ("Doc: 1, Relevance: 2, extra", 3),
    ("", 3),
]:
    nums, rels = default_parse_choice_select_answer_fn(answer, n)
    parse_cases.append({"answer": answer, "num_choices": n, "nums": nums, "relevances": rels})

format_batch = default_format_node_batch_fn([nws(s).node for s in RR_NODES[:3]])

dump(
    "postprocessors.json",
    {
        "similarity": similarity,
        "long_context_reorder": reorder,
        "time_weighted": {"now": NOW, "nodes": TW_NODES, "cases": time_weighted},
        "fixed_recency": recency,
        "prev_next": {"chain": chain_specs, "cases": prev_next},
        "auto_prev_next": auto_prev_next,
        "metadata_replacement": metadata_replacement,
        "llm_rerank": {"nodes": RR_NODES, "query": QUERY.query_str, "cases": llm_rerank},
        "parse_choice_select": parse_cases,
        "format_node_batch": format_batch,
    },
)

# ---------------------------------------------------------- sentence window
small_doc = Document(
    id_="doc-1",
    text="Hello there. This is the first sentence!  And a second one?\n\n"
    "Mr. Smith went to Washington. He left at 5 p.m. sharp. The end.",
    metadata={"file_name": "small.txt", "author": "someone"},
    excluded_llm_metadata_keys=["author"],
)
parser = SentenceWindowNodeParser.from_defaults()
nodes = parser.get_nodes_from_documents([small_doc])
small = []
for n in nodes:
    small.append(
        {
            "text": n.text,
            "metadata": n.metadata,
            "excluded_embed_metadata_keys": n.excluded_embed_metadata_keys,
            "excluded_llm_metadata_keys": n.excluded_llm_metadata_keys,
            "start_char_idx": n.start_char_idx,
            "end_char_idx": n.end_char_idx,
            "has_prev": n.prev_node is not None,
            "has_next": n.next_node is not None,
            "content_llm": n.get_content(MetadataMode.LLM),
            "content_embed": n.get_content(MetadataMode.EMBED),
        }
    )
doc_after = {
    "excluded_embed_metadata_keys": small_doc.excluded_embed_metadata_keys,
    "excluded_llm_metadata_keys": small_doc.excluded_llm_metadata_keys,
}

corpus = []
for rel, window_size in [("sources/alice29.txt", 3), ("paul_graham_essay.txt", 2)]:
    with open(corpus_dir() / rel, encoding="utf-8", newline="") as f:
        text = f.read()
    p = SentenceWindowNodeParser.from_defaults(window_size=window_size)
    ns = p.get_nodes_from_documents([Document(text=text)])
    corpus.append(
        {
            "file": rel,
            "window_size": window_size,
            "nodes": [
                [n.start_char_idx, n.end_char_idx, sha(n.text)[:16],
                 sha(n.metadata["window"])[:16]]
                for n in ns
            ],
        }
    )

dump(
    "sentence_window.json",
    {"small": small, "small_doc_after": doc_after, "corpus": corpus},
)
print("ok")
