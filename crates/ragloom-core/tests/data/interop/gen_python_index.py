"""Writes `python_index/` (an index persisted by llama-index-core 0.14.25) and
`python_topk.json` (its top-k answers for fixed query vectors).

Run: /path/to/venv/bin/python gen_python_index.py   (in this folder)
Embeddings are a deterministic function of the text so the vectors differ
per node without any model; the queries are given as vectors.
"""
import hashlib, json, math, shutil
from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import QueryBundle

DIM = 8

def vec(text):
    h = hashlib.sha256(text.encode("utf-8")).digest()
    v = [(b - 127.5) / 127.5 for b in h[:DIM]]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]

docs = [
    Document(text="The cat sat on the mat. It was a sunny day in the garden.\n\nThe dog barked at the mailman.", id_="doc-animals", metadata={"file_name": "animals.txt", "topic": "pets", "year": 2021}),
    Document(text="Rust is a systems programming language. It guarantees memory safety without a garbage collector.", id_="doc-rust", metadata={"file_name": "rust.md", "topic": "code", "year": 2015}),
    Document(text="Ça va très bien, merci. Größe und Maß. 東京は日本の首都です。 🎉 Fin.", id_="doc-unicode", metadata={"file_name": "unicode.txt", "topic": "lang", "rating": 4.5, "draft": False}),
]
nodes = SentenceSplitter(chunk_size=24, chunk_overlap=4).get_nodes_from_documents(docs)
for n in nodes:
    n.embedding = vec(n.get_content(metadata_mode="embed"))
Settings.embed_model = MockEmbedding(embed_dim=DIM)
storage = StorageContext.from_defaults()
for d in docs:
    storage.docstore.set_document_hash(d.id_, d.hash)
index = VectorStoreIndex(nodes=nodes, storage_context=storage)
index.set_index_id("python-index")
shutil.rmtree("python_index", ignore_errors=True)
index.storage_context.persist("python_index")

queries = [vec("query one"), vec("query two"), vec("query three")]
out = []
for q in queries:
    for k in (1, 3, 5):
        res = index.as_retriever(similarity_top_k=k).retrieve(QueryBundle(query_str="", embedding=q))
        out.append({"query": q, "k": k, "ids": [r.node.node_id for r in res], "scores": [r.score for r in res],
                    "texts": [r.node.get_content() for r in res]})
json.dump({"num_nodes": len(nodes), "results": out}, open("python_topk.json", "w"), indent=1, ensure_ascii=False)
print(len(nodes), "nodes")
