"""Records LlamaIndex 0.14.25's SQLDatabase behaviour on PostgreSQL.

Run with the reference virtualenv (llama-index-core 0.14.25, SQLAlchemy 2.0.59,
psycopg2) from integrations/sql, against an EMPTY database (server time zone
Etc/UTC, as .ci/setup/postgres.sh sets it up):
    psql postgres://postgres@127.0.0.1:55432/postgres -c 'CREATE DATABASE ragloom_sql_ref'
    $HOME/.cache/ragloom/pyref-llama-index-core-0.14.25/bin/python tests/py/record_text_to_sql_pg.py \
        postgresql://postgres@127.0.0.1:55432/ragloom_sql_ref tests/data/sample_pg.sql \
        > tests/data/text_to_sql_pg.json
    psql postgres://postgres@127.0.0.1:55432/postgres -c 'DROP DATABASE ragloom_sql_ref'

bytea values come back as memoryview, whose repr holds a memory address; those
addresses are replaced by 0xADDR so the output is deterministic.
"""

import json
import re
import sys
from typing import Any, Dict, List

import psycopg2
import sqlalchemy
from llama_index.core.utilities.sql_wrapper import SQLDatabase
from sqlalchemy import create_engine, event, text

ADDR = re.compile(r"<memory at 0x[0-9a-fA-F]+>")


def clean(s: str) -> str:
    return ADDR.sub("<memory at 0xADDR>", s)


def type_name(e: BaseException) -> str:
    return f"{type(e).__module__}.{type(e).__qualname__}"


def describe(db: SQLDatabase) -> Dict[str, Any]:
    tables = list(db.get_usable_table_names())
    return {
        "dialect": db.dialect,
        "usable_tables": tables,
        "table_info": {t: db.get_single_table_info(t) for t in tables},
    }


def main() -> None:
    url, sql_path = sys.argv[1], sys.argv[2]
    con = psycopg2.connect(url)
    with con, con.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")
        assert cur.fetchone()[0] == 0, "the database must be empty"
        cur.execute(open(sql_path, encoding="utf-8").read())
        cur.execute("SHOW TimeZone")
        tz = cur.fetchone()[0]
    con.close()

    engine = create_engine(url)
    # Every statement and transaction event the engine sends, to show what
    # run_sql executes around the caller's SQL.
    log: List[str] = []
    event.listen(engine, "begin", lambda conn: log.append("BEGIN (implicit, psycopg2 sends it before the first statement)"))
    event.listen(engine, "commit", lambda conn: log.append("COMMIT"))
    event.listen(engine, "rollback", lambda conn: log.append("ROLLBACK"))
    event.listen(
        engine,
        "before_cursor_execute",
        lambda conn, cursor, statement, params, context, executemany: log.append(f"EXECUTE {statement}"),
    )

    shop = SQLDatabase(engine, schema="shop")
    default = SQLDatabase(engine)
    shop_views = SQLDatabase(engine, schema="shop", view_support=True)
    default_views = SQLDatabase(engine, view_support=True)
    out: Dict[str, Any] = {
        "versions": {
            "sqlalchemy": sqlalchemy.__version__,
            "psycopg2": psycopg2.__version__,
            "server_time_zone": tz,
        },
        "notes": [],
        "schema_shop": describe(shop),
        "schema_default": describe(default),
        "schema_shop_view_support": describe(shop_views),
        "schema_default_view_support_usable_tables": list(default_views.get_usable_table_names()),
        # get_table_columns passes no schema, so it looks in the search_path (public).
        "get_table_columns_no_schema": {
            "audit_log": [c["name"] for c in default.get_table_columns("audit_log")],
        },
    }
    try:
        shop.get_table_columns("customers")
        out["get_table_columns_no_schema"]["customers_on_shop_db"] = "ok"
    except Exception as e:  # noqa: BLE001
        out["get_table_columns_no_schema"]["customers_on_shop_db"] = {"error_type": type_name(e), "error": str(e)}

    def record(db: SQLDatabase, sql: str) -> Dict[str, Any]:
        entry: Dict[str, Any] = {"sql": sql}
        if db._schema:
            entry["prefixed_sql"] = db._add_schema_prefix(sql)
        log.clear()
        try:
            text_, meta = db.run_sql(sql)
            entry["text"] = clean(text_)
            entry["col_keys"] = meta.get("col_keys")
            entry["result_repr"] = (
                [[clean(repr(v)) for v in r] for r in meta["result"]] if "result" in meta else None
            )
            entry["result_types"] = (
                [[type(v).__name__ for v in r] for r in meta["result"]] if "result" in meta else None
            )
            entry["meta_keys"] = sorted(meta)
        except Exception as e:  # noqa: BLE001
            entry["error_type"] = type_name(e)
            entry["error"] = str(e)
            cause = e.__cause__
            if cause is not None:
                entry["cause_type"] = type_name(cause)
                orig = getattr(cause, "orig", None)
                if orig is not None:
                    entry["orig_type"] = type_name(orig)
                    entry["orig_pgcode"] = getattr(orig, "pgcode", None)
            else:
                orig = getattr(e, "orig", None)
                if orig is not None:
                    entry["orig_type"] = type_name(orig)
                    entry["orig_pgcode"] = getattr(orig, "pgcode", None)
        entry["executed"] = list(log)
        return entry

    shop_sql = [
        # integers
        "SELECT id, c_integer, c_bigint, c_smallint FROM odd_types ORDER BY id",
        # numeric / floats
        "SELECT id, c_numeric, c_real, c_double FROM odd_types ORDER BY id",
        # boolean and strings (apostrophe, unicode, padding, control characters)
        "SELECT id, c_boolean, c_text, c_varchar, c_char FROM odd_types ORDER BY id",
        # dates and times
        "SELECT id, c_date, c_timestamp, c_time, c_interval FROM odd_types ORDER BY id",
        "SELECT id, c_timestamptz, c_timestamptz AT TIME ZONE 'UTC' AS utc_naive FROM odd_types ORDER BY id",
        "SELECT id, c_uuid FROM odd_types ORDER BY id",
        "SELECT id, c_json, c_jsonb FROM odd_types ORDER BY id",
        "SELECT id, c_bytea FROM odd_types ORDER BY id",
        "SELECT id, encode(c_bytea, 'hex') AS hex, length(c_bytea) FROM odd_types ORDER BY id",
        "SELECT id, c_int_array, c_text_array FROM odd_types ORDER BY id",
        # joins, enum, apostrophe, unicode
        "SELECT c.name, o.status, o.placed, p.name, oi.quantity, o.note FROM orders o JOIN customers c ON c.id = o.customer_id JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id ORDER BY o.id, oi.line_no",
        # aggregates
        "SELECT o.id, SUM(oi.quantity * p.price) AS total, AVG(oi.quantity) AS avg_qty, COUNT(*) FROM orders o JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id GROUP BY o.id ORDER BY o.id",
        "SELECT COUNT(*) FROM customers",
        "SELECT COUNT(*), MIN(price), MAX(price), AVG(price), SUM(c_real) FROM products CROSS JOIN (SELECT 1.5::real AS c_real) x",
        # NULLs
        "SELECT name, email, referred_by, joined FROM customers ORDER BY id",
        # apostrophe in a WHERE literal
        "SELECT id, note FROM orders WHERE note = 'it''s for the office'",
        "SELECT name FROM customers WHERE name LIKE '%''%'",
        # long strings: truncated to max_string_length=300
        "SELECT id, description FROM products ORDER BY id",
        "SELECT length(description) AS n, description FROM products WHERE id = 3",
        # empty result
        "SELECT name FROM customers WHERE id < 0",
        # the view
        "SELECT order_id, customer, total, lines FROM order_totals ORDER BY order_id",
        # duplicate and unnamed column keys
        "SELECT c.id, o.id, 1, 2 + 2, NULL FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id LIMIT 2",
        # no FROM: nothing to prefix
        "SELECT 1.0 / 3, 1e20::numeric, 'NaN'::numeric, 10::numeric(10, 3), 'a\"b', 'it''s', TRUE, NULL",
        "SELECT 'infinity'::timestamp, 'infinity'::date",
        "SELECT '2024-01-01 00:00:00+05:45'::timestamptz, '13:14:15+02'::timetz, '$1,234.50'::money, '192.168.1.0/24'::inet, '{{1,2},{3,4}}'::int[]",
        # how _add_schema_prefix rewrites FROM / JOIN
        "SELECT count(*) FROM shop.customers",
        "SELECT count(*) FROM public.audit_log",
        "select c.name from customers c join orders o on o.customer_id = c.id where o.id = 1",
        "WITH big AS (SELECT order_id, total FROM order_totals WHERE total > 50) SELECT b.order_id, b.total FROM big b ORDER BY b.order_id",
        "WITH a AS (SELECT 1 AS x), b AS (SELECT 2 AS x) SELECT * FROM a JOIN b ON TRUE",
        "SELECT sub.n FROM (SELECT count(*) AS n FROM orders) sub",
        "SELECT 'from here' AS s, 'join us' AS t FROM customers WHERE id = 1",
        "SELECT count(*) FROM \"customers\"",
        "SELECT EXTRACT(YEAR FROM joined) FROM customers WHERE id = 1",
        "SELECT id FROM orders WHERE id IN (SELECT order_id FROM order_items WHERE product_id = 1) ORDER BY id",
        # statements without rows / not prefixed
        "UPDATE products SET price = price WHERE id = -1",
        # errors
        "SELECT nope FROM customers",
        "SELEC name FROM customers",
        "SELECT name FROM missing_table",
        "SELECT 1 / 0",
        "SELECT 1 / 0 FROM customers",
        "SELECT 'abc'::integer",
        "SELECT ",
        "",
    ]
    out["run_sql_shop"] = [record(shop, s) for s in shop_sql]

    default_sql = [
        "SELECT id, happened, actor, action, detail FROM audit_log ORDER BY id",
        "SELECT count(*) FROM shop.customers",
        "SELECT count(*) FROM customers",
        "UPDATE shop.products SET price = price WHERE id = -1",
        "INSERT INTO shop.customers (id, name) VALUES (1, 'dup')",
        "SELECT current_schemas(true)::text, current_setting('search_path')",
    ]
    out["run_sql_default"] = [record(default, s) for s in default_sql]

    out["run_sql_shop_search_path"] = record(shop, "SELECT current_setting('search_path'), current_schemas(true)::text")

    out["notes"] = [
        f"Server TimeZone is {tz}; timestamptz values come back as datetime with tzinfo=datetime.timezone.utc.",
        "run_sql does NOT set search_path in 0.14.25. With schema set it rewrites the statement with "
        "_add_schema_prefix: a regex r'\\b((?:FROM|JOIN)\\s+)(\\w+(?:\\.\\w+)?)' (case-insensitive) prefixes the "
        "word after every FROM/JOIN with '<schema>.', unless that word contains a dot or is a CTE name "
        "(WITH [RECURSIVE] name AS ( and ), name AS ( ). It works on raw text: FROM inside string literals or "
        "EXTRACT(... FROM col) is rewritten too, quoted identifiers and UPDATE/INSERT targets are not. "
        "Without schema the statement runs unchanged.",
        "Each run_sql is one engine.begin() block: BEGIN (implicit), the (rewritten) statement via text(), COMMIT; "
        "on an exception the block rolls back. 'executed' lists what SQLAlchemy's events saw; the statement there is "
        "the DBAPI-level string, where text() doubled every % for psycopg2's pyformat (LIKE '%''%' shows as "
        "'%%''%%'; the server still receives '%''%').",
        "ProgrammingError and OperationalError (SQLAlchemy wrappers) become NotImplementedError(\"Statement {command!r} "
        "is invalid SQL.\\nError: {exc.orig}\") where command is the rewritten statement; other errors (DataError, "
        "IntegrityError, ...) propagate as the SQLAlchemy exception.",
        "Rows with returns_rows: each value goes through truncate_word(length=300): only str values longer than 300 "
        "characters (code points) become s[:297].rsplit(' ', 1)[0] + '...'. text is str(list of tuples); "
        "metadata is {'result': [tuple...], 'col_keys': [...]}. Statements without rows give ('', {}).",
        "result_repr holds repr() of each value (as in text_to_sql.json), result_types the Python type names; "
        "memoryview addresses are replaced by 0xADDR.",
        "SQLDatabase(engine) with no schema uses the connection's default schema (public): only audit_log.",
    ]
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
