"""Records how LlamaIndex's PGVectorStore (llama-index-vector-stores-postgres
0.9.0, `_build_sparse_query`) cleans a query string before `to_tsquery`.

Run with any Python 3:  python3 gen_tsquery.py   (writes tsquery_cases.json)
The two lines below are the store's own, applied to a list of inputs.
"""

import json
import os
import re

CASES = [
    "quick brown fox",
    "What is a fox?",
    "  leading and trailing  ",
    "don't stop",
    "version 3.14 and e.g. U.S.A.",
    "a.b.c .d e. ...f",
    "hello.world! x..y",
    "foo_bar baz-qux",
    "fox & (dog | !cat):*",
    "na\u00efve caf\u00e9 \u6771\u4eac \u65e5\u672c\u8a9e\u3002\u6b21",
    "\u0939\u093f\u0928\u094d\u0926\u0940 text",
    "emoji \U0001F600 here",
    "tab\tand\nnewline",
    "\u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3.",
    "\u00b2\u00b3 \u2167 numbers \u0661\u0662",
    "!!!",
    "",
    ".",
    "a.",
    "x.y",
]

HERE = os.path.dirname(os.path.abspath(__file__))
out = []
for q in CASES:
    cleaned = re.sub(r"(?!\b\.\b)\W+", " ", q).strip()
    out.append({"query": q, "tsquery": cleaned.replace(" ", "|")})
with open(os.path.join(HERE, "tsquery_cases.json"), "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False, indent=1)
    f.write("\n")
