"""Records what LlamaIndex's file readers give on the fixtures of this folder.

Run with a Python that has llama-index-core 0.14.25, llama-index-readers-file
0.7.0 (pypdf, pandas, beautifulsoup4), llama-index-readers-json 0.6.0,
docx2txt, EbookLib and html2text:
    python gen_expected.py
Writes expected.json: for each case, the documents (text and metadata) or the
error's type. Every reader gets extra_info {"source": "fixture"}.
"""

import json
import os
from pathlib import Path

from llama_index.readers.file import (
    CSVReader,
    DocxReader,
    EpubReader,
    HTMLTagReader,
    MarkdownReader,
    PandasCSVReader,
    PDFReader,
)
from llama_index.readers.json import JSONReader

HERE = Path(os.path.dirname(os.path.abspath(__file__)))
EXTRA = {"source": "fixture"}


def run(reader, name):
    try:
        docs = reader.load_data(Path(name), extra_info=dict(EXTRA))
    except Exception as e:  # recorded, not raised: the Rust side errors too
        return {"error": type(e).__name__}
    return {"docs": [{"text": d.text, "metadata": d.metadata} for d in docs]}


def main():
    # Relative paths, so that recorded paths do not depend on the checkout.
    os.chdir(HERE)
    cases = {}
    for name in [
        "two_pages.pdf",
        "labelled.pdf",
        "owner_only.pdf",
        "encrypted.pdf",
        "corrupt.pdf",
        "panics.pdf",
    ]:
        cases[f"PDFReader/{name}"] = run(PDFReader(), name)
    cases["PDFReader(return_full_document)/two_pages.pdf"] = run(
        PDFReader(return_full_document=True), "two_pages.pdf"
    )
    for name in ["notes.docx", "corrupt.docx"]:
        cases[f"DocxReader/{name}"] = run(DocxReader(), name)
    for name in ["people.csv", "numbers.csv", "ints.csv", "flags.csv", "crlf.csv"]:
        cases[f"CSVReader/{name}"] = run(CSVReader(), name)
        cases[f"CSVReader(concat_rows=False)/{name}"] = run(CSVReader(concat_rows=False), name)
        cases[f"PandasCSVReader/{name}"] = run(PandasCSVReader(), name)
        cases[f"PandasCSVReader(concat_rows=False)/{name}"] = run(
            PandasCSVReader(concat_rows=False), name
        )
    json_readers = {
        "JSONReader": JSONReader(),
        "JSONReader(clean_json=False)": JSONReader(clean_json=False),
        "JSONReader(levels_back=0)": JSONReader(levels_back=0),
        "JSONReader(levels_back=1)": JSONReader(levels_back=1),
        "JSONReader(levels_back=2,collapse_length=20)": JSONReader(levels_back=2, collapse_length=20),
        "JSONReader(levels_back=0,collapse_length=40)": JSONReader(levels_back=0, collapse_length=40),
        "JSONReader(ensure_ascii=True)": JSONReader(ensure_ascii=True),
    }
    for label, reader in json_readers.items():
        cases[f"{label}/data.json"] = run(reader, "data.json")
    cases["JSONReader(is_jsonl=True)/rows.jsonl"] = run(JSONReader(is_jsonl=True), "rows.jsonl")
    cases["JSONReader(is_jsonl=True,levels_back=0)/rows.jsonl"] = run(
        JSONReader(is_jsonl=True, levels_back=0), "rows.jsonl"
    )
    for name in ["guide.md", "headers_only.md"]:
        cases[f"MarkdownReader/{name}"] = run(MarkdownReader(), name)
    cases["MarkdownReader(keep links and images)/guide.md"] = run(
        MarkdownReader(remove_hyperlinks=False, remove_images=False), "guide.md"
    )
    cases["HTMLTagReader/page.html"] = run(HTMLTagReader(), "page.html")
    cases["HTMLTagReader(tag=li)/page.html"] = run(HTMLTagReader(tag="li"), "page.html")
    cases["EpubReader/book.epub"] = run(EpubReader(), "book.epub")

    with open(HERE / "expected.json", "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
