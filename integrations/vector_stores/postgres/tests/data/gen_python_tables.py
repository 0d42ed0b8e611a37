"""Records what Python LlamaIndex's PGVectorStore writes and answers.

Run against the test server (see .ci/setup/postgres.sh), with the reference
interpreter:

    RAGLOOM_TEST_PG_URL=postgres://postgres@127.0.0.1:55432/postgres \
        /tmp/li/bin/python gen_python_tables.py

llama-index-vector-stores-postgres 0.9.0 and its drivers are installed from
PyPI into a cache folder put first on sys.path (not into the reference venv:
it needs SQLAlchemy < 2.1, the venv has 2.1). The script fills two tables in
the schema `ragloom_pyfixture` with the same nodes:
- py_plain:  LlamaIndex's defaults (metadata_ json, no hybrid search, no index);
- py_hybrid: use_jsonb, hybrid_search, an HNSW index.
Then it writes:
- python_tables.sql: pg_dump of that schema (DDL and INSERTs; psql
  meta-commands and comments dropped), which the Rust tests replay;
- python_tables.json: the nodes (to_dict, with embeddings), each table's
  layout (columns, indexes, names replaced by {schema}/{table}), and Python's
  answers to queries (ids, similarities, nodes) and to get_nodes.

`--read SCHEMA TABLE DIM` instead queries a table ragloom wrote, with Python,
and prints what Python reads (a manual interop check).
"""

import json
import os
import subprocess
import sys
from urllib.parse import urlparse

HERE = os.path.dirname(os.path.abspath(__file__))
SITE = os.path.expanduser("~/.cache/ragloom/pgli-site")
PACKAGES = [
    "llama-index-vector-stores-postgres==0.9.0",
    "psycopg2-binary==2.9.13",
    "asyncpg==0.30.0",
    "pgvector==0.4.2",
    "sqlalchemy==2.0.58",
]
SCHEMA = "ragloom_pyfixture"

if not os.path.isdir(os.path.join(SITE, "llama_index")):
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", SITE, *PACKAGES],
        check=True,
    )
sys.path.insert(0, SITE)

from llama_index.core.schema import (  # noqa: E402
    Document,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (  # noqa: E402
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)
from llama_index.vector_stores.postgres import PGVectorStore  # noqa: E402

URL = os.environ.get("RAGLOOM_TEST_PG_URL", "postgres://postgres@127.0.0.1:55432/postgres")
u = urlparse(URL)


def store(table, schema=SCHEMA, dim=4, **kwargs):
    return PGVectorStore.from_params(
        host=u.hostname,
        port=str(u.port or 5432),
        database=u.path.lstrip("/") or "postgres",
        user=u.username or "postgres",
        password=u.password or "",
        table_name=table,
        schema_name=schema,
        embed_dim=dim,
        **kwargs,
    )


def psql(sql):
    return subprocess.run(
        ["psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", URL, "-c", sql],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def nodes():
    def text_node(id_, text, metadata, doc, embedding):
        n = TextNode(id_=id_, text=text, metadata=metadata, embedding=embedding)
        n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
        return n

    out = [
        text_node("n-fox", "The quick brown fox jumps over the lazy dog.",
                  {"author": "Ann", "year": 2019, "tags": ["animals", "classic"], "rating": 4.5},
                  "doc-a", [1.0, 0.0, 0.0, 0.1]),
        text_node("n-cat", "A cat sleeps in the warm afternoon sun.",
                  {"author": "Bob", "year": 2021, "tags": ["animals"], "rating": 3},
                  "doc-a", [0.9, 0.1, 0.0, 0.0]),
        text_node("n-rust", "Rust programs are fast and memory safe.",
                  {"author": "Ann", "year": 2023, "tags": ["code"], "rating": 5.0, "lang": "en"},
                  "doc-b", [0.0, 1.0, 0.0, 0.0]),
        text_node("n-pg", "PostgreSQL stores rows in tables; pgvector adds vectors.",
                  {"author": "Zo\u00eb", "year": 2024, "tags": ["code", "db"]},
                  "doc-b", [0.0, 0.8, 0.6, 0.0]),
        text_node("n-uni", "\u00dcn\u00efc\u00f6d\u00e9 text: na\u00efve caf\u00e9, \u6771\u4eac, emoji \U0001F600.",
                  {"author": "Chlo\u00e9", "year": 2020, "tags": []},
                  "doc-c", [0.0, 0.0, 1.0, 0.2]),
        Document(id_="doc-z", text="A standalone document about dogs and their owners.",
                 metadata={"kind": "doc"}, embedding=[0.5, 0.5, 0.5, 0.5]),
    ]
    idx = IndexNode(id_="idx-1", text="Summary pointing at another index.",
                    index_id="sub-index", embedding=[0.1, 0.2, 0.3, 0.4])
    idx.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-c")
    out.append(idx)
    return out


def answer(result):
    return {
        "ids": result.ids,
        "similarities": [float(s) for s in result.similarities],
        "nodes": [n.to_dict() for n in result.nodes],
    }


QUERIES = [
    {"name": "dense_fox", "embedding": [1.0, 0.05, 0.0, 0.0], "top_k": 3},
    {"name": "dense_all", "embedding": [0.0, 0.7, 0.7, 0.1], "top_k": 7},
    {"name": "author_ann", "embedding": [0.0, 0.7, 0.7, 0.1], "top_k": 7,
     "filters": [["author", "==", "Ann"]]},
    {"name": "year_after_2020", "embedding": [0.0, 0.7, 0.7, 0.1], "top_k": 7,
     "filters": [["year", ">", 2020]]},
    {"name": "tagged_code", "embedding": [0.1, 1.0, 0.0, 0.0], "top_k": 7,
     "filters": [["tags", "contains", "code"]]},
    {"name": "bob_or_zoe", "embedding": [1.0, 0.0, 0.0, 0.0], "top_k": 7,
     "filters": [["author", "in", ["Bob", "Zo\u00eb"]]]},
    {"name": "text_fox_dogs", "query_str": "fox, dogs!", "top_k": 5, "mode": "text_search",
     "hybrid_only": True},
    {"name": "hybrid_rust", "embedding": [1.0, 0.05, 0.0, 0.0], "query_str": "rust memory",
     "top_k": 2, "mode": "hybrid", "hybrid_only": True},
]


def run_query(s, q):
    filters = None
    if "filters" in q:
        filters = MetadataFilters(filters=[
            MetadataFilter(key=k, operator=FilterOperator(op), value=v) for k, op, v in q["filters"]
        ])
    vsq = VectorStoreQuery(
        query_embedding=q.get("embedding"),
        query_str=q.get("query_str"),
        similarity_top_k=q["top_k"],
        mode=VectorStoreQueryMode(q.get("mode", "default")),
        filters=filters,
    )
    return answer(s.query(vsq))


def layout(table):
    columns = psql(
        "SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),"
        " 'not_null', a.attnotnull, 'default', pg_get_expr(d.adbin, d.adrelid),"
        " 'generated', a.attgenerated) ORDER BY a.attnum)"
        " FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
        f" WHERE a.attrelid = '{SCHEMA}.data_{table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped"
    )
    indexes = psql(
        "SELECT json_agg(json_build_object('name', indexname, 'def', indexdef) ORDER BY indexname)"
        f" FROM pg_indexes WHERE schemaname = '{SCHEMA}' AND tablename = 'data_{table}'"
    )

    def norm(text):
        return text.replace(SCHEMA, "{schema}").replace(table, "{table}")

    return {
        "columns": json.loads(norm(columns)),
        "indexes": json.loads(norm(indexes)),
    }


def read_ragloom_table(schema, table, dim):
    s = store(table, schema=schema, dim=dim, perform_setup=False)
    r = s.query(VectorStoreQuery(query_embedding=[1.0] + [0.0] * (dim - 1), similarity_top_k=100))
    for node, sim in zip(r.nodes, r.similarities):
        print(f"{sim:.6f}", type(node).__name__, node.node_id, node.ref_doc_id, repr(node.text[:60]),
              json.dumps(node.metadata, ensure_ascii=False)[:120])


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--read":
        read_ragloom_table(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    psql(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    plain = store("py_plain")
    hybrid = store("py_hybrid", use_jsonb=True, hybrid_search=True,
                   hnsw_kwargs={"hnsw_m": 16, "hnsw_ef_construction": 64, "hnsw_ef_search": 40})
    ns = nodes()
    out = {"schema": SCHEMA, "nodes": [n.to_dict() for n in ns], "tables": {}}
    for name, s in (("py_plain", plain), ("py_hybrid", hybrid)):
        s.add(ns)
        answers = {}
        for q in QUERIES:
            if q.get("hybrid_only") and s is not hybrid:
                continue
            answers[q["name"]] = run_query(s, q)
        got = s.get_nodes(node_ids=["n-cat", "idx-1", "doc-z"])
        for n in got:
            n.embedding = [float(x) for x in n.embedding]
        out["tables"][name] = {
            "layout": layout(name),
            "answers": answers,
            "get_nodes": [n.to_dict() for n in got],
        }
    out["queries"] = QUERIES
    dump = subprocess.run(
        ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--no-comments",
         "-n", SCHEMA, URL],
        check=True, capture_output=True, text=True,
    ).stdout
    lines = [
        line for line in dump.splitlines()
        if line and not line.startswith("--") and not line.startswith("\\")
        and "set_config('search_path'" not in line
    ]
    with open(os.path.join(HERE, "python_tables.sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(HERE, "python_tables.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote python_tables.sql and python_tables.json")


if __name__ == "__main__":
    main()
