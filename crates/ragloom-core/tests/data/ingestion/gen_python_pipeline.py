"""Persists a LlamaIndex 0.14.25 IngestionPipeline (SentenceSplitter +
MockEmbedding, SimpleDocumentStore, upserts) into python_pipeline/, the
folder layout `llama_cache` + `docstore.json`, and records the documents it
ingested in documents.json so the Rust tests can feed the same ones.
Run with /tmp/li/bin/python.
"""
import json
import shutil
from pathlib import Path

from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import Document
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores import SimpleVectorStore


def main() -> None:
    here = Path(__file__).parent
    docs = [
        Document(
            text="Alice was beginning to get very tired of sitting by her sister on the bank. " * 3,
            id_="alice.txt",
            metadata={"file_name": "alice.txt", "chapter": 1},
        ),
        Document(
            text="The Rabbit actually took a watch out of its waistcoat-pocket, and looked at it.",
            id_="rabbit.txt",
            metadata={"file_name": "rabbit.txt"},
        ),
    ]
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=32, chunk_overlap=4), MockEmbedding(embed_dim=8)],
        docstore=SimpleDocumentStore(),
        vector_store=SimpleVectorStore(),
    )
    nodes = pipeline.run(documents=docs)
    out = here / "python_pipeline"
    shutil.rmtree(out, ignore_errors=True)
    pipeline.persist(str(out))
    (here / "documents.json").write_text(
        json.dumps(
            {
                "documents": [{"id": d.id_, "text": d.text, "metadata": d.metadata, "hash": d.hash} for d in docs],
                "num_nodes": len(nodes),
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
