"""Records what LlamaIndex 0.14.25 makes of the `add_numbers` / `multiply` doc
examples (FunctionTool.from_defaults and a BaseToolSpec), and the exact
strings of OnDemandLoaderTool / LoadAndSearchToolSpec.

Run: /tmp/li/bin/python gen_function_tool.py > function_tool.json
"""
import json
from typing import List

from llama_index.core.tools import FunctionTool
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from llama_index.core.tools.ondemand_loader_tool import OnDemandLoaderTool
from llama_index.core.tools.tool_spec.load_and_search.base import LoadAndSearchToolSpec
from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import Document
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

Settings.embed_model = MockEmbedding(embed_dim=8)
Settings.llm = MockLLM()


def add_numbers(x: int, y: int) -> int:
    """Adds the two numbers together and returns the result."""
    return x + y


def multiply(a: int, b: int) -> int:
    """Multiply two integers and returns the result integer"""
    return a * b


class MathToolSpec(BaseToolSpec):
    spec_functions = ["add_numbers", "multiply", "subtract"]

    def add_numbers(self, x: int, y: int) -> int:
        """Adds the two numbers together and returns the result."""
        return x + y

    def multiply(self, a: int, b: int) -> int:
        """Multiply two integers and returns the result integer"""
        return a * b

    def subtract(self, a: float, b: float) -> float:
        """Subtracts b from a."""
        return a - b


class WikiReader(BaseReader):
    def load_data(self, pages: List[str]) -> List[Document]:
        return [Document(text=p) for p in pages]


def meta(tool):
    m = tool.metadata
    return {
        "name": m.name,
        "description": m.description,
        "parameters": m.get_parameters_dict(),
        "fn_schema_str": m.fn_schema_str,
    }


out = {
    "function_tool": {
        "add_numbers": meta(FunctionTool.from_defaults(fn=add_numbers)),
        "multiply": meta(FunctionTool.from_defaults(fn=multiply)),
    },
    "tool_spec": [meta(t) for t in MathToolSpec().to_tool_list()],
}
ondemand = OnDemandLoaderTool.from_defaults(WikiReader(), name="wiki")
out["ondemand_loader"] = meta(ondemand)
spec = LoadAndSearchToolSpec.from_defaults(FunctionTool.from_defaults(fn=add_numbers))
out["load_and_search"] = {
    "spec_functions": spec.spec_functions,
    "tools": [meta(t) for t in spec.to_tool_list()],
    "loaded": spec.load(x=1, y=2),
    "read_before_load": LoadAndSearchToolSpec.from_defaults(
        FunctionTool.from_defaults(fn=add_numbers)).read("q"),
}
print(json.dumps(out, indent=2, ensure_ascii=False))
