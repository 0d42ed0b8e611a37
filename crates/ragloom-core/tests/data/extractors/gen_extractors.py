"""Records LlamaIndex 0.14.25's metadata extractors: the exact prompts each
sends and the metadata/templates they leave on the nodes.

The LLM answers every prompt with "  reply-<number of characters of the prompt>  "
(so the answers do not depend on call order). Run with /tmp/li/bin/python.
"""
import asyncio
import json
from pathlib import Path
from typing import Any

from llama_index.core.extractors import (
    KeywordExtractor,
    QuestionsAnsweredExtractor,
    SummaryExtractor,
    TitleExtractor,
)
from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import Document
from llama_index.core.storage.docstore.utils import doc_to_json

PROMPTS = []


class RecordingLLM(MockLLM):
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        PROMPTS.append(prompt)
        return CompletionResponse(text=f"  reply-{len(prompt)}  ")

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self.complete(prompt, formatted=formatted, **kwargs)


def main() -> None:
    here = Path(__file__).parent
    docs = [
        Document(
            text="Rust is a systems programming language. It guarantees memory safety without a garbage collector. "
            "Cargo builds projects and fetches crates. The borrow checker enforces ownership rules at compile time. "
            "Traits describe shared behaviour.",
            id_="doc-rust",
            metadata={"file_name": "rust.txt", "year": 2015},
        ),
        Document(
            text="Python is an interpreted language. Its standard library is large. Indentation is significant.",
            id_="doc-python",
            metadata={"file_name": "python.txt"},
        ),
    ]
    counter = iter(range(10_000))
    splitter = SentenceSplitter(chunk_size=40, chunk_overlap=0, id_func=lambda i, d: f"{d.id_}-{i}")
    nodes = splitter.get_nodes_from_documents(docs)
    llm = RecordingLLM()
    out = {"input_nodes": [doc_to_json(n) for n in nodes], "steps": []}
    extractors = [
        TitleExtractor(llm=llm, nodes=2, num_workers=1),
        KeywordExtractor(llm=llm, keywords=3, num_workers=1),
        QuestionsAnsweredExtractor(llm=llm, questions=2, num_workers=1),
        SummaryExtractor(llm=llm, summaries=["prev", "self", "next"], num_workers=1),
    ]
    for ex in extractors:
        PROMPTS.clear()
        nodes = ex(nodes)
        out["steps"].append(
            {
                "extractor": ex.class_name(),
                "prompts": list(PROMPTS),
                "nodes": [
                    {"id": n.id_, "metadata": dict(n.metadata), "text_template": n.text_template}
                    for n in nodes
                ],
            }
        )
    (here / "extractors.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
