"""Builds a VectorStoreIndex with Python LlamaIndex and persists it to a
folder for `ragloom import`; prints its nodes' hashes and texts, the document
hashes, and the top-k of a query embedding given as JSON. The embedding
counts letters, as the tests' stand-in Ollama server does."""
import json
import sys
from typing import List

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.vector_stores.types import VectorStoreQuery


def count(text: str) -> List[float]:
    n = lambda chars: float(sum(1 for c in text if c in chars))
    return [n("aeiou"), n("rst"), n("lmn"), 1.0]


class CountEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> List[float]:
        return count(query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return count(text)

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return count(query)


folder, query = sys.argv[1], json.loads(sys.argv[2])
Settings.embed_model = CountEmbedding()
docs = [
    Document(text="The heron stood in the reeds at dawn.", metadata={"file_name": "heron.txt"}),
    Document(text="Tide tables for the harbour, spring and neap.", metadata={"file_name": "tides.txt"}),
    Document(text="A recipe: lentils, onions, cumin and lemon.", metadata={"file_name": "recipe.txt"}),
]
index = VectorStoreIndex.from_documents(docs)
index.storage_context.persist(persist_dir=folder)
docstore = index.storage_context.docstore
result = index.vector_store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=2))
print(json.dumps({
    "nodes": {i: [n.hash, n.text] for i, n in docstore.docs.items()},
    "hashes": docstore.get_all_document_hashes(),
    "top": [[i, s] for i, s in zip(result.ids, result.similarities)],
}))
