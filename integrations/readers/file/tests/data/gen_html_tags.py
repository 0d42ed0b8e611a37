"""Records LlamaIndex's HTMLTagReader (BeautifulSoup over html.parser) on
many small generated pages (seeded, so re-runs give the same file), for a
differential test of the streaming reader: nesting of the tag directly and
through other elements, text split by comments, entities, script and style
inside and around, void and self-closed elements, tags left open, end tags
with no start.

Run with llama-index-readers-file (0.7.0 was used) installed:
    python gen_html_tags.py
Writes html_tags.json: a list of {tag, ignore_no_id, input, output}, where
output is [[text, tag_id], ...] in document order.
"""

import json
import os
import random
import tempfile
from pathlib import Path

from llama_index.readers.file import HTMLTagReader

HERE = Path(os.path.dirname(os.path.abspath(__file__)))
rng = random.Random(20261206)

TAGS = ["section", "div", "li", "p"]
INLINE = ["b", "i", "span", "a"]
TEXTS = ["one", " two  words ", "\n", "  ", "x &amp; y", "&lt;tag&gt;", "caf&eacute;",
         "&#65;&#x42;", "ünï", "a\tb", "", "3 &gt; 2"]


def text():
    return rng.choice(TEXTS)


def node(depth, tag):
    r = rng.random()
    if depth > 4 or r < 0.3:
        return text()
    if r < 0.36:
        return "<!-- " + rng.choice(["c", " note ", ""]) + " -->"
    if r < 0.42:
        return rng.choice(["<br>", "<br/>", "<img src='x'>", "<hr>", "<div/>", "<span/>"])
    if r < 0.48:
        return "<script>var a = '<b>x</b>';</script>" if rng.random() < 0.5 else "<style>p{}</style>"
    name = rng.choice([tag, tag, "div", "ul", "p"] + INLINE)
    attrs = ""
    k = rng.random()
    if k < 0.35:
        attrs = f' id="{rng.choice(["a", "b", "", "x y"])}"'
    elif k < 0.45:
        attrs = f" class='c' id=i{rng.randint(0, 9)}"
    inner = "".join(node(depth + 1, tag) for _ in range(rng.randint(0, 4)))
    close = f"</{name}>" if rng.random() < 0.85 else ""
    return f"<{name}{attrs}>{inner}{close}"


def page(tag):
    body = "".join(node(0, tag) for _ in range(rng.randint(1, 5)))
    if rng.random() < 0.1:
        body += f"</{rng.choice(TAGS + INLINE)}>"
    if rng.random() < 0.5:
        return f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>"
    return body


def main():
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        for _ in range(600):
            tag = rng.choice(TAGS)
            ignore_no_id = rng.random() < 0.25
            html = page(tag)
            path.write_text(html, encoding="utf-8")
            docs = HTMLTagReader(tag=tag, ignore_no_id=ignore_no_id).load_data(path)
            cases.append({
                "tag": tag,
                "ignore_no_id": ignore_no_id,
                "input": html,
                "output": [[d.text, d.metadata["tag_id"]] for d in docs],
            })
    (HERE / "html_tags.json").write_text(json.dumps(cases, ensure_ascii=False, indent=0) + "\n")


if __name__ == "__main__":
    main()
