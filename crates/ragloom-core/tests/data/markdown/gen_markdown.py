"""Records LlamaIndex 0.14.25's MarkdownNodeParser on a few Markdown documents:
each node's text, metadata and character offsets. Run with /tmp/li/bin/python.
"""
import json
from pathlib import Path

from llama_index.core.node_parser import MarkdownNodeParser
from llama_index.core.schema import Document

DOCS = {
    "nested": "# Title\n\nIntro paragraph.\n\n## Section A\n\nText of A.\n\n### Sub A.1\n\nDeep text.\n\n## Section B\nText of B.\n# Second top\nEnd.\n",
    "preamble_and_jumps": "Text before any header.\n\n# H1\n\n### Jumped to H3\n\nUnder H3.\n\n## Back to H2\n\nUnder H2.\n\n#### H4 under H2\nfour\n",
    "code_blocks": "# Code\n\nSome code:\n\n```python\n# not a header\ndef f():\n    return 1\n```\n\n  ```\n## still code (indented fence)\n  ```\n\n## After code\n\nDone.\n",
    "edge_headers": "#hashtag is not a header\n#\tTab header\n##  Two spaces  \n\n####### seven\n\ntext\n# \n\nempty header above\n",
    "unicode_and_crlf": "# Überschrift\r\n\r\nTëxt with ünïcode — dashes.\r\n\r\n## 日本語\r\n\r\n本文です。\r\n",
    "empty_sections": "# A\n# B\n\n## C\n\n   \n## D\ncontent\n",
}


def main() -> None:
    here = Path(__file__).parent
    out = {}
    for sep in ["/", " > "]:
        parser = MarkdownNodeParser(header_path_separator=sep)
        for name, text in DOCS.items():
            doc = Document(text=text, id_=f"doc-{name}", metadata={"file_name": f"{name}.md"})
            nodes = parser.get_nodes_from_documents([doc])
            out[f"{name}|{sep}"] = {
                "text": text,
                "separator": sep,
                "nodes": [
                    {
                        "text": n.text,
                        "metadata": n.metadata,
                        "start_char_idx": n.start_char_idx,
                        "end_char_idx": n.end_char_idx,
                    }
                    for n in nodes
                ],
            }
    (here / "markdown.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
