"""Records LlamaIndex's Markdown, CSV and JSON readers on many small generated
inputs (seeded, so re-runs give the same file), for a differential test.

Run with the same Python as gen_expected.py:
    python gen_differential.py
Writes differential.json: a list of {reader, options, input, output}, where
output is the documents' texts or {"error": type name}.
"""

import json
import os
import random
import tempfile
from pathlib import Path

from llama_index.readers.file import CSVReader, MarkdownReader, PandasCSVReader
from llama_index.readers.json import JSONReader

HERE = Path(os.path.dirname(os.path.abspath(__file__)))
rng = random.Random(20241122)

MD_LINES = [
    "# Title", "## Sub", "### Deep", "#### Deeper", "#NoSpace", " # indented header",
    "plain text", "text with [a link](http://x.invalid) inside", "![img](p.png) pic",
    "Wow!? ok", "Hmm!. yes", "Q!(x) r", "```", "```python", "    code line", "",
    "   ", "<b>bold</b> and <i>it</i>", "a <span", "close> b", "- item", "1. first",
    "#", "## ", "tab\there", "##\tTabbed", "ünïcödé line", "[x](y) [z](w)",
]

CSV_CELLS = [
    "1", "-2", "+3", "0", "1.5", "-0.25", "1e3", "2E-2", "", "NA", "nan", "NaN", "null",
    "True", "false", "TRUE", "x", "hello world", '"q,uoted"', '"a""b"', " sp ", "inf",
    "-Infinity", "1_0", "0x1F", "007", "1.", ".5", "None", "n/a", "#N/A", "yes",
    '"multi\nline"', 'a"b', '"x"y', '"cr\r\nlf"', "\ttab", "-0", "9223372036854775807",
    # Integers beyond int64 are left out: pandas' result for them depends on
    # the order of the column's values (uint64, float or text).
    "0.1234567890123456789", "1e-320", "3.14159265358979323846", "1e", " 7 ",
]


def md_case():
    lines = [rng.choice(MD_LINES) for _ in range(rng.randint(1, 12))]
    sep = "\r\n" if rng.random() < 0.15 else "\n"
    return sep.join(lines) + (sep if rng.random() < 0.5 else "")


def csv_case():
    ncols = rng.randint(1, 4)
    header = ",".join("abcd"[:ncols])
    rows = []
    # One column's type family, so that typed columns occur often.
    families = [rng.choice([CSV_CELLS[:8], CSV_CELLS[4:12], CSV_CELLS[12:18], CSV_CELLS]) for _ in range(ncols)]
    for _ in range(rng.randint(0, 5)):
        r = rng.random()
        if r < 0.08:
            rows.append("")
        elif r < 0.12:
            rows.append("  ")
        else:
            n = ncols if rng.random() < 0.85 else rng.randint(1, ncols + 1)
            rows.append(",".join(rng.choice(families[min(i, ncols - 1)]) for i in range(n)))
    sep = "\r\n" if rng.random() < 0.2 else "\n"
    return header + sep + sep.join(rows) + (sep if rng.random() < 0.7 else "")


def json_value(depth):
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice([0, 1, -7, 2.5, 1e-7, 1e20, True, False, None, "s", "two words", "é", ""])
    if r < 0.65:
        return [json_value(depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["a", "b", "key", "k k", "ü"]) + str(i): json_value(depth + 1) for i in range(rng.randint(0, 3))}


def run(reader, text, suffix):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / ("input" + suffix)
        p.write_bytes(text.encode("utf-8"))
        try:
            return [doc.text for doc in reader.load_data(p, extra_info={})]
        except Exception as e:
            return {"error": type(e).__name__}


def main():
    cases = []
    for _ in range(150):
        text = md_case()
        for opts in [{}, {"remove_hyperlinks": False, "remove_images": False}]:
            cases.append({"reader": "MarkdownReader", "options": opts, "input": text,
                          "output": run(MarkdownReader(**opts), text, ".md")})
    for _ in range(250):
        text = csv_case()
        for name, reader in [("CSVReader", CSVReader(concat_rows=False)), ("PandasCSVReader", PandasCSVReader(concat_rows=False))]:
            cases.append({"reader": name, "options": {"concat_rows": False}, "input": text,
                          "output": run(reader, text, ".csv")})
    for _ in range(150):
        text = json.dumps(json_value(0))
        opts = rng.choice([{}, {"clean_json": False}, {"levels_back": 0}, {"levels_back": 1},
                           {"levels_back": 2, "collapse_length": 12}, {"levels_back": 0, "collapse_length": 30}])
        cases.append({"reader": "JSONReader", "options": opts, "input": text,
                      "output": run(JSONReader(**opts), text, ".json")})
    with open(HERE / "differential.json", "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
