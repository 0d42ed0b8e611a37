"""Records how llama-index-core 0.14.25 evaluates metadata filters.

Run with the reference interpreter:  /tmp/li/bin/python gen_filters.py
Writes filters_cases.json: a grid of every operator x value x metadata shape
(one letter per metadata shape: T true, F false, E Python raised), and a list
of {filters, metadata, python, expected} cases for conditions and nesting.
`python` is what build_metadata_filter_fn returns (or "error" when it raises);
`expected` is ragloom's answer: Python's, except that a filter Python cannot
apply (it raises TypeError) counts as not matching, and nested filters (which
SimpleVectorStore rejects) combine as and = all, or = any, not = none.
"""

import json
import os
import warnings

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

warnings.filterwarnings("ignore")  # pydantic warns on the deliberately loose values
HERE = os.path.dirname(os.path.abspath(__file__))

METADATA = [
    {},
    {"a": 2},
    {"a": 2.0},
    {"a": 2.5},
    {"a": -1},
    {"a": 9007199254740993},
    {"a": 9007199254740992.0},
    {"a": True},
    {"a": False},
    {"a": None},
    {"a": ""},
    {"a": "abc"},
    {"a": "ABC def"},
    {"a": "b"},
    {"a": "10"},
    {"a": []},
    {"a": ["x", "y"]},
    {"a": [1, 2, 3]},
    {"a": [1.0, "x"]},
    {"a": {"k": 1}},
    {"a": "héllo wörld"},
    {"a": "ΣΊΣΥΦΟΣ"},
    {"a": 0},
]

VALUES = [
    2,
    2.0,
    1,
    0,
    "abc",
    "b",
    "a",
    "B",
    "",
    "10",
    "k",
    "é",
    "σίσυφος",
    ["x"],
    ["x", "z"],
    [1, 2],
    [2.0],
    [],
    ["abc", "b"],
    None,
    9007199254740992,
]

OPS = [op for op in FilterOperator]


def leaf(f, metadata):
    fn = build_metadata_filter_fn(lambda _id: metadata, MetadataFilters(filters=[f]))
    try:
        return fn("x")
    except Exception:  # noqa: BLE001 - Python's TypeError / ValueError
        return "error"


def ours(filters, metadata):
    """ragloom's semantics: a leaf Python cannot apply is False; nesting recurses."""
    if not filters.filters:
        return True
    results = []
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            results.append(ours(f, metadata))
        else:
            r = leaf(f, metadata)
            results.append(False if r == "error" else r)
    cond = filters.condition or FilterCondition.AND
    if cond == FilterCondition.AND:
        return all(results)
    if cond == FilterCondition.OR:
        return any(results)
    return not any(results)


def python(filters, metadata):
    fn = build_metadata_filter_fn(lambda _id: metadata, filters)
    try:
        return fn("x")
    except Exception:  # noqa: BLE001
        return "error"


def make(key, value, op):
    # model_construct: Python's validation forbids some values (mixed lists);
    # the evaluator itself still runs on them.
    return MetadataFilter.model_construct(key=key, value=value, operator=op)


cases = []


def add(filters, metadata):
    py = python(filters, metadata)
    exp = ours(filters, metadata)
    has_nested = any(isinstance(f, MetadataFilters) for f in filters.filters)
    if py != "error" and not has_nested:
        assert py == exp, (filters, metadata, py, exp)
    cases.append(
        {
            "filters": json.loads(filters.model_dump_json()),
            "metadata": metadata,
            "python": py,
            "expected": exp,
        }
    )


# Every operator against every value and metadata shape.
letter = {True: "T", False: "F", "error": "E"}
grid = []
for op in OPS:
    for value in VALUES:
        row = ""
        for md in METADATA:
            r = python(MetadataFilters(filters=[make("a", value, op)]), md)
            row += letter[r]
        grid.append({"operator": op.value, "value": value, "results": row})

# Strings inside `in` / `any` / `all` iterate as characters in Python.
for op in (FilterOperator.ANY, FilterOperator.ALL, FilterOperator.IN, FilterOperator.NIN):
    for md in ({"a": "abc"}, {"a": ["a", "b"]}, {"a": "b"}):
        add(MetadataFilters(filters=[make("a", "ab", op)]), md)
        add(MetadataFilters(filters=[make("a", ["a", 1], op)]), md)
        add(MetadataFilters(filters=[make("a", [1, "a"], op)]), md)

# Conditions over several flat filters.
md = {"author": "Ann", "year": 2020, "tags": ["x", "y"], "score": 0.5}
flat = [
    make("author", "Ann", FilterOperator.EQ),
    make("year", 2019, FilterOperator.GT),
    make("tags", "z", FilterOperator.CONTAINS),
    make("missing", 1, FilterOperator.EQ),
    make("score", 0.5, FilterOperator.GTE),
]
for cond in FilterCondition:
    for i in range(len(flat)):
        for j in range(i, len(flat)):
            add(MetadataFilters(filters=[flat[i], flat[j]], condition=cond), md)
    add(MetadataFilters(filters=flat, condition=cond), md)
    add(MetadataFilters(filters=[], condition=cond), md)
    # a leaf Python cannot apply, under each condition
    add(
        MetadataFilters(
            filters=[make("author", 1, FilterOperator.GT), flat[0]], condition=cond
        ),
        md,
    )

# Nested filters (Python's SimpleVectorStore raises; ragloom recurses).
inner_or = MetadataFilters(filters=[flat[2], flat[1]], condition=FilterCondition.OR)
inner_not = MetadataFilters(filters=[flat[3], flat[2]], condition=FilterCondition.NOT)
inner_and = MetadataFilters(filters=[flat[0], flat[3]], condition=FilterCondition.AND)
for cond in FilterCondition:
    for inner in (inner_or, inner_not, inner_and):
        add(MetadataFilters(filters=[flat[0], inner], condition=cond), md)
        add(MetadataFilters(filters=[inner, inner_and], condition=cond), md)
    add(
        MetadataFilters(
            filters=[MetadataFilters(filters=[inner_or, inner_not], condition=cond)],
            condition=FilterCondition.NOT,
        ),
        md,
    )
    add(MetadataFilters(filters=[MetadataFilters(filters=[], condition=cond)]), md)

with open(os.path.join(HERE, "filters_cases.json"), "w", encoding="utf-8") as f:
    out = {"key": "a", "metadata": METADATA, "grid": grid, "cases": cases}
    f.write(json.dumps(out, ensure_ascii=False).replace('}, {"', '},\n{"'))
print(len(grid) * len(METADATA), "grid cells,", len(cases), "cases")

# The JSON shape of a nested MetadataFilters, as pydantic writes it.
shape = MetadataFilters(
    filters=[
        MetadataFilter(key="year", value=2020, operator=FilterOperator.GTE),
        MetadataFilters(
            filters=[
                MetadataFilter(key="tags", value=["a", "b"], operator=FilterOperator.ANY),
                MetadataFilter(key="title", value="x", operator=FilterOperator.TEXT_MATCH_INSENSITIVE),
                MetadataFilter(key="gone", value=None, operator=FilterOperator.IS_EMPTY),
            ],
            condition=FilterCondition.OR,
        ),
    ],
    condition=FilterCondition.NOT,
)
with open(os.path.join(HERE, "filters_shape.json"), "w", encoding="utf-8") as f:
    f.write(shape.model_dump_json())
