"""The Python LlamaIndex reference workload for `benches/store_bench.py`:
what a Python user would write to ingest a folder into a persisted BM25 store, and query it."""

import json
import sys
from pathlib import Path

from llama_index.core import SimpleDirectoryReader
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.retrievers.bm25 import BM25Retriever

TOP_K = 4  # the same as `ragloom --top-k`'s default


def ingest(corpus_dir: str, persist_dir: str) -> dict:
    documents = SimpleDirectoryReader(
        corpus_dir, recursive=True, filename_as_id=True
    ).load_data()
    # The pipeline's own docstore records document hashes, which is what makes
    # a later re-run incremental; the nodes themselves go to a separate store.
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter()], docstore=SimpleDocumentStore()
    )
    nodes = pipeline.run(documents=documents)
    node_store = SimpleDocumentStore()
    node_store.add_documents(nodes)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=TOP_K)

    out = Path(persist_dir)
    pipeline.persist(str(out / "pipeline"))
    node_store.persist(str(out / "storage" / "docstore.json"))
    retriever.persist(str(out / "bm25"))
    return {"nodes": len(nodes), "documents": len(documents)}


def query(persist_dir: str, question: str) -> dict:
    retriever = BM25Retriever.from_persist_dir(str(Path(persist_dir) / "bm25"))
    hits = retriever.retrieve(question)
    return {
        "node_ids": [h.node.node_id for h in hits],
        "scores": [h.score for h in hits],
    }


def main(argv: list) -> int:
    if len(argv) == 3 and argv[0] == "ingest":
        result = ingest(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "query":
        result = query(argv[1], argv[2])
    else:
        print(
            "usage: llamaindex_ingest.py ingest CORPUS_DIR PERSIST_DIR\n"
            "       llamaindex_ingest.py query PERSIST_DIR QUESTION",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
