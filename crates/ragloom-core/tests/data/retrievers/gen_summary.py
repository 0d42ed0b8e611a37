"""Persists a LlamaIndex SummaryIndex, so that ragloom's loader is checked
against Python's files.

Run: /tmp/li/bin/python gen_summary.py  (writes summary_storage/ here).
"""

import os
import shutil

from llama_index.core import StorageContext, SummaryIndex
from llama_index.core.schema import TextNode

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = os.path.join(HERE, "summary_storage")
    shutil.rmtree(out, ignore_errors=True)
    nodes = [
        TextNode(text=f"Summary node {i}.", id_=f"s{i}", metadata={"i": i})
        for i in range(4)
    ]
    index = SummaryIndex(nodes)
    index.set_index_id("summary-index")
    index.storage_context.persist(out)


if __name__ == "__main__":
    main()
