"""Loads a folder `ragloom export --llamaindex` wrote with Python LlamaIndex's
load_index_from_storage and prints what it sees: every node's hash and text,
the document hashes, and the top-k of a query embedding given as JSON."""
import json
import sys

from llama_index.core import Settings, StorageContext, load_index_from_storage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.vector_stores.types import VectorStoreQuery

folder, query = sys.argv[1], json.loads(sys.argv[2])
# No model is called: the query embedding is given.
Settings.embed_model = MockEmbedding(embed_dim=len(query))
index = load_index_from_storage(StorageContext.from_defaults(persist_dir=folder))
docstore = index.storage_context.docstore
nodes = {node_id: [node.hash, node.text] for node_id, node in docstore.docs.items()}
result = index.vector_store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=3))
print(json.dumps({
    "index_type": type(index).__name__,
    "index_nodes": sorted(index.index_struct.nodes_dict),
    "nodes": nodes,
    "hashes": docstore.get_all_document_hashes(),
    "top": [[i, s] for i, s in zip(result.ids, result.similarities)],
}))
