"""Loads an index persisted by ragloom with Python llama-index-core and prints,
as JSON, what Python sees: node count, per-node hashes and texts, and the
top-k ids and scores for the query vectors given in the request file.

Usage: python load_and_query.py PERSIST_DIR REQUEST_JSON
REQUEST_JSON: {"dim": int, "queries": [[floats]], "k": int}
"""
import json, sys
from llama_index.core import Settings, StorageContext, load_index_from_storage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import QueryBundle

persist_dir, request_path = sys.argv[1], sys.argv[2]
req = json.load(open(request_path))
Settings.embed_model = MockEmbedding(embed_dim=req["dim"])
storage = StorageContext.from_defaults(persist_dir=persist_dir)
index = load_index_from_storage(storage)
docs = storage.docstore.docs
out = {
    "index_id": index.index_id,
    "nodes": {nid: {"hash": n.hash, "text": n.get_content(), "ref_doc_id": n.ref_doc_id,
                    "start": getattr(n, "start_char_idx", None), "end": getattr(n, "end_char_idx", None)}
              for nid, n in docs.items()},
    "doc_hashes": storage.docstore.get_all_document_hashes(),
    "results": [],
}
for q in req["queries"]:
    res = index.as_retriever(similarity_top_k=req["k"]).retrieve(QueryBundle(query_str="", embedding=q))
    out["results"].append({"ids": [r.node.node_id for r in res], "scores": [r.score for r in res]})
print(json.dumps(out, ensure_ascii=False))
