"""Records llama-index-core 0.14.25's on-disk docstore / index store format.

Run from this directory with the reference interpreter:
    /tmp/li/bin/python gen_storage.py
Writes:
  index/{docstore,index_store}.json   VectorStoreIndex.from_documents(...) persisted
  index/expected_nodes.json           what each stored node means (ids, text, offsets, hashes)
  multi/index_store.json              vector + summary + keyword-table index in one store
  sequence.json                       a scripted add/delete sequence, the store after each step
  legacy.json                         an old-format docstore and how Python reads it
"""

import json
import os
import shutil
import tempfile

from llama_index.core import (
    Document,
    MockEmbedding,
    Settings,
    SimpleKeywordTableIndex,
    StorageContext,
    SummaryIndex,
    VectorStoreIndex,
)
from llama_index.core.llms import MockLLM
from llama_index.core.schema import IndexNode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore

HERE = os.path.dirname(os.path.abspath(__file__))
Settings.embed_model = MockEmbedding(embed_dim=4)
Settings.llm = MockLLM()


def documents():
    return [
        Document(
            id_="doc-alpha",
            text="Alpha beta gamma. Delta epsilon zeta.\n\nEta theta iota kappa.",
            metadata={"file_name": "alpha.txt", "page": 1, "score": 0.25},
        ),
        Document(
            id_="doc-unicode",
            text="Héllo wörld — naïve café. Ünïcödé 😀 text survives the round trip.",
            metadata={"file_name": "ünï.txt", "tags": ["a", "é"], "ok": True, "none": None},
            excluded_llm_metadata_keys=["tags"],
        ),
        Document(
            id_="doc-plain",
            text="Zeta eta theta.",
            metadata={},
        ),
    ]


def copy(src_dir, dst_dir, names):
    os.makedirs(dst_dir, exist_ok=True)
    for name in names:
        shutil.copyfile(os.path.join(src_dir, name), os.path.join(dst_dir, name))


def record_index():
    with tempfile.TemporaryDirectory() as tmp:
        index = VectorStoreIndex.from_documents(documents())
        index.storage_context.persist(tmp)
        copy(tmp, os.path.join(HERE, "index"), ["docstore.json", "index_store.json"])
        docstore = index.storage_context.docstore
        expected = []
        for node_id, node in docstore.docs.items():
            expected.append(
                {
                    "id": node_id,
                    "class_name": node.class_name(),
                    "text": node.get_content(),
                    "metadata": node.metadata,
                    "relationships": {
                        k.value: v.to_dict() for k, v in node.relationships.items()
                    },
                    "start_char_idx": node.start_char_idx,
                    "end_char_idx": node.end_char_idx,
                    "hash": node.hash,
                    "ref_doc_id": node.ref_doc_id,
                }
            )
        doc_hashes = {d.id_: d.hash for d in documents()}
        with open(os.path.join(HERE, "index", "expected_nodes.json"), "w") as f:
            json.dump(
                {
                    "index_id": index.index_id,
                    "nodes": expected,
                    "document_hashes": doc_hashes,
                    "documents": [d.to_dict() for d in documents()],
                    "all_document_hashes": docstore.get_all_document_hashes(),
                    "ref_doc_info": {
                        k: v.to_dict() for k, v in docstore.get_all_ref_doc_info().items()
                    },
                },
                f,
                indent=1,
            )


def record_multi():
    with tempfile.TemporaryDirectory() as tmp:
        ctx = StorageContext.from_defaults()
        docs = documents()
        VectorStoreIndex.from_documents(docs, storage_context=ctx)
        SummaryIndex.from_documents(docs, storage_context=ctx)
        SimpleKeywordTableIndex.from_documents(docs[:1], storage_context=ctx)
        ctx.persist(tmp)
        copy(tmp, os.path.join(HERE, "multi"), ["index_store.json"])


def node(id_, text, source=None, metadata=None, cls=TextNode, **kw):
    rels = {}
    if source is not None:
        rels[NodeRelationship.SOURCE] = source.as_related_node_info()
    return cls(id_=id_, text=text, metadata=metadata or {}, relationships=rels, **kw)


def record_sequence():
    d1 = Document(id_="d1", text="First document.", metadata={"title": "One", "n": 1})
    d2 = Document(id_="d2", text="Deuxième document, été.", metadata={"title": "Deux"})
    n1 = node("n1", "First", d1, {"title": "One", "part": 1})
    n2 = node("n2", "document.", d1, {"title": "One", "part": 2})
    n3 = node("n3", "Deuxième", d2)
    n4 = node("n4", "orphan node")
    n5 = node("n5", "not stored", d2, {"k": "v"})
    n1b = node("n1", "First, edited", d1, {"title": "One", "part": 1, "edited": True})
    i1 = node("i1", "points elsewhere", d1, cls=IndexNode, index_id="other-index")
    # Two nodes of one new ref doc in one batch: merged ref-doc info.
    d3 = Document(id_="d3", text="third", metadata={})
    n6 = node("n6", "six", d3, {"a": 1})
    n7 = node("n7", "seven", d3, {"b": 2})

    store = SimpleDocumentStore()
    steps = []

    def step(op, fn):
        error = None
        try:
            fn()
        except Exception as e:  # recorded: Rust must fail at the same step
            error = f"{type(e).__name__}: {e}"
        steps.append(
            {
                "op": op,
                "error": error,
                "state": json.dumps(store.to_dict()),
                "all_document_hashes": store.get_all_document_hashes(),
                "ref_doc_info": {
                    k: v.to_dict() for k, v in (store.get_all_ref_doc_info() or {}).items()
                },
            }
        )

    step("add n1 n2 n3 n4", lambda: store.add_documents([n1, n2, n3, n4]))
    step("add d1", lambda: store.add_documents([d1]))
    step("set_document_hash d2 h2", lambda: store.set_document_hash("d2", "h2"))
    step("add n5 store_text=false", lambda: store.add_documents([n5], store_text=False))
    step("add n1b", lambda: store.add_documents([n1b], allow_update=True))
    step("add n2 allow_update=false", lambda: store.add_documents([n2], allow_update=False))
    step("add n6 n7", lambda: store.add_documents([n6, n7]))
    step("add i1", lambda: store.add_documents([i1]))
    step("delete n1", lambda: store.delete_document("n1"))
    step("delete missing ignore", lambda: store.delete_document("missing", raise_error=False))
    step("delete missing", lambda: store.delete_document("missing"))
    step("delete n2", lambda: store.delete_document("n2"))
    step("delete i1", lambda: store.delete_document("i1"))
    step("delete_ref_doc d2", lambda: store.delete_ref_doc("d2"))
    step("delete_ref_doc d2 again", lambda: store.delete_ref_doc("d2"))
    step("delete n5", lambda: store.delete_document("n5"))
    step("delete_ref_doc d3", lambda: store.delete_ref_doc("d3"))
    with open(os.path.join(HERE, "sequence.json"), "w") as f:
        json.dump(
            {
                "nodes": {
                    n.id_ + ("b" if n is n1b else ""): {"__type__": n.get_type(), "__data__": n.to_dict()}
                    for n in [d1, d2, n1, n2, n3, n4, n5, n1b, i1, d3, n6, n7]
                },
                "steps": steps,
            },
            f,
            indent=1,
        )


def record_legacy():
    legacy = {
        "docstore/data": {
            "old-doc": {
                "__type__": "4",
                "__data__": {"text": "legacy text", "doc_id": "old-doc", "extra_info": {"k": 1},
                             "relationships": {}},
            },
            "old-node": {
                "__type__": "1",
                "__data__": {"text": "legacy node", "doc_id": "old-node", "extra_info": None,
                             "relationships": {"1": "old-doc"}},
            },
        },
        "docstore/ref_doc_info": {
            "old-doc": {"doc_ids": ["old-node"], "extra_info": {"k": 1}},
        },
        "docstore/metadata": {
            "old-node": {"doc_hash": "abc", "ref_doc_id": "old-doc"},
        },
    }
    store = SimpleDocumentStore.from_dict(json.loads(json.dumps(legacy)))
    read = {k: {"__type__": v.get_type(), "__data__": v.to_dict()} for k, v in store.docs.items()}
    with open(os.path.join(HERE, "legacy.json"), "w") as f:
        json.dump(
            {
                "file": legacy,
                "docs": read,
                "ref_doc_info": {k: v.to_dict() for k, v in store.get_all_ref_doc_info().items()},
            },
            f,
            indent=1,
        )


if __name__ == "__main__":
    record_index()
    record_multi()
    record_sequence()
    record_legacy()
