"""Records llama-index-core 0.14.25's node <-> metadata payload helpers.

Run with the reference interpreter:  /tmp/li/bin/python gen_metadata_dicts.py
Writes metadata_dicts.json:
- "to_dict": {node (to_dict()), remove_text, flat_metadata, expected} where
  expected is node_to_metadata_dict's dict, or {"error": message} when it raises;
  "expected_json" is json.dumps of it, so key order and `_node_content` are checked
  byte for byte.
- "from_dict": {metadata, text, expected} where expected is
  metadata_dict_to_node(metadata, text).to_dict() plus "python_class", or
  {"error": message}.
"""

import json
import os

from llama_index.core.schema import (
    Document,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.utils import (
    metadata_dict_to_node,
    node_to_metadata_dict,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def nodes():
    source = RelatedNodeInfo(
        node_id="doc-1", metadata={"file": "a.txt", "n": 1.5}, hash="abc123"
    )
    rich = TextNode(
        id_="node-rich",
        text="Héllo \"wörld\"\n\ttab \u007f \u2028 😀 \\ end",
        metadata={
            "author": "Zoë",
            "year": 2020,
            "score": 0.5,
            "tiny": 1e-07,
            "whole": 1.0,
            "flag": True,
            "none": None,
            "tags": ["x", "ü", 3],
            "nested": {"k": [1, {"z": None}]},
        },
        excluded_embed_metadata_keys=["year"],
        excluded_llm_metadata_keys=["score"],
        start_char_idx=3,
        end_char_idx=40,
        embedding=[0.25, -1.0, 3.5],
    )
    rich.relationships[NodeRelationship.SOURCE] = source
    rich.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id="node-0")
    yield rich

    plain = TextNode(id_="node-plain", text="no source here")
    yield plain

    flat = TextNode(id_="node-flat", text="flat", metadata={"a": "b", "n": 2, "f": 2.5, "z": None, "t": False})
    flat.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-2")
    yield flat

    clash = TextNode(
        id_="node-clash",
        text="keys that the payload overwrites",
        metadata={"doc_id": "mine", "_node_type": "Mine", "a": 1, "_node_content": "x", "ref_doc_id": None},
        metadata_template="{key}={value}",
        metadata_separator=" | ",
        text_template="{content}\n--\n{metadata_str}",
    )
    clash.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-3")
    yield clash

    yield Document(id_="doc-1", text="A whole document.", metadata={"file": "a.txt"})
    yield Document(id_="doc-empty", text="")
    idx = IndexNode(id_="index-node", text="points elsewhere", index_id="other-index")
    idx.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-1")
    yield idx


def to_dict_case(node, remove_text, flat_metadata):
    case = {
        "node": node.to_dict(),
        "remove_text": remove_text,
        "flat_metadata": flat_metadata,
    }
    try:
        expected = node_to_metadata_dict(
            node, remove_text=remove_text, flat_metadata=flat_metadata
        )
    except ValueError as e:
        case["expected"] = {"error": str(e)}
        return case
    case["expected"] = expected
    case["expected_json"] = json.dumps(expected)
    return case


def from_dict_case(metadata, text):
    case = {"metadata": metadata, "text": text}
    try:
        node = metadata_dict_to_node(dict(metadata), text)
    except Exception as e:  # noqa: BLE001 - ValueError or a parse error
        case["expected"] = {"error": str(e)}
        return case
    case["expected"] = node.to_dict()
    case["python_class"] = type(node).__name__
    return case


to_cases = []
from_cases = []
for node in nodes():
    for remove_text in (True, False):
        to_cases.append(to_dict_case(node, remove_text, False))
    to_cases.append(to_dict_case(node, True, True))
    md = node_to_metadata_dict(node, remove_text=True)
    from_cases.append(from_dict_case(md, node.get_content()))
    from_cases.append(from_dict_case(md, None))
    from_cases.append(from_dict_case(node_to_metadata_dict(node), None))

# `_node_type` decides the class, whatever the content's class_name says.
md = node_to_metadata_dict(TextNode(id_="typed", text="t"), remove_text=True)
from_cases.append(from_dict_case({**md, "_node_type": "IndexNode"}, "as index"))
from_cases.append(from_dict_case({**md, "_node_type": "Unknown"}, "as text"))
from_cases.append(from_dict_case({**md, "_node_type": None}, None))
# No payload at all: Python raises (stores then fall back to a bare TextNode).
from_cases.append(from_dict_case({"author": "x"}, "text"))

with open(os.path.join(HERE, "metadata_dicts.json"), "w", encoding="utf-8") as f:
    json.dump({"to_dict": to_cases, "from_dict": from_cases}, f, ensure_ascii=False, indent=1)
    f.write("\n")
print(len(to_cases), "to_dict cases,", len(from_cases), "from_dict cases")
