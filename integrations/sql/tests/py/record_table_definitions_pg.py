"""Records llama-index-tools-database 0.6.0's DatabaseToolSpec on PostgreSQL
(list_tables, describe_tables, load_data on the default schema) and
SQLAlchemy's CREATE TABLE for the tables of schema `shop` reflected with it.

Run with the reference virtualenv (plus llama-index-tools-database) from
integrations/sql, against a server where it may create and drop the
database ragloom_dbtool_ref:
    python tests/py/record_table_definitions_pg.py postgresql://postgres@127.0.0.1:55432/postgres \
        tests/data/sample_pg.sql > tests/data/table_definitions_pg.json
"""

import json, sys
from sqlalchemy import create_engine, MetaData, text
from sqlalchemy.schema import CreateTable
from llama_index.tools.database import DatabaseToolSpec
from llama_index.core.utilities.sql_wrapper import SQLDatabase
admin, script = sys.argv[1], sys.argv[2]
eng = create_engine(admin, isolation_level="AUTOCOMMIT")
with eng.connect() as c:
    c.execute(text("DROP DATABASE IF EXISTS ragloom_dbtool_ref"))
    c.execute(text("CREATE DATABASE ragloom_dbtool_ref"))
url = admin.rsplit('/',1)[0] + '/ragloom_dbtool_ref'
e = create_engine(url)
with e.begin() as c:
    c.exec_driver_sql(open(script).read())
spec = DatabaseToolSpec(sql_database=SQLDatabase(e))
out = {"list_tables": spec.list_tables(), "describe_tables": spec.describe_tables(),
       "load_data": [d.text for d in spec.load_data("SELECT id, actor, detail FROM audit_log ORDER BY id")]}
md = MetaData(schema="shop"); md.reflect(bind=e)
out["shop_sorted_tables"] = [t.name for t in md.sorted_tables]
out["shop_create_table"] = {t.name: str(CreateTable(t).compile(e)) for t in md.sorted_tables}
print(json.dumps(out, indent=1, ensure_ascii=False))
e.dispose()
with eng.connect() as c:
    c.execute(text("DROP DATABASE ragloom_dbtool_ref WITH (FORCE)"))
