"""Records LlamaIndex 0.14.25's text-to-SQL behaviour on the sample database.

Run with the reference virtualenv (llama-index-core 0.14.25 and its pinned
SQLAlchemy) from integrations/sql:
    python tests/py/record_text_to_sql.py tests/data/sample.sql tests/data/odd_types.sql \
        > tests/data/text_to_sql.json
"""

import json
import sqlite3
import sys
import tempfile
from typing import Any, List

from llama_index.core.indices.struct_store.sql_query import (
    DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2,
    NLSQLTableQueryEngine,
)
from llama_index.core.indices.struct_store.sql_retriever import (
    DefaultSQLParser,
    NLSQLRetriever,
)
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.prompts.default_prompts import DEFAULT_REFINE_PROMPT_TMPL, DEFAULT_TEXT_TO_SQL_TMPL
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import QueryBundle
from llama_index.core.utilities.sql_wrapper import SQLDatabase
from sqlalchemy import create_engine




class Scripted(CustomLLM):
    replies: List[str] = []
    prompts: List[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=3900, num_output=256, model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies.pop(0))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


def main() -> None:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    path = tempfile.mktemp(suffix=".db")
    con = sqlite3.connect(path)
    con.executescript(open(sys.argv[1]).read())
    con.commit()
    con.close()
    db = SQLDatabase(create_engine(f"sqlite:///{path}"))
    out: dict = {
        "text_to_sql_tmpl": DEFAULT_TEXT_TO_SQL_TMPL,
        "response_synthesis_tmpl_v2": DEFAULT_RESPONSE_SYNTHESIS_PROMPT_TMPL_V2,
        "refine_tmpl": DEFAULT_REFINE_PROMPT_TMPL,
        "dialect": db.dialect,
        "usable_tables": list(db.get_usable_table_names()),
        "table_info": {t: db.get_single_table_info(t) for t in db.get_usable_table_names()},
    }
    odd = tempfile.mktemp(suffix=".db")
    con = sqlite3.connect(odd)
    con.executescript(open(sys.argv[2]).read())
    con.close()
    odd_db = SQLDatabase(create_engine(f"sqlite:///{odd}"))
    out["odd_table_info"] = {t: odd_db.get_single_table_info(t) for t in odd_db.get_usable_table_names()}
    from llama_index.core.objects import SQLTableNodeMapping, SQLTableSchema

    mapping = SQLTableNodeMapping(db)
    out["table_nodes"] = [
        {"table_name": t, "context_str": c, "text": mapping.to_node(SQLTableSchema(table_name=t, context_str=c)).text}
        for t, c in [("city", None), ("orders", "One row per order line.")]
    ]
    runs = []
    for sql in [
        "SELECT name, population FROM city ORDER BY population DESC LIMIT 3",
        "SELECT c.name, p.name, o.quantity, o.note FROM orders o JOIN customer c ON c.id = o.customer_id JOIN product p ON p.id = o.product_id ORDER BY o.id",
        "SELECT name, price FROM product WHERE price > 30 ORDER BY price",
        "SELECT name, joined FROM customer ORDER BY id",
        "SELECT COUNT(*) AS n, AVG(price) FROM product",
        "SELECT name FROM city WHERE population > 99999999",
        "SELECT 1.0/3, 1e20, -0.0, 2.5e-7, X'00ff27', 'a\"b', 'it''s', 'both '' and \"'",
    ]:
        text, meta = db.run_sql(sql)
        runs.append({"sql": sql, "text": text, "col_keys": meta.get("col_keys"), "result_repr": [[repr(v) for v in r] for r in meta.get("result", [])]})
    out["run_sql"] = runs
    parser = DefaultSQLParser()
    replies = [
        "SELECT name FROM city",
        " SELECT name FROM city\nSQLResult: [('Toronto',)]\nAnswer: Toronto",
        "Question: q\nSQLQuery: SELECT 1\nSQLResult: 1",
        "```sql\nSELECT name FROM city;\n```",
        "SQLQuery: ```sql SELECT 2 ```",
        "Here you go:\n```sql\nSELECT name\nFROM city\n```\nThis lists cities.",
        "SQLResult: none\nSQLQuery: SELECT 3",
        "",
    ]
    out["parse"] = [{"reply": r, "sql": parser.parse_response_to_sql(r, QueryBundle("q"))} for r in replies]

    cases = []
    scripted = [
        ("Which city has the most people?", ["SELECT name, population FROM city ORDER BY population DESC LIMIT 1\nSQLResult:", "Tokyo, with 13,960,000 people."], {}),
        ("What did Ada order?", ["SQLQuery: SELECT p.name, o.quantity FROM orders o JOIN customer c ON c.id = o.customer_id JOIN product p ON p.id = o.product_id WHERE c.name = 'Ada'", "A kettle and two lamps."], {"tables": ["orders", "customer", "product"]}),
        ("How many people live in Atlantis?", ["SELECT population FROM atlantis", "I could not find that."], {}),
        ("How old is Ada?", ["SELECT age FROM customer WHERE name = 'Ada'", "Unknown."], {}),
        ("Name a city.", ["SELEC name FROM city", "Unknown."], {}),
        ("List the products.", ["SELECT name, price FROM product ORDER BY id"], {"synthesize_response": False}),
        ("List the products as a table.", ["SELECT name, price FROM product ORDER BY id"], {"synthesize_response": False, "markdown_response": True}),
        ("Which customers are in Japan?", ["SELECT customer.name FROM customer JOIN city ON city.id = customer.city_id JOIN country ON country.id = city.country_id WHERE country.name = 'Japan'", "Kenji and Mio."], {"tables": ["customer", "city", "country"], "context_query_kwargs": {"customer": "People who bought from the shop."}}),
    ]
    for question, replies, kwargs in scripted:
        llm = Scripted(replies=list(replies), prompts=[])
        engine = NLSQLTableQueryEngine(sql_database=db, llm=llm, **kwargs)
        response = engine.query(question)
        meta = dict(response.metadata or {})
        cases.append({
            "question": question,
            "replies": replies,
            "options": kwargs,
            "prompts": llm.prompts,
            "response": str(response),
            "sql_query": meta.get("sql_query"),
            "col_keys": meta.get("col_keys"),
            "result": [list(r) for r in meta.get("result", [])] if "result" in meta else None,
            "source_texts": [n.node.get_content() for n in response.source_nodes],
        })
    out["engine"] = cases
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
