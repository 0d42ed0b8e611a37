"""Opens an index `ragloom --store postgres://...` wrote with Python LlamaIndex's
PostgreSQL stores (PGVectorStore, PostgresDocumentStore, PostgresIndexStore)
and load_index_from_storage, and prints what it sees: every node's hash and
text, the document hashes, the top-k of a query embedding given as JSON, and
the top-k of PostgreSQL full text for a query string.

usage: load_postgres.py URL SCHEMA NAME QUERY_EMBEDDING QUERY_TEXT"""
import json
import sys
from urllib.parse import urlparse

from llama_index.core import Settings, StorageContext, load_index_from_storage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode
from llama_index.storage.docstore.postgres import PostgresDocumentStore
from llama_index.storage.index_store.postgres import PostgresIndexStore
from llama_index.storage.kvstore.postgres import PostgresKVStore
from llama_index.vector_stores.postgres import PGVectorStore

url, schema, name = sys.argv[1], sys.argv[2], sys.argv[3]
query, text = json.loads(sys.argv[4]), sys.argv[5]
u = urlparse(url)
sync_url = f"postgresql+psycopg2://{u.netloc}{u.path}"
# No model is called: the query embedding is given.
Settings.embed_model = MockEmbedding(embed_dim=len(query))
vector_store = PGVectorStore.from_params(
    host=u.hostname, port=str(u.port), database=u.path.lstrip("/"),
    user=u.username, password=u.password or "", table_name=name,
    schema_name=schema, embed_dim=len(query), hybrid_search=True,
    use_jsonb=True, perform_setup=False,
)
# Through the key-value stores: the pinned kvstore's from_uri takes fewer
# arguments than the docstore package's from_uri passes on.
docstore = PostgresDocumentStore(
    PostgresKVStore.from_uri(sync_url, table_name=f"{name}_docstore", schema_name=schema)
)
index_store = PostgresIndexStore(
    PostgresKVStore.from_uri(sync_url, table_name=f"{name}_indexstore", schema_name=schema)
)
context = StorageContext.from_defaults(
    docstore=docstore, index_store=index_store, vector_store=vector_store
)
index = load_index_from_storage(context)
nodes = {node_id: [node.hash, node.text] for node_id, node in docstore.docs.items()}
dense = vector_store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=3))
sparse = vector_store.query(
    VectorStoreQuery(query_str=text, mode=VectorStoreQueryMode.TEXT_SEARCH, similarity_top_k=3)
)
print(json.dumps({
    "index_type": type(index).__name__,
    "index_nodes": sorted(index.index_struct.nodes_dict),
    "nodes": nodes,
    "hashes": docstore.get_all_document_hashes(),
    "top": [[i, s] for i, s in zip(dense.ids, dense.similarities)],
    "text_top": [[i, s] for i, s in zip(sparse.ids, sparse.similarities)],
}))
